//! The resident Workbench of a project in the project list (issue 14): a
//! link to its task, or a button that creates it on demand.

use leptos::prelude::*;

use crate::{
    api::{ensure_workbench, project_workbench},
    components::error_text,
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn WorkbenchCell(project_id: String) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let id = project_id.clone();
    let current = Resource::new(
        move || (id.clone(), live.tick.get()),
        |(id, _)| project_workbench(id),
    );
    let create = Action::new(move |id: &String| ensure_workbench(id.clone()));
    let created = create.value();
    view! {
        <Transition fallback=|| ()>
            {move || {
                let pid = project_id.clone();
                Suspend::new(async move {
                    let made = created.get().and_then(Result::ok);
                    match (current.await, made) {
                        (Ok(Some(w)), _) | (Ok(None), Some(w)) => view! {
                            <a href=format!("/tasks/{}", w.task_id) class="workbench-link"
                                data-workbench-task=w.task_id.clone()>{w.title}</a>
                        }
                        .into_any(),
                        (Ok(None), None) => view! {
                            <button type="button" class="workbench-create"
                                on:click=move |_| { create.dispatch(pid.clone()); }>
                                {l.t("workbench.create")}
                            </button>
                        }
                        .into_any(),
                        (Err(e), _) => view! { <span class="error">{error_text(&e)}</span> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}
