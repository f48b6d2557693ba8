//! `/tasks/:id`: the task, its parent and children, its message timeline, and
//! the place where the browser terminal will live.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use super::control::{RunBadge, TaskControls, run_label};
use crate::{
    api::{Row, list_window, task_detail, task_exists},
    components::{Clamp, Missing, NotFound, StatusBadge, TimeCell, error_text},
    deferred::Deferred,
    i18n::use_locale,
    live::use_live,
};

/// Timeline rows shown on the task page (the notification center has all).
const TIMELINE_ROWS: u32 = 200;
/// Timeline rows hydrated with the page; the rest after it (`Deferred`).
const TIMELINE_FIRST: usize = 6;

#[component]
pub fn TaskDetailPage() -> impl IntoView {
    let l = use_locale();
    super::control::provide_control_notices();
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|p| p.get("id").unwrap_or_default()));
    // Asked once per page, not per live tick nor per id: rebuilding the
    // sections below while their own resources load would dispose them
    // mid-await. A missing task (or an id that cannot be one) is the 404
    // page, said once, without the task's sections.
    let found = Resource::new(|| (), move |_| task_exists(id.get_untracked()));
    view! {
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match found.await {
                    Ok(true) => view! { <TaskPage id /> }.into_any(),
                    Ok(false) => view! { <NotFound what=Missing::Task /> }.into_any(),
                    Err(e) => view! {
                        <h1>{l.t("tasks.not_found")}</h1>
                        <p class="error" role="alert">{error_text(&e)}</p>
                    }
                    .into_any(),
                }
            })}
        </Transition>
    }
}

