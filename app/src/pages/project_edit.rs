//! Editing a project from `/projects`: name and
//! directory; the directory is checked on the server (exists, is a
//! directory, readable) and a refusal is shown next to its field.

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{ProjectRow, UpdateProject},
    components::error_text,
    i18n::use_locale,
};

/// The project being edited (`None`: no form open), shared by the rows'
/// Edit buttons and the form.
#[derive(Clone, Copy)]
pub struct Editing(pub RwSignal<Option<ProjectRow>>);

impl Editing {
    pub fn provide() -> Self {
        let e = Self(RwSignal::new(None));
        provide_context(e);
        e
    }

    pub fn use_editing() -> Self {
        use_context::<Self>().unwrap_or_else(Self::provide)
    }
}

/// A row's Edit button.
#[component]
pub fn EditProjectButton(project: ProjectRow) -> impl IntoView {
    let l = use_locale();
    let editing = Editing::use_editing();
    let label = l.t("projects.edit_named").replace("{name}", &project.name);
    view! {
        <button type="button" class="ghost project-edit" aria-label=label
            on:click=move |_| editing.0.set(Some(project.clone()))>
            {l.t("projects.edit")}
        </button>
    }
}

/// The edit form (shown while a project is being edited).
#[component]
pub fn EditProjectForm() -> impl IntoView {
    let l = use_locale();
    let editing = Editing::use_editing();
    let live = crate::live::use_live();
    let action = ServerAction::<UpdateProject>::new();
    let name_input = NodeRef::<leptos::html::Input>::new();
    let saved_name = RwSignal::new(None::<String>);
    // A form opening: forget the last attempt, focus the first field.
    Effect::new(move |_| {
        if editing.0.with(Option::is_some) {
            action.value().set(None);
            saved_name.set(None);
            if let Some(input) = name_input.get() {
                let _ = input.focus();
            }
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(saved)) = action.value().get()
            && let Some(p) = saved.project
        {
            saved_name.set(Some(p.name));
            editing.0.set(None);
            live.tick.update(|t| *t += 1);
        }
    });
    let field_error = move |field: &'static str| {
        action.value().get().and_then(|r| match r {
            Ok(s) if s.field.as_deref() == Some(field) => s.error,
            _ => None,
        })
    };
    let other_error = move || {
        action.value().get().and_then(|r| match r {
            Ok(s) if s.field.is_none() => s.error,
            Ok(_) => None,
            Err(e) => Some(error_text(&e)),
        })
    };
    let saved = move || {
        saved_name.get().map(|name| {
            view! {
                <p class="notice" role="status" id="project-edit-status">
                    {l.t("projects.saved")} " " <strong>{name}</strong>
                </p>
            }
        })
    };
    view! {
        {saved}
        {move || editing.0.get().map(|p| {
            let name_err = move || field_error("name");
            let path_err = move || field_error("path");
            let project_id = p.id.clone();
            view! {
                <section class="card" id="edit-project" aria-labelledby="edit-project-h"
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Escape" {
                            editing.0.set(None);
                        }
                    }>
                    <h2 id="edit-project-h">
                        {l.t("projects.edit_title").replace("{name}", &p.name)}
                    </h2>
                    <ActionForm action attr:class="form-grid" attr:id="edit-project-form">
                        <input type="hidden" name="id" value=p.id.clone() />
                        <label for="edit-project-name">{l.t("projects.field.name")}</label>
                        <div>
                            <input id="edit-project-name" name="name" required maxlength="200"
                                node_ref=name_input value=p.name.clone()
                                aria-invalid=move || name_err().is_some().then_some("true")
                                aria-describedby="edit-project-name-error" />
                            <p class="field-error" id="edit-project-name-error" role="alert">
                                {name_err}
                            </p>
                        </div>
                        <label for="edit-project-path">{l.t("projects.field.path")}</label>
                        <div>
                            <input id="edit-project-path" name="path" required value=p.path.clone()
                                aria-invalid=move || path_err().is_some().then_some("true")
                                aria-describedby="edit-project-path-error" />
                            <p class="field-error" id="edit-project-path-error" role="alert">
                                {path_err}
                            </p>
                        </div>
                        <span></span>
                        <div class="actions">
                            <button type="submit" class="primary" disabled=move || action.pending().get()>
                                {l.t("projects.save")}
                            </button>
                            " "
                            <button type="button" class="ghost" id="edit-project-cancel"
                                on:click=move |_| editing.0.set(None)>
                                {l.t("projects.cancel")}
                            </button>
                        </div>
                    </ActionForm>
                    {move || other_error().map(|e| view! {
                        <p class="error" role="alert" id="edit-project-error">{e}</p>
                    })}
                    <super::project_approvals::ProjectApprovalPolicy project_id=project_id />
                </section>
            }
        })}
    }
}
