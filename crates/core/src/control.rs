//! Running a task's agent from a person's surface: the task's
//! displayed run state (derived from its latest execution and open ask),
//! which of Start / Stop / Restart / Resume is possible and why not, and the
//! port to the runtime that performs them. The web UI only displays these;
//! the rules live here once.

use crate::tasks::Tasks;
use async_trait::async_trait;

use crate::{
    CoreError, CoreResult,
    model::{Execution, ExecutionStatus, TaskView},
    validate,
};

// The run state, the actions and why one is blocked are the shared
// vocabulary's (also in the browser).
pub use harness_types::{Action, Blocked, RunState};

/// The displayed status: state plus the exit code of a failed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStatus {
    pub state: RunState,
    pub exit_code: Option<i64>,
}

/// The rule: an open ask (or a parked execution) means "waiting for you",
/// whatever became of the process — answering it restarts the agent;
/// otherwise the latest execution's status decides.
pub fn run_status(view: &TaskView) -> RunStatus {
    let exec = view.execution.as_ref();
    let exit_code = exec.and_then(|e| e.exit_code);
    let state = match exec.map(|e| e.status) {
        _ if view.open_ask => RunState::Waiting,
        Some(ExecutionStatus::Paused) => RunState::Waiting,
        None => RunState::NotStarted,
        Some(ExecutionStatus::Running) => RunState::Running,
        Some(ExecutionStatus::Completed) if exit_code.unwrap_or(0) == 0 => RunState::Finished,
        Some(ExecutionStatus::Completed | ExecutionStatus::Failed) => RunState::Failed,
        Some(ExecutionStatus::Stopped) => RunState::Stopped,
    };
    RunStatus {
        state,
        exit_code: (state == RunState::Failed).then_some(exit_code).flatten(),
    }
}

fn live(exec: Option<&Execution>) -> bool {
    exec.is_some_and(|e| e.status.is_live())
}

/// Whether `action` is possible for the task now, else why not.
pub fn check(view: &TaskView, action: Action) -> Result<(), Blocked> {
    let exec = view.execution.as_ref();
    match action {
        Action::Start if live(exec) => Err(Blocked::Running),
        Action::Start => Ok(()),
        Action::Stop if live(exec) => Ok(()),
        Action::Stop => Err(Blocked::NotRunning),
        Action::Restart if exec.is_none() => Err(Blocked::NeverStarted),
        Action::Restart => Ok(()),
        Action::Resume if live(exec) => Err(Blocked::Running),
        Action::Resume if exec.and_then(|e| e.session_id.as_deref()).is_none() => {
            Err(Blocked::NoSession)
        }
        Action::Resume => Ok(()),
    }
}

/// How to start the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartRequest {
    /// A fresh session, with an optional first prompt.
    Fresh { prompt: Option<String> },
    /// Continue the provider session of the latest execution.
    Resume,
}

/// A task's live terminal session as the runtime sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalState {
    /// At a provider-confirmed turn end (the boundary latch is open).
    pub turn_complete: bool,
}

/// The port to the agent runtime (the PTY supervisor implements it).
#[async_trait]
pub trait AgentControl: Send + Sync + 'static {
    async fn start(&self, task_id: &str, request: StartRequest) -> CoreResult<Execution>;
    /// Stop the agent; `true` when a process was running.
    async fn stop(&self, task_id: &str) -> CoreResult<bool>;
    /// The task's live (not exited) terminal session; `None` without one.
    fn terminal_state(&self, _task_id: &str) -> Option<TerminalState> {
        None
    }
}

/// The argv of a task whose command is one shell line (the web form):
/// `sh -c LINE sh`, so a first prompt given at start is `$1`. `None` for a
/// blank line.
pub fn shell_argv(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    (!line.is_empty()).then(|| vec!["sh".into(), "-c".into(), line.to_string(), "sh".into()])
}

/// The command as a person reads it: the line of `sh -c LINE …`, else the
/// argv joined with spaces.
pub fn command_line(argv: &[String]) -> String {
    match argv {
        [sh, c, line, ..] if sh == "sh" && c == "-c" => line.clone(),
        _ => argv.join(" "),
    }
}

/// The longest first prompt (the REST start accepts the same).
pub const MAX_PROMPT_CHARS: usize = 100_000;

