//! `/settings` → Reminders: the setting `harness.reminders` as
//! JSON (the schedule per urgency, `escalateAfter`, `escalateTo` per scope,
//! `quietHours` per target) and each notify target's reachability: when
//! its person last wrote, the platform's delivery window, the last error of
//! sends that keep failing. Saving validates in the core (an error names
//! its field). Forms post to server functions (no JavaScript needed).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{ReachLine, SaveReminderSettings, field_error, reminder_settings},
    components::error_text,
    i18n::{Locale, use_locale},
};

fn reach_line(l: Locale, r: ReachLine) -> impl IntoView {
    let wrote = if r.last_wrote.is_empty() {
        l.t("reminders.never_wrote").to_string()
    } else {
        l.t("reminders.last_wrote").replace("{t}", &r.last_wrote)
    };
    let warning = r
        .warning
        .map(|w| view! { <p class="warn" role="status">{w}</p> });
    let error = r.last_error.map(|e| {
        let text = if r.gave_up {
            l.t("reminders.gave_up").replace("{error}", &e)
        } else {
            l.t("reminders.failing")
                .replace("{n}", &r.failed_attempts.unwrap_or(0).to_string())
                .replace("{error}", &e)
        };
        view! { <p class="error" role="alert">{text}</p> }
    });
    let platform = if r.platform.is_empty() {
        String::new()
    } else {
        format!(" ({})", r.platform)
    };
    let label = r.label.clone();
    view! {
        <li class="reach" data-label=label>
            <strong>{r.label}</strong>{platform}" · "<span class="sub">{wrote}</span>
            {warning}
            {error}
        </li>
    }
}

#[component]
pub fn Reminders() -> impl IntoView {
    let l = use_locale();
    let save = ServerAction::<SaveReminderSettings>::new();
    let data = Resource::new(move || save.version().get(), |_| reminder_settings());
    let status = move || match save.value().get() {
        Some(Err(e)) => {
            let (field, message) = field_error(&e);
            view! {
                <p class="error" role="alert" id="reminders-status" data-field=field.unwrap_or_default()>
                    {message}
                </p>
            }
            .into_any()
        }
        Some(Ok(())) => {
            view! { <p class="sub" role="status" id="reminders-status">{l.t("settings.saved")}</p> }
                .into_any()
        }
        None => ().into_any(),
    };
    view! {
        <section id="reminders" aria-labelledby="reminders-h" class="card">
            <h2 id="reminders-h">{l.t("reminders.heading")}</h2>
            <p class="sub">{l.t("reminders.help")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(d) => {
                            let lines = if d.reachability.is_empty() {
                                view! { <p class="sub">{l.t("reminders.no_targets")}</p> }.into_any()
                            } else {
                                view! {
                                    <ul class="reach-list" id="reachability">
                                        {d.reachability.into_iter().map(|r| reach_line(l, r)).collect_view()}
                                    </ul>
                                }
                                .into_any()
                            };
                            view! {
                                <ActionForm action=save attr:id="reminders-form">
                                    <label for="reminders-json">{l.t("reminders.settings")}</label>
                                    <textarea id="reminders-json" name="settings" rows="14" spellcheck="false"
                                        class="mono" maxlength="100000">{d.json}</textarea>
                                    <button type="submit" class="primary" disabled=move || save.pending().get()>
                                        {l.t("settings.save_gateway")}
                                    </button>
                                </ActionForm>
                                <h3>{l.t("reminders.reachability")}</h3>
                                {lines}
                            }
                            .into_any()
                        }
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            {status}
        </section>
    }
}
