//! The reply box next to the terminal while the task's agent waits for you.

use leptos::prelude::*;

use crate::{
    api::ReplyAsk,
    components::{Notice, NoticeLine, error_text},
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn WaitingReply(task_id: String) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let reply = ServerAction::<ReplyAsk>::new();
    let text = RwSignal::new(String::new());
    let notice = RwSignal::new(None::<Notice>);
    Effect::new(move |_| {
        if let Some(r) = reply.value().get() {
            match r {
                Ok(_) => {
                    text.set(String::new());
                    notice.set(Some(Notice {
                        ok: true,
                        text: l.t("task.reply_sent").to_string(),
                    }));
                }
                Err(e) => notice.set(Some(Notice {
                    ok: false,
                    text: error_text(&e),
                })),
            }
            live.tick.update(|t| *t += 1);
        }
    });
    let send = move || {
        let t = text.get_untracked();
        if !t.trim().is_empty() {
            reply.dispatch(ReplyAsk {
                task_id: task_id.clone(),
                text: t,
            });
        }
    };
    let send_key = send.clone();
    view! {
        <form class="waiting-reply card" id="task-reply" on:submit=move |ev| { ev.prevent_default(); send(); }>
            <label for="task-reply-text"><strong>{l.t("task.reply_label")}</strong></label>
            <textarea
                id="task-reply-text"
                rows="3"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                        ev.prevent_default();
                        send_key();
                    }
                }
            ></textarea>
            <button type="submit" class="primary" disabled=move || reply.pending().get()>{l.t("task.reply_send")}</button>
            <NoticeLine notice id="task-reply-status" />
        </form>
    }
    .into_any()
}
