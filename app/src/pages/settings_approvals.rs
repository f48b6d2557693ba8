//! `/settings` → Approvals: the global approval policy as JSON
//! (first match wins; the project's own rules go first, over REST
//! `PUT /api/projects/{id}/approval-policy`). Saving validates in the core:
//! an error names the rule's index and its field. Forms post to server
//! functions (no JavaScript needed).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{ResetApprovalPolicy, SaveApprovalPolicy, approval_policy, field_error},
    components::error_text,
    i18n::use_locale,
};

#[component]
pub fn ApprovalPolicy() -> impl IntoView {
    let l = use_locale();
    let save = ServerAction::<SaveApprovalPolicy>::new();
    let reset = ServerAction::<ResetApprovalPolicy>::new();
    let policy = Resource::new(
        move || (save.version().get(), reset.version().get()),
        |_| approval_policy(),
    );
    let status = move || {
        let failed = save
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| reset.value().get().and_then(Result::err));
        match failed {
            Some(e) => {
                let (field, message) = field_error(&e);
                view! {
                    <p class="error" role="alert" id="policy-status" data-field=field.unwrap_or_default()>
                        {message}
                    </p>
                }
                .into_any()
            }
            None => (matches!(save.value().get(), Some(Ok(())))
                || matches!(reset.value().get(), Some(Ok(()))))
            .then(|| view! { <p class="sub" role="status" id="policy-status">{l.t("settings.saved")}</p> })
            .into_any(),
        }
    };
    view! {
        <section id="approvals" aria-labelledby="approvals-h" class="card">
            <h2 id="approvals-h">{l.t("approvals.heading")}</h2>
            <p class="sub">{l.t("approvals.help")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match policy.await {
                        Ok(p) => view! {
                            <p class="sub" id="policy-source">
                                {l.t(if p.builtin { "approvals.builtin" } else { "approvals.stored" })}
                            </p>
                            <ActionForm action=save attr:id="policy-form">
                                <label for="policy-rules">{l.t("approvals.rules")}</label>
                                <textarea id="policy-rules" name="rules" rows="16" spellcheck="false"
                                    class="mono" maxlength="200000">{p.json}</textarea>
                                <button type="submit" class="primary" disabled=move || save.pending().get()>
                                    {l.t("settings.save_gateway")}
                                </button>
                            </ActionForm>
                            <ActionForm action=reset attr:id="policy-reset" attr:class="inline">
                                <button type="submit" class="ghost" disabled=p.builtin>{l.t("approvals.reset")}</button>
                            </ActionForm>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            {status}
        </section>
    }
}
