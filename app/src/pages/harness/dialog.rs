//! The detail / handle dialog (a native modal `<dialog>`: Esc closes, the
//! page behind is inert; Tab is kept inside). Shows the full message and,
//! for an OPEN ask, a reply box (Ctrl/⌘+Enter sends) with Send and Ignore.

use leptos::{html, prelude::*};

use super::Shared;
use crate::{
    api::{DismissMessage, IgnoreAsk, ReplyAsk, Row, Status},
    components::{NoticeLine, StatusBadge, absolute_time},
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn DetailDialog(rows: RwSignal<Vec<Row>>) -> impl IntoView {
    let shared = use_context::<Shared>().unwrap_or_else(Shared::provide);
    let l = use_locale();
    let dialog = NodeRef::<html::Dialog>::new();
    let current = Memo::new(move |_| {
        let id = shared.selected.get()?;
        rows.with(|rs| rs.iter().find(|r| r.id == id).cloned())
    });

    // Whether the body's chunk is here: fetched when the person reaches for
    // the table (a pointer down or the focus in it, `Shared::reach`) or a
    // dialog opens — not on every load of `/harness` (its bytes would count
    // against the first load's budget). Opened before it arrived, the
    // dialog fills in when it does.
    let body_loaded = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    {
        let fetching = StoredValue::new(false);
        Effect::new(move |_| {
            let wanted = shared.intent.get() || shared.selected.with(Option::is_some);
            if !wanted || fetching.get_value() {
                return;
            }
            fetching.set_value(true);
            leptos::task::spawn_local(async move {
                __preload_dialog_body().await;
                let _ = body_loaded.try_set(true);
            });
        });
    }

    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        let open = current.with(Option::is_some);
        let Some(d) = dialog.get() else { return };
        if open && !d.open() {
            let _ = d.show_modal();
        } else if !open && d.open() {
            d.close();
        }
    });

    let close = move |_| shared.selected.set(None);
    view! {
        <dialog
            node_ref=dialog
            class="detail"
            id="detail-dialog"
            aria-labelledby="detail-title"
            on:close=move |_| shared.selected.set(None)
            on:keydown=trap_tab
        >
            // The body's code is a chunk of its own (loaded right after
            // hydration, `body_loaded`): the main module stays small.
            {move || {
                if !body_loaded.get() {
                    return None;
                }
                current.get().and_then(|row| ready_now(dialog_body(row, shared)))
            }}
            <footer>
                <NoticeLine notice=shared.notice id="dialog-status" />
                <button type="button" class="ghost" on:click=close>{l.t("action.close")}</button>
            </footer>
        </dialog>
    }
}

/// The dialog's content for one row: a lazy function, so its code (the
/// Markdown renderer, the reply box) is not in the main module.
#[leptos::lazy]
fn dialog_body(row: Row, shared: Shared) -> AnyView {
    view! { <DialogBody row shared /> }.into_any()
}

/// The output of a future that is ready at its first poll (a lazy function
/// whose chunk is loaded), else `None`.
fn ready_now<T>(future: impl std::future::Future<Output = T>) -> Option<T> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(value) => Some(value),
        std::task::Poll::Pending => None,
    }
}

#[component]
fn DialogBody(row: Row, shared: Shared) -> impl IntoView {
    let l = use_locale();
    // "Handle": the first option when the ask has options (keys 1–8), else
    // the reply box (after the dialog opened: `focus_in` waits a frame).
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if shared.focus_reply.get_untracked()
            && let Some(d) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id("detail-dialog"))
        {
            focus_in(
                d,
                ".choices button.choice, .choices input[type=checkbox], textarea",
            );
        }
    });
    let live = use_live();
    let status = row.status();
    let badge_text = row.badge_key();
    let title = if row.task_title.trim().is_empty() {
        l.t("harness.unknown_task").to_string()
    } else {
        row.task_title.clone()
    };
    let location = format!(
        "{} / {}",
        row.workspace.clone().unwrap_or_else(|| "—".into()),
        row.project.clone().unwrap_or_else(|| "—".into())
    );
    let kind = l.t(if row.is_ask() {
        "kind.ask"
    } else {
        "kind.notify"
    });
    let sent_ms = row.sent_ms;
    let sub = move || {
        format!(
            "{location} · {kind} · {}",
            absolute_time(l, sent_ms, live.local.get())
        )
    };
    let reply_section = match status {
        Status::Pending => view! { <ReplyBox row=row.clone() shared /> }.into_any(),
        _ => match (row.reply.clone(), row.replied_ms) {
            (Some(text), at) => view! {
                <pre class="full" id="detail-reply">{text}</pre>
                <crate::choices::AnsweredByDefault choices=row.choices.clone() />
                {at.map(|ms| view! {
                    <p class="sub">{move || absolute_time(l, ms, live.local.get())}</p>
                })}
            }
            .into_any(),
            (None, _) => {
                view! { <p class="sub" id="detail-reply">{l.t("harness.no_reply")}</p> }.into_any()
            }
        },
    };
    let dismiss = (!row.is_ask()).then(|| {
        let id = row.id.clone();
        view! {
            <div class="dialog-actions">
                <button
                    type="button"
                    class="primary"
                    on:click=move |_| { shared.dismiss.dispatch(DismissMessage { id: id.clone() }); }
                >
                    {l.t("action.dismiss")}
                </button>
            </div>
        }
    });
    view! {
        <header>
            <div>
                <h2 id="detail-title">{title}</h2>
                <p class="sub" id="detail-sub">{sub}</p>
                {detail_links(row.task_id.clone())}
            </div>
            <StatusBadge status text=badge_text />
        </header>
        <section aria-labelledby="detail-sent-h">
            <h3 id="detail-sent-h">{l.t("detail.sent")}</h3>
            <div class="full" id="detail-sent"><crate::markdown::Markdown text=crate::approval_words::question(l, &row.content) /></div>
        </section>
        <section aria-labelledby="detail-reply-h">
            <h3 id="detail-reply-h">{l.t("detail.reply")}</h3>
            {reply_section}
        </section>
        {row.is_ask().then(|| view! { <crate::receipt::QuestionReceipt id=row.id.clone() /> })}
        {dismiss}
    }
}

