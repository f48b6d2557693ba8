//! `/settings` → Automatic recovery: the global policy
//! (`harness.recoveryPolicy`) as JSON, each value next to its default, and
//! what is never automatic. Projects and tasks override it (REST
//! `PUT /api/projects/{id}/recovery`, a task's `agent.recovery`). Saving
//! validates in the core (an error names its field). The form posts to a
//! server function (no JavaScript needed).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{SaveRecoverySettings, field_error, recovery_settings},
    components::error_text,
    i18n::use_locale,
};

#[component]
pub fn Recovery() -> impl IntoView {
    let l = use_locale();
    let save = ServerAction::<SaveRecoverySettings>::new();
    let data = Resource::new(move || save.version().get(), |_| recovery_settings());
    let status = move || match save.value().get() {
        Some(Err(e)) => {
            let (field, message) = field_error(&e);
            view! {
                <p class="error" role="alert" id="recovery-status" data-field=field.unwrap_or_default()>
                    {message}
                </p>
            }
            .into_any()
        }
        Some(Ok(())) => {
            view! { <p class="sub" role="status" id="recovery-status">{l.t("settings.saved")}</p> }
                .into_any()
        }
        None => ().into_any(),
    };
    view! {
        <section id="recovery" aria-labelledby="recovery-h" class="card">
            <h2 id="recovery-h">{l.t("recovery.heading")}</h2>
            <p class="sub">{l.t("recovery.help")}</p>
            <p class="sub">{l.t("recovery.never")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(d) => {
                            let rows = d.lines.into_iter().map(|line| {
                                let changed = line.value != line.default;
                                let name = line.name.clone();
                                view! {
                                    <tr data-name=name data-changed=changed.to_string()>
                                        <td><code>{line.name}</code></td>
                                        <td>{line.value}</td>
                                        <td class="sub">{line.default}</td>
                                    </tr>
                                }
                            }).collect_view();
                            view! {
                                <table class="policy" id="recovery-values">
                                    <thead><tr>
                                        <th>{l.t("recovery.col.name")}</th>
                                        <th>{l.t("recovery.col.value")}</th>
                                        <th>{l.t("recovery.col.default")}</th>
                                    </tr></thead>
                                    <tbody>{rows}</tbody>
                                </table>
                                <ActionForm action=save attr:id="recovery-form">
                                    <label for="recovery-json">{l.t("recovery.settings")}</label>
                                    <textarea id="recovery-json" name="settings" rows="14" spellcheck="false"
                                        class="mono" maxlength="20000">{d.json}</textarea>
                                    <button type="submit" class="primary" disabled=move || save.pending().get()>
                                        {l.t("settings.save_gateway")}
                                    </button>
                                </ActionForm>
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
