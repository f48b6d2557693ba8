//! After a reboot: the executions of **unattended** tasks that the start-up
//! interruption step (`Tasks::interrupt_orphaned_executions`) found live —
//! their agents died with the machine — are resumed on their own, **once**,
//! and the person is told in one message per start (docs/operating.md, "After a reboot").
//!
//! The rule, here: an attended task is not touched (it shows as interrupted
//! with its Resume button); an unattended one is resumed when the
//! interrupted execution is still its latest and the task is not closed —
//! Claude Code and Codex with their provider session (none known: not
//! resumed), a `command` agent from its start only with
//! `restartOnInterrupt`. The server only performs the starts
//! (`server/src/terminals/reboot.rs`).
//!
//! "Once" is decided in the database (`executions.reboot_state`): the
//! interruption marks each execution PENDING in its own transaction; a boot
//! claims each decision with a conditional update (PENDING → CLAIMED, one
//! winner across nodes) **before** it starts anything; the report and the
//! claims' end (CLAIMED → DONE) are one transaction. A boot that stopped in
//! between leaves CLAIMED rows: the next boot of the node reports them
//! ("stopped while resuming") and never resumes them — nor the execution
//! that resume may have started — again.

use chrono::Utc;

pub use crate::reboot_words::{note_words, note_words_in, report_text, report_text_in};

use crate::agent_actions::Agents;
use crate::{
    CoreResult, ids,
    model::{Execution, Provider, TaskStatus, TaskView},
    store::{Dedup, NewOutbound, RebootRow, RebootState},
};

/// How a resumed agent starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Claude Code or Codex: its provider session (never a fresh one).
    Session,
    /// A `command` agent with `restartOnInterrupt`: from its start.
    Restart,
}

/// Why an interrupted execution was not resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The task ran again since (a newer execution is its latest).
    StartedAgain,
    /// The task is done or cancelled.
    TaskClosed,
    /// A `command` agent without `restartOnInterrupt`.
    CommandWithoutRestart,
    /// Claude Code / Codex whose session is known neither from its hook nor
    /// (Codex) from its session files.
    NoSession,
    /// The server stopped while it resumed this task after an earlier start.
    StoppedDuringResume,
    /// An automatic resume started this execution: never a second one in
    /// a row (a person's start resets it).
    ResumedBefore,
    /// Its agent was running again before this resume (a reply restarted it).
    AlreadyRunning,
    /// The start failed.
    StartFailed(String),
    /// Decided by an earlier boot that stopped before reporting (its note).
    Decided(String),
}

impl Reason {
    pub fn text(&self) -> String {
        match self {
            Self::StartedAgain => "it was started again since".into(),
            Self::TaskClosed => "the task is done or cancelled".into(),
            Self::CommandWithoutRestart => "command agent without restartOnInterrupt".into(),
            Self::NoSession => "no provider session known".into(),
            Self::StoppedDuringResume => {
                "the server stopped while resuming it; not resumed again".into()
            }
            Self::ResumedBefore => {
                "it was itself resumed automatically after an earlier restart; not twice in a row"
                    .into()
            }
            Self::AlreadyRunning => {
                "its agent was already running again (a reply restarted it)".into()
            }
            Self::StartFailed(err) => format!("start failed: {err}"),
            Self::Decided(note) => note.strip_prefix(NOT_RESUMED).unwrap_or(note).to_string(),
        }
    }
}

/// What the rule decides for one interrupted execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// An attended task: not touched, not reported.
    Untouched,
    Leave(Reason),
    Resume(How),
}

/// The rule. `resumed_before`: why not again when an automatic resume
/// started `interrupted` (or may have: it was under way when its server
/// stopped) — [`resumed_before`].
pub fn decide(
    view: &TaskView,
    interrupted: &Execution,
    resumed_before: Option<Reason>,
) -> Decision {
    let task = &view.task;
    if !task.unattended {
        return Decision::Untouched;
    }
    if let Some(reason) = resumed_before {
        return Decision::Leave(reason);
    }
    if matches!(task.status, TaskStatus::Done | TaskStatus::Cancelled) {
        return Decision::Leave(Reason::TaskClosed);
    }
    if view.execution.as_ref().map(|e| e.id.as_str()) != Some(interrupted.id.as_str()) {
        return Decision::Leave(Reason::StartedAgain);
    }
    match task.agent.provider {
        Provider::Claude | Provider::Codex => Decision::Resume(How::Session),
        Provider::Command if task.agent.restart_on_interrupt => Decision::Resume(How::Restart),
        Provider::Command => Decision::Leave(Reason::CommandWithoutRestart),
    }
}

