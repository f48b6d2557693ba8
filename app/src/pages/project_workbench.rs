//! The resident Workbench of a project in the project list: a
//! link to its task, or a button that creates it on demand; with its
//! runtime state (IDLE / BUSY / DEGRADED / STOPPED, why it is not taking
//! work, pending events — docs/tower-workbench.md §2.9), re-read every few seconds.

use harness_types::{BlockedReason, RuntimeState};
use leptos::prelude::*;

use crate::{
    api::{ensure_workbench, workbench_runtime},
    components::{TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn WorkbenchCell(project_id: String) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let poll = RwSignal::new(0u64);
    #[cfg(feature = "hydrate")]
    if let Ok(handle) = set_interval_with_handle(
        move || {
            poll.try_update(|n| *n += 1);
        },
        RUNTIME_POLL,
    ) {
        on_cleanup(move || handle.clear());
    }
    // One read: the Workbench (if any) with its runtime state. Read in the
    // browser into a signal, not a resource awaited in a `Suspend`: this cell
    // is inside the project list, which every live change rebuilds, and a
    // row's `Suspend` still waiting for its read when its row was disposed is
    // the suspect of the six wasm `unreachable` errors seen once in "edit a
    // project" (2026-12-04). A late answer for a disposed row is dropped
    // (`try_set`), an older answer never replaces a newer one (`asked`).
    let current = RwSignal::new(None::<Result<Option<crate::api::RuntimeInfo>, ServerFnError>>);
    let asked = StoredValue::new(0u64);
    let id = project_id.clone();
    Effect::new(move |_| {
        live.tick.track();
        poll.track();
        let Some(n) = asked.try_update_value(|n| {
            *n += 1;
            *n
        }) else {
            return;
        };
        let id = id.clone();
        leptos::task::spawn_local(async move {
            let read = workbench_runtime(id).await;
            if asked.try_get_value() == Some(n) {
                let _ = current.try_set(Some(read));
            }
        });
    });
    let create = Action::new(move |id: &String| ensure_workbench(id.clone()));
    let created = create.value();
    move || {
        let pid = project_id.clone();
        let made = created.get().and_then(Result::ok);
        match (current.get(), made) {
            (None, _) => ().into_any(),
            (Some(Ok(Some(r))), _) => view! {
                <a href=format!("/tasks/{}", r.task_id) class="workbench-link"
                    data-workbench-task=r.task_id.clone()>{r.title.clone()}</a>
                <WorkbenchRuntime r />
            }
            .into_any(),
            (Some(Ok(None)), Some(w)) => view! {
                <a href=format!("/tasks/{}", w.task_id) class="workbench-link"
                    data-workbench-task=w.task_id.clone()>{w.title}</a>
            }
            .into_any(),
            (Some(Ok(None)), None) => view! {
                <button type="button" class="workbench-create"
                    on:click=move |_| { create.dispatch(pid.clone()); }>
                    {l.t("workbench.create")}
                </button>
            }
            .into_any(),
            (Some(Err(e)), _) => view! { <span class="error">{error_text(&e)}</span> }.into_any(),
        }
    }
}

/// How often the runtime state is re-read (a turn end is not a page event).
pub const RUNTIME_POLL: std::time::Duration = std::time::Duration::from_secs(3);

/// The Workbench's runtime state: a badge, the blocked reason, the pending
/// events (with the oldest one's age).
#[component]
pub fn WorkbenchRuntime(r: crate::api::RuntimeInfo) -> impl IntoView {
    let l = use_locale();
    let state = r.state;
    let reason = r.blocked_reason.map(|code| {
        view! {
            <br />
            <span class="sub wb-reason" data-reason=code.as_str()>{l.t(reason_key(code))}</span>
        }
    });
    let pending = r.pending_events;
    let oldest = r.oldest_pending_ms.map(|ms| {
        view! {
            " " <span class="sub">{l.t("workbench.oldest")} " " <TimeCell ms=Some(ms) /></span>
        }
    });
    view! {
        <div class="wb-runtime" data-runtime-state=state.as_str() data-pending=pending>
            <span class=format!("badge wb-{}", state.as_str().to_lowercase())>{l.t(state_key(state))}</span>
            " "
            <span class="sub wb-pending">
                {l.t("workbench.pending").replace("{n}", &pending.to_string())}
            </span>
            {oldest}
            {reason}
        </div>
    }
}

fn state_key(state: RuntimeState) -> &'static str {
    match state {
        RuntimeState::Idle => "workbench.state.IDLE",
        RuntimeState::Busy => "workbench.state.BUSY",
        RuntimeState::Degraded => "workbench.state.DEGRADED",
        RuntimeState::Stopped => "workbench.state.STOPPED",
    }
}

fn reason_key(code: BlockedReason) -> &'static str {
    match code {
        BlockedReason::NoLiveSession => "workbench.reason.no_live_session",
        BlockedReason::ProcessingBatch => "workbench.reason.processing_batch",
        BlockedReason::TurnInProgress => "workbench.reason.turn_in_progress",
        BlockedReason::AwaitingDispatch => "workbench.reason.awaiting_dispatch",
        BlockedReason::NotRunning => "workbench.reason.not_running",
    }
}
