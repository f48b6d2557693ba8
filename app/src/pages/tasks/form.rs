//! The create-task form (a server-function form: works without JavaScript).
//! The command is one shell line (`sh -c`) for provider `command`, the
//! program for `claude`/`codex`; "start now" starts the agent with the first
//! prompt. After a successful create the form is cleared.

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{CreateTask, TaskRow, list_projects},
    components::error_text,
    i18n::use_locale,
};

type Tasks = Resource<Result<Vec<TaskRow>, ServerFnError>>;

#[component]
pub fn CreateTaskForm(action: ServerAction<CreateTask>, tasks: Tasks) -> impl IntoView {
    let l = use_locale();
    let form = NodeRef::<leptos::html::Form>::new();
    let projects = Resource::new(|| (), |_| list_projects());
    // Clear the fields once a task was created (the result line stays).
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(_)))
            && let Some(f) = form.get()
        {
            f.reset();
        }
    });
    let result = move || {
        action.value().get().map(|r| match r {
            Ok(c) => view! {
                <p class="notice" role="status" id="create-status">
                    {l.t("tasks.created_ok")} " "
                    <a href=format!("/tasks/{}", c.task.id)>{c.task.title}</a>
                </p>
                {c.start_error.map(|e| view! {
                    <p class="error" role="alert" id="create-start-error">
                        {l.t("tasks.start_failed")} " " {e}
                    </p>
                })}
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
            <ActionForm action node_ref=form attr:class="form-grid" attr:id="create-task">
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
                <span class="field">
                    <input id="task-command" name="command" aria-describedby="task-command-hint"
                        placeholder="echo hello world" />
                    <span class="sub hint" id="task-command-hint">{l.t("tasks.field.command_hint")}</span>
                </span>
                <label for="task-cwd">{l.t("tasks.field.cwd")}</label>
                <span class="field">
                    <input id="task-cwd" name="cwd" aria-describedby="task-cwd-hint" placeholder="/home/me/project" />
                    <span class="sub hint" id="task-cwd-hint">{l.t("tasks.field.cwd_hint")}</span>
                </span>
                <label for="task-project">{l.t("tasks.field.project")}</label>
                <select id="task-project" name="project_id">
                    <option value="">{l.t("tasks.no_project")}</option>
                    <Transition fallback=|| ()>
                        {move || Suspend::new(async move {
                            projects
                                .await
                                .unwrap_or_default()
                                .into_iter()
                                .map(|p| view! { <option value=p.id>{p.name}</option> })
                                .collect_view()
                        })}
                    </Transition>
                </select>
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
                <label for="task-prompt">{l.t("tasks.field.prompt")}</label>
                <textarea id="task-prompt" name="prompt" rows="2" aria-describedby="task-prompt-hint"></textarea>
                <span></span>
                <span class="sub hint" id="task-prompt-hint">{l.t("tasks.field.prompt_hint")}</span>
                <span></span>
                <label class="check">
                    <input type="checkbox" id="task-start-now" name="start_now" value="on" />
                    <span>{l.t("tasks.field.start_now")}</span>
                </label>
                <span></span>
                <button type="submit" class="primary" disabled=move || action.pending().get()>
                    {l.t("tasks.create")}
                </button>
            </ActionForm>
            {result}
        </details>
    }
    .into_any()
}
