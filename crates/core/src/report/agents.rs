//! The agents that need a person: the one source of the "agent" items of
//! the report and of the waiting count.
//!
//! SEAM — today this is the latest execution of an unattended, open task
//! that FAILED (a later start, a stop or closing the task is acting upon
//! it). The per-execution agent-state table (its watcher's states: failed,
//! stalled, logged out, usage-limited) replaces [`needs_person`]'s rule
//! here, and only here, once it is merged: read the task's latest state
//! there and keep the item while the state needs a person.

use super::build::AgentNeed;
use crate::{
    CoreResult, Harness,
    model::{ExecutionStatus, TaskStatus, TaskView},
};

/// Whether the task's agent needs a person now, and why.
pub fn needs_person(view: &TaskView) -> Option<AgentNeed> {
    let task = &view.task;
    if !task.unattended || matches!(task.status, TaskStatus::Done | TaskStatus::Cancelled) {
        return None;
    }
    let e = view.execution.as_ref()?;
    if e.status != ExecutionStatus::Failed {
        return None;
    }
    let what = match e.exit_code {
        Some(code) => format!("the agent failed (exit code {code}) and was not started again"),
        None => "the agent failed and was not started again".to_string(),
    };
    Some(AgentNeed {
        execution_id: e.id.clone(),
        task_id: task.id.clone(),
        what,
        since: e.ended_at.unwrap_or(e.created_at),
    })
}

impl Harness {
    /// Every agent that needs a person now ([`needs_person`]), by task id.
    pub async fn agents_needing_person(&self) -> CoreResult<Vec<AgentNeed>> {
        let mut out = Vec::new();
        for id in self.store().unattended_task_ids().await? {
            if let Some(view) = self.store().get_task(&id).await?
                && let Some(need) = needs_person(&view)
            {
                out.push(need);
            }
        }
        out.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::model::{AgentConfig, Execution, Provider, Task};

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
            }),
            open_ask: false,
        }
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
