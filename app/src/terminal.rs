//! The browser terminal of a task: a host element rendered on the server;
//! after hydration `harness-webterm` (Rust/wasm, DOM rows) attaches to it and
//! connects to `/ws/terminal/{taskId}`.
//!
//! Around it (issue 15): a translated connection/exit chip, a full-screen
//! toggle, and a key that leaves the terminal (Shift+Esc: the terminal takes
//! every other key, Tab and Esc included, so the page would be a focus trap).

use leptos::prelude::*;

use crate::i18n::use_locale;

#[component]
pub fn TerminalView(task_id: String) -> impl IntoView {
    let l = use_locale();
    let host = NodeRef::<leptos::html::Div>::new();
    let leave = NodeRef::<leptos::html::Button>::new();
    // "connecting" | "connected" | "reconnecting" | "exited" (after hydration).
    let state = RwSignal::new(String::from("connecting"));
    let exit_code = RwSignal::new(None::<i32>);
    let full = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{JsCast, closure::Closure};
        let handle = StoredValue::new_local(None::<harness_webterm::TerminalHandle>);
        let id = task_id.clone();
        Effect::new(move |_| {
            let Some(el) = host.get() else { return };
            if handle.with_value(|h| h.is_some()) {
                return;
            }
            match harness_webterm::terminal_url_for(&id)
                .and_then(|url| harness_webterm::mount(&el, &url))
            {
                Ok(h) => handle.set_value(Some(h)),
                Err(e) => leptos::logging::warn!("terminal: {e:?}"),
            }
            // Shift+Esc leaves the terminal (captured before the terminal sees it).
            let on_key = Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(
                move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Escape" && ev.shift_key() {
                        ev.prevent_default();
                        ev.stop_propagation();
                        if let Some(b) = leave.get_untracked() {
                            let _ = b.focus();
                        }
                    }
                },
            );
            let _ = el.add_event_listener_with_callback_and_bool(
                "keydown",
                on_key.as_ref().unchecked_ref(),
                true,
            );
            on_key.forget();
        });
        if let Ok(poll) = set_interval_with_handle(
            move || {
                handle.with_value(|h| {
                    if let Some(h) = h {
                        let _ = state.try_set(h.state());
                        let _ = exit_code.try_set(h.exit_code());
                    }
                })
            },
            std::time::Duration::from_millis(300),
        ) {
            on_cleanup(move || poll.clear());
        }
        on_cleanup(move || {
            handle.update_value(|h| {
                if let Some(h) = h.take() {
                    h.destroy();
                }
            })
        });
    }
    let chip = move || {
        let s = state.get();
        let text = match s.as_str() {
            "connected" => l.t("term.connected").to_string(),
            "reconnecting" => l.t("term.reconnecting").to_string(),
            "exited" => l.t("term.exited").replace(
                "{code}",
                &exit_code.get().map(|c| c.to_string()).unwrap_or_default(),
            ),
            _ => l.t("term.connecting").to_string(),
        };
        view! { <span class=format!("badge term-{s}") id="terminal-state" data-state=s role="status">{text}</span> }
    };
    view! {
        <div class="terminal-wrap" class:fullscreen=move || full.get()>
            <div class="terminal-bar">
                {chip}
                <span class="sub hint">{l.t("term.leave_hint")}</span>
                <button
                    type="button"
                    class="ghost small"
                    id="terminal-fullscreen"
                    node_ref=leave
                    aria-pressed=move || if full.get() { "true" } else { "false" }
                    on:click=move |_| full.update(|f| *f = !*f)
                >
                    {move || l.t(if full.get() { "term.exit_fullscreen" } else { "term.fullscreen" })}
                </button>
            </div>
            <div class="ht-host" node_ref=host data-task-id=task_id></div>
        </div>
    }
    .into_any()
}
