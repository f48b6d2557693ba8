//! Ctrl/Cmd+Enter sends from every answer box (the Inbox row's box, the
//! dialog's, the task page's, the report's batch box): one key rule, two
//! ways to send.

use leptos::ev::KeyboardEvent;

/// Whether `ev` is the send key: Enter with Ctrl (Cmd on a Mac), not
/// while an input method is composing.
pub fn is_send_key(ev: &KeyboardEvent) -> bool {
    ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) && !ev.is_composing()
}

/// `on:keydown` of a box that sends with a function: the send key calls
/// `send` instead of typing a new line.
pub fn send_on_key(ev: &KeyboardEvent, send: impl FnOnce()) {
    if is_send_key(ev) {
        ev.prevent_default();
        send();
    }
}

/// `on:keydown` of a box inside a form: the send key submits the form as
/// its Send button does (the form's own checks and submit handler run).
pub fn submit_on_key(ev: &KeyboardEvent) {
    if !is_send_key(ev) {
        return;
    }
    ev.prevent_default();
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let form = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("form").ok().flatten())
            .and_then(|f| f.dyn_into::<web_sys::HtmlFormElement>().ok());
        if let Some(form) = form
            && let Err(e) = form.request_submit()
        {
            tracing::warn!(error = ?e, "the answer box's form did not submit");
        }
    }
}
