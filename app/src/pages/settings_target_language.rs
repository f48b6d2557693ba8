//! `/settings` → the language a notify target's chat is written in
//! (questions, approvals and the report; docs/gateways.md, "Chat
//! language"): English or Chinese, a select on the add form and in the
//! target's row form (`settings_daily_report::DailyReportForm`, whose "Set"
//! saves it with the daily report).

use leptos::prelude::*;

use crate::i18n::Locale;

/// The languages, with their names as the settings page says them.
pub const LANGUAGES: [(&str, &str); 2] = [
    ("en", "settings.language_en"),
    ("zh", "settings.language_zh"),
];

/// The language's name (unset: English).
pub fn name(l: Locale, language: Option<&str>) -> &'static str {
    let key = LANGUAGES
        .iter()
        .find(|(code, _)| Some(*code) == language)
        .map_or("settings.language_en", |(_, key)| *key);
    l.t(key)
}

/// The `<option>`s of a language select, `selected` chosen.
pub fn options(l: Locale, selected: Option<&str>) -> impl IntoView + use<> {
    let selected = selected.unwrap_or("en").to_string();
    LANGUAGES
        .iter()
        .map(|(code, key)| {
            view! { <option value=*code selected=selected == *code>{l.t(key)}</option> }
        })
        .collect_view()
}