/// Whether an automatic resume started an execution, from the reboot state
/// and note of the task's execution before it — a resume under way when
/// its server stopped (CLAIMED, no note), or one that was done (its note
/// says resumed or restarted) — and so why it is not resumed again.
pub fn resumed_before(previous: Option<RebootState>, note: Option<&str>) -> Option<Reason> {
    match (previous, note) {
        (Some(RebootState::Claimed), None) => Some(Reason::StoppedDuringResume),
        (Some(RebootState::Done), Some(note))
            if note.starts_with(RESUMED) || note.starts_with(RESTARTED) =>
        {
            Some(Reason::ResumedBefore)
        }
        _ => None,
    }
}

/// The session a resume starts with (`None`: from the start), given the
/// session the server found for the execution: a provider agent without
/// one is not resumed (a fresh start would lose its conversation).
pub fn start_with(how: How, found: Option<String>) -> Result<Option<String>, Reason> {
    match (how, found) {
        (How::Session, Some(session)) => Ok(Some(session)),
        (How::Session, None) => Err(Reason::NoSession),
        (How::Restart, _) => Ok(None),
    }
}

/// The note of a decision not to resume starts with this.
pub(crate) const NOT_RESUMED: &str = "not resumed: ";
/// The notes of a done resume.
pub(crate) const RESUMED: &str = "resumed session ";
pub(crate) const RESTARTED: &str = "restarted";
/// The note of an attended task's execution (never reported).
pub(crate) const ATTENDED: &str = "attended: not resumed automatically";

/// How one resume went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Resumed { session_id: String },
    Restarted,
    NotResumed(Reason),
}

impl Outcome {
    fn note(&self) -> String {
        match self {
            Self::Resumed { session_id } => format!("{RESUMED}{session_id}"),
            Self::Restarted => RESTARTED.into(),
            Self::NotResumed(reason) => format!("{NOT_RESUMED}{}", reason.text()),
        }
    }
}

/// One execution this boot resumes (the server starts it).
#[derive(Debug, Clone)]
pub struct Resume {
    pub view: TaskView,
    pub execution: Execution,
    pub how: How,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub task_id: String,
    pub title: String,
    pub provider: Provider,
    pub outcome: Outcome,
}

/// This boot's decisions: the resumes to perform and, as they are
/// recorded, the report.
#[derive(Debug, Clone)]
pub struct Reboot {
    owner: String,
    pub resumes: Vec<Resume>,
    entries: Vec<Entry>,
    /// `(execution id, note)` of every claim of this boot.
    notes: Vec<(String, String)>,
}

impl Reboot {
    /// Nothing was claimed: no report, nothing to finish.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty() && self.resumes.is_empty()
    }

    /// Record how the resume of `resume` went.
    pub fn record(&mut self, resume: &Resume, outcome: Outcome) {
        self.decided(&resume.execution.id, &resume.view, outcome);
    }

    fn decided(&mut self, execution_id: &str, view: &TaskView, outcome: Outcome) {
        self.notes.push((execution_id.to_string(), outcome.note()));
        self.entry(view, outcome);
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// One line per task (a task's first line wins).
    fn entry(&mut self, view: &TaskView, outcome: Outcome) {
        if self.entries.iter().any(|e| e.task_id == view.task.id) {
            return;
        }
        self.entries.push(Entry {
            task_id: view.task.id.clone(),
            title: view.task.title.clone(),
            provider: view.task.agent.provider,
            outcome,
        });
    }
}

/// The node part of a boot's owner (`<node>:<boot>`).
fn node_of(owner: &str) -> &str {
    owner.rsplit_once(':').map_or(owner, |(node, _)| node)
}

