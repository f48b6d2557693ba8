use std::collections::HashMap;

use leptos::prelude::*;

use super::{
    agent_state::NeedsYouMark,
    control::{RunBadge, TaskControls},
    form::CreateTaskForm,
};
use crate::{
    agent_state::AgentStateBadge,
    api::{CreateTask, list_tasks},
    components::{TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn TaskListPage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    super::control::provide_control_notices();
    let create = ServerAction::<CreateTask>::new();
    let tasks = Resource::new(
        move || (create.version().get(), live.tick.get()),
        |_| list_tasks(),
    );
    view! {
        <crate::alerts::PageTitle text=l.t("tasks.title") />
        <header class="page-head">
            <h1>{l.t("tasks.title")}</h1>
        </header>
        // On a phone the list comes first once there is one (the long form
        // pushed it off the screen): style/main.css `.task-list-page`.
        <div class="task-list-page">
        <CreateTaskForm action=create tasks />
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match tasks.await {
                    Ok(tasks) if tasks.is_empty() => view! {
                        <div class="empty-state card" id="tasks-empty">
                            <p><strong>{l.t("tasks.empty")}</strong></p>
                            <p class="sub">{l.t("tasks.empty_hint")}</p>
                        </div>
                    }
                    .into_any(),
                    Ok(tasks) => {
                        let titles: HashMap<String, String> =
                            tasks.iter().map(|t| (t.id.clone(), t.title.clone())).collect();
                        let rows = tasks
                            .into_iter()
                            .map(|t| {
                                let parent = t.parent_id.clone().map(|pid| {
                                    let title = titles.get(&pid).cloned().unwrap_or_else(|| pid.clone());
                                    view! {
                                        <span class="sub parent">
                                            {l.t("tasks.parent")} ": "
                                            <a href=format!("/tasks/{pid}")>{title}</a>
                                        </span>
                                    }
                                });
                                let command = t.command.clone().map(|c| view! { <code class="cmd">{c}</code> });
                                view! {
                                    <tr data-task-id=t.id.clone()>
                                        <td class="task-title" data-label=l.t("col.task")>
                                            <a href=format!("/tasks/{}", t.id)>{t.title.clone()}</a>
                                            {parent}
                                        </td>
                                        <td data-label=l.t("col.status")>
                                            <RunBadge state=t.run_state exit_code=t.exit_code />
                                            {t.unattended.then(|| view! {
                                                " " <span class="badge" data-unattended="true">{l.t("tasks.unattended")}</span>
                                            })}
                                            {t.agent_state.clone().map(|s| view! {
                                                " " <AgentStateBadge state=s.state label=s.label severity=s.severity reason=s.reason />
                                            })}
                                            {t.needs_you.then(|| view! { " " <NeedsYouMark /> })}
                                        </td>
                                        <td data-label=l.t("tasks.provider")>
                                            <code>{t.provider.as_str()}</code> " " {command}
                                        </td>
                                        <td class="time" data-label=l.t("tasks.created")><TimeCell ms=Some(t.created_ms) /></td>
                                        <td class="actions" data-label=l.t("col.actions")><TaskControls task=t.clone() /></td>
                                    </tr>
                                }
                                .into_any()
                            })
                            .collect_view();
                        view! {
                            <div class="table-card">
                                <table class="tasks cards-on-phone">
                                    <thead>
                                        <tr>
                                            <th scope="col">{l.t("col.task")}</th>
                                            <th scope="col">{l.t("col.status")}</th>
                                            <th scope="col">{l.t("tasks.provider")}</th>
                                            <th scope="col">{l.t("tasks.created")}</th>
                                            <th scope="col">{l.t("col.actions")}</th>
                                        </tr>
                                    </thead>
                                    <tbody>{rows}</tbody>
                                </table>
                            </div>
                        }
                        .into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
        </div>
    }
}
