//! The attempt's state machine against a scripted terminal and a ledger that
//! records each commit: every step committed before its side effect, each
//! ending mapped to its outcome.

use std::{
    collections::VecDeque,
    sync::{Mutex, MutexGuard},
};

use chrono::Utc;

use super::*;
use crate::{
    ids,
    model::{AgentConfig, ExecutionStatus, Provider, Task, TaskStatus},
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A terminal whose answers are scripted; everything it is asked to do is
/// appended to `log`, shared with the ledger's commits.
struct Script {
    log: Mutex<Vec<String>>,
    /// Whether a live terminal is there, per call of `live` (last one repeats).
    live: Mutex<VecDeque<bool>>,
    /// The task found when none is live.
    latest: Option<ExecutionStatus>,
    /// Answers of `start_again`, in order (last one repeats).
    starts: Mutex<VecDeque<Start>>,
    /// Answers of `boundary`, in order (last one repeats).
    boundaries: Mutex<VecDeque<Boundary>>,
    exited: bool,
    write: Write,
}

impl Script {
    fn new() -> Self {
        Self {
            log: Mutex::default(),
            live: Mutex::new([true].into()),
            latest: Some(ExecutionStatus::Completed),
            starts: Mutex::new([Start::Started].into()),
            boundaries: Mutex::new([Boundary::Reached].into()),
            exited: false,
            write: Write::Written,
        }
    }

    fn note(&self, what: impl Into<String>) {
        lock(&self.log).push(what.into());
    }

    fn log(&self) -> Vec<String> {
        lock(&self.log).clone()
    }
}

#[derive(Debug, Clone, Copy)]
enum Start {
    Started,
    /// Another start won.
    Lost,
    Broken,
}

/// The next scripted answer; the last one stays.
fn next<T: Clone>(q: &Mutex<VecDeque<T>>) -> Option<T> {
    let mut q = lock(q);
    if q.len() > 1 {
        q.pop_front()
    } else {
        q.front().cloned()
    }
}

fn view(status: Option<ExecutionStatus>) -> TaskView {
    let now = Utc::now();
    TaskView {
        task: Task {
            id: "t".into(),
            title: "t".into(),
            description: None,
            project_id: None,
            parent_task_id: None,
            status: TaskStatus::InProgress,
            unattended: false,
            agent: AgentConfig {
                provider: Provider::Claude,
                command: None,
                cwd: None,
                env: Default::default(),
                restart_on_interrupt: false,
                recovery: None,
            },
            created_at: now,
            updated_at: now,
        },
        execution: status.map(execution),
        open_ask: false,
        agent_state: None,
    }
}

fn execution(status: ExecutionStatus) -> Execution {
    Execution {
        id: ids::new_id(),
        task_id: "t".into(),
        status,
        session_id: Some("s".into()),
        exit_code: None,
        created_at: Utc::now(),
        ended_at: None,
        node_id: None,
        node_name: None,
        unreadable_holder: None,
    }
}

#[async_trait]
impl DeliveryTerminals for Script {
    type Session = ();

    fn live(&self, _task_id: &str) -> Option<()> {
        next(&self.live).unwrap_or(false).then_some(())
    }

    async fn live_or_task(&self, task_id: &str) -> CoreResult<Found<()>> {
        Ok(match self.live(task_id) {
            Some(s) => Found::Live(s),
            None => Found::NotLive(Box::new(view(self.latest))),
        })
    }

    async fn start_again(&self, _view: &TaskView, _latest: &Execution) -> CoreResult<Execution> {
        self.note("start");
        match next(&self.starts) {
            Some(Start::Lost) => Err(CoreError::Conflict("already running".into())),
            Some(Start::Broken) => Err(CoreError::Unavailable("cannot spawn".into())),
            _ => Ok(execution(ExecutionStatus::Running)),
        }
    }

    async fn wait_until_ready(&self, _view: &TaskView, _started: &Execution, _session: &()) {
        self.note("ready");
    }

    async fn typed_text(&self, _row: &Delivery, text: &str) -> String {
        text.to_string()
    }

    fn unpark(&self, _task_id: &str) {
        self.note("unpark");
    }

    async fn boundary(&self, _session: &(), wait: Wait) -> Boundary {
        self.note(format!("boundary {wait:?}"));
        next(&self.boundaries).unwrap_or(Boundary::Reached)
    }

    fn has_exited(&self, _session: &()) -> bool {
        self.exited
    }

    async fn write(&self, _session: &(), _row: &Delivery, text: &str) -> Write {
        self.note(format!("write {text}"));
        self.write.clone()
    }
}

/// Commits land in the terminal's log, so their order against the side
/// effects shows; `answer` is what each commit answers.
struct Ledger<'a> {
    script: &'a Script,
    answer: Result<bool, String>,
    draining: bool,
}