impl Agents<'_> {
    /// At server start, after `interrupt_orphaned_executions`: decide every
    /// execution owed a reboot decision on this node and claim it for the
    /// boot `owner` (`<node>:<boot>`), before anything is started. A
    /// decision another node or boot took is left to it.
    pub async fn take_reboot_resumes(&self, owner: &str) -> CoreResult<Reboot> {
        let node = node_of(owner);
        let rows = self.h.store().reboot_rows(node).await?;
        let mut reboot = Reboot {
            owner: owner.to_string(),
            resumes: Vec::new(),
            entries: Vec::new(),
            notes: Vec::new(),
        };
        // Claims of an earlier boot of this node that never reported.
        let earlier: Vec<&RebootRow> = rows
            .iter()
            .filter(|r| r.state == RebootState::Claimed)
            .filter(|r| {
                r.owner
                    .as_deref()
                    .is_some_and(|o| o != owner && node_of(o) == node)
            })
            .collect();
        for row in rows.iter().filter(|r| r.state == RebootState::Pending) {
            let Some(view) = self.h.store().get_task(&row.execution.task_id).await? else {
                continue;
            };
            let before = resumed_before(row.previous_state, row.previous_note.as_deref());
            let decision = decide(&view, &row.execution, before);
            let note = match &decision {
                Decision::Untouched => Some(ATTENDED.to_string()),
                Decision::Leave(reason) => Some(Outcome::NotResumed(reason.clone()).note()),
                Decision::Resume(_) => None,
            };
            if !self
                .h
                .store()
                .claim_reboot(&row.execution.id, None, owner, note.as_deref())
                .await?
            {
                continue;
            }
            match decision {
                Decision::Untouched => reboot
                    .notes
                    .push((row.execution.id.clone(), note.unwrap_or_default())),
                Decision::Leave(reason) => {
                    reboot.decided(&row.execution.id, &view, Outcome::NotResumed(reason));
                }
                Decision::Resume(how) => reboot.resumes.push(Resume {
                    view,
                    execution: row.execution.clone(),
                    how,
                }),
            }
        }
        for row in earlier {
            let Some(from) = row.owner.as_deref() else {
                continue;
            };
            // A resume under way when that boot stopped is never tried again;
            // a decision it had taken is reported as it was.
            let reason = match &row.note {
                None => Reason::StoppedDuringResume,
                Some(note) => Reason::Decided(note.clone()),
            };
            let note = Outcome::NotResumed(reason.clone()).note();
            let note = row.note.clone().unwrap_or(note);
            if !self
                .h
                .store()
                .claim_reboot(&row.execution.id, Some(from), owner, Some(&note))
                .await?
            {
                continue;
            }
            reboot.notes.push((row.execution.id.clone(), note.clone()));
            if note == ATTENDED {
                continue;
            }
            if let Some(view) = self.h.store().get_task(&row.execution.task_id).await? {
                reboot.entry(&view, Outcome::NotResumed(reason));
            }
        }
        if !reboot.is_empty() {
            tracing::info!(
                resumes = reboot.resumes.len(),
                decided = reboot.notes.len(),
                "interrupted executions decided after the restart"
            );
        }
        Ok(reboot)
    }

    /// After the starts: end this boot's claims and queue the one report
    /// to the active unattended notify target, in one transaction (the
    /// outbox worker sends it). Returns the rows queued.
    pub async fn report_reboot_resumes(&self, reboot: Reboot) -> CoreResult<usize> {
        if reboot.is_empty() {
            return Ok(0);
        }
        let mut report = Vec::new();
        let target = self.h.outbox().active_target("unattended").await?;
        let lang = target
            .as_ref()
            .map_or(crate::ladder::Lang::En, |t| t.lang());
        if let Some(text) = report_text_in(lang, &reboot.entries) {
            match target {
                Some(target) => {
                    let clean = |v: &Option<String>| {
                        v.as_deref()
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                    };
                    report.push(NewOutbound {
                        id: ids::new_id(),
                        message_id: None,
                        task_id: None,
                        dedup: Dedup::Explicit(format!("reboot:{}", reboot.owner)),
                        gateway: target.gateway.trim().to_string(),
                        downstream: clean(&target.downstream),
                        dest: clean(&target.dest),
                        requested_to: None,
                        profile: clean(&target.profile),
                        scope: "unattended".into(),
                        expect_reply: false,
                        message: text,
                        presentation: None,
                        now: Utc::now(),
                        choices: None,
                    });
                }
                None => tracing::warn!(
                    "no active unattended notify target: the report of the resumes after the \
                     restart is not sent (see the log above)"
                ),
            }
        }
        for e in &reboot.entries {
            tracing::warn!(task_id = %e.task_id, outcome = %e.outcome.note(), "after the restart");
        }
        // A resume never recorded (the caller stopped early) stays CLAIMED:
        // the next boot reports it as stopped mid-resume.
        let rows = self
            .h
            .store()
            .finish_reboot(&reboot.owner, &reboot.notes, &report)
            .await?;
        for row in &rows {
            tracing::info!(outbound_id = %row.id, "report of the resumes after the restart queued");
            self.h.outbox().outbound_changed(row);
        }
        if !rows.is_empty() {
            self.h.outbox().wake_outbox();
        }
        Ok(rows.len())
    }
}

#[cfg(test)]
#[path = "reboot_tests.rs"]
mod tests;