/// The page of a task that exists.
#[component]
fn TaskPage(id: Memo<String>) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let detail = Resource::new(
        move || (id.get(), live.tick.get()),
        |(id, _)| task_detail(id),
    );
    // Owned by the page, not by a timeline item: the answer reloads the
    // timeline, and the action must outlive the item that dispatched it.
    let answer = ServerAction::<crate::api::ReplyAsk>::new();
    let timeline = Resource::new(
        move || (id.get(), live.tick.get()),
        |(id, _)| {
            list_window(
                harness_types::MessageView::All,
                String::new(),
                None,
                Some(id),
                TIMELINE_ROWS,
                None,
                None,
            )
        },
    );
    view! {
        <p class="crumbs"><a href="/tasks">{l.t("tasks.back")}</a></p>
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Err(e) => view! {
                        <h1>{l.t("tasks.not_found")}</h1>
                        <p class="error" role="alert">{error_text(&e)}</p>
                    }
                    .into_any(),
                    Ok(d) => {
                        let t = d.task;
                        let agent = t.agent_state.clone();
                        view! {
                            <crate::alerts::PageTitle text=t.title.clone() />
                            <header class="page-head">
                                <h1 id="task-title">{t.title.clone()}</h1>
                                <p class="sub">
                                    <RunBadge state=t.run_state exit_code=t.exit_code
                                        approval=t.waiting_approval />
                                </p>
                                {t.unreadable_holder.clone().map(|n| view! {
                                    <p class="warn" role="status" id="task-unreadable-holder">{n}</p>
                                })}
                            </header>
                            <TaskControls task=t.clone() full=true />
                            {agent.map(|state| view! { <super::agent_state::TaskAgentState state /> })}
                        }
                        .into_any()
                    }
                }
            })}
        </Transition>
        // Outside the Transition above, which is rebuilt on every live tick:
        // the terminal and the reply box are rebuilt only when their shape
        // changes, so a live update never reconnects the terminal or wipes a
        // reply being typed.
        <TerminalArea id detail />
        // The task's facts come after what needs you (the question, the
        // terminal): on a phone the first screen is not all metadata. They
        // and the sections below them, down to the timeline, are hydrated
        // after the page is interactive (`Deferred`): the page's
        // time to interactive is mostly hydration on a phone's CPU.
        <Deferred>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    detail.await.ok().map(|d| view! { <TaskFacts d /> })
                })}
            </Transition>
        </Deferred>
        <Deferred>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    detail.await.ok().map(|d| {
                        let children = d
                            .children
                            .into_iter()
                            .map(|c| view! {
                                <li data-task-id=c.id.clone()>
                                    <a href=format!("/tasks/{}", c.id)>{c.title}</a> " "
                                    <RunBadge state=c.run_state exit_code=c.exit_code />
                                </li>
                            })
                            .collect_view();
                        view! {
                            <section aria-labelledby="children-h">
                                <h2 id="children-h">{l.t("tasks.children")}</h2>
                                <ul class="children" id="task-children">{children}</ul>
                            </section>
                        }
                    })
                })}
            </Transition>
        </Deferred>
        // Outside the detail's Transition: that subtree is rebuilt on every live
        // tick, which would dispose this component's resource while its
        // Suspend still awaits it (a wasm panic).
        <Deferred><crate::delivery::TaskInputs task_id=id /></Deferred>
        <Deferred><super::recovery::TaskRecovery task_id=id /></Deferred>
        <Deferred><super::inbox::TaskInboxView task_id=id /></Deferred>
        <Deferred><super::approvals::TaskApprovals task_id=id /></Deferred>
        <section aria-labelledby="timeline-h">
            <h2 id="timeline-h">{l.t("tasks.timeline")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match timeline.await {
                        Ok(page) if page.rows.is_empty() => {
                            view! { <p class="empty">{l.t("tasks.no_messages")}</p> }.into_any()
                        }
                        Ok(page) => {
                            // Newest first: a cancelled ask with a newer ask was replaced by it.
                            let mut newer_ask = false;
                            let mut items: Vec<_> = page.rows.into_iter().map(|row| {
                                let replaced = row.is_ask() && row.state == harness_types::MessageState::Cancelled && newer_ask;
                                newer_ask |= row.is_ask();
                                view! { <TimelineItem row answer replaced /> }
                            }).collect();
                            // The newest first; the older ones (up to 200) are
                            // hydrated after the page is interactive (a
                            // long history was hydration a phone waited for).
                            // Their answer controls work as plain forms meanwhile.
                            let older = items.split_off(items.len().min(TIMELINE_FIRST));
                            view! {
                                <div class="timeline-lists" id="task-timeline">
                                    <ol class="timeline">{items}</ol>
                                    {(!older.is_empty()).then(|| view! {
                                        <Deferred><ol class="timeline">{older}</ol></Deferred>
                                    })}
                                </div>
                            }
                            .into_any()
                        }
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// What the task is: provider, command, project, run, parent, description.
#[component]
fn TaskFacts(d: crate::api::TaskInfo) -> impl IntoView {
    let l = use_locale();
    let t = d.task;
    let parent = d.parent.map(|p| {
        view! {
            <dt>{l.t("tasks.parent")}</dt>
            <dd><a href=format!("/tasks/{}", p.id) id="task-parent-link">{p.title}</a></dd>
        }
    });
    let project = t.project_id.clone().map(|p| {
        let name = d
            .project_name
            .clone()
            .unwrap_or_else(|| l.t("tasks.project_plan").to_string());
        view! {
            <dt>{l.t("tasks.field.project")}</dt>
            <dd><a href=format!("/projects/{p}/plan") id="task-project-link">{name}</a></dd>
        }
    });
    view! {
        <section aria-labelledby="facts-h" id="task-facts">
            <h2 id="facts-h">{l.t("tasks.about")}</h2>
            <dl class="facts">
                <dt>{l.t("tasks.provider")}</dt><dd><code>{t.provider.as_str()}</code></dd>
                <dt>{l.t("tasks.field.command")}</dt>
                <dd id="task-command">{match t.command.clone() {
                    Some(c) => view! { <code>{c}</code> }.into_any(),
                    None => "—".into_any(),
                }}</dd>
                {t.cwd.clone().map(|c| view! {
                    <dt>{l.t("tasks.field.cwd")}</dt><dd><code>{c}</code></dd>
                })}
                {project}
                <dt>{l.t("tasks.execution")}</dt>
                <dd>{run_label(l, t.run_state, t.exit_code)}</dd>
                {t.node.clone().map(|n| {
                    let id = t.node_id.clone().unwrap_or_default();
                    view! {
                        <dt>{l.t("tasks.node")}</dt>
                        <dd id="task-node" title=format!("{}: {id}", l.t("tasks.node_id"))>
                            <code>{n}</code>
                        </dd>
                    }
                })}
                <dt>{l.t("tasks.unattended")}</dt>
                <dd>{l.t(if t.unattended { "common.yes" } else { "common.no" })}</dd>
                <dt>{l.t("tasks.created")}</dt><dd><TimeCell ms=Some(t.created_ms) /></dd>
                {parent}
            </dl>
            {t.description.clone().map(|d| view! { <pre class="full description">{d}</pre> })}
        </section>
    }
    .into_any()
}

/// What decides the terminal: the task, whether it has one, and the latest
/// execution (a restart remounts the terminal; a park, a resume or an exit
/// do not — the terminal follows those on its own WebSocket).
#[derive(Clone, PartialEq, Eq)]
struct TerminalShape {
    task_id: String,
    execution_id: Option<String>,
}

/// The terminal section and, while the agent waits, the reply box next to
/// it. Drawn after hydration only (both need the page's script), each from
/// its own memo of the task detail, so a live tick rebuilds neither unless
/// its own shape changed (answering removes the reply box, not the terminal).
#[component]
fn TerminalArea(
    id: Memo<String>,
    detail: Resource<Result<crate::api::TaskInfo, ServerFnError>>,
) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let task = move || detail.get().and_then(Result::ok).map(|d| d.task);
    // The task whose agent waits for a reply, if it does.
    let waiting = Memo::new(move |_| task().filter(|t| t.open_ask).map(|t| t.id));
    let terminal = Memo::new(move |_| {
        task()
            // A stopped agent's terminal keeps its last screen, like a failed run's.
            .filter(|t| t.execution.is_some())
            .map(|t| TerminalShape {
                task_id: t.id,
                execution_id: t.execution_id,
            })
    });
    view! {
        {move || {
            live.local
                .get()
                .then(|| waiting.get())
                .flatten()
                .map(|task_id| view! { <super::reply::WaitingReply task_id /> })
        }}
        <section id="terminal" class="terminal" aria-labelledby="terminal-h"
            data-task-id=move || id.get()>
            <h2 id="terminal-h">{l.t("tasks.terminal")}</h2>
            // Until hydrated (and on the server) the hint shows: both renders agree.
            {move || {
                let drawn = live.local.get() && terminal.with(Option::is_some);
                (!drawn).then(|| view! { <p class="sub" id="terminal-hint">{l.t("tasks.terminal_soon")}</p> })
            }}
            {move || {
                live.local
                    .get()
                    .then(|| terminal.get())
                    .flatten()
                    .map(|s| view! { <crate::terminal::TerminalView task_id=s.task_id /> })
            }}
        </section>
    }
}

#[component]
fn TimelineItem(
    row: Row,
    answer: ServerAction<crate::api::ReplyAsk>,
    replaced: bool,
) -> impl IntoView {
    let l = use_locale();
    let status = row.status();
    let text = row.badge_key();
    let receipt = row.is_ask().then(|| receipt_details(row.id.clone()));
    let badge = if replaced {
        view! { <span class="badge" data-status="replaced">{l.t("task.replaced")}</span> }
            .into_any()
    } else {
        view! { <StatusBadge status text /> }.into_any()
    };
    view! {
        <li data-message-id=row.id.clone() data-status=status.as_str()>
            <div class="meta">
                <span class="kind">{l.t(if row.is_ask() { "kind.ask" } else { "kind.notify" })}</span>
                {badge}
                <TimeCell ms=Some(row.sent_ms) />
            </div>
            {if row.is_ask() {
                view! { <crate::markdown::Markdown text=crate::approval_words::question(l, &row.content) /> }.into_any()
            } else {
                view! { <Clamp text=Some(row.content.clone()) /> }.into_any()
            }}
            {(status == crate::api::Status::Pending).then(|| row.choices.clone()).flatten().map(|choices| {
                view! { <crate::choices::ChoicePicker task_id=row.task_id.clone() request_id=row.id.clone() choices action=answer /> }.into_any()
            })}
            <crate::choices::AnsweredByDefault choices=row.choices.clone() />
            {row.reply.map(|r| view! {
                <div class="timeline-reply">
                    <span class="sub">{l.t("detail.reply")} " · "</span>
                    <TimeCell ms=row.replied_ms />
                    <Clamp text=Some(r) />
                </div>
            })}
            {row.delivery.map(|info| view! { <crate::delivery::DeliveryLine info /> })}
            {row.outbound.map(|info| view! { <crate::outbound::OutboundLine info /> })}
            {receipt}
        </li>
    }
    .into_any()
}

/// A question's screen and receipt, fetched when the person opens it
/// (`crate::receipt`): the page does not read every question's receipt.
/// Opened before this row was hydrated, it is read at hydration.
fn receipt_details(id: String) -> AnyView {
    let l = use_locale();
    let open = RwSignal::new(false);
    let node = NodeRef::<leptos::html::Details>::new();
    let is_open = move || {
        #[cfg(feature = "hydrate")]
        {
            node.get_untracked()
                .is_some_and(|d| d.has_attribute("open"))
        }
        #[cfg(not(feature = "hydrate"))]
        false
    };
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if node.get().is_some() && is_open() {
            open.set(true);
        }
    });
    let marker = id.clone();
    view! {
        <details
            class="receipt-details"
            data-receipt=marker
            node_ref=node
            on:toggle=move |_| open.set(is_open())
        >
            <summary>{l.t("tasks.receipt")}</summary>
            {move || open.get().then(|| view! { <crate::receipt::QuestionReceipt id=id.clone() /> })}
        </details>
    }
    .into_any()
}
