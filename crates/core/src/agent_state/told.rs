//! What a recorded change says, and to whom: the one rule after a change
//! ([`after_change`]). Pure; `Agents::record_state_change` writes what it
//! decides with the record, in one transaction.
//!
//! - **The person** (an unattended task with a chat channel), once per
//!   execution and state (dedup key [`push_key`]): exited with a failure,
//!   crashed, logged out, stalled, erroring after the CLI stopped retrying.
//!   Each push carries the task token, the reason, the last screen lines
//!   and the replies ([`REPLIES`]). A usage limit is told by the recovery
//!   (it knows whether the agent resumes on its own); it sends it with the
//!   same push (`Agents::push_agent_state`).
//! - **Finished** is not an alarm: one note per task and execution
//!   ([`finished_key`]) when the execution completed (exit 0), or when the
//!   agent is idle after a turn end and no task-list loop is active in its
//!   working directory (`.harness-active` gone: no plan task left to do).
//! - **The parent** of a derived task: an event in its inbox when its agent
//!   is logged out, stalled, usage-limited or erroring after its retries
//!   (exits reach it as before, `Deliveries::record_child_exit`).
//! - An attended task is never pushed; an execution a person stopped (or a
//!   newer start superseded) says nothing.

use serde_json::{Value, json};

use super::{AgentState, StateChange};
use crate::agent_actions::Tell;
use crate::ladder::Lang;
use crate::model::{AgentStateName, AgentStateRecord, ExecutionStatus, TaskView};

#[path = "told_words.rs"]
mod words;

/// What the person can reply to an alarm (in English; in any language:
/// [`replies`]).
pub const REPLIES: &str = words::EN.replies;

/// What the person can reply to an alarm, in `lang`.
pub fn replies(lang: Lang) -> &'static str {
    words::phrases(lang).replies
}

/// The longest screen line a push carries.
const MAX_LINE_CHARS: usize = 200;

/// What is around a change.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The task, with its latest execution.
    pub view: &'a TaskView,
    /// A task-list loop is active in the agent's working directory.
    pub plan_active: bool,
}

/// What a change says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Told {
    /// The push to the person: its dedup key and its words (the title and
    /// the task token are added when it is composed).
    pub push: Option<Words>,
    /// The event in the parent's inbox: its dedup key and payload.
    pub parent: Option<ParentEvent>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    pub key: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParentEvent {
    pub parent_task_id: String,
    pub dedup_key: String,
    pub payload: Value,
}

impl Eq for ParentEvent {}

/// The dedup key of an execution's push for a state.
pub fn push_key(execution_id: &str, state: AgentStateName) -> String {
    format!("agent-state:{execution_id}:{state}")
}

/// The dedup key of a task's "finished" note for an execution.
pub fn finished_key(task_id: &str, execution_id: &str) -> String {
    format!("agent-finished:{task_id}:{execution_id}")
}

/// The dedup key of a parent's inbox event for a child's state.
pub fn parent_key(state: AgentStateName, task_id: &str, execution_id: &str) -> String {
    format!("agent-state:{state}:{task_id}:{execution_id}")
}

/// The states the person is told of at once.
pub fn is_alarm(state: &AgentState) -> bool {
    match state {
        AgentState::Exited { code } => *code != 0,
        AgentState::Crashed { .. } | AgentState::LoggedOut | AgentState::Stalled { .. } => true,
        AgentState::Erroring { gave_up, .. } => *gave_up,
        _ => false,
    }
}

/// An unattended agent in this recorded state needs a person (the Inbox's
/// "needs you", counted with its questions): failed, crashed, logged out,
/// stalled, usage-limited, or given up on API errors.
pub fn needs_you(r: &AgentStateRecord) -> bool {
    state_needs_you(r.state, r.exit_code, r.gave_up)
}

/// [`needs_you`] on the fields it reads: the state's name, an exit's code
/// and whether the CLI gave up on API errors.
pub fn state_needs_you(state: AgentStateName, exit_code: Option<i32>, gave_up: bool) -> bool {
    use AgentStateName as N;
    match state {
        N::Exited => exit_code.unwrap_or(0) != 0,
        N::Crashed | N::LoggedOut | N::Stalled | N::UsageLimited => true,
        N::Erroring => gave_up,
        N::Working | N::WaitingForPerson | N::Idle => false,
    }
}

