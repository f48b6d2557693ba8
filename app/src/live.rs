//! Live updates and the clock, shared by every page.
//!
//! After hydration one `EventSource` on `/events/harness` (server-sent events
//! fed by the core's event bus) bumps [`Live::tick`] on every change; pages
//! reload what they show when it moves. A (re)connection bumps it too, so
//! nothing missed while disconnected stays stale. The server asks for a full
//! reload when this client fell too far behind (`reload` event).

use leptos::prelude::*;

#[derive(Debug, Clone, Copy)]
pub struct Live {
    /// Moves on every change event (and on every (re)connection).
    pub tick: RwSignal<u64>,
    /// Whether the event stream is connected (`data-live` on the nav).
    pub connected: RwSignal<bool>,
    /// "Now" for relative times, in Unix milliseconds; advanced every 20 s.
    pub now_ms: RwSignal<i64>,
    /// True once running in the browser: times are then shown in local time.
    pub local: RwSignal<bool>,
}

pub fn use_live() -> Live {
    use_context::<Live>().unwrap_or_else(provide_live)
}

/// Create the live context (in `App`). In the browser it connects after
/// hydration ([`start_after_hydration`]).
pub fn provide_live() -> Live {
    let live = Live {
        tick: RwSignal::new(0),
        connected: RwSignal::new(false),
        now_ms: RwSignal::new(now_ms()),
        local: RwSignal::new(false),
    };
    provide_context(live);
    #[cfg(feature = "hydrate")]
    STARTED_BY_HYDRATION.with(|pending| pending.set(Some(live)));
    live
}

#[cfg(feature = "hydrate")]
thread_local! {
    /// The live context waiting for [`start_after_hydration`].
    static STARTED_BY_HYDRATION: std::cell::Cell<Option<Live>> = const { std::cell::Cell::new(None) };
}

/// Called by the hydrate entry point once hydration is complete: local
/// times, the clock and the event stream start. Not before: hydration is
/// asynchronous (a lazy page waits for its wasm chunk, app/src/lazy_pages.rs),
/// and a tick in that time (the stream bumps it when it connects) would
/// refetch the page's resources and change the DOM the hydration is walking.
#[cfg(feature = "hydrate")]
pub fn start_after_hydration() {
    let Some(live) = STARTED_BY_HYDRATION.with(std::cell::Cell::take) else {
        return;
    };
    live.local.set(true);
    live.now_ms.set(now_ms());
    set_interval(
        move || {
            let _ = live.now_ms.try_set(now_ms());
        },
        std::time::Duration::from_secs(20),
    );
    browser::connect(live);
}

pub fn now_ms() -> i64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(all(feature = "ssr", not(feature = "hydrate")))]
    {
        chrono::Utc::now().timestamp_millis()
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        0
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::prelude::*;
    use wasm_bindgen::{JsCast, closure::Closure};

    use super::Live;

    pub const EVENTS_URL: &str = "/events/harness";

    pub fn connect(live: Live) {
        let Ok(source) = web_sys::EventSource::new(EVENTS_URL) else {
            return;
        };
        let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            let _ = live.connected.try_set(true);
            live.tick.try_update(|t| *t += 1);
        });
        let on_change = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            live.tick.try_update(|t| *t += 1);
        });
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            // The browser reconnects by itself (the server sends `retry:`).
            let _ = live.connected.try_set(false);
        });
        let on_reload = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            if let Some(w) = web_sys::window() {
                let _ = w.location().reload();
            }
        });
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let _ =
            source.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
        let _ =
            source.add_event_listener_with_callback("reload", on_reload.as_ref().unchecked_ref());
        // The page keeps one connection for its whole life.
        on_open.forget();
        on_change.forget();
        on_error.forget();
        on_reload.forget();
        std::mem::forget(source);
    }
}
