//! `/settings`: Notifications (the notify targets through which asks are
//! pushed to a person), the destination aliases
//! ([`super::settings_destinations`]) and the gateways. Forms post to server
//! functions (no JavaScript needed).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{
        AddNotifyTarget, RemoveNotifyTarget, SaveGatewaySettings, SetTargetReport,
        TestNotifyTarget, gateway_settings, notify_targets,
    },
    components::error_text,
    i18n::use_locale,
};

#[component]
pub fn SettingsPage() -> impl IntoView {
    let l = use_locale();
    let add = ServerAction::<AddNotifyTarget>::new();
    let remove = ServerAction::<RemoveNotifyTarget>::new();
    let test = ServerAction::<TestNotifyTarget>::new();
    let schedule = ServerAction::<SetTargetReport>::new();
    let screen = ServerAction::<crate::api::SetTargetScreen>::new();
    let test_result = move || {
        test.value().get().map(|r| match r {
            Ok(result) => {
                let word = result.state.as_str();
                let state = match &result.error {
                    Some(e) => format!("{word}: {e}"),
                    None => word.to_string(),
                };
                // A failed test message is tried once (never again in the background).
                let once = (result.state == harness_types::OutboundState::Failed)
                    .then(|| view! { " " {l.t("settings.test_not_retried")} });
                view! {
                    <p class="sub" role="status" id="test-result" data-state=word>
                        {l.t("settings.test_result").replace("{state}", &state)}
                        " " <span class="badge outbound-state" data-outbound-state=word>{word}</span>
                        {once}
                    </p>
                }.into_any()
            }
            Err(e) => view! { <p class="error" role="alert" id="test-result">{error_text(&e)}</p> }.into_any(),
        })
    };
    let targets = Resource::new(
        move || {
            (
                add.version().get(),
                remove.version().get(),
                schedule.version().get(),
                screen.version().get(),
            )
        },
        |_| notify_targets(),
    );
    // A validation error of the add form names its field: shown by that
    // input (`#target-<field>-error`, the input `aria-invalid`); any other
    // error goes to the status line.
    const FIELDS: [&str; 8] = [
        "label",
        "gateway",
        "downstream",
        "dest",
        "scope",
        "reportAt",
        "reportTimeZone",
        "language",
    ];
    let errors = crate::field_errors::FieldErrors::new(
        move || add.value().get().and_then(Result::err),
        "target",
        &FIELDS,
    );
    let error = move || {
        let general = errors.general_or(remove.value().get().and_then(Result::err));
        general.map(|m| view! { <p class="error" role="alert" id="settings-status">{m}</p> })
    };
    let (field_error, invalid) = (move |f| errors.by(f), move |f| errors.invalid(f));
    // A daily report set on a target's row: saved, or why not.
    let schedule_status = move || {
        schedule.value().get().map(|r| match r {
            Ok(()) => view! { <p class="sub" role="status" id="report-status">{l.t("settings.saved")}</p> }.into_any(),
            Err(e) => {
                let (_, message) = crate::api::field_error(&e);
                view! { <p class="error" role="alert" id="report-status">{message}</p> }.into_any()
            }
        })
    };
    let add_form = NodeRef::<leptos::html::Form>::new();
    crate::field_errors::clear_after_success(
        move || matches!(add.value().get(), Some(Ok(_))),
        add_form,
    );
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
                                {list.into_iter().enumerate().map(|(i, t)| {
                                    let (key1, key2) = (t.key.clone(), t.key.clone());
                                    let row = t.clone();
                                    let language_name = super::settings_target_language::name(l, t.language.as_deref());
                                    let daily = super::settings_daily_report::summary(l, &t);
                                    view! {
                                    <li>
                                        <strong>{if t.label.is_empty() { t.gateway.clone() } else { t.label.clone() }}</strong>
                                        " · " <code>{t.gateway}</code>
                                        {t.downstream.map(|d| view! { " · " <code>{d}</code> })}
                                        {t.dest.map(|d| view! { " → " <code>{d}</code> })}
                                        " · " {l.t(if t.scope == "work" { "settings.scope_work" } else { "settings.scope_unattended" })}
                                        " · " <span class="target-language-name">{language_name}</span>
                                        " · " <span class="daily-summary">{daily.unwrap_or_else(|| l.t("settings.report_off").to_string())}</span>
                                        <ActionForm action=test attr:class="inline">
                                            <input type="hidden" name="key" value=key1 />
                                            <button type="submit" class="ghost test-target" data-index=i.to_string()
                                                disabled=move || test.pending().get()>{l.t("settings.test")}</button>
                                        </ActionForm>
                                        <ActionForm action=remove attr:class="inline">
                                            <input type="hidden" name="key" value=key2 />
                                            <button type="submit" class="ghost">{l.t("settings.remove")}</button>
                                        </ActionForm>
                                        <super::settings_screen::ScreenForm t=row.clone() action=screen />
                                        <super::settings_daily_report::DailyReportForm t=row action=schedule />
                                    </li>
                                }}).collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            {test_result}
            {schedule_status}
            {error}
            <h3>{l.t("settings.add")}</h3>
            <ActionForm action=add node_ref=add_form attr:class="form-grid" attr:id="add-target">
                <label for="target-label">{l.t("settings.label")}</label>
                <input id="target-label" name="label" maxlength="200" aria-invalid=invalid("label") aria-describedby="target-label-error" />
                {field_error("label")}
                <label for="target-gateway">{l.t("settings.gateway")}</label>
                <select id="target-gateway" name="gateway" aria-invalid=invalid("gateway") aria-describedby="target-gateway-error">
                    <option value="hermes">"hermes"</option>
                    <option value="openclaw">"openclaw"</option>
                </select>
                {field_error("gateway")}
                <label for="target-downstream">{l.t("settings.downstream")}</label>
                <input id="target-downstream" name="downstream" maxlength="128" placeholder="telegram, feishu, slack…"
                    aria-invalid=invalid("downstream") aria-describedby="target-downstream-error" />
                {field_error("downstream")}
                <label for="target-dest">{l.t("settings.dest")}</label>
                <input id="target-dest" name="dest" maxlength="1024" aria-invalid=invalid("dest") aria-describedby="target-dest-error" />
                {field_error("dest")}
                <label for="target-scope">{l.t("settings.scope")}</label>
                <select id="target-scope" name="scope" aria-invalid=invalid("scope") aria-describedby="target-scope-error">
                    <option value="unattended">{l.t("settings.scope_unattended")}</option>
                    <option value="work">{l.t("settings.scope_work")}</option>
                </select>
                {field_error("scope")}
                <label for="target-language">{l.t("settings.language")}</label>
                <select id="target-language" name="language" aria-invalid=invalid("language") aria-describedby="target-language-error">
                    {super::settings_target_language::options(l, None)}
                </select>
                {field_error("language")}
                <label for="target-reportAt">{l.t("settings.report_at")}</label>
                <input id="target-reportAt" type="time" name="report_at" aria-invalid=invalid("reportAt")
                    aria-describedby="target-reportAt-error target-report-help" />
                {field_error("reportAt")}
                <label for="target-reportTimeZone">{l.t("settings.report_time_zone")}</label>
                <input id="target-reportTimeZone" name="report_time_zone" maxlength="64" placeholder="Europe/Berlin, Asia/Shanghai, UTC"
                    aria-invalid=invalid("reportTimeZone") aria-describedby="target-reportTimeZone-error target-report-help" />
                {field_error("reportTimeZone")}
                <span></span>
                <p class="sub" id="target-report-help">{l.t("settings.report_help")}</p>
                <span></span>
                <button type="submit" class="primary">{l.t("settings.save")}</button>
            </ActionForm>
        </section>
        <super::settings_destinations::Destinations />
        <super::settings_approvals::ApprovalPolicy />
        <super::settings_reminders::Reminders />
        <super::settings_recovery::Recovery />
        <Gateways />
    }
}

