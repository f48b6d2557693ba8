//! The browser terminal of a task: a host element rendered on the server;
//! after hydration `harness-webterm` (Rust/wasm, DOM rows) attaches to it and
//! connects to `/ws/terminal/{taskId}`.

use leptos::prelude::*;

#[component]
pub fn TerminalView(task_id: String) -> impl IntoView {
    let host = NodeRef::<leptos::html::Div>::new();
    #[cfg(feature = "hydrate")]
    {
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
        });
        on_cleanup(move || {
            handle.update_value(|h| {
                if let Some(h) = h.take() {
                    h.destroy();
                }
            })
        });
    }
    view! { <div class="ht-host" node_ref=host data-task-id=task_id></div> }
}