/// The execution finished its work (see the module docs).
pub fn is_finished(state: &AgentState, plan_active: bool) -> bool {
    match state {
        AgentState::Exited { code: 0 } => true,
        AgentState::Idle => !plan_active,
        _ => false,
    }
}

/// The states a derived task's parent hears of (besides its exits).
fn tells_parent(state: &AgentState) -> bool {
    match state {
        AgentState::LoggedOut | AgentState::Stalled { .. } | AgentState::UsageLimited { .. } => {
            true
        }
        AgentState::Erroring { gave_up, .. } => *gave_up,
        _ => false,
    }
}

/// The rule (see the module docs), the push in English.
pub fn after_change(change: &StateChange, record: &AgentStateRecord, ctx: Context<'_>) -> Told {
    after_change_in(Lang::En, change, record, ctx)
}

/// [`after_change`], the push in `lang` (the person's notify target's).
pub fn after_change_in(
    lang: Lang,
    change: &StateChange,
    record: &AgentStateRecord,
    ctx: Context<'_>,
) -> Told {
    let view = ctx.view;
    let latest = view.execution.as_ref();
    let current =
        latest.is_some_and(|e| e.id == change.execution_id && e.status != ExecutionStatus::Stopped);
    if !current {
        return Told::default();
    }
    let mut told = Told::default();
    if view.task.unattended {
        if is_alarm(&change.state) {
            told.push = Some(Words {
                key: push_key(&change.execution_id, change.state.name()),
                text: alarm_text_in(lang, record, None),
            });
        } else if is_finished(&change.state, ctx.plan_active) {
            told.push = Some(Words {
                key: finished_key(&view.task.id, &change.execution_id),
                text: finished_text_in(lang, record),
            });
        }
    }
    if let Some(parent) = &view.task.parent_task_id
        && tells_parent(&change.state)
    {
        told.parent = Some(ParentEvent {
            parent_task_id: parent.clone(),
            dedup_key: parent_key(change.state.name(), &view.task.id, &change.execution_id),
            payload: json!({
                "childTaskId": view.task.id, "childTitle": view.task.title,
                "executionId": change.execution_id, "agentState": record.state,
                "reason": record.reason, "lines": record.lines,
            }),
        });
    }
    told
}

/// The push once the recovery has had its say (`tell`, from
/// `Agents::plan_recovery`): nothing while an automatic action takes care
/// of it; "It will resume at …" for a parked usage limit, "<cli> will
/// continue by itself at …; Harness checks at …" for a CLI that waits for
/// its reset by itself; the alarm, with
/// why nothing more is tried when the per-hour cap is reached; a dialog no
/// option answers, told like a question. `push` is [`after_change`]'s own
/// (kept when the recovery has no part). Attended tasks are never pushed.
/// In English.
pub fn with_recovery(
    push: Option<Words>,
    tell: Tell,
    change: &StateChange,
    record: &AgentStateRecord,
    unattended: bool,
) -> Option<Words> {
    with_recovery_in(Lang::En, push, tell, change, record, unattended)
}

/// [`with_recovery`] in `lang`.
pub fn with_recovery_in(
    lang: Lang,
    push: Option<Words>,
    tell: Tell,
    change: &StateChange,
    record: &AgentStateRecord,
    unattended: bool,
) -> Option<Words> {
    if !unattended {
        return None;
    }
    let p = words::phrases(lang);
    let words = |more: Option<&str>| Words {
        key: push_key(&change.execution_id, change.state.name()),
        text: alarm_text_in(lang, record, more),
    };
    match tell {
        Tell::NotMine => push,
        Tell::Nothing => None,
        Tell::WillResumeAt(at) => Some(words(Some(&times(lang, p.will_resume, at)))),
        Tell::ContinuesByItself { cli, reset, check } => {
            Some(words(Some(&by_itself_text_in(lang, cli, reset, check))))
        }
        Tell::Alarm { escalated: false } => push.or_else(|| Some(words(None))),
        Tell::Alarm { escalated: true } => Some(words(Some(p.cap_reached))),
        Tell::Question => Some(words(Some(p.own_dialog))),
    }
}

/// `template` with `{hm}`, `{day}` and `{rfc}` of `at`.
fn times(lang: Lang, template: &str, at: chrono::DateTime<chrono::Utc>) -> String {
    template
        .replace("{hm}", &at.format("%H:%M").to_string())
        .replace("{day}", &words::day(lang, at))
        .replace(
            "{rfc}",
            &at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        )
}