/// Per gateway: the CLI binary, profile and extra environment (docs/decisions.md D10). Each
/// form shows its own validation error next to its fields.
#[component]
fn Gateways() -> impl IntoView {
    let l = use_locale();
    let rows = Resource::new(|| (), |_| gateway_settings());
    view! {
        <section id="gateways" aria-labelledby="gateways-h" class="card">
            <h2 id="gateways-h">{l.t("settings.gateways")}</h2>
            <p class="sub">{l.t("settings.gateways_help")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match rows.await {
                        Ok(list) => list.into_iter().map(|g| view! { <GatewayForm g /> }).collect_view().into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn GatewayForm(g: crate::api::GatewayRow) -> impl IntoView {
    let l = use_locale();
    let save = ServerAction::<SaveGatewaySettings>::new();
    let name = g.gateway.clone();
    let id = move |field: &str| format!("gw-{name}-{field}");
    let (gw1, gw2, gw3, gw4) = (
        g.gateway.clone(),
        g.gateway.clone(),
        g.gateway.clone(),
        g.gateway.clone(),
    );
    let status = move || {
        save.value().get().map(|r| match r {
            Ok(()) => {
                view! { <span class="sub" role="status">{l.t("settings.saved")}</span> }.into_any()
            }
            Err(e) => view! { <span class="error" role="alert">{error_text(&e)}</span> }.into_any(),
        })
    };
    view! {
        <h3>{gw1}</h3>
        <ActionForm action=save attr:class="form-grid" attr:id=format!("gateway-{gw2}")>
            <input type="hidden" name="gateway" value=gw3 />
            <label for=id("cli")>{l.t("settings.cli_path")}</label>
            <input id=id("cli") name="cli_path" maxlength="1024" value=g.cli_path placeholder=gw4 />
            <label for=id("profile")>{l.t("settings.profile")}</label>
            <input id=id("profile") name="profile" maxlength="256" value=g.profile />
            <label for=id("env")>{l.t("settings.env")}</label>
            <textarea id=id("env") name="env" rows="3" placeholder="NAME=value">{g.env}</textarea>
            <span></span>
            <button type="submit" class="primary">{l.t("settings.save_gateway")}</button>
            // Under the inputs, never in the label column (it pushed them right).
            <span class="form-status">{status}</span>
        </ActionForm>
    }
}
