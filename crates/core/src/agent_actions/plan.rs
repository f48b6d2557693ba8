//! The rules, pure: what a change of an agent's state calls for ([`decide`]:
//! an action at a time, and what the person is told), and what a due
//! action does when its time comes ([`step`]), given what is true then.

use chrono::{DateTime, Duration, Utc};

use super::policy::RecoveryPolicy;
use crate::{
    agent_state::{AgentState, StateChange},
    model::{ExecutionStatus, Provider, TaskStatus, TaskView},
    store::{ActionKind, ActionReason, AgentAction},
};

/// What the person is told about a change, as far as the recovery has a
/// say (the watcher's push carries it out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tell {
    /// The recovery has no part in this state (working, idle, a person's
    /// open question, a clean exit, a change that is no longer the task's
    /// latest execution's): the caller's own rule for it holds.
    NotMine,
    /// An automatic action takes care of it (a restart, a continue after a
    /// backoff, a dialog answered) or the CLI retries by itself: no alarm
    /// now. What the action did shows on the task's timeline.
    Nothing,
    /// Parked until its usage limit lifts: "Harness will resume the agent
    /// at …" (`at`: when it is woken), once.
    WillResumeAt(DateTime<Utc>),
    /// The CLI waits for its reset by itself (Claude Code on a
    /// subscription) and is left alone: "<cli> will continue by itself at
    /// <reset>; Harness checks at <check> and resumes it if it has not",
    /// once. `reset`: the time the CLI printed, if any.
    ContinuesByItself {
        cli: &'static str,
        reset: Option<DateTime<Utc>>,
        check: DateTime<Utc>,
    },
    /// Nothing automatic: the person must act (logged out, stalled, the
    /// policy says no, an attended task). `escalated`: automatic actions
    /// were tried and their per-hour cap is reached.
    Alarm { escalated: bool },
    /// A dialog of the CLI that no option answers as configured: told
    /// like a question.
    Question,
}

/// An action the change calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub action: ActionKind,
    pub reason: ActionReason,
    pub due_at: DateTime<Utc>,
    /// The nudge's text, or the dialog option's key.
    pub text: Option<String>,
    /// Done only by the node whose terminal shows the agent (it presses a
    /// key or reads the screen there).
    pub on_its_node: bool,
}

/// What a change calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub planned: Option<Planned>,
    pub tell: Tell,
    /// The execution's due actions no longer apply (the agent works again,
    /// a person is needed): cancelled, with this note.
    pub cancel: Option<&'static str>,
}

/// What is known when a change is planned.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub change: &'a StateChange,
    pub view: &'a TaskView,
    pub policy: &'a RecoveryPolicy,
    /// The execution's open actions.
    pub open: &'a [AgentAction],
    /// Continues after API errors of the task done in the last hour.
    pub api_continues: u32,
    /// Restarts of the task done in the last hour.
    pub restarts: u32,
}

/// The text typed to wake an agent.
pub const CONTINUE: &str = "continue";

fn decision(tell: Tell) -> Decision {
    Decision {
        planned: None,
        tell,
        cancel: None,
    }
}

/// The alarm of a state with nothing automatic.
fn alarm(state: &AgentState) -> Tell {
    match state {
        AgentState::Working
        | AgentState::Idle
        | AgentState::WaitingForPerson { dialog: None }
        | AgentState::Exited { code: 0 } => Tell::NotMine,
        AgentState::WaitingForPerson { dialog: Some(_) } => Tell::Question,
        AgentState::Erroring { gave_up: false, .. } => Tell::Nothing,
        _ => Tell::Alarm { escalated: false },
    }
}

/// Whether the screen lines say the CLI waits for its reset by itself
/// (Claude Code on a subscription: "Continuing automatically at …"; with an
/// API key and its retry watchdog: "… limit reached · retrying in …").
pub fn waits_by_itself(lines: &[String]) -> bool {
    lines.iter().any(|l| {
        let l = l.to_lowercase();
        l.contains("continuing automatically") || (l.contains("limit") && l.contains("retrying"))
    })
}

/// The (1-based) option of a dialog that keeps the task as configured —
/// Codex's "Keep current model" when it offers to switch the model —, as
/// the key that picks it.
pub fn keeping_option(options: &[String]) -> Option<String> {
    options
        .iter()
        .position(|o| {
            let o = o.to_lowercase();
            o.starts_with("keep current") || o.starts_with("keep the current")
        })
        .filter(|i| *i < 9)
        .map(|i| (i + 1).to_string())
}