#[component]
fn ReplyBox(row: Row, shared: Shared) -> impl IntoView {
    let l = use_locale();
    let (id, task_id) = (row.id.clone(), row.task_id.clone());
    let text = RwSignal::new(shared.draft(&id));
    let send = {
        let task_id = task_id.clone();
        let ask_id = id.clone();
        move || {
            let body = text.get_untracked();
            if body.trim().is_empty() || shared.reply.pending().get_untracked() {
                return;
            }
            shared.reply.dispatch(ReplyAsk {
                task_id: task_id.clone(),
                text: body.trim().to_string(),
                request_id: Some(ask_id.clone()),
            });
        }
    };
    let send_key = send.clone();
    let msg_id = id.clone();
    let picker = row.choices.clone().map(|choices| {
        view! { <crate::choices::ChoicePicker task_id=row.task_id.clone() request_id=row.id.clone() choices action=shared.reply keys=true /> }.into_any()
    });
    view! {
        {picker}
        <label class="visually-hidden" for="detail-reply-text">{l.t("harness.reply_label")}</label>
        <textarea
            id="detail-reply-text"
            rows="3"
            placeholder=l.t("harness.reply_placeholder")
            prop:value=move || text.get()
            on:input=move |ev| {
                let value = event_target_value(&ev);
                shared.set_draft(&msg_id, &task_id, value.clone());
                text.set(value);
            }
            on:keydown=move |ev| crate::keys::send_on_key(&ev, &send_key)
        ></textarea>
        <p class="hint sub">{l.t("harness.send_hint")}</p>
        <div class="dialog-actions">
            <button
                type="button"
                class="primary"
                id="detail-send"
                disabled=move || text.with(|t| t.trim().is_empty()) || shared.reply.pending().get()
                on:click=move |_| send()
            >
                {l.t("action.send")}
            </button>
            <button
                type="button"
                class="ghost"
                id="detail-ignore"
                on:click=move |_| { shared.ignore.dispatch(IgnoreAsk { id: id.clone() }); }
            >
                {l.t("action.ignore")}
            </button>
        </div>
    }
}

/// Keep Tab / Shift+Tab inside the dialog.
fn trap_tab(ev: leptos::ev::KeyboardEvent) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        if ev.key() != "Tab" {
            return;
        }
        let Some(dialog) = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        let Ok(list) =
            dialog.query_selector_all("button:not([disabled]), textarea, a[href], input, select")
        else {
            return;
        };
        let items: Vec<web_sys::HtmlElement> = (0..list.length())
            .filter_map(|i| list.item(i))
            .filter_map(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
            .collect();
        let (Some(first), Some(last)) = (items.first(), items.last()) else {
            return;
        };
        let active = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.active_element());
        let at = |el: &web_sys::HtmlElement| {
            active
                .as_ref()
                .is_some_and(|a| a == el.unchecked_ref::<web_sys::Element>())
        };
        let inside = active.as_ref().is_some_and(|a| dialog.contains(Some(a)));
        if ev.shift_key() && (at(first) || !inside) {
            ev.prevent_default();
            let _ = last.focus();
        } else if !ev.shift_key() && (at(last) || !inside) {
            ev.prevent_default();
            let _ = first.focus();
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = ev;
}

#[cfg(feature = "hydrate")]
fn focus_in(dialog: web_sys::Element, selector: &'static str) {
    use wasm_bindgen::JsCast;
    request_animation_frame(move || {
        if let Some(el) = dialog
            .query_selector(selector)
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    });
}

/// Links from the dialog to the task and its terminal (type-erased: the
/// dialog's view type is already deep).
fn detail_links(task_id: String) -> AnyView {
    let l = crate::i18n::use_locale();
    view! {
        <p class="sub detail-links">
            <a href=format!("/tasks/{task_id}") id="detail-task-link">{l.t("detail.open_task")}</a>
            " · "
            <a href=format!("/tasks/{task_id}#terminal") id="detail-terminal-link">{l.t("detail.open_terminal")}</a>
        </p>
    }
    .into_any()
}
