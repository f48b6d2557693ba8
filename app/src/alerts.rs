//! Alerts when an agent needs you: a title per page with the
//! pending count (`(2) Notifications — Harness`), a favicon with the count,
//! and browser notifications (permission asked once, from a visible control)
//! with an optional sound for new questions while the page is in a
//! background tab.

use leptos::prelude::*;

use crate::i18n::use_locale;

/// The page's name for the title (set by [`PageTitle`]).
#[derive(Debug, Clone, Copy)]
pub struct PageName(pub RwSignal<Option<String>>);

pub fn use_page_name() -> PageName {
    use_context::<PageName>().unwrap_or_else(|| {
        let p = PageName(RwSignal::new(None));
        provide_context(p);
        p
    })
}

/// Names the current page in the document title.
#[component]
pub fn PageTitle(#[prop(into)] text: String) -> impl IntoView {
    let name = use_page_name();
    name.0.set(Some(text.clone()));
    on_cleanup(move || {
        let _ = name.0.try_update(|k| {
            if k.as_deref() == Some(text.as_str()) {
                *k = None;
            }
        });
    });
}

/// `(n) <page> — Harness`; without a page `(n) Harness`.
pub fn title_text(pending: u64, page: Option<String>) -> String {
    let base = match page {
        Some(name) => format!("{name} — Harness"),
        None => "Harness".to_string(),
    };
    if pending > 0 {
        format!("({pending}) {base}")
    } else {
        base
    }
}

/// The favicon with the count as an SVG data URL (`img-src data:` is allowed).
pub fn favicon_href(pending: u64) -> String {
    if pending == 0 {
        return "/favicon.ico".into();
    }
    let n = if pending > 99 {
        "99+".to_string()
    } else {
        pending.to_string()
    };
    let size = if n.len() > 2 { 26 } else { 36 };
    let svg = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 64 64'>\
         <rect width='64' height='64' rx='14' fill='%232b6cb0'/>\
         <circle cx='44' cy='20' r='20' fill='%23d92d20'/>\
         <text x='44' y='{}' font-family='Arial,sans-serif' font-weight='700' font-size='{size}' \
         text-anchor='middle' fill='white'>{n}</text></svg>",
        20 + size / 3
    );
    format!(
        "data:image/svg+xml,{}",
        svg.replace('<', "%3C")
            .replace('>', "%3E")
            .replace(' ', "%20")
    )
}

#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
const SOUND_KEY: &str = "harness-sound";

/// Follows the pending count: favicon, and — when it grows while the tab is
/// hidden — a browser notification (if allowed) and the sound (if chosen).
pub fn follow_count(pending: u64) {
    #[cfg(feature = "hydrate")]
    browser::follow(pending);
    #[cfg(not(feature = "hydrate"))]
    let _ = pending;
}