#[async_trait]
impl AttemptLedger for Ledger<'_> {
    async fn advance(&self, state: DeliveryState) -> Result<bool, String> {
        self.script.note(format!("commit {}", state.as_str()));
        self.answer.clone()
    }

    fn draining(&self) -> bool {
        self.draining
    }
}

fn ledger(script: &Script) -> Ledger<'_> {
    Ledger {
        script,
        answer: Ok(true),
        draining: false,
    }
}

fn row(kind: DeliveryKind, resume: bool) -> Delivery {
    let now = Utc::now();
    Delivery {
        id: ids::new_id(),
        task_id: "t".into(),
        kind,
        message_id: None,
        node_id: None,
        text: "yes".into(),
        question: Some("Deploy?".into()),
        submit: true,
        dedup_key: None,
        state: DeliveryState::Queued,
        attempts: 0,
        next_attempt_at: None,
        lease_owner: None,
        lease_expires_at: None,
        last_error: None,
        created_at: now,
        updated_at: now,
        done_at: None,
        resume,
    }
}

async fn run(script: &Script, row: &Delivery) -> Option<Outcome> {
    attempt(script, &ledger(script), row).await
}

#[tokio::test]
async fn input_into_a_live_terminal_commits_writing_before_the_write() {
    let s = Script::new();
    let out = run(&s, &row(DeliveryKind::Input, false)).await;
    assert_eq!(out, Some(Outcome::Done));
    // No boundary wait for plain input.
    assert_eq!(s.log(), ["unpark", "commit WRITING", "write yes"]);
}

#[tokio::test]
async fn a_reply_waits_for_a_boundary_and_commits_the_long_wait_first() {
    let s = Script::new();
    *lock(&s.boundaries) = [Boundary::TimedOut, Boundary::Reached].into();
    let out = run(&s, &row(DeliveryKind::Reply, false)).await;
    assert_eq!(out, Some(Outcome::Done));
    assert_eq!(
        s.log(),
        [
            "unpark",
            "boundary Now",
            "commit WAITING_BOUNDARY",
            "boundary Patient",
            "commit WRITING",
            "write yes"
        ]
    );
    // Input owed to an agent (`resume`) waits too; at a boundary at once
    // no step is committed for the wait.
    let s = Script::new();
    let out = run(&s, &row(DeliveryKind::Input, true)).await;
    assert_eq!(out, Some(Outcome::Done));
    assert_eq!(
        s.log(),
        ["unpark", "boundary Now", "commit WRITING", "write yes"]
    );
}

#[tokio::test]
async fn an_agent_that_exits_before_the_write_is_tried_again_and_nothing_is_written() {
    let s = Script::new();
    *lock(&s.boundaries) = [Boundary::Exited].into();
    let out = run(&s, &row(DeliveryKind::Reply, false)).await;
    assert_eq!(
        out,
        Some(Outcome::Retry(
            "the agent exited before the reply could be typed".into()
        ))
    );
    let mut s = Script::new();
    s.exited = true;
    let out = run(&s, &row(DeliveryKind::Input, false)).await;
    assert_eq!(
        out,
        Some(Outcome::Retry(
            "the agent exited before the text could be typed".into()
        ))
    );
    assert!(
        !s.log()
            .iter()
            .any(|l| l.starts_with("write") || l == "commit WRITING")
    );
}

#[tokio::test]
async fn a_lost_lease_ends_the_attempt_without_its_side_effect() {
    let s = Script::new();
    let lost = Ledger {
        answer: Ok(false),
        ..ledger(&s)
    };
    assert_eq!(
        attempt(&s, &lost, &row(DeliveryKind::Input, false)).await,
        None
    );
    assert!(!s.log().iter().any(|l| l.starts_with("write")));
    // No terminal: the lease lost at RESUMING starts nothing.
    let s = Script::new();
    *lock(&s.live) = [false].into();
    let lost = Ledger {
        answer: Ok(false),
        ..ledger(&s)
    };
    assert_eq!(
        attempt(&s, &lost, &row(DeliveryKind::Reply, false)).await,
        None
    );
    assert_eq!(s.log(), ["commit RESUMING"]);
    // A commit that fails is a clean failure: tried again, nothing written.
    let s = Script::new();
    let broken = Ledger {
        answer: Err("cannot record the delivery step: disk full".into()),
        ..ledger(&s)
    };
    assert_eq!(
        attempt(&s, &broken, &row(DeliveryKind::Input, false)).await,
        Some(Outcome::Retry(
            "cannot record the delivery step: disk full".into()
        ))
    );
    assert!(!s.log().iter().any(|l| l.starts_with("write")));
}

