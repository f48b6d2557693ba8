//! `/settings`: Notifications (the notify targets through which asks are
//! pushed to a person). Forms post to server functions (no JavaScript needed).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{AddNotifyTarget, RemoveNotifyTarget, notify_targets},
    components::error_text,
    i18n::use_locale,
};

#[component]
pub fn SettingsPage() -> impl IntoView {
    let l = use_locale();
    let add = ServerAction::<AddNotifyTarget>::new();
    let remove = ServerAction::<RemoveNotifyTarget>::new();
    let targets = Resource::new(
        move || (add.version().get(), remove.version().get()),
        |_| notify_targets(),
    );
    let error = move || {
        let e = add
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| remove.value().get().and_then(Result::err));
        e.map(|e| view! { <p class="error" role="alert" id="settings-status">{error_text(&e)}</p> })
    };
    view! {
        <crate::alerts::PageTitle text=l.t("settings.title") />
        <header class="page-head"><h1>{l.t("settings.title")}</h1></header>
        <section class="card" aria-labelledby="alerts-h">
            <h2 id="alerts-h">{l.t("alerts.heading")}</h2>
            <crate::alerts::NotificationControl />
        </section>
        <section id="notifications" aria-labelledby="notifications-h" class="card">
            <h2 id="notifications-h">{l.t("settings.notifications")}</h2>
            <p class="sub">{l.t("settings.notifications_help")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match targets.await {
                        Ok(list) if list.is_empty() => {
                            view! { <p class="empty" id="no-targets">{l.t("settings.none")}</p> }.into_any()
                        }
                        Ok(list) => view! {
                            <ul class="targets" id="targets">
                                {list.into_iter().enumerate().map(|(i, t)| view! {
                                    <li>
                                        <strong>{if t.label.is_empty() { t.gateway.clone() } else { t.label.clone() }}</strong>
                                        " · " <code>{t.gateway}</code>
                                        {t.dest.map(|d| view! { " → " <code>{d}</code> })}
                                        " · " {t.scope}
                                        <ActionForm action=remove attr:class="inline">
                                            <input type="hidden" name="index" value=i.to_string() />
                                            <button type="submit" class="ghost">{l.t("settings.remove")}</button>
                                        </ActionForm>
                                    </li>
                                }).collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            {error}
            <h3>{l.t("settings.add")}</h3>
            <ActionForm action=add attr:class="form-grid" attr:id="add-target">
                <label for="target-label">{l.t("settings.label")}</label>
                <input id="target-label" name="label" maxlength="200" />
                <label for="target-gateway">{l.t("settings.gateway")}</label>
                <select id="target-gateway" name="gateway">
                    <option value="hermes">"hermes"</option>
                    <option value="openclaw">"openclaw"</option>
                </select>
                <label for="target-dest">{l.t("settings.dest")}</label>
                <input id="target-dest" name="dest" maxlength="1024" />
                <label for="target-scope">{l.t("settings.scope")}</label>
                <select id="target-scope" name="scope">
                    <option value="unattended">{l.t("settings.scope_unattended")}</option>
                    <option value="work">{l.t("settings.scope_work")}</option>
                </select>
                <span></span>
                <button type="submit" class="primary">{l.t("settings.save")}</button>
            </ActionForm>
        </section>
    }
}
