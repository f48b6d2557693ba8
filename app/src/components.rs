//! Small pieces shared by the pages: times, badges, clamped text, notices.

use leptos::prelude::*;

use crate::{
    api::Status,
    i18n::{Locale, use_locale},
    live::use_live,
};

/// "just now", "3m", "2h", "5d" (localised).
pub fn relative_time(locale: Locale, now_ms: i64, ms: i64) -> String {
    let secs = (now_ms - ms).max(0) / 1000;
    let (key, n) = match secs {
        s if s < 60 => return locale.t("time.just_now").to_string(),
        s if s < 3600 => ("time.minutes", s / 60),
        s if s < 86_400 => ("time.hours", s / 3600),
        s => ("time.days", s / 86_400),
    };
    locale.t(key).replace("{n}", &n.to_string())
}

/// Absolute time: local time in the browser, UTC on the server.
pub fn absolute_time(locale: Locale, ms: i64, local: bool) -> String {
    #[cfg(feature = "hydrate")]
    if local {
        let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
        return String::from(
            date.to_locale_string(locale.html_lang(), &wasm_bindgen::JsValue::UNDEFINED),
        );
    }
    let _ = (locale, local);
    #[cfg(feature = "ssr")]
    if let Some(t) = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms) {
        return t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    }
    ms.to_string()
}

/// A relative time with the absolute local time on hover.
#[component]
pub fn TimeCell(ms: Option<i64>) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    match ms {
        None => view! { <span class="none">"—"</span> }.into_any(),
        Some(ms) => view! {
            <time
                data-ms=ms
                title=move || absolute_time(l, ms, live.local.get())
            >
                {move || relative_time(l, live.now_ms.get(), ms)}
            </time>
        }
        .into_any(),
    }
}

/// A row's state: `status` styles it, `text` (a `badge.*` key, see
/// `Row::badge_key`) says it.
#[component]
pub fn StatusBadge(status: Status, text: &'static str) -> impl IntoView {
    let l = use_locale();
    let s = status.as_str();
    view! {
        <span class=format!("badge {s}") data-status=s>
            {l.t(text)}
        </span>
    }
}

/// Text clamped to three lines; the full text on hover.
#[component]
pub fn Clamp(text: Option<String>) -> impl IntoView {
    match text.filter(|t| !t.trim().is_empty()) {
        None => view! { <span class="none">"—"</span> }.into_any(),
        Some(t) => {
            let title = t.clone();
            view! { <div class="clamp" title=title>{t}</div> }.into_any()
        }
    }
}

/// The text of a server-function error, without the transport prefix.
pub fn error_text(err: &ServerFnError) -> String {
    match err {
        ServerFnError::ServerError(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A result line: success (`role=status`) or error (`role=alert`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub ok: bool,
    pub text: String,
}

#[component]
pub fn NoticeLine(notice: RwSignal<Option<Notice>>, id: &'static str) -> impl IntoView {
    move || {
        notice.get().map(|n| {
            if n.ok {
                view! { <p class="notice" id=id role="status">{n.text}</p> }.into_any()
            } else {
                view! { <p class="error" id=id role="alert">{n.text}</p> }.into_any()
            }
        })
    }
}

/// What a 404 page is about: the text it says and where it sends you.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Page,
    Task,
}

/// The "not found" page: answers HTTP 404 (when rendered on the server), says
/// so once, and offers the way back.
#[component]
pub fn NotFound(what: Missing) -> impl IntoView {
    let l = use_locale();
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    let (title, body) = match what {
        Missing::Page => ("notfound.page_title", "notfound.page_body"),
        Missing::Task => ("notfound.task_title", "notfound.task_body"),
    };
    view! {
        <crate::alerts::PageTitle text=l.t(title) />
        <section class="empty-state not-found" id="not-found" data-missing=format!("{what:?}").to_lowercase()>
            <h1>{l.t(title)}</h1>
            <p class="lead">{l.t(body)}</p>
            <p class="actions">
                <a class="button" href="/">{l.t("notfound.home")}</a>
                " "
                <a class="button ghost" href="/tasks">{l.t("notfound.tasks")}</a>
            </p>
        </section>
    }
}