/// The agent's CLI by the name its person knows.
pub fn cli_name(provider: Provider) -> &'static str {
    match provider {
        Provider::Claude => "Claude Code",
        Provider::Codex => "Codex",
        Provider::Command => "Its CLI",
    }
}

fn after(at: DateTime<Utc>, secs: u64) -> DateTime<Utc> {
    let secs = i64::try_from(secs).unwrap_or(i64::MAX);
    at.checked_add_signed(Duration::seconds(secs)).unwrap_or(at)
}

/// The rule: what `f.change` calls for. Never anything automatic for an
/// attended task, a closed one, or a change that is not about the task's
/// latest execution.
pub fn decide(f: &Facts<'_>) -> Decision {
    let (change, task, p) = (f.change, &f.view.task, f.policy);
    let latest = f.view.execution.as_ref();
    if latest.map(|e| e.id.as_str()) != Some(change.execution_id.as_str()) {
        return decision(Tell::NotMine);
    }
    if matches!(task.status, TaskStatus::Done | TaskStatus::Cancelled) {
        return decision(Tell::NotMine);
    }
    if !task.unattended {
        return decision(alarm(&change.state));
    }
    let open = |reason: ActionReason| f.open.iter().any(|a| a.reason == reason);
    let plan = |action, reason, due_at, text, on_its_node| Planned {
        action,
        reason,
        due_at,
        text,
        on_its_node,
    };
    let now = change.at;
    let moved_on = |tell| Decision {
        planned: None,
        tell,
        cancel: Some("the agent's state changed"),
    };
    match &change.state {
        AgentState::Working | AgentState::Idle | AgentState::WaitingForPerson { dialog: None } => {
            moved_on(Tell::NotMine)
        }
        AgentState::UsageLimited { .. } if !p.usage_limit_resume => moved_on(alarm(&change.state)),
        AgentState::UsageLimited { .. } => {
            let reset = change.reset_at;
            let planned = if waits_by_itself(&change.lines) {
                let at = reset.unwrap_or_else(|| after(now, p.usage_limit_wait_secs));
                plan(
                    ActionKind::Continue,
                    ActionReason::UsageLimitSelfWait,
                    after(at, p.self_wait_check_secs),
                    None,
                    true,
                )
            } else {
                let due = match reset {
                    Some(at) => after(at, p.usage_limit_margin_secs),
                    None => after(now, p.usage_limit_wait_secs),
                };
                plan(
                    ActionKind::Continue,
                    ActionReason::UsageLimit,
                    due,
                    None,
                    false,
                )
            };
            let tell = if planned.reason == ActionReason::UsageLimitSelfWait {
                Tell::ContinuesByItself {
                    cli: cli_name(task.agent.provider),
                    reset,
                    check: planned.due_at,
                }
            } else {
                Tell::WillResumeAt(planned.due_at)
            };
            Decision {
                tell,
                planned: Some(planned),
                cancel: None,
            }
        }
        AgentState::Erroring { gave_up: false, .. } => decision(Tell::Nothing),
        AgentState::Erroring { .. } if !p.api_error_continue => moved_on(alarm(&change.state)),
        AgentState::Erroring { .. } if f.api_continues >= p.api_error_max_per_hour => Decision {
            planned: None,
            tell: Tell::Alarm { escalated: true },
            cancel: Some("the per-hour cap of continues after API errors is reached"),
        },
        AgentState::Erroring { .. } => Decision {
            planned: Some(plan(
                ActionKind::Continue,
                ActionReason::ApiErrors,
                after(now, p.api_error_backoff(f.api_continues)),
                None,
                false,
            )),
            tell: Tell::Nothing,
            cancel: None,
        },
        AgentState::LoggedOut => moved_on(Tell::Alarm { escalated: false }),
        AgentState::Stalled { .. } => Decision {
            planned: p.nudge().map(|text| {
                plan(
                    ActionKind::Nudge,
                    ActionReason::Stalled,
                    now,
                    Some(text.to_string()),
                    false,
                )
            }),
            tell: Tell::Alarm { escalated: false },
            cancel: None,
        },
        AgentState::WaitingForPerson {
            dialog: Some((_, options)),
        } => match keeping_option(options).filter(|_| p.answer_dialogs) {
            Some(key) => Decision {
                planned: Some(plan(
                    ActionKind::AnswerDialog,
                    ActionReason::Dialog,
                    now,
                    Some(key),
                    true,
                )),
                tell: Tell::Nothing,
                cancel: None,
            },
            None => decision(Tell::Question),
        },
        AgentState::Exited { code: 0 } => moved_on(Tell::NotMine),
        AgentState::Exited { .. } | AgentState::Crashed { .. } => {
            if latest.is_some_and(|e| e.status == ExecutionStatus::Stopped) {
                // A person stopped it.
                return moved_on(Tell::NotMine);
            }
            if open(ActionReason::UsageLimit) {
                // Its wake-up at the reset resumes it.
                return decision(Tell::Nothing);
            }
            let restartable = match task.agent.provider {
                Provider::Claude | Provider::Codex => true,
                Provider::Command => task.agent.restart_on_interrupt,
            };
            if !p.crash_restart || !restartable {
                return moved_on(Tell::Alarm { escalated: false });
            }
            if f.restarts >= p.crash_max_per_hour {
                return Decision {
                    planned: None,
                    tell: Tell::Alarm { escalated: true },
                    cancel: Some("the per-hour cap of restarts is reached"),
                };
            }
            Decision {
                planned: Some(plan(
                    ActionKind::Restart,
                    ActionReason::Crash,
                    after(now, p.crash_restart_delay_secs),
                    None,
                    false,
                )),
                tell: Tell::Nothing,
                cancel: None,
            }
        }
    }
}

