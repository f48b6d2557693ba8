//! The skeleton's scheduling, on a small in-memory kind (the kinds' own
//! state machines on the real store are tested in `server/tests/engine.rs`,
//! the real runners in the deliveries / outbox / workbench suites).

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use chrono::{DateTime, Utc};
use harness_core::{CoreError, CoreResult};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Queued,
    Leased,
    Done,
}

#[derive(Debug, Clone)]
struct Row {
    id: String,
    key: String,
    until: DateTime<Utc>,
}

#[derive(Default)]
struct Table {
    rows: Vec<(Row, State)>,
    /// Outcomes recorded per id.
    recorded: HashMap<String, usize>,
    /// Attempts started per id.
    attempts: HashMap<String, usize>,
    /// Start order per key.
    order: HashMap<String, Vec<String>>,
    /// Turns that fail before the next succeeds.
    fail_turns: usize,
    /// Turns to fail once a first row was recorded (while rows remain).
    fail_after_recording: usize,
}

#[derive(Clone, Default)]
struct TestKind {
    table: Arc<Mutex<Table>>,
    running: Arc<AtomicUsize>,
    max_running: Arc<AtomicUsize>,
    running_keys: Arc<Mutex<HashMap<String, usize>>>,
    overlap: Arc<AtomicUsize>,
    /// Attempts wait for this before they end (when set).
    gate: Option<CancellationToken>,
    work: Duration,
    /// The node is draining: no new rows (`Queue::takes_new_work`).
    paused: Arc<std::sync::atomic::AtomicBool>,
}

impl TestKind {
    fn add(&self, id: &str, key: &str) {
        let row = Row {
            id: id.into(),
            key: key.into(),
            until: Utc::now(),
        };
        self.lock().rows.push((row, State::Queued));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap()
    }

    fn states(&self) -> HashMap<String, State> {
        self.lock()
            .rows
            .iter()
            .map(|(r, s)| (r.id.clone(), *s))
            .collect()
    }

