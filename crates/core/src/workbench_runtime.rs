//! The resident Workbench's runtime state as the project page shows it
//! (docs/tower-workbench.md §2.9): a derived read — from the live terminal
//! session (the runtime's, through [`AgentControl::terminal_state`]), the
//! task's latest execution and its inbox (events and batches) — not a
//! stored projection. The state and the blocked reason follow
//! `deriveWorkbenchRuntimeState` / `deriveWorkbenchBlockedReason`.

use crate::tasks::Tasks;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{
    CoreResult,
    control::{AgentControl, TerminalState},
    inbox::{BatchState, EventState},
    model::ExecutionStatus,
    validate,
};

// The state and the blocked reason are the shared vocabulary's (also in
// the browser).
pub use harness_types::{BlockedReason, RuntimeState};

/// The derivation (docs/tower-workbench.md §2.9), first match: no live execution → STOPPED; no live
/// session → DEGRADED; an active batch or no turn boundary → BUSY; else IDLE
/// (blocked reason "awaiting dispatch" while events are pending).
pub fn derive(
    live_execution: bool,
    session: Option<TerminalState>,
    active_batch: bool,
    pending: usize,
) -> (RuntimeState, Option<BlockedReason>) {
    use BlockedReason as R;
    use RuntimeState as S;
    let Some(session) = session.filter(|_| live_execution) else {
        return if live_execution {
            (S::Degraded, Some(R::NoLiveSession))
        } else {
            (S::Stopped, Some(R::NotRunning))
        };
    };
    if active_batch {
        (S::Busy, Some(R::ProcessingBatch))
    } else if !session.turn_complete {
        (S::Busy, Some(R::TurnInProgress))
    } else if pending > 0 {
        (S::Idle, Some(R::AwaitingDispatch))
    } else {
        (S::Idle, None)
    }
}

/// The runtime view of one Workbench task.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkbenchRuntime {
    pub task_id: String,
    pub state: RuntimeState,
    pub blocked_reason: Option<BlockedReason>,
    pub execution_id: Option<String>,
    /// The newest CLAIMED / DISPATCHED / ACKED batch.
    pub active_batch_id: Option<String>,
    /// Events PENDING or PROCESSING.
    pub pending_events: usize,
    pub oldest_pending_at: Option<DateTime<Utc>>,
}

/// How many of the newest events and batches the derivation looks at.
const WINDOW: u32 = 500;

impl Tasks<'_> {
    /// The runtime state of a Workbench (or any parent) task, derived now.
    pub async fn workbench_runtime(
        &self,
        control: &dyn AgentControl,
        task_id: &str,
    ) -> CoreResult<WorkbenchRuntime> {
        let task_id = validate::task_id(Some(task_id))?;
        let view = self.get_task(&task_id).await?;
        let execution = view
            .execution
            .as_ref()
            .filter(|e| matches!(e.status, ExecutionStatus::Running | ExecutionStatus::Paused));
        let events = self
            .h
            .store()
            .list_workbench_events(&task_id, WINDOW)
            .await?;
        let pending: Vec<_> = events
            .iter()
            .filter(|e| matches!(e.state, EventState::Pending | EventState::Processing))
            .collect();
        let batches = self
            .h
            .store()
            .list_workbench_batches(&task_id, WINDOW)
            .await?;
        let active_batch_id = batches
            .iter()
            .find(|b| {
                matches!(
                    b.state,
                    BatchState::Claimed | BatchState::Dispatched | BatchState::Acked
                )
            })
            .map(|b| b.id.clone());
        let (state, blocked_reason) = derive(
            execution.is_some(),
            control.terminal_state(&task_id),
            active_batch_id.is_some(),
            pending.len(),
        );
        Ok(WorkbenchRuntime {
            task_id,
            state,
            blocked_reason,
            execution_id: execution.map(|e| e.id.clone()),
            active_batch_id,
            pending_events: pending.len(),
            oldest_pending_at: pending.iter().map(|e| e.created_at).min(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{BlockedReason as R, RuntimeState as S, derive};
    use crate::control::TerminalState;

    const AT_END: Option<TerminalState> = Some(TerminalState {
        turn_complete: true,
    });
    const MID_TURN: Option<TerminalState> = Some(TerminalState {
        turn_complete: false,
    });

    #[test]
    fn derivation_follows_the_first_matching_rule() {
        assert_eq!(
            derive(false, None, false, 3),
            (S::Stopped, Some(R::NotRunning))
        );
        assert_eq!(
            derive(false, AT_END, true, 0),
            (S::Stopped, Some(R::NotRunning))
        );
        assert_eq!(
            derive(true, None, true, 3),
            (S::Degraded, Some(R::NoLiveSession))
        );
        assert_eq!(
            derive(true, AT_END, true, 0),
            (S::Busy, Some(R::ProcessingBatch))
        );
        assert_eq!(
            derive(true, MID_TURN, false, 2),
            (S::Busy, Some(R::TurnInProgress))
        );
        assert_eq!(
            derive(true, AT_END, false, 2),
            (S::Idle, Some(R::AwaitingDispatch))
        );
        assert_eq!(derive(true, AT_END, false, 0), (S::Idle, None));
    }
}
