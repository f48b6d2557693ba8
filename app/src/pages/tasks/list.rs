use std::collections::HashMap;

use leptos::prelude::*;

use super::{OpenAsk, TaskStatus, form::CreateTaskForm};
use crate::{
    api::{CreateTask, list_tasks},
    components::{TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn TaskListPage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let create = ServerAction::<CreateTask>::new();
    let tasks = Resource::new(
        move || (create.version().get(), live.tick.get()),
        |_| list_tasks(),
    );
    view! {
        <header class="page-head">
            <h1>{l.t("tasks.title")}</h1>
        </header>
        <CreateTaskForm action=create tasks />
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match tasks.await {
                    Ok(tasks) => {
                        let titles: HashMap<String, String> =
                            tasks.iter().map(|t| (t.id.clone(), t.title.clone())).collect();
                        let rows = tasks
                            .into_iter()
                            .map(|t| {
                                let parent = t.parent_id.clone().map(|pid| {
                                    let title = titles.get(&pid).cloned().unwrap_or_else(|| pid.clone());
                                    view! { <a href=format!("/tasks/{pid}")>{title}</a> }
                                });
                                view! {
                                    <tr data-task-id=t.id.clone()>
                                        <td><a href=format!("/tasks/{}", t.id)>{t.title.clone()}</a></td>
                                        <td><TaskStatus status=t.status.clone() /></td>
                                        <td><code>{t.provider.clone()}</code></td>
                                        <td>{match parent { Some(p) => p.into_any(), None => "—".into_any() }}</td>
                                        <td>{l.t(if t.unattended { "common.yes" } else { "common.no" })}</td>
                                        <td><OpenAsk open=t.open_ask /></td>
                                        <td><TimeCell ms=Some(t.created_ms) /></td>
                                    </tr>
                                }
                            })
                            .collect_view();
                        view! {
                            <div class="table-card">
                                <table class="tasks">
                                    <thead>
                                        <tr>
                                            <th scope="col">{l.t("col.task")}</th>
                                            <th scope="col">{l.t("col.status")}</th>
                                            <th scope="col">{l.t("tasks.provider")}</th>
                                            <th scope="col">{l.t("tasks.parent")}</th>
                                            <th scope="col">{l.t("tasks.unattended")}</th>
                                            <th scope="col">{l.t("tasks.open_ask")}</th>
                                            <th scope="col">{l.t("tasks.created")}</th>
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
    }
}
