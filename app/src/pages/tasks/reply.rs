//! The reply box next to the terminal while the task's agent waits for you:
//! the question itself, its options (one tap answers) and a free-text reply
//! (the box was an empty textarea, the question ~3,900 px
//! further down on a phone).

use leptos::prelude::*;

use crate::{
    api::{ReplyAsk, list_window},
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
    let task = StoredValue::new(task_id.clone());
    // The open question of this task (the newest OPEN ask).
    let question = Resource::new(
        move || live.tick.get(),
        move |_| {
            list_window(
                harness_types::MessageView::Pending,
                String::new(),
                None,
                Some(task.get_value()),
                1,
                None,
                None,
            )
        },
    );
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
                task_id: task.get_value(),
                text: t,
                request_id: None,
            });
        }
    };
    let send_key = send;
    view! {
        <section class="waiting-reply card" id="task-reply" aria-labelledby="task-reply-h">
            <h2 id="task-reply-h">{l.t("task.reply_label")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let row = question
                        .await
                        .ok()
                        .and_then(|p| {
                            p.rows.into_iter().find(|r| {
                                r.is_ask() && r.state == harness_types::MessageState::Open
                            })
                        });
                    row.map(|row| {
                        let picker = row.choices.clone().map(|choices| view! {
                            <crate::choices::ChoicePicker task_id=row.task_id.clone() request_id=row.id.clone() choices action=reply />
                        });
                        view! {
                            <div class="full question" id="task-reply-question">
                                <crate::markdown::Markdown text=crate::approval_words::question(l, &row.content) />
                            </div>
                            {picker}
                        }
                    })
                })}
            </Transition>
            <form class="waiting-reply-form" on:submit=move |ev| { ev.prevent_default(); send(); }>
                <label for="task-reply-text">{l.t("task.reply_own")}</label>
                <textarea
                    id="task-reply-text"
                    rows="3"
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    on:keydown=move |ev| crate::keys::send_on_key(&ev, send_key)
                ></textarea>
                <button type="submit" class="primary" id="task-reply-send"
                    disabled=move || reply.pending().get()>{l.t("task.reply_send")}</button>
            </form>
            <NoticeLine notice id="task-reply-status" />
        </section>
    }
    .into_any()
}