    async fn wait_for(&self, what: &str, ok: impl Fn(&Table) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !ok(&self.lock()) {
            assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Queue for TestKind {
    type Row = Row;
    type Outcome = ();
    const NAME: &'static str = "deliveries";

    fn id(row: &Row) -> &str {
        &row.id
    }
    fn serial_key(row: &Row) -> Option<&str> {
        Some(&row.key)
    }
    fn lease_until(row: &Row) -> Option<DateTime<Utc>> {
        Some(row.until)
    }
    fn span(row: &Row) -> tracing::Span {
        tracing::info_span!("test", id = %row.id)
    }
    fn takes_new_work(&self) -> bool {
        !self.paused.load(Ordering::SeqCst)
    }

    fn turn(
        &self,
        done: Vec<(Row, ())>,
        released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<Row>>> + Send + 'static {
        let table = self.table.clone();
        async move {
            let mut t = table.lock().unwrap();
            if t.fail_after_recording > 0 && !t.recorded.is_empty() {
                t.fail_turns += std::mem::take(&mut t.fail_after_recording);
            }
            if t.fail_turns > 0 {
                t.fail_turns -= 1;
                return Err(CoreError::Conflict("the database is away".into()));
            }
            for (row, ()) in &done {
                *t.recorded.entry(row.id.clone()).or_default() += 1;
                if let Some(r) = t.rows.iter_mut().find(|(r, _)| r.id == row.id) {
                    r.1 = State::Done;
                }
            }
            for id in &released {
                if let Some(r) = t
                    .rows
                    .iter_mut()
                    .find(|(r, s)| &r.id == id && *s == State::Leased)
                {
                    r.1 = State::Queued;
                }
            }
            let mut leased = Vec::new();
            for (row, state) in t.rows.iter_mut() {
                if leased.len() >= limit as usize {
                    break;
                }
                if *state == State::Queued {
                    *state = State::Leased;
                    row.until = Utc::now() + chrono::Duration::seconds(60);
                    leased.push(row.clone());
                }
            }
            Ok(leased)
        }
    }

    fn attempt(&self, row: Row) -> impl Future<Output = Option<()>> + Send + 'static {
        let me = self.clone();
        async move {
            {
                let mut t = me.lock();
                *t.attempts.entry(row.id.clone()).or_default() += 1;
                t.order
                    .entry(row.key.clone())
                    .or_default()
                    .push(row.id.clone());
            }
            let now = me.running.fetch_add(1, Ordering::SeqCst) + 1;
            me.max_running.fetch_max(now, Ordering::SeqCst);
            {
                let mut keys = me.running_keys.lock().unwrap();
                let n = keys.entry(row.key.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    me.overlap.fetch_add(1, Ordering::SeqCst);
                }
            }
            if let Some(gate) = &me.gate {
                gate.cancelled().await;
            }
            tokio::time::sleep(me.work).await;
            *me.running_keys.lock().unwrap().get_mut(&row.key).unwrap() -= 1;
            me.running.fetch_sub(1, Ordering::SeqCst);
            Some(())
        }
    }
}

fn config(max_in_flight: usize, ahead: usize) -> WorkerConfig {
    WorkerConfig {
        poll: Duration::from_millis(20),
        max_in_flight,
        ahead_per_slot: ahead,
        start_margin: Duration::from_secs(1),
        maintain_every: Duration::from_secs(60),
        settle_delay: Duration::from_millis(2),
        drain: Duration::from_secs(2),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_row_once_bounded_and_one_per_key_in_order() {
    for ahead in [0, 3] {
        let kind = TestKind {
            work: Duration::from_millis(2),
            ..TestKind::default()
        };
        for i in 0..120 {
            kind.add(&format!("r{i:03}"), &format!("k{}", i % 7));
        }
        let cancel = CancellationToken::new();
        let worker = tokio::spawn(
            Worker::new(kind.clone(), config(4, ahead)).run(Arc::default(), cancel.clone()),
        );
        kind.wait_for("all recorded", |t| t.recorded.len() == 120)
            .await;
        cancel.cancel();
        worker.await.unwrap();
        let t = kind.lock();
        assert!(t.recorded.values().all(|&n| n == 1), "recorded twice");
        assert!(t.attempts.values().all(|&n| n == 1), "attempted twice");
        assert!(
            kind.max_running.load(Ordering::SeqCst) <= 4,
            "over the bound"
        );
        assert!(
            kind.max_running.load(Ordering::SeqCst) >= 2,
            "never parallel"
        );
        assert_eq!(
            kind.overlap.load(Ordering::SeqCst),
            0,
            "a key ran twice at once"
        );
        for ids in t.order.values() {
            let mut sorted = ids.clone();
            sorted.sort();
            assert_eq!(ids, &sorted, "a key's rows out of lease order");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_turn_is_tried_again_without_recording_twice() {
    let kind = TestKind::default();
    for i in 0..10 {
        kind.add(&format!("r{i}"), &format!("k{i}"));
    }
    // Armed before the start: setting it after a first record raced a fast
    // machine, where every row was recorded before the failures were set.
    kind.lock().fail_after_recording = 3;
    let cancel = CancellationToken::new();
    let worker =
        tokio::spawn(Worker::new(kind.clone(), config(2, 0)).run(Arc::default(), cancel.clone()));
    kind.wait_for("all recorded", |t| t.recorded.len() == 10)
        .await;
    cancel.cancel();
    worker.await.unwrap();
    let t = kind.lock();
    assert!(t.recorded.values().all(|&n| n == 1));
    assert_eq!(
        (t.fail_after_recording, t.fail_turns),
        (0, 0),
        "the failures were exercised"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stop_records_what_ended_and_releases_what_never_started() {
    let gate = CancellationToken::new();
    let kind = TestKind {
        gate: Some(gate.clone()),
        ..TestKind::default()
    };
    for i in 0..12 {
        kind.add(&format!("r{i:02}"), &format!("k{i}"));
    }
    let cancel = CancellationToken::new();
    let worker =
        tokio::spawn(Worker::new(kind.clone(), config(2, 3)).run(Arc::default(), cancel.clone()));
    // Two attempts run; more rows are leased ahead and wait in the queue.
    kind.wait_for("two running, more leased", |t| {
        t.attempts.len() == 2 && t.rows.iter().filter(|(_, s)| *s == State::Leased).count() > 2
    })
    .await;
    cancel.cancel();
    gate.cancel(); // the two in flight finish within the drain
    worker.await.unwrap();
    let states = kind.states();
    let t = kind.lock();
    assert_eq!(t.recorded.len(), 2, "the two that ran are recorded");
    for (id, state) in states {
        let ran = t.attempts.contains_key(&id);
        match state {
            State::Done => assert!(ran),
            State::Queued => assert!(!ran, "{id}"),
            State::Leased => panic!("{id} left leased after a clean stop"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wake_is_enough_without_polling() {
    let kind = TestKind::default();
    let wake = Arc::new(Notify::new());
    let cancel = CancellationToken::new();
    let mut slow = config(2, 0);
    slow.poll = Duration::from_secs(3600);
    let worker = tokio::spawn(Worker::new(kind.clone(), slow).run(wake.clone(), cancel.clone()));
    // The first turn (at start) finds nothing.
    tokio::time::sleep(Duration::from_millis(50)).await;
    kind.add("late", "k");
    wake.notify_one();
    kind.wait_for("the woken worker did it", |t| t.recorded.len() == 1)
        .await;
    cancel.cancel();
    worker.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_queued_row_whose_lease_ran_short_is_released_not_started() {
    let kind = TestKind::default();
    kind.add("short", "k");
    // Leased by "an earlier turn" with a lease that ends in 100 ms.
    let row = {
        let mut t = kind.lock();
        t.rows[0].1 = State::Leased;
        t.rows[0].0.until = Utc::now() + chrono::Duration::milliseconds(100);
        t.rows[0].0.clone()
    };
    let mut w = Worker::new(kind.clone(), config(1, 0));
    w.held.insert(row.id.clone());
    w.queue.push_back(row);
    w.start_queued();
    assert!(
        w.running.is_empty(),
        "a row without a covering lease started"
    );
    assert_eq!(w.released, ["short"]);
    assert!(w.held.is_empty());
}

/// A draining node's worker: it leases nothing and gives back
/// the rows it leased ahead; undrained and woken, it does them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_that_takes_no_new_work_leases_nothing_and_gives_back_its_queue() {
    let kind = TestKind::default();
    kind.paused.store(true, Ordering::SeqCst);
    kind.add("ahead", "k1");
    kind.add("due", "k2");
    // "ahead" was leased ahead by an earlier turn: it goes back untouched.
    let row = {
        let mut t = kind.lock();
        t.rows[0].1 = State::Leased;
        t.rows[0].0.until = Utc::now() + chrono::Duration::seconds(60);
        t.rows[0].0.clone()
    };
    let mut w = Worker::new(kind.clone(), config(2, 1));
    w.held.insert(row.id.clone());
    w.queue.push_back(row);
    let turn = w.next_turn().expect("a turn that gives the row back");
    let end = turn.await;
    assert_eq!(end.released, ["ahead"]);
    assert_eq!(end.limit, 0, "nothing leased");
    assert!(w.queue.is_empty() && w.held.is_empty());
    assert_eq!(kind.states()["ahead"], State::Queued);
    // Running: polls lease nothing while it drains.
    let wake = Arc::new(Notify::new());
    let cancel = CancellationToken::new();
    let worker =
        tokio::spawn(Worker::new(kind.clone(), config(2, 1)).run(wake.clone(), cancel.clone()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        kind.lock().attempts.is_empty(),
        "a draining worker started work"
    );
    assert!(kind.states().values().all(|s| *s == State::Queued));
    kind.paused.store(false, Ordering::SeqCst);
    wake.notify_one();
    kind.wait_for("both done once undrained", |t| t.recorded.len() == 2)
        .await;
    cancel.cancel();
    worker.await.unwrap();
}
