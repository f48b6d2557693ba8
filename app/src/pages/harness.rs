//! Minimal notification center: the OPEN asks, each answerable inline. Works
//! without JavaScript (the form posts to the server function) and, once
//! hydrated, replies without a page load.

use leptos::{form::ActionForm, prelude::*};

use crate::api::{AskRow, ReplyAsk, pending_asks};

#[component]
pub fn HarnessPage() -> impl IntoView {
    let reply = ServerAction::<ReplyAsk>::new();
    let asks = Resource::new(move || reply.version().get(), |_| pending_asks());
    view! {
        <h1>"Pending questions"</h1>
        <ReplyStatus reply />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match asks.await {
                    Ok(rows) if rows.is_empty() => {
                        view! { <p class="empty" id="no-pending">"No agent is waiting for you."</p> }
                            .into_any()
                    }
                    Ok(rows) => view! {
                        <table class="asks">
                            <thead>
                                <tr>
                                    <th>"Task"</th>
                                    <th>"Question"</th>
                                    <th>"Sent at"</th>
                                    <th>"Reply"</th>
                                </tr>
                            </thead>
                            <tbody>
                                {rows.into_iter().map(|row| view! { <AskLine row reply /> }).collect_view()}
                            </tbody>
                        </table>
                    }
                    .into_any(),
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ReplyStatus(reply: ServerAction<ReplyAsk>) -> impl IntoView {
    move || {
        reply.value().get().map(|result| match result {
            Ok(r) => {
                let text = if r.deduped {
                    "Already answered.".to_string()
                } else {
                    format!(
                        "Answered — task {} ({}).",
                        r.task_id,
                        r.mode.replace('_', " ")
                    )
                };
                view! { <p class="notice" id="reply-status" role="status">{text}</p> }.into_any()
            }
            Err(e) => view! { <p class="error" id="reply-status" role="alert">{e.to_string()}</p> }
                .into_any(),
        })
    }
}

#[component]
fn AskLine(row: AskRow, reply: ServerAction<ReplyAsk>) -> impl IntoView {
    let location = match (&row.workspace, &row.project) {
        (Some(w), Some(p)) => format!("{w} / {p}"),
        _ => String::new(),
    };
    let AskRow {
        id,
        task_id,
        task_title,
        content,
        created_at,
        ..
    } = row;
    let row_task_id = task_id.clone();
    let time_title = created_at.clone();
    view! {
        <tr class="ask" data-task-id=row_task_id data-message-id=id>
            <td class="task">
                <span class="title">{task_title}</span>
                <span class="sub">{location}</span>
            </td>
            <td class="content">{content}</td>
            <td class="time" title=time_title>{created_at}</td>
            <td>
                <ActionForm action=reply>
                    <input type="hidden" name="task_id" value=task_id />
                    <textarea name="text" required rows="2" aria-label="Reply"></textarea>
                    <button type="submit">"Send"</button>
                </ActionForm>
            </td>
        </tr>
    }
}
