//! The agents that need a person: the one source of the "agent" items of
//! the report and of the waiting count.
//!
//! The latest execution's recorded agent state decides
//! (`agent_state::told::needs_you`: failed, crashed, logged out, stalled,
//! usage-limited, given up on API errors). An execution without a record
//! (it failed before the watcher saw it: a spawn that failed, a run before
//! the watcher existed) needs a person when it FAILED. Only open, unattended
//! tasks count, and never a run a person stopped: a later start, a stop or
//! closing the task is acting upon it.

use super::build::AgentNeed;
use crate::report::Reports;
use crate::{
    CoreResult,
    agent_state::told::state_needs_you,
    model::{ExecutionStatus, TaskStatus, TaskView},
    store::{LatestRun, RecordedState},
};

/// Whether the task's agent needs a person now, and why: [`needs_person_of`]
/// on its latest execution and that execution's recorded state.
pub fn needs_person(view: &TaskView) -> Option<AgentNeed> {
    let task = &view.task;
    let e = view.execution.as_ref()?;
    needs_person_of(&LatestRun {
        task_id: task.id.clone(),
        task_status: task.status,
        unattended: task.unattended,
        execution_id: e.id.clone(),
        status: e.status,
        exit_code: e.exit_code,
        created_at: e.created_at,
        ended_at: e.ended_at,
        // A record of another execution is not this run's.
        state: view
            .agent_state
            .as_ref()
            .filter(|r| r.execution_id == e.id)
            .map(RecordedState::of),
    })
}

/// The rule (see the module docs) on a task's latest run.
pub fn needs_person_of(run: &LatestRun) -> Option<AgentNeed> {
    if !run.unattended || matches!(run.task_status, TaskStatus::Done | TaskStatus::Cancelled) {
        return None;
    }
    if run.status == ExecutionStatus::Stopped {
        return None;
    }
    if let Some(r) = &run.state {
        return state_needs_you(r.state, r.exit_code, r.gave_up).then(|| AgentNeed {
            execution_id: run.execution_id.clone(),
            task_id: run.task_id.clone(),
            what: r.reason.clone(),
            since: r.since,
        });
    }
    if run.status != ExecutionStatus::Failed {
        return None;
    }
    let what = match run.exit_code {
        Some(code) => format!("the agent failed (exit code {code}) and was not started again"),
        None => "the agent failed and was not started again".to_string(),
    };
    Some(AgentNeed {
        execution_id: run.execution_id.clone(),
        task_id: run.task_id.clone(),
        what,
        since: run.ended_at.unwrap_or(run.created_at),
    })
}

impl Reports<'_> {
    /// Every agent that needs a person now ([`needs_person_of`]), by task
    /// id: one store query for every open unattended task's latest run
    /// (`GET /api/waiting` reads it on every live update).
    pub async fn agents_needing_person(&self) -> CoreResult<Vec<AgentNeed>> {
        let mut out: Vec<AgentNeed> = self
            .h
            .store()
            .latest_unattended_runs()
            .await?
            .iter()
            .filter_map(needs_person_of)
            .collect();
        out.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::model::{AgentConfig, AgentStateName, Execution, Provider, Task};

    fn view(unattended: bool, status: ExecutionStatus, task: TaskStatus) -> TaskView {
        let at = Utc.with_ymd_and_hms(2026, 12, 5, 3, 0, 0).unwrap();
        TaskView {
            task: Task {
                id: "ct".into(),
                title: "t".into(),
                description: None,
                project_id: None,
                parent_task_id: None,
                status: task,
                unattended,
                agent: AgentConfig {
                    provider: Provider::Claude,
                    command: None,
                    cwd: None,
                    env: Default::default(),
                    restart_on_interrupt: false,
                    recovery: None,
                },
                created_at: at,
                updated_at: at,
            },
            execution: Some(Execution {
                id: "ce".into(),
                task_id: "ct".into(),
                status,
                session_id: None,
                exit_code: Some(2),
                created_at: at,
                ended_at: Some(at),
                node_id: None,
                node_name: None,
                unreadable_holder: None,
            }),
            open_ask: false,
            agent_state: None,
        }
    }

    fn record(
        execution: &str,
        state: AgentStateName,
        code: Option<i32>,
    ) -> crate::model::AgentStateRecord {
        let at = Utc.with_ymd_and_hms(2026, 12, 5, 4, 0, 0).unwrap();
        crate::model::AgentStateRecord {
            execution_id: execution.into(),
            task_id: "ct".into(),
            state,
            reason: format!("{state} in words"),
            lines: vec![],
            since: at,
            error_kind: None,
            attempt: None,
            attempt_of: None,
            gave_up: false,
            reset_text: None,
            reset_at: None,
            exit_code: code,
            signal: None,
            silent_secs: None,
            dialog_title: None,
            dialog_options: vec![],
            updated_at: at,
        }
    }

    #[test]
    fn the_latest_runs_recorded_state_decides_when_there_is_one() {
        let mut v = view(true, ExecutionStatus::Running, TaskStatus::InProgress);
        assert_eq!(needs_person(&v), None);
        v.agent_state = Some(record("ce", AgentStateName::UsageLimited, None));
        let need = needs_person(&v).unwrap();
        assert_eq!(need.what, "usage_limited in words");
        assert_eq!(
            need.since,
            Utc.with_ymd_and_hms(2026, 12, 5, 4, 0, 0).unwrap()
        );
        v.agent_state = Some(record("ce", AgentStateName::Working, None));
        assert_eq!(needs_person(&v), None);
        // A failed run whose record says it exited 0 does not need anyone;
        // a record of an older execution is not this run's.
        let mut failed = view(true, ExecutionStatus::Failed, TaskStatus::InProgress);
        failed.agent_state = Some(record("ce", AgentStateName::Exited, Some(0)));
        assert_eq!(needs_person(&failed), None);
        failed.agent_state = Some(record("older", AgentStateName::Working, None));
        assert!(needs_person(&failed).is_some());
        // A run a person stopped never needs anyone, whatever was recorded.
        let mut stopped = view(true, ExecutionStatus::Stopped, TaskStatus::InProgress);
        stopped.agent_state = Some(record("ce", AgentStateName::Crashed, None));
        assert_eq!(needs_person(&stopped), None);
    }

    #[test]
    fn a_failed_latest_run_of_an_open_unattended_task_needs_a_person() {
        let need = needs_person(&view(true, ExecutionStatus::Failed, TaskStatus::InProgress));
        assert_eq!(need.map(|n| n.execution_id), Some("ce".into()));
        for (unattended, status, task) in [
            (false, ExecutionStatus::Failed, TaskStatus::InProgress),
            (true, ExecutionStatus::Completed, TaskStatus::InProgress),
            (true, ExecutionStatus::Stopped, TaskStatus::InProgress),
            (true, ExecutionStatus::Failed, TaskStatus::Done),
            (true, ExecutionStatus::Failed, TaskStatus::Cancelled),
        ] {
            assert_eq!(needs_person(&view(unattended, status, task)), None);
        }
    }
}
