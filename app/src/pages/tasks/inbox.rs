//! The task page's inbox: events from derived children and the
//! batches they were typed in, live; and "derive a sub-task" (a child with
//! this task as its parent).

use harness_types::Priority;
use leptos::prelude::*;

use crate::{
    api::{InboxData, create_task, task_inbox},
    components::{TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

/// Rendered beside (not inside) the task's detail, so a live reload of the
/// detail does not re-create it (and its form keeps its state).
#[component]
pub fn TaskInboxView(#[prop(into)] task_id: Signal<String>) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let inbox = Resource::new(
        move || (task_id.get(), live.tick.get()),
        |(id, _)| task_inbox(id),
    );
    view! {
        <section aria-labelledby="inbox-h" id="task-inbox">
            <h2 id="inbox-h">{l.t("inbox.title")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match inbox.await {
                        Ok(i) if i.events.is_empty() => {
                            view! { <p class="empty">{l.t("inbox.empty")}</p> }.into_any()
                        }
                        Ok(i) => view! { <InboxLists inbox=i /> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            <DeriveForm parent_id=task_id />
        </section>
    }
}

#[component]
fn InboxLists(inbox: InboxData) -> impl IntoView {
    let l = use_locale();
    let events = inbox
        .events
        .into_iter()
        .map(|e| {
            let (kind, state, priority) = (e.kind.as_str(), e.state.as_str(), e.priority.as_str());
            view! {
                <li data-event-id=e.id data-state=state data-kind=kind
                    data-priority=priority>
                    <span class=format!("badge inbox-{}", state.to_lowercase())>{state}</span> " "
                    <span class="kind">{kind}</span> " "
                    {(e.priority == Priority::High).then(|| view! { <span class="badge pending">{priority}</span> })} " "
                    <a href=format!("/tasks/{}", e.source_task_id)>{e.source_title}</a> " "
                    <TimeCell ms=Some(e.created_ms) />
                    <div class="sub">{e.detail}</div>
                    {e.error.map(|err| view! { <div class="error">{err}</div> })}
                </li>
            }
        })
        .collect_view();
    let batches = inbox
        .batches
        .into_iter()
        .map(|b| {
            let (id, state) = (b.id.clone(), b.state.as_str());
            view! {
                <li data-batch-id=id data-state=state>
                    <code>{b.id}</code> " " <span class="badge">{state}</span> " "
                    {format!("{} ×", b.events)} " " <TimeCell ms=Some(b.created_ms) />
                    {b.error.map(|err| view! { <div class="error">{err}</div> })}
                </li>
            }
        })
        .collect_view();
    view! {
        <ol class="inbox-events" id="inbox-events">{events}</ol>
        <h3>{l.t("inbox.batches")}</h3>
        <ol class="inbox-batches" id="inbox-batches">{batches}</ol>
    }
}

#[component]
fn DeriveForm(parent_id: Signal<String>) -> impl IntoView {
    let l = use_locale();
    let title = RwSignal::new(String::new());
    let derive = Action::new(move |(title, parent): &(String, String)| {
        create_task(
            title.clone(),
            None,
            None,
            None,
            Some(parent.clone()),
            None,
            None,
            None,
            None,
        )
    });
    let result = derive.value();
    view! {
        <form class="derive" id="derive-form" on:submit=move |ev| {
            ev.prevent_default();
            derive.dispatch((title.get_untracked(), parent_id.get_untracked()));
        }>
            <label>{l.t("inbox.derive")} " "
                <input type="text" name="title" id="derive-title" required
                    prop:value=move || title.get()
                    on:input=move |ev| title.set(event_target_value(&ev)) />
            </label>
            <button type="submit">{l.t("inbox.derive_button")}</button>
            {move || result.get().map(|r| match r {
                Ok(t) => view! {
                    <p class="ok" id="derive-result">
                        <a href=format!("/tasks/{}", t.task.id)>{t.task.title}</a>
                    </p>
                }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
            })}
        </form>
    }
}