#[test]
fn a_write_that_may_have_reached_the_terminal_is_unverified() {
    assert_eq!(write_outcome(Write::Written), Outcome::Done);
    assert_eq!(write_outcome(Write::AlreadyWritten), Outcome::Done);
    assert_eq!(
        write_outcome(Write::InProgress),
        Outcome::Unverified("another write of this id was in progress".into())
    );
    assert_eq!(
        write_outcome(Write::Failed("EIO".into())),
        Outcome::Unverified("terminal write failed: EIO".into())
    );
}

#[tokio::test]
async fn a_failed_write_is_unverified() {
    let mut s = Script::new();
    s.write = Write::Failed("EIO".into());
    let out = run(&s, &row(DeliveryKind::Input, false)).await;
    assert_eq!(
        out,
        Some(Outcome::Unverified("terminal write failed: EIO".into()))
    );
}

#[tokio::test]
async fn a_reply_without_a_terminal_restarts_the_agent_and_carries_its_question() {
    let s = Script::new();
    // Not live at the first look nor under the lock; live once started.
    *lock(&s.live) = [false, false, true].into();
    let out = run(&s, &row(DeliveryKind::Reply, false)).await;
    assert_eq!(out, Some(Outcome::Done));
    assert_eq!(
        s.log(),
        [
            "commit RESUMING",
            "start",
            "ready",
            "unpark",
            "boundary Now",
            "commit WRITING",
            &format!("write {QUESTION_PREFIX}Deploy?]\nyes"),
        ]
    );
}

#[tokio::test]
async fn without_a_terminal_the_core_rule_decides_and_a_draining_node_starts_nothing() {
    // Plain input never starts an agent.
    let s = Script::new();
    *lock(&s.live) = [false].into();
    let out = run(&s, &row(DeliveryKind::Input, false)).await;
    assert_eq!(out, Some(Outcome::GaveUp("No active session".into())));
    assert!(s.log().is_empty());
    // A stopped task stays stopped.
    let mut s = Script::new();
    *lock(&s.live) = [false].into();
    s.latest = Some(ExecutionStatus::Stopped);
    assert!(matches!(
        run(&s, &row(DeliveryKind::Reply, false)).await,
        Some(Outcome::GaveUp(_))
    ));
    assert!(s.log().is_empty());
    // A draining node leaves the start to another node.
    let s = Script::new();
    *lock(&s.live) = [false].into();
    let draining = Ledger {
        draining: true,
        ..ledger(&s)
    };
    assert_eq!(
        attempt(&s, &draining, &row(DeliveryKind::Reply, false)).await,
        Some(Outcome::Retry(
            "this node is draining: another node starts the agent".into()
        ))
    );
    assert!(s.log().is_empty());
}

#[tokio::test]
async fn a_start_that_loses_a_race_looks_again_and_a_failed_start_is_retried() {
    // Lost to another start, whose terminal the next round finds.
    let s = Script::new();
    *lock(&s.live) = [false, false, true].into();
    *lock(&s.starts) = [Start::Lost].into();
    let out = run(&s, &row(DeliveryKind::Reply, false)).await;
    assert_eq!(out, Some(Outcome::Done));
    assert_eq!(s.log()[..2], ["commit RESUMING", "start"]);
    assert!(!s.log().iter().any(|l| l == "ready"));
    // Lost every time: the attempt ends, to be tried again.
    let s = Script::new();
    *lock(&s.live) = [false].into();
    *lock(&s.starts) = [Start::Lost].into();
    assert_eq!(
        run(&s, &row(DeliveryKind::Reply, false)).await,
        Some(Outcome::Retry("the agent's terminal kept changing".into()))
    );
    assert_eq!(s.log().iter().filter(|l| *l == "start").count(), ROUNDS);
    // Another error, or an agent that exits at once: tried again later.
    let s = Script::new();
    *lock(&s.live) = [false].into();
    *lock(&s.starts) = [Start::Broken].into();
    assert!(matches!(
        run(&s, &row(DeliveryKind::Reply, false)).await,
        Some(Outcome::Retry(why)) if why.starts_with("cannot restart the agent")
    ));
    let s = Script::new();
    *lock(&s.live) = [false].into();
    assert_eq!(
        run(&s, &row(DeliveryKind::Reply, false)).await,
        Some(Outcome::Retry(
            "the restarted agent exited immediately".into()
        ))
    );
}
