//! The resident Workbench of a project (docs/tower-workbench.md §0,
//! docs/tower-workbench.md §4.1): one long-lived, parentless supervisor task per project, created on
//! demand, started with the Workbench directive instead of the ordinary one.
//! It researches, dispatches sub-tasks with `create_task` and reviews what
//! its children report through its inbox; as a parentless task its next rung
//! is always a human.

use crate::tasks::Tasks;
use chrono::Utc;

use crate::{
    CoreResult, events::HarnessEvent, ids, model::TaskView, store::NewTask, tasks::AgentInput,
    validate,
};

/// The title a Workbench task is created with.
pub const WORKBENCH_TITLE: &str = "Workbench";

/// The Workbench directive (given instead of the system directive).
pub const WORKBENCH_DIRECTIVE: &str = "You are this project's resident Workbench (Harness): a \
supervisor, not an implementer. Research, split the work and dispatch it as derived sub-tasks \
with create_task (each gets this task as its parent); do not edit business code yourself. \
When children finish a turn, Harness types one durable batch of their results into this \
terminal at your turn end: acknowledge it with ack_workbench_batch, review each child by its \
commits before marking anything done, answer decisions downward with send_task_terminal_input, \
and resolve the batch with resolve_workbench_batch. Escalation only goes upward: you have no \
parent, so a decision you cannot make goes to a human (ask_human when unattended, else ask in \
this terminal) — never bounce the same question back down to the child. Dangerous or \
irreversible operations need a human's consent.";

impl Tasks<'_> {
    /// The project's Workbench task, created (parentless, in the project) on
    /// first use. Returns it and whether this call created it; concurrent
    /// calls get the same task.
    pub async fn ensure_workbench(
        &self,
        project_id: &str,
        agent: Option<AgentInput>,
    ) -> CoreResult<(TaskView, bool)> {
        let project = self.project(project_id).await?;
        if let Some(id) = self.h.store().project_workbench(&project.id).await? {
            return Ok((self.get_task(&id).await?, false));
        }
        let (id, created) = self
            .h
            .store()
            .create_project_workbench(NewTask {
                id: ids::new_id(),
                title: WORKBENCH_TITLE.into(),
                description: Some(format!(
                    "Resident Workbench of project {} — supervises derived sub-tasks.",
                    project.name
                )),
                project_id: Some(project.id.clone()),
                parent_task_id: None,
                agent: crate::tasks::agent_config(agent)?,
                now: Utc::now(),
            })
            .await?;
        if created {
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: id.clone(),
            });
        }
        Ok((self.get_task(&id).await?, created))
    }

    /// The project's Workbench task, if it has one.
    pub async fn project_workbench(&self, project_id: &str) -> CoreResult<Option<TaskView>> {
        let project = self.project(project_id).await?;
        match self.h.store().project_workbench(&project.id).await? {
            Some(id) => Ok(Some(self.get_task(&id).await?)),
            None => Ok(None),
        }
    }

    /// The directive an agent of this task starts with: the Workbench
    /// directive for a project's Workbench, else the system directive.
    pub async fn directive_for(&self, task_id: &str) -> CoreResult<String> {
        let task_id = validate::task_id(Some(task_id))?;
        if self.h.store().is_workbench(&task_id).await? {
            return Ok(WORKBENCH_DIRECTIVE.to_string());
        }
        self.h.settings().system_directive().await
    }
}
