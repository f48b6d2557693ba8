//! The task's automatic actions on its timeline (task page): what Harness
//! did on its own ("Harness resumed the agent after its usage limit"), what
//! it will do and when, and what was cancelled or not done, with why.

use harness_types::{ActionReason, ActionState};
use leptos::prelude::*;

use crate::{
    api::{ActionInfo, task_actions},
    components::{Clamp, TimeCell, error_text},
    i18n::{Locale, use_locale},
    live::use_live,
};

/// The sentence of an action: what it will do (due or under way) or did.
fn sentence(l: Locale, a: &ActionInfo) -> &'static str {
    use ActionReason as R;
    let key = match (a.reason, a.state.open()) {
        (R::UsageLimit, true) => "recovery.will.usage_limit",
        (R::UsageLimit, false) => "recovery.did.usage_limit",
        (R::UsageLimitSelfWait, true) => "recovery.will.usage_limit_self_wait",
        (R::UsageLimitSelfWait, false) => "recovery.did.usage_limit_self_wait",
        (R::ApiErrors, true) => "recovery.will.api_errors",
        (R::ApiErrors, false) => "recovery.did.api_errors",
        (R::Crash, true) => "recovery.will.crash",
        (R::Crash, false) => "recovery.did.crash",
        (R::Stalled, true) => "recovery.will.stalled",
        (R::Stalled, false) => "recovery.did.stalled",
        (R::Dialog, true) => "recovery.will.dialog",
        (R::Dialog, false) => "recovery.did.dialog",
    };
    l.t(key)
}

/// How it stands, in words.
fn state_text(l: Locale, state: ActionState) -> &'static str {
    l.t(match state {
        ActionState::Pending => "recovery.state.pending",
        ActionState::Running => "recovery.state.running",
        ActionState::Done => "recovery.state.done",
        ActionState::Failed => "recovery.state.failed",
        ActionState::Unverified => "recovery.state.unverified",
        ActionState::Cancelled => "recovery.state.cancelled",
        ActionState::GaveUp => "recovery.state.gave_up",
    })
}

#[component]
pub fn TaskRecovery(#[prop(into)] task_id: Signal<String>) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let actions = Resource::new(
        move || (task_id.get(), live.tick.get()),
        |(id, _)| task_actions(id),
    );
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match actions.await {
                    Ok(rows) if rows.is_empty() => ().into_any(),
                    Ok(rows) => view! {
                        <section aria-labelledby="task-recovery-h">
                            <h2 id="task-recovery-h">{l.t("recovery.timeline")}</h2>
                            <ol class="timeline" id="task-recovery">
                                {rows.into_iter().map(|a| {
                                    let text = sentence(l, &a);
                                    let when = a.done_ms.or(Some(a.updated_ms));
                                    let due = a.state.scheduled().then_some(a.due_ms);
                                    let why = a
                                        .last_error
                                        .clone()
                                        .filter(|_| a.state != ActionState::Done);
                                    view! {
                                        <li data-action-id=a.id.clone() data-state=a.state.as_str()
                                            data-reason=a.reason.as_str()>
                                            <div class="meta">
                                                <span class="badge" data-status=a.state.as_str().to_lowercase()>
                                                    {state_text(l, a.state)}
                                                </span>
                                                <TimeCell ms=when />
                                            </div>
                                            <p class="action-text">{text}</p>
                                            {due.map(|ms| view! {
                                                <p class="sub">{l.t("recovery.due")} " " <TimeCell ms=Some(ms) /></p>
                                            })}
                                            {a.result.clone().map(|r| view! { <Clamp text=Some(r) /> })}
                                            {why.map(|w| view! { <p class="sub why">{w}</p> })}
                                        </li>
                                    }
                                }).collect_view()}
                            </ol>
                        </section>
                    }
                    .into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}
