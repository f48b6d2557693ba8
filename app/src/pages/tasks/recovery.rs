//! The task's automatic actions on its timeline (task page): what Harness
//! did on its own ("Harness resumed the agent after its usage limit"), what
//! it will do and when, and what was cancelled or not done, with why.

use leptos::prelude::*;

use crate::{
    api::{ActionInfo, task_actions},
    components::{Clamp, TimeCell, error_text},
    i18n::{Locale, use_locale},
    live::use_live,
};

/// The sentence of an action: what it will do (due or under way) or did.
fn sentence(l: Locale, a: &ActionInfo) -> &'static str {
    let will = matches!(a.state.as_str(), "PENDING" | "RUNNING" | "FAILED");
    let key = match (a.reason.as_str(), will) {
        ("usage_limit", true) => "recovery.will.usage_limit",
        ("usage_limit", false) => "recovery.did.usage_limit",
        ("usage_limit_self_wait", true) => "recovery.will.usage_limit_self_wait",
        ("usage_limit_self_wait", false) => "recovery.did.usage_limit_self_wait",
        ("api_errors", true) => "recovery.will.api_errors",
        ("api_errors", false) => "recovery.did.api_errors",
        ("crash", true) => "recovery.will.crash",
        ("crash", false) => "recovery.did.crash",
        ("stalled", true) => "recovery.will.stalled",
        ("stalled", false) => "recovery.did.stalled",
        (_, true) => "recovery.will.dialog",
        (_, false) => "recovery.did.dialog",
    };
    l.t(key)
}

/// How it stands, in words.
fn state_text(l: Locale, state: &str) -> &'static str {
    l.t(match state {
        "PENDING" => "recovery.state.pending",
        "RUNNING" => "recovery.state.running",
        "DONE" => "recovery.state.done",
        "FAILED" => "recovery.state.failed",
        "UNVERIFIED" => "recovery.state.unverified",
        "CANCELLED" => "recovery.state.cancelled",
        _ => "recovery.state.gave_up",
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
                                    let due = matches!(a.state.as_str(), "PENDING" | "FAILED")
                                        .then_some(a.due_ms);
                                    let why = a.last_error.clone().filter(|_| a.state != "DONE");
                                    view! {
                                        <li data-action-id=a.id.clone() data-state=a.state.clone()
                                            data-reason=a.reason.clone()>
                                            <div class="meta">
                                                <span class="badge" data-status=a.state.to_lowercase()>
                                                    {state_text(l, &a.state)}
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
