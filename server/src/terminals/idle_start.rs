//! Starting a Workbench for the gateway requests waiting in its inbox
//! (docs/tower-messaging.md §8.2 step 14, `ensureWorkbench`; the rule of when is
//! the core's, `Gateway::workbench_start_wanted`): the agent is started
//! idle — its provider session resumed when it has one, else fresh without
//! a prompt — and once it has drawn its screen and gone quiet its input
//! boundary is opened, so the inbox worker types the batch of waiting
//! requests at once (a fresh CLI without a prompt starts at its input
//! boundary; no provider turn end will come first).

use std::time::Duration;

use harness_core::{CoreError, CoreResult, model::Execution, work::Kind};

use super::Terminals;

/// The longest wait for a just-started Workbench to go quiet.
const QUIET_MAX: Duration = Duration::from_secs(20);

impl Terminals {
    /// Start the task's agent idle (see the module doc). The working
    /// directory is checked first: a missing one fails with its path
    /// (`agent.cwd`), and nothing is started.
    pub async fn start_idle(&self, task_id: &str) -> CoreResult<Execution> {
        let view = self.harness().tasks().get_task(task_id).await?;
        let cwd = self.working_dir(&view).await?;
        if !cwd.is_dir() {
            return Err(CoreError::invalid(
                "agent.cwd",
                format!("working directory {} does not exist", cwd.display()),
            ));
        }
        let mode = self.resume_mode_for(task_id).await?;
        let execution = self.start(task_id, mode).await?;
        let Some(session) = self.live(task_id) else {
            return Err(CoreError::Conflict(
                "the Workbench's agent exited at once".into(),
            ));
        };
        let (this, task_id) = (self.clone(), task_id.to_string());
        let (execution_id, provider) = (execution.id.clone(), view.task.agent.provider);
        tokio::spawn(async move {
            // Reading keys (`ready`), not only drawn: the batch is typed next.
            this.wait_until_ready(&task_id, &execution_id, provider, &session)
                .await;
            let quiet = this.inner.config.idle_quiet;
            let _ = session.wait_for_idle(quiet, QUIET_MAX).await;
            // Still the terminal this start made, and nothing typed since.
            let same = this
                .live(&task_id)
                .is_some_and(|s| std::sync::Arc::ptr_eq(&s, &session));
            if same {
                session.mark_turn_complete();
                this.harness().wake(Kind::Inbox);
                tracing::info!(
                    task_id,
                    "the Workbench started idle is at its input boundary"
                );
            }
        });
        Ok(execution)
    }
}
