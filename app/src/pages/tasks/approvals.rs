//! The task page's approvals: every held call of the
//! task — the exact call, its state, who decided via where and when, the
//! reason, what the agent did next, the rule that matched and the working
//! directory — newest first, live; "waiting for approval" while one is
//! pending. The full audit
//! (CSV or JSON) is `GET /api/approvals?taskId=…&format=csv`.

use leptos::prelude::*;

use crate::{
    api::task_approvals,
    components::{Clamp, TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

/// Beside (not inside) the task's detail, like the inbox: a live reload of
/// the detail does not re-create it. Shown only when the task has approvals.
#[component]
pub fn TaskApprovals(#[prop(into)] task_id: Signal<String>) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let rows = Resource::new(
        move || (task_id.get(), live.tick.get()),
        |(id, _)| task_approvals(id),
    );
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match rows.await {
                    Ok(list) if list.is_empty() => ().into_any(),
                    Ok(list) => {
                        let waiting = list
                            .iter()
                            .any(|a| a.state == harness_types::ApprovalState::Pending);
                        view! {
                        <section aria-labelledby="approvals-h" id="task-approvals">
                            <h2 id="approvals-h">{l.t("approvals.audit")} " "
                                {waiting.then(|| view! {
                                    <span class="badge pending" data-waiting-approval="true">{l.t("approvals.waiting")}</span>
                                })}
                            </h2>
                            <ul class="approvals">
                                {list.into_iter().map(|a| view! {
                                    <li data-approval-id=a.id data-state=a.state.as_str()>
                                        <span class="badge" data-status=a.state.as_str().to_lowercase()>{a.state.as_str()}</span> " "
                                        <code>{a.tool}</code> " "
                                        <TimeCell ms=Some(a.created_ms) />
                                        <Clamp text=Some(a.input) />
                                        <div class="sub" data-rule="true">
                                            {a.rule} {a.cwd.map(|c| format!(" · {c}"))}
                                        </div>
                                        <div class="sub">
                                            {a.decided} {a.reason.map(|r| format!(" · {r}"))}
                                            {a.outcome.map(|o| format!(" · {o}"))}
                                        </div>
                                    </li>
                                }).collect_view()}
                            </ul>
                        </section>
                    }
                    .into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}
