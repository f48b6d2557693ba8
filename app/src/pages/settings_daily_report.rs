//! `/settings` → a notify target's daily report: the local time (`HH:MM`)
//! and IANA time zone it goes out at every day, set or cleared (no time:
//! off) on the target's row, with the language its chat is written in
//! (`super::settings_target_language`). A form posting to a server
//! function (no JavaScript needed); the core validates and names the
//! wrong field.

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{SetTargetReport, TargetRow},
    i18n::{Locale, use_locale},
};

/// What the row says of the target's daily report.
pub fn summary(l: Locale, t: &TargetRow) -> Option<String> {
    let at = t.report_at.clone()?;
    let zone = t.report_time_zone.clone().unwrap_or_default();
    Some(
        l.t("settings.report_daily")
            .replace("{at}", &at)
            .replace("{zone}", &zone),
    )
}

/// The time and zone of one target's daily report, with its own "Set".
#[component]
pub fn DailyReportForm(t: TargetRow, action: ServerAction<SetTargetReport>) -> impl IntoView {
    let l = use_locale();
    let language = super::settings_target_language::options(l, t.language.as_deref());
    let (key, at, zone) = (
        t.key,
        t.report_at.unwrap_or_default(),
        t.report_time_zone.unwrap_or_default(),
    );
    let (at_id, zone_id) = (format!("report-{key}-at"), format!("report-{key}-zone"));
    let language_id = format!("report-{key}-language");
    let data_key = key.clone();
    view! {
        <ActionForm action=action attr:class="daily-report" attr:data-key=data_key>
            <input type="hidden" name="key" value=key />
            <label for=at_id.clone()>{l.t("settings.report_at")}</label>
            <input id=at_id type="time" name="report_at" value=at />
            <label for=zone_id.clone()>{l.t("settings.report_time_zone")}</label>
            <input id=zone_id name="report_time_zone" maxlength="64" placeholder="Europe/Berlin"
                value=zone />
            <label for=language_id.clone()>{l.t("settings.language")}</label>
            <select id=language_id name="language">{language}</select>
            <button type="submit" class="ghost set-report">{l.t("settings.report_set")}</button>
        </ActionForm>
    }
}
