//! The "add a project" form on `/projects` (a server-function form: works
//! without JavaScript).

use leptos::{form::ActionForm, prelude::*};

use crate::{api::AddProject, components::error_text, i18n::use_locale};

#[component]
pub fn AddProjectForm() -> impl IntoView {
    let l = use_locale();
    let action = ServerAction::<AddProject>::new();
    let form = NodeRef::<leptos::html::Form>::new();
    let live = crate::live::use_live();
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(_))) {
            if let Some(f) = form.get() {
                f.reset();
            }
            live.tick.update(|t| *t += 1);
        }
    });
    let result = move || {
        action.value().get().map(|r| match r {
            Ok(p) => view! {
                <p class="notice" role="status" id="project-status">
                    {l.t("projects.added")} " " <a href=format!("/projects/{}/plan", p.id)>{p.name}</a>
                </p>
            }
            .into_any(),
            Err(e) => view! { <p class="error" role="alert" id="project-status">{error_text(&e)}</p> }.into_any(),
        })
    };
    view! {
        <details class="card create-task">
            <summary>{l.t("projects.add")}</summary>
            <ActionForm action node_ref=form attr:class="form-grid" attr:id="add-project">
                <label for="project-name">{l.t("projects.field.name")}</label>
                <input id="project-name" name="name" required maxlength="200" />
                <label for="project-path">{l.t("projects.field.path")}</label>
                <input id="project-path" name="path" required placeholder="/home/me/project" />
                <label for="project-workspace">{l.t("projects.field.workspace")}</label>
                <input id="project-workspace" name="workspace" placeholder="default" />
                <span></span>
                <button type="submit" class="primary" disabled=move || action.pending().get()>
                    {l.t("projects.add")}
                </button>
            </ActionForm>
            {result}
        </details>
    }
    .into_any()
}
