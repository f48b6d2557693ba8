//! `/tasks/:id`: the task, its parent and children, its message timeline, and
//! the place where the browser terminal will live.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use super::{OpenAsk, TaskStatus};
use crate::{
    api::{Row, list_window, task_detail},
    components::{Clamp, StatusBadge, TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

/// Timeline rows shown on the task page (the notification center has all).
const TIMELINE_ROWS: u32 = 200;

#[component]
pub fn TaskDetailPage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|p| p.get("id").unwrap_or_default()));
    let detail = Resource::new(
        move || (id.get(), live.tick.get()),
        |(id, _)| task_detail(id),
    );
    let timeline = Resource::new(
        move || (id.get(), live.tick.get()),
        |(id, _)| list_window("all".into(), String::new(), None, Some(id), TIMELINE_ROWS),
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
                        let children = d
                            .children
                            .into_iter()
                            .map(|c| view! {
                                <li data-task-id=c.id.clone()>
                                    <a href=format!("/tasks/{}", c.id)>{c.title}</a> " "
                                    <TaskStatus status=c.status /> <OpenAsk open=c.open_ask />
                                </li>
                            })
                            .collect_view();
                        let parent = d.parent.map(|p| view! {
                            <dt>{l.t("tasks.parent")}</dt>
                            <dd><a href=format!("/tasks/{}", p.id) id="task-parent-link">{p.title}</a></dd>
                        });
                        view! {
                            <header class="page-head">
                                <h1 id="task-title">{t.title.clone()}</h1>
                                <p class="sub">
                                    <TaskStatus status=t.status.clone() /> " " <OpenAsk open=t.open_ask />
                                </p>
                            </header>
                            <dl class="facts">
                                <dt>{l.t("tasks.provider")}</dt><dd><code>{t.provider.clone()}</code></dd>
                                <dt>{l.t("tasks.execution")}</dt>
                                <dd>{t.execution.clone().unwrap_or_else(|| "—".into())}</dd>
                                <dt>{l.t("tasks.unattended")}</dt>
                                <dd>{l.t(if t.unattended { "common.yes" } else { "common.no" })}</dd>
                                <dt>{l.t("tasks.created")}</dt><dd><TimeCell ms=Some(t.created_ms) /></dd>
                                {parent}
                            </dl>
                            {t.description.clone().map(|d| view! { <pre class="full description">{d}</pre> })}
                            <section id="terminal" class="terminal" aria-labelledby="terminal-h"
                                data-task-id=t.id.clone()>
                                <h2 id="terminal-h">{l.t("tasks.terminal")}</h2>
                                <p class="sub">{l.t("tasks.terminal_soon")}</p>
                                {t.execution.is_some().then(|| view! {
                                    <crate::terminal::TerminalView task_id=t.id.clone() />
                                })}
                            </section>
                            <crate::delivery::TaskInputs task_id=t.id.clone() />
                            <section aria-labelledby="children-h">
                                <h2 id="children-h">{l.t("tasks.children")}</h2>
                                <ul class="children" id="task-children">{children}</ul>
                            </section>
                        }
                        .into_any()
                    }
                }
            })}
        </Transition>
        <section aria-labelledby="timeline-h">
            <h2 id="timeline-h">{l.t("tasks.timeline")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match timeline.await {
                        Ok(page) if page.rows.is_empty() => {
                            view! { <p class="empty">{l.t("tasks.no_messages")}</p> }.into_any()
                        }
                        Ok(page) => view! {
                            <ol class="timeline" id="task-timeline">
                                {page.rows.into_iter().map(|row| view! { <TimelineItem row /> }).collect_view()}
                            </ol>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn TimelineItem(row: Row) -> impl IntoView {
    let l = use_locale();
    let status = row.status();
    view! {
        <li data-message-id=row.id.clone() data-status=status.as_str()>
            <div class="meta">
                <span class="kind">{l.t(if row.is_ask() { "kind.ask" } else { "kind.notify" })}</span>
                <StatusBadge status />
                <TimeCell ms=Some(row.sent_ms) />
            </div>
            <Clamp text=Some(row.content) />
            {row.reply.map(|r| view! {
                <div class="timeline-reply">
                    <span class="sub">{l.t("detail.reply")} " · "</span>
                    <TimeCell ms=row.replied_ms />
                    <Clamp text=Some(r) />
                </div>
            })}
            {row.delivery.map(|info| view! { <crate::delivery::DeliveryLine info /> })}
            {row.outbound.map(|info| view! { <crate::outbound::OutboundLine info /> })}
        </li>
    }
}
