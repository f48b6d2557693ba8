//! A project's own approval rules, edited on the project's edit
//! form: JSON text like the global policy's in Settings, tried before the
//! global rules; `{"rules": []}` leaves only the global ones. Saving
//! validates in the core: an error names the rule's index and its field.

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{SaveProjectApprovalPolicy, field_error, project_approval_policy},
    components::error_text,
    i18n::use_locale,
};

#[component]
pub fn ProjectApprovalPolicy(project_id: String) -> impl IntoView {
    let l = use_locale();
    let save = ServerAction::<SaveProjectApprovalPolicy>::new();
    let id = project_id.clone();
    let policy = Resource::new(
        move || save.version().get(),
        move |_| project_approval_policy(id.clone()),
    );
    let status = move || match save.value().get() {
        Some(Err(e)) => {
            let (field, message) = field_error(&e);
            view! {
                <p class="error" role="alert" id="project-policy-status"
                    data-field=field.unwrap_or_default()>
                    {message}
                </p>
            }
            .into_any()
        }
        Some(Ok(())) => view! {
            <p class="sub" role="status" id="project-policy-status">{l.t("settings.saved")}</p>
        }
        .into_any(),
        None => ().into_any(),
    };
    view! {
        <section id="project-approvals" aria-labelledby="project-approvals-h">
            <h3 id="project-approvals-h">{l.t("approvals.project_heading")}</h3>
            <p class="sub">{l.t("approvals.project_help")}</p>
            <Transition fallback=|| ()>
                {move || {
                    let project_id = project_id.clone();
                    Suspend::new(async move {
                        match policy.await {
                            Ok(p) => view! {
                                <ActionForm action=save attr:id="project-policy-form">
                                    <input type="hidden" name="project_id" value=project_id />
                                    <label for="project-policy-rules">
                                        {l.t("approvals.project_rules")}
                                    </label>
                                    <textarea id="project-policy-rules" name="rules" rows="8"
                                        spellcheck="false" class="mono"
                                        maxlength="200000">{p.json}</textarea>
                                    <button type="submit" class="primary" id="project-policy-save"
                                        disabled=move || save.pending().get()>
                                        {l.t("approvals.project_save")}
                                    </button>
                                </ActionForm>
                            }
                            .into_any(),
                            Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }
                                .into_any(),
                        }
                    })
                }}
            </Transition>
            {status}
        </section>
    }
}
