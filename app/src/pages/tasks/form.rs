//! The create-task form (a server-function form: works without JavaScript).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{CreateTask, TaskRow},
    components::error_text,
    i18n::use_locale,
};

type Tasks = Resource<Result<Vec<TaskRow>, ServerFnError>>;

#[component]
pub fn CreateTaskForm(action: ServerAction<CreateTask>, tasks: Tasks) -> impl IntoView {
    let l = use_locale();
    let result = move || {
        action.value().get().map(|r| match r {
            Ok(t) => view! {
                <p class="notice" role="status" id="create-status">
                    {l.t("tasks.created_ok")} " " <a href=format!("/tasks/{}", t.id)>{t.title}</a>
                </p>
            }
            .into_any(),
            Err(e) => view! {
                <p class="error" role="alert" id="create-status">{error_text(&e)}</p>
            }
            .into_any(),
        })
    };
    view! {
        <details class="card create-task" open>
            <summary>{l.t("tasks.new")}</summary>
            <ActionForm action attr:class="form-grid" attr:id="create-task">
                <label for="task-title">{l.t("tasks.field.title")}</label>
                <input id="task-title" name="title" required maxlength="500" />
                <label for="task-description">{l.t("tasks.field.description")}</label>
                <textarea id="task-description" name="description" rows="3"></textarea>
                <label for="task-provider">{l.t("tasks.provider")}</label>
                <select id="task-provider" name="provider">
                    <option value="claude">"claude"</option>
                    <option value="codex">"codex"</option>
                    <option value="command">"command"</option>
                </select>
                <label for="task-command">{l.t("tasks.field.command")}</label>
                <input id="task-command" name="command" placeholder=l.t("tasks.field.command_hint") />
                <label for="task-parent">{l.t("tasks.parent")}</label>
                <select id="task-parent" name="parent_task_id">
                    <option value="">{l.t("tasks.no_parent")}</option>
                    <Transition fallback=|| ()>
                        {move || Suspend::new(async move {
                            tasks
                                .await
                                .unwrap_or_default()
                                .into_iter()
                                .map(|t| view! { <option value=t.id>{t.title}</option> })
                                .collect_view()
                        })}
                    </Transition>
                </select>
                <span></span>
                <button type="submit" class="primary" disabled=move || action.pending().get()>
                    {l.t("tasks.create")}
                </button>
            </ActionForm>
            {result}
        </details>
    }
}
