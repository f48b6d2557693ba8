//! Who may do what to which task: the rules every adapter (REST, MCP, server
//! functions) applies by calling these, never by re-implementing them.

use crate::{
    CoreError, CoreResult,
    auth::{Access, Identity},
    model::TaskView,
    settings::NotifyTarget,
    tasks::CreateTask,
};

fn boundary_mismatch(own: &str, other: &str) -> CoreError {
    CoreError::Forbidden(format!(
        "Task boundary mismatch — this terminal is bound to {own}, refusing to operate on {other}"
    ))
}

/// Can unattended work reach a human? An active notify target with the
/// `unattended` scope on a chat gateway (hermes or openclaw).
pub fn unattended_reachable(targets: &[NotifyTarget]) -> bool {
    targets.iter().any(|t| {
        t.active
            && t.scope == "unattended"
            && matches!(
                t.gateway.to_ascii_lowercase().as_str(),
                "hermes" | "openclaw"
            )
    })
}

impl Access<'_> {
    /// May `who` type into `task_id`'s terminal? The admin always; an agent
    /// only into a derived child's (the parent's decision), never into its
    /// own: its CLI reads what is typed there as the user's input, and a
    /// `!` line runs as a shell command without any tool call — past every
    /// hook of the approval gate. The browser identity never through this
    /// path.
    pub async fn authorize_terminal(&self, who: &Identity, task_id: &str) -> CoreResult<()> {
        match who {
            Identity::Admin => Ok(()),
            Identity::Agent { task_id: own, .. } if own == task_id => {
                Err(CoreError::Forbidden(format!(
                    "an agent cannot type into its own terminal ({own}): its CLI would read the \
                     text as the user's input, outside the approval gate. Use your tools; to \
                     reach a person use ask_human or notify_human"
                )))
            }
            Identity::Agent { task_id: own, .. } => {
                let child = self.h.tasks().get_task(task_id).await?;
                if child.task.parent_task_id.as_deref() == Some(own.as_str()) {
                    Ok(())
                } else {
                    Err(boundary_mismatch(own, task_id))
                }
            }
            Identity::Browser | Identity::Gateway => {
                Err(CoreError::Forbidden("not allowed".into()))
            }
        }
    }

    /// Read a task as `who`: an agent reads its own task (the default) and
    /// its derived children; the admin any task.
    pub async fn task_for(&self, who: &Identity, requested: Option<&str>) -> CoreResult<TaskView> {
        let requested = requested.map(str::trim).filter(|s| !s.is_empty());
        if let (Identity::Agent { task_id: own, .. }, Some(other)) = (who, requested)
            && other != own
        {
            let view = self.h.tasks().get_task(other).await?;
            if view.task.parent_task_id.as_deref() != Some(own.as_str()) {
                return Err(boundary_mismatch(own, other));
            }
            return Ok(view);
        }
        let task_id = who.bind_task(requested)?;
        self.h.tasks().get_task(&task_id).await
    }

    /// Create a task as `who`. An agent's task is a derived child of its own
    /// task (`parentTaskId` defaults to it; another parent is refused) and
    /// is filed under its own task's project (`projectId` defaults to it;
    /// another project is refused).
    pub async fn create_task_as(
        &self,
        who: &Identity,
        mut input: CreateTask,
    ) -> CoreResult<TaskView> {
        if let Some(inbound) = input.gateway_inbound_id.take() {
            input.gateway_inbound_id =
                Some(self.h.gateway().check_gateway_link(who, &inbound).await?);
        }
        if let Identity::Agent { task_id: own, .. } = who {
            match input.parent_task_id.as_deref().map(str::trim) {
                None | Some("") => input.parent_task_id = Some(own.clone()),
                Some(p) if p == own => {}
                Some(p) => return Err(boundary_mismatch(own, p)),
            }
            // The child is filed under the agent's own project: another
            // project (or one for a task that has none) is refused, not
            // quietly replaced, so the agent learns where its child went.
            let mine = self.h.tasks().get_task(own).await?.task.project_id;
            match input.project_id.as_deref().map(str::trim) {
                None | Some("") => input.project_id = mine,
                Some(p) if Some(p) == mine.as_deref() => {}
                Some(p) => {
                    return Err(CoreError::Forbidden(format!(
                        "projectId: an agent files its child under its own task's project ({}), \
                         not {p}; leave projectId out",
                        mine.as_deref().unwrap_or("none")
                    )));
                }
            }
        }
        self.h.tasks().create_checked_task(input).await
    }

    /// Unattended mode needs a way to reach a human: turning it on fails
    /// closed without an active unattended notify channel.
    pub(crate) async fn check_unattended_allowed(&self, on: bool) -> CoreResult<()> {
        if !on || unattended_reachable(&self.h.settings().notify_targets().await?) {
            return Ok(());
        }
        Err(CoreError::Conflict(
            "unattended mode needs an active unattended notify channel (hermes or openclaw): \
             configure one in Settings → Notifications first"
                .into(),
        ))
    }
}