impl Tasks<'_> {
    /// Perform `action` on the task's agent if the rules allow it now
    /// (409 with the reason otherwise); returns the task as it is after.
    pub async fn control_task(
        &self,
        control: &dyn AgentControl,
        task_id: &str,
        action: Action,
        prompt: Option<&str>,
    ) -> CoreResult<TaskView> {
        let view = self.get_task(task_id).await?;
        check(&view, action).map_err(|b| CoreError::Conflict(b.message().into()))?;
        let prompt = validate::optional_text("prompt", prompt, MAX_PROMPT_CHARS)?;
        let id = view.task.id.as_str();
        // A person acts first: Harness's own planned actions are off.
        self.h
            .agents()
            .cancel_agent_actions(id, &format!("a person chose {}", action.as_str()))
            .await?;
        match action {
            Action::Start => {
                control.start(id, StartRequest::Fresh { prompt }).await?;
            }
            Action::Resume => {
                control.start(id, StartRequest::Resume).await?;
            }
            Action::Stop => {
                control.stop(id).await?;
            }
            Action::Restart => {
                control.stop(id).await?;
                control.start(id, StartRequest::Fresh { prompt }).await?;
            }
        }
        self.get_task(id).await
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::model::{AgentConfig, Provider, Task, TaskStatus};

    fn view(
        exec: Option<(ExecutionStatus, Option<i64>, Option<&str>)>,
        open_ask: bool,
    ) -> TaskView {
        let now = Utc::now();
        TaskView {
            task: Task {
                id: "t".into(),
                title: "t".into(),
                description: None,
                project_id: None,
                parent_task_id: None,
                status: TaskStatus::Todo,
                unattended: false,
                agent: AgentConfig {
                    provider: Provider::Command,
                    command: None,
                    cwd: None,
                    env: Default::default(),
                    restart_on_interrupt: false,
                    recovery: None,
                },
                created_at: now,
                updated_at: now,
            },
            execution: exec.map(|(status, exit_code, session)| Execution {
                id: "e".into(),
                task_id: "t".into(),
                status,
                session_id: session.map(str::to_string),
                exit_code,
                created_at: now,
                ended_at: None,
                node_id: None,
                node_name: None,
                unreadable_holder: None,
            }),
            open_ask,
            agent_state: None,
        }
    }

    #[test]
    fn status_is_derived_from_the_execution() {
        use ExecutionStatus::*;
        let s = |e, ask| run_status(&view(e, ask));
        assert_eq!(s(None, false).state, RunState::NotStarted);
        assert_eq!(
            s(Some((Running, None, None)), false).state,
            RunState::Running
        );
        assert_eq!(s(Some((Paused, None, None)), true).state, RunState::Waiting);
        assert_eq!(s(Some((Failed, None, None)), true).state, RunState::Waiting);
        assert_eq!(
            s(Some((Completed, Some(0), None)), false).state,
            RunState::Finished
        );
        let failed = s(Some((Failed, Some(2), None)), false);
        assert_eq!(
            (failed.state, failed.exit_code),
            (RunState::Failed, Some(2))
        );
        assert_eq!(
            s(Some((Stopped, None, None)), false).state,
            RunState::Stopped
        );
        assert_eq!(s(Some((Stopped, None, None)), false).exit_code, None);
    }

    #[test]
    fn actions_are_blocked_with_a_reason() {
        use ExecutionStatus::*;
        let never = view(None, false);
        assert_eq!(check(&never, Action::Start), Ok(()));
        assert_eq!(check(&never, Action::Stop), Err(Blocked::NotRunning));
        assert_eq!(check(&never, Action::Restart), Err(Blocked::NeverStarted));
        assert_eq!(check(&never, Action::Resume), Err(Blocked::NoSession));
        let running = view(Some((Running, None, Some("s"))), false);
        assert_eq!(check(&running, Action::Start), Err(Blocked::Running));
        assert_eq!(check(&running, Action::Stop), Ok(()));
        assert_eq!(check(&running, Action::Restart), Ok(()));
        assert_eq!(check(&running, Action::Resume), Err(Blocked::Running));
        let ended = view(Some((Completed, Some(0), Some("s"))), false);
        assert_eq!(check(&ended, Action::Resume), Ok(()));
        let no_session = view(Some((Failed, Some(1), None)), false);
        assert_eq!(check(&no_session, Action::Resume), Err(Blocked::NoSession));
        assert_eq!(
            shell_argv(" echo hello world ")
                .as_deref()
                .map(command_line),
            Some("echo hello world".to_string())
        );
        assert_eq!(shell_argv("  "), None);
        assert_eq!(command_line(&["claude".into(), "--x".into()]), "claude --x");
        for a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(a));
        }
    }
}
