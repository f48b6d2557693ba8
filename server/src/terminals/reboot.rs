//! After a reboot: the starts the core decided (`harness_core::reboot`, the
//! rule and its "once"), run as a background job once the server listens.
//! Claude Code and Codex resume their provider session (`resume_mode`: the
//! hook-reported id, or Codex's session files); a `command` agent with
//! `restartOnInterrupt` starts from its beginning. Each start is bounded;
//! a cancelled job leaves its unreported claims to the next boot.

use std::time::Duration;

use harness_core::reboot::{self, Outcome, Reason, Resume};
use tokio_util::sync::CancellationToken;

use super::{StartMode, Terminals};

/// The longest one start may take before it is reported as failed.
const START_MAX: Duration = Duration::from_secs(60);

/// Decide (the core), start, and report once: the job `launch` runs
/// after the listener is up. `owner` is this boot (`<node>:<boot>`).
pub async fn run(terminals: Terminals, owner: String, cancel: CancellationToken) {
    let h = terminals.harness().clone();
    let agents = h.agents();
    let taken = tokio::select! {
        () = cancel.cancelled() => return,
        taken = agents.take_reboot_resumes(&owner) => taken,
    };
    let mut decided = match taken {
        Ok(decided) => decided,
        Err(err) => {
            tracing::error!(error = ?err, "cannot decide the resumes after the restart");
            return;
        }
    };
    if decided.is_empty() {
        return;
    }
    for resume in decided.resumes.clone() {
        let outcome = tokio::select! {
            // Claims not reported stay CLAIMED: the next boot reports them
            // and never resumes them again.
            () = cancel.cancelled() => return,
            outcome = terminals.resume_interrupted(&resume) => outcome,
        };
        tracing::info!(task_id = %resume.view.task.id, ?outcome, "resume after the restart");
        decided.record(&resume, outcome);
    }
    if let Err(err) = h.agents().report_reboot_resumes(decided).await {
        tracing::error!(error = ?err, "cannot record the resumes after the restart");
    }
}

impl Terminals {
    /// Start one interrupted execution's agent again as the core decided.
    async fn resume_interrupted(&self, r: &Resume) -> Outcome {
        let found = match self.resume_mode(&r.view, &r.execution).await {
            StartMode::Resume { session_id } => Some(session_id),
            StartMode::Fresh { .. } => None,
        };
        let session = match reboot::start_with(r.how, found) {
            Ok(session) => session,
            Err(reason) => return Outcome::NotResumed(reason),
        };
        let mode = match &session {
            Some(session_id) => StartMode::Resume {
                session_id: session_id.clone(),
            },
            None => StartMode::Fresh { prompt: None },
        };
        match tokio::time::timeout(START_MAX, self.start(&r.view.task.id, mode)).await {
            Ok(Ok(_)) => match session {
                Some(session_id) => Outcome::Resumed { session_id },
                None => Outcome::Restarted,
            },
            // A start that lost to another one (a reply's delivery resumed it).
            Ok(Err(err)) if self.live(&r.view.task.id).is_some() => {
                tracing::info!(%err, task_id = %r.view.task.id, "its agent runs again already");
                Outcome::NotResumed(Reason::AlreadyRunning)
            }
            Ok(Err(err)) => Outcome::NotResumed(Reason::StartFailed(err.to_string())),
            Err(_) => Outcome::NotResumed(Reason::StartFailed(format!(
                "it did not start within {} s",
                START_MAX.as_secs()
            ))),
        }
    }
}