/// "Enable browser notifications" + the sound switch.
#[component]
pub fn NotificationControl() -> impl IntoView {
    let l = use_locale();
    // "default" | "granted" | "denied" | "unsupported"; known after hydration.
    let permission = RwSignal::new(String::from("unknown"));
    let sound = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        permission.set(browser::permission());
        sound.set(browser::stored(SOUND_KEY));
    });
    let ask = move |_| {
        #[cfg(feature = "hydrate")]
        browser::request_permission(permission);
    };
    let toggle_sound = move |ev: leptos::ev::Event| {
        let on = event_target_checked(&ev);
        sound.set(on);
        #[cfg(feature = "hydrate")]
        browser::store(SOUND_KEY, on);
    };
    let state_text = move || match permission.get().as_str() {
        "granted" => l.t("alerts.granted"),
        "denied" => l.t("alerts.denied"),
        "unsupported" => l.t("alerts.unsupported"),
        _ => l.t("alerts.off"),
    };
    view! {
        <div class="alerts-control" id="alerts-control">
            <button
                type="button"
                class="ghost"
                id="enable-notifications"
                disabled=move || permission.get() != "default"
                on:click=ask
            >
                {l.t("alerts.enable")}
            </button>
            <span class="sub" id="notifications-state" role="status">{state_text}</span>
            <label class="switch">
                <input type="checkbox" id="alert-sound" prop:checked=move || sound.get() on:change=toggle_sound />
                <span>{l.t("alerts.sound")}</span>
            </label>
        </div>
    }
    .into_any()
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::Cell;

    use leptos::prelude::*;
    use wasm_bindgen::{JsCast, JsValue, closure::Closure};

    thread_local! {
        static LAST: Cell<Option<u64>> = const { Cell::new(None) };
    }

    pub fn follow(pending: u64) {
        set_favicon(&super::favicon_href(pending));
        let before = LAST.with(|c| c.replace(Some(pending)));
        let grew = matches!(before, Some(b) if pending > b);
        let hidden = web_sys::window()
            .and_then(|w| w.document())
            .map(|d| d.hidden())
            .unwrap_or(false);
        if !(grew && hidden) {
            return;
        }
        let l = crate::i18n::Locale::detect();
        if permission() == "granted" {
            let opts = web_sys::NotificationOptions::new();
            opts.set_body(&l.t("alerts.body").replace("{n}", &pending.to_string()));
            opts.set_tag("harness-pending");
            if let Ok(n) = web_sys::Notification::new_with_options(l.t("alerts.title"), &opts) {
                let on_click = Closure::<dyn FnMut()>::new(move || {
                    if let Some(w) = web_sys::window() {
                        let _ = w.focus();
                        let _ = w.location().set_href("/harness");
                    }
                });
                n.set_onclick(Some(on_click.as_ref().unchecked_ref()));
                on_click.forget();
            }
        }
        if stored(super::SOUND_KEY) {
            beep();
        }
    }

    fn set_favicon(href: &str) {
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let Ok(Some(link)) = doc.query_selector("link[rel~='icon']") {
            let _ = link.set_attribute("href", href);
        }
    }

    pub fn permission() -> String {
        let supported = web_sys::window()
            .map(|w| js_sys::Reflect::has(&w, &JsValue::from_str("Notification")).unwrap_or(false))
            .unwrap_or(false);
        if !supported {
            return "unsupported".into();
        }
        match web_sys::Notification::permission() {
            web_sys::NotificationPermission::Granted => "granted".into(),
            web_sys::NotificationPermission::Denied => "denied".into(),
            _ => "default".into(),
        }
    }

    pub fn request_permission(state: RwSignal<String>) {
        let Ok(promise) = web_sys::Notification::request_permission() else {
            return;
        };
        let done = Closure::<dyn FnMut(JsValue)>::new(move |_| {
            let _ = state.try_set(permission());
        });
        let _ = promise.then(&done);
        done.forget();
    }

    fn storage() -> Option<web_sys::Storage> {
        web_sys::window().and_then(|w| w.local_storage().ok().flatten())
    }

    pub fn stored(key: &str) -> bool {
        storage()
            .and_then(|s| s.get_item(key).ok().flatten())
            .is_some_and(|v| v == "1")
    }

    pub fn store(key: &str, on: bool) {
        if let Some(s) = storage() {
            let _ = s.set_item(key, if on { "1" } else { "0" });
        }
    }

    /// A short two-tone chime (Web Audio; no file to fetch).
    fn beep() {
        let Ok(ctx) = web_sys::AudioContext::new() else {
            return;
        };
        let now = ctx.current_time();
        for (i, freq) in [880.0f32, 660.0].into_iter().enumerate() {
            let (Ok(osc), Ok(gain)) = (ctx.create_oscillator(), ctx.create_gain()) else {
                return;
            };
            osc.frequency().set_value(freq);
            gain.gain().set_value(0.08);
            let start = now + i as f64 * 0.18;
            let _ = osc.connect_with_audio_node(&gain);
            let _ = gain.connect_with_audio_node(&ctx.destination());
            let _ = osc.start_with_when(start);
            let _ = osc.stop_with_when(start + 0.15);
        }
    }
}
