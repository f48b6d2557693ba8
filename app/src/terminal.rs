//! The browser terminal of a task: a host element rendered on the server;
//! after hydration `harness-webterm` (Rust/wasm, DOM rows) attaches to it and
//! connects to `/ws/terminal/{taskId}`.
//!
//! The terminal (parser, model, renderer) is its own wasm module
//! (`pkg/harness-<hash>_term.js`): only a page that shows a
//! terminal downloads it, after hydration, through the loader the shell
//! defines ([`loader_script`]); the hydrate bundle of every page holds only
//! the small JS-facing interface below.
//!
//! Around it: a translated connection/exit chip, a full-screen
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
        let handle = StoredValue::new_local(None::<module::TermHandle>);
        let started = StoredValue::new(false);
        let id = task_id.clone();
        Effect::new(move |_| {
            let Some(el) = host.get() else { return };
            if started.get_value() {
                return;
            }
            started.set_value(true);
            let id = id.clone();
            let host_el: web_sys::Element = el.clone().into();
            leptos::task::spawn_local(async move {
                match module::mount(&host_el, &id).await {
                    Ok(h) => {
                        // Left the page while the module loaded: not kept.
                        if let Some(Some(h)) = handle.try_set_value(Some(h)) {
                            h.close();
                        }
                    }
                    Err(e) => leptos::logging::warn!("terminal: {e:?}"),
                }
            });
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
                        if let Ok(s) = h.state() {
                            let _ = state.try_set(s);
                        }
                        let _ = exit_code.try_set(h.exit_code().ok().flatten());
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
                    h.close();
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

/// The global function the shell defines: loads the terminal module once and
/// resolves to it.
pub const LOADER: &str = "harnessTerminal";

/// The inline script (in the shell, with the page's CSP nonce) defining
/// `window.harnessTerminal()`: imports `{base}.js`, instantiates
/// `{base}_bg.wasm` and resolves to the module; one download per page, and a
/// failed one is tried again on the next call. `base` is
/// `/pkg/harness-<hash>_term`.
pub fn loader_script(base: &str) -> String {
    format!(
        "window.{LOADER}=(()=>{{let p;return()=>p??=import({js:?}).then(async m=>\
         {{await m.default({{module_or_path:{wasm:?}}});return m}}).catch(e=>{{p=undefined;throw e}})}})();",
        js = format!("{base}.js"),
        wasm = format!("{base}_bg.wasm"),
    )
}

/// The terminal module as this bundle sees it: JS objects with the methods
/// `harness-webterm` exports (`mount`, `terminalUrl`, `TerminalHandle`).
#[cfg(feature = "hydrate")]
mod module {
    use wasm_bindgen::{JsCast, prelude::*};

    #[wasm_bindgen]
    extern "C" {
        /// `harness_term.js`, initialised.
        pub type TermModule;
        #[wasm_bindgen(method, catch, js_name = terminalUrl)]
        fn terminal_url(this: &TermModule, task_id: &str) -> Result<String, JsValue>;
        #[wasm_bindgen(method, catch, js_name = mount)]
        fn mount_in(
            this: &TermModule,
            container: &web_sys::Element,
            ws_url: &str,
        ) -> Result<TermHandle, JsValue>;

        /// A mounted terminal (`TerminalHandle` of `harness-webterm`).
        pub type TermHandle;
        #[wasm_bindgen(method, catch)]
        pub fn state(this: &TermHandle) -> Result<String, JsValue>;
        #[wasm_bindgen(method, catch, js_name = exitCode)]
        pub fn exit_code(this: &TermHandle) -> Result<Option<i32>, JsValue>;
        #[wasm_bindgen(method, catch)]
        fn destroy(this: &TermHandle) -> Result<(), JsValue>;
        #[wasm_bindgen(method, catch)]
        fn free(this: &TermHandle) -> Result<(), JsValue>;
    }

    impl TermHandle {
        /// Closes the socket, removes the terminal's DOM and frees it.
        pub fn close(&self) {
            let _ = self.destroy();
            let _ = self.free();
        }
    }

    /// Loads the module (once per page) and mounts a terminal of `task_id`
    /// into `container`.
    pub async fn mount(container: &web_sys::Element, task_id: &str) -> Result<TermHandle, JsValue> {
        let window = web_sys::window().ok_or_else(|| JsValue::from_str("no window"))?;
        let loader = js_sys::Reflect::get(&window, &JsValue::from_str(super::LOADER))?
            .dyn_into::<js_sys::Function>()
            .map_err(|_| JsValue::from_str("the terminal loader is missing"))?;
        let promise = loader
            .call0(&window)?
            .dyn_into::<js_sys::Promise>()
            .map_err(|_| JsValue::from_str("the terminal loader gave no promise"))?;
        let module: TermModule = wasm_bindgen_futures::JsFuture::from(promise)
            .await?
            .unchecked_into();
        let url = module.terminal_url(task_id)?;
        module.mount_in(container, &url)
    }
}