/// The words for a CLI that waits for its reset by itself: it carries on
/// by itself (at the time it printed); Harness only checks after it, and
/// types "continue" then only if it has not.
pub fn by_itself_text(
    cli: &str,
    reset: Option<chrono::DateTime<chrono::Utc>>,
    check: chrono::DateTime<chrono::Utc>,
) -> String {
    by_itself_text_in(Lang::En, cli, reset, check)
}

/// [`by_itself_text`] in `lang`.
pub fn by_itself_text_in(
    lang: Lang,
    cli: &str,
    reset: Option<chrono::DateTime<chrono::Utc>>,
    check: chrono::DateTime<chrono::Utc>,
) -> String {
    let p = words::phrases(lang);
    let when = match reset {
        Some(at) => p.at_time.replace("{hm}", &at.format("%H:%M").to_string()),
        None => p.when_reset.to_string(),
    };
    times(lang, p.by_itself, check)
        .replace("{cli}", cli)
        .replace("{when}", &when)
}

/// The last screen lines as a push quotes them.
fn quoted(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| {
            let mut l: String = l.chars().take(MAX_LINE_CHARS).collect();
            if l.chars().count() == MAX_LINE_CHARS {
                l.push('…');
            }
            format!("> {l}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The words of a state push: what happened, the last screen lines, `more`
/// (e.g. the recovery's "It will resume at …"), and the replies. In
/// English.
pub fn alarm_text(record: &AgentStateRecord, more: Option<&str>) -> String {
    alarm_text_in(Lang::En, record, more)
}

/// [`alarm_text`] in `lang`.
pub fn alarm_text_in(lang: Lang, record: &AgentStateRecord, more: Option<&str>) -> String {
    let p = words::phrases(lang);
    let mut text = p
        .alarm
        .replace("{state}", &words::state_name(lang, record.state))
        .replace("{reason}", &record_reason_in(lang, record));
    if !record.lines.is_empty() {
        text.push_str("\n\n");
        text.push_str(p.last_lines);
        text.push('\n');
        text.push_str(&quoted(&record.lines));
    }
    if let Some(more) = more.map(str::trim).filter(|m| !m.is_empty()) {
        text.push_str("\n\n");
        text.push_str(more);
    }
    text.push_str("\n\n");
    text.push_str(p.replies);
    text
}

/// The reason of `record` in `lang`: as recorded (English), or written
/// anew in Chinese from the record's facts (already redacted).
fn record_reason_in(lang: Lang, record: &AgentStateRecord) -> String {
    if lang == Lang::En {
        return record.reason.clone();
    }
    match super::state_of(record) {
        // The reset as printed, even where it no longer reads as a time.
        AgentState::UsageLimited { .. } => super::reset_words(lang, record.reset_text.as_deref()),
        state => super::reason_in(lang, &state),
    }
}

/// The words of a "finished" note, in English.
pub fn finished_text(record: &AgentStateRecord) -> String {
    finished_text_in(Lang::En, record)
}

/// [`finished_text`] in `lang`.
pub fn finished_text_in(lang: Lang, record: &AgentStateRecord) -> String {
    let p = words::phrases(lang);
    let mut text = p
        .finished
        .replace("{reason}", &record_reason_in(lang, record));
    if !record.lines.is_empty() {
        text.push_str("\n\n");
        text.push_str(p.last_lines);
        text.push('\n');
        text.push_str(&quoted(&record.lines));
    }
    text
}

/// What a person's reply to a state push asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyAction {
    /// `restart` / `resume`: start the task's agent again with its session
    /// (a live one is stopped first).
    Resume,
    /// `stop`: stop the task's agent.
    Stop,
}

/// The reply's action when the whole reply is one of the words (any case,
/// a task token and trailing punctuation aside); `None` otherwise.
pub fn reply_action(text: &str) -> Option<ReplyAction> {
    let mut t = text.trim().to_lowercase();
    if let Some(id) = crate::outbox::token::extract(&t) {
        t = t.replace(&crate::outbox::token::build(&id), " ");
    }
    let word = t
        .trim()
        .trim_end_matches(['.', '!'])
        .trim_start_matches('/')
        .trim();
    match word {
        "restart" | "resume" => Some(ReplyAction::Resume),
        "stop" => Some(ReplyAction::Stop),
        _ => None,
    }
}

#[cfg(test)]
#[path = "told_tests.rs"]
mod tests;