/// What a due action does now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Type this text (and Enter) into the live agent, through a keyed
    /// delivery: typed at most once.
    Type(String),
    /// Read the agent's screen: still usage-limited → type "continue",
    /// else it went on by itself (done, nothing typed).
    TypeIfStillLimited,
    /// Press this key in the agent's terminal while the dialog it answers
    /// still shows.
    Key(String),
    /// Start the agent again: with its provider session (`session`), or a
    /// `command` agent from its start; then type "continue" (`wake`).
    Start { session: bool, wake: bool },
    /// Not yet: try again after the backoff.
    Later(String),
    /// Nothing to do: it no longer applies.
    Skip(String),
}

/// What `a` does now, given the task as it is (`view`: its latest
/// execution). Rechecked at every attempt: the task may have become
/// attended or closed, a person may have started it again, the agent may
/// have exited.
pub fn step(a: &AgentAction, view: &TaskView) -> Step {
    let task = &view.task;
    if !task.unattended {
        return Step::Skip("the task is attended now".into());
    }
    if matches!(task.status, TaskStatus::Done | TaskStatus::Cancelled) {
        return Step::Skip("the task is closed".into());
    }
    let Some(latest) = view.execution.as_ref().filter(|e| e.id == a.execution_id) else {
        return Step::Skip("the agent was started again since".into());
    };
    let live = matches!(
        latest.status,
        ExecutionStatus::Running | ExecutionStatus::Paused
    );
    if latest.status == ExecutionStatus::Stopped {
        return Step::Skip("a person stopped the agent".into());
    }
    let session = task.agent.provider != Provider::Command;
    let limited = matches!(
        a.reason,
        ActionReason::UsageLimit | ActionReason::UsageLimitSelfWait
    );
    match (a.action, live) {
        (ActionKind::Continue, true) if a.reason == ActionReason::UsageLimitSelfWait => {
            Step::TypeIfStillLimited
        }
        (ActionKind::Continue, true) => Step::Type(CONTINUE.into()),
        (ActionKind::Continue, false) if limited => Step::Start {
            session: true,
            wake: true,
        },
        (ActionKind::Nudge, true) => match a.text.as_deref().filter(|t| !t.trim().is_empty()) {
            Some(text) => Step::Type(text.to_string()),
            None => Step::Skip("no nudge text".into()),
        },
        (ActionKind::AnswerDialog, true) => match &a.text {
            Some(key) => Step::Key(key.clone()),
            None => Step::Skip("no option to pick".into()),
        },
        (ActionKind::Restart | ActionKind::Resume, false) => Step::Start {
            session,
            wake: session,
        },
        // A restart planned from an exit the database does not show yet.
        (ActionKind::Restart | ActionKind::Resume, true) => {
            Step::Later("the exit it answers is not recorded yet".into())
        }
        (_, false) => Step::Skip("the agent exited".into()),
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
