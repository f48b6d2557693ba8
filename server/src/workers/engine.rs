//! The one worker skeleton for owed work (docs/durable-work.md).
//! Every kind — deliveries into terminals, outbound gateway messages, the
//! parent's inbox — runs on [`Worker`]; a kind only says how to lease and
//! record its rows ([`Queue::turn`]) and how one attempt goes
//! ([`Queue::attempt`], its runner, which never writes the store).
//!
//! One task owns every write: a *turn* records the attempts that ended,
//! gives back leased rows it will not start, and leases the next due rows,
//! in that order (one transaction where the kind's store can batch it).
//! Turns run beside the attempts: at most one is in flight, and attempts
//! that end meanwhile wait for the next. With `ahead > 0` rows are leased
//! ahead of a free slot, so a slot that frees up starts its next row at once;
//! a queued row starts only while its lease still covers a whole attempt
//! ([`WorkerConfig::start_margin`]) and is released otherwise.
//!
//! Woken in-process by the kind's waker (`Harness::waker`, owned by the
//! core), polling as the fallback; at most `max_in_flight` attempts at once;
//! rows with the same [`Queue::serial_key`] one at a time, in lease order;
//! cancelled by the token; restart-safe because the rows, not memory, say
//! what is left (the kind's start-up recovery runs before [`Worker::run`]).

use std::{
    collections::{HashSet, VecDeque},
    future::Future,
    pin::Pin,
    time::Duration,
};

use chrono::{DateTime, Utc};
use harness_core::CoreResult;
use tokio::{task::JoinSet, time::Instant};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// One kind of owed work, as the skeleton drives it.
pub trait Queue: Send + Sync + 'static {
    /// A leased row.
    type Row: Clone + Send + Sync + 'static;
    /// How one attempt ended (the kind's outcome: `work::Outcome`, or the
    /// outbox's with its platform receipt).
    type Outcome: Clone + Send + 'static;

    /// The kind of work, as the log names it.
    const NAME: &'static str;

    fn id(row: &Self::Row) -> &str;

    /// Rows with the same key are attempted one at a time, in lease order
    /// (deliveries: the task).
    fn serial_key(_row: &Self::Row) -> Option<&str> {
        None
    }

    /// Until when this worker holds the row (`None`: no deadline known).
    fn lease_until(row: &Self::Row) -> Option<DateTime<Utc>>;

    /// The span an attempt runs in.
    fn span(row: &Self::Row) -> tracing::Span;

    /// Rows already leased to this worker and handed over in memory by the
    /// transaction that wrote them (the hot path skips a claim).
    fn handed_off(&self) -> Vec<Self::Row> {
        Vec::new()
    }

    /// One turn: record `done`, give back `released` untouched, then lease
    /// up to `limit` due rows. An error means none of it is known to have
    /// happened; the worker tries again with the same rows.
    fn turn(
        &self,
        done: Vec<(Self::Row, Self::Outcome)>,
        released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<Self::Row>>> + Send + 'static;

    /// One attempt. `None`: the lease was lost, there is nothing to record.
    fn attempt(
        &self,
        row: Self::Row,
    ) -> impl Future<Output = Option<Self::Outcome>> + Send + 'static;

    /// Whether this worker leases new rows now. False on a draining node
    /// for work any node can do (`harness_core::drain`): nothing is leased
    /// and rows leased ahead go back, while attempts in flight end and are
    /// recorded as usual.
    fn takes_new_work(&self) -> bool {
        true
    }

    /// Periodic upkeep (expired leases), every `maintain_every`.
    fn maintain(&self) -> impl Future<Output = ()> + Send + 'static {
        std::future::ready(())
    }
}

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Fallback poll (rows due after a backoff, rows queued by another process).
    pub poll: Duration,
    /// Attempts at once (at least 1).
    pub max_in_flight: usize,
    /// Rows leased ahead of a free slot, per slot (0: only for a free slot).
    pub ahead_per_slot: usize,
    /// A queued row starts only if its lease outlasts this.
    pub start_margin: Duration,
    /// How often [`Queue::maintain`] runs.
    pub maintain_every: Duration,
    /// How long an ended attempt may wait for a turn that has more to carry.
    pub settle_delay: Duration,
    /// How long a stopping worker lets attempts in flight finish.
    pub drain: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(1),
            max_in_flight: 16,
            ahead_per_slot: 0,
            start_margin: Duration::from_secs(10),
            maintain_every: Duration::from_secs(10),
            settle_delay: Duration::from_millis(5),
            drain: Duration::from_secs(3),
        }
    }
}

/// Failed writes of one turn's outcomes before they are left to lease recovery.
const SETTLE_RETRIES: u32 = 5;

type Done<Q> = (<Q as Queue>::Row, <Q as Queue>::Outcome);

/// What a turn carried (kept to retry a failed write) and how it ended.
struct TurnEnd<Q: Queue> {
    result: CoreResult<Vec<Q::Row>>,
    done: Vec<Done<Q>>,
    released: Vec<String>,
    limit: usize,
}

type Turn<Q> = Pin<Box<dyn Future<Output = TurnEnd<Q>> + Send>>;

/// An attempt's end: its row, and the outcome if the lease held.
type Ended<Q> = (<Q as Queue>::Row, Option<<Q as Queue>::Outcome>);

pub struct Worker<Q: Queue> {
    queue_impl: std::sync::Arc<Q>,
    config: WorkerConfig,
    ahead: usize,
    running: JoinSet<Ended<Q>>,
    /// Serial keys with an attempt running.
    busy: HashSet<String>,
    /// Ids running or queued here (a claim may return a row being done).
    held: HashSet<String>,
    queue: VecDeque<Q::Row>,
    done: Vec<Done<Q>>,
    released: Vec<String>,
    turn: Option<Turn<Q>>,
    /// Rows may be due: at start, after a wake-up or a poll, and while the
    /// last lease took all it asked for.
    due: bool,
    failures: u32,
    retry_at: Option<Instant>,
    settle_by: Option<Instant>,
    next_poll: Instant,
    next_maintain: Instant,
    /// The upkeep in flight (at most one).
    upkeep: Option<tokio::task::JoinHandle<()>>,
}

impl<Q: Queue> Worker<Q> {
    pub fn new(queue: Q, mut config: WorkerConfig) -> Self {
        config.max_in_flight = config.max_in_flight.max(1);
        let now = Instant::now();
        Self {
            ahead: config.ahead_per_slot.saturating_mul(config.max_in_flight),
            next_poll: now + config.poll,
            next_maintain: now,
            queue_impl: std::sync::Arc::new(queue),
            config,
            running: JoinSet::new(),
            busy: HashSet::new(),
            held: HashSet::new(),
            queue: VecDeque::new(),
            done: Vec::new(),
            released: Vec::new(),
            turn: None,
            due: true,
            failures: 0,
            retry_at: None,
            settle_by: None,
            upkeep: None,
        }
    }

    /// Run until `cancel` (woken by `wake`, the kind's waker), then stop
    /// cleanly: the turn in flight ends, attempts in flight finish (bounded
    /// by `drain`), and one last turn records them and releases the rows
    /// never started.
    pub async fn run(
        mut self,
        wake: std::sync::Arc<tokio::sync::Notify>,
        cancel: CancellationToken,
    ) {
        tracing::info!(
            kind = Q::NAME,
            max_in_flight = self.config.max_in_flight,
            lease_ahead = self.ahead,
            "worker started"
        );
        loop {
            while let Some(joined) = self.running.try_join_next() {
                self.ended(joined);
            }
            self.timers();
            self.take_handed_off();
            self.start_queued();
            if self.turn.is_none() {
                self.turn = self.next_turn();
            }
            let deadline = self.deadline();
            let turn = async {
                match self.turn.as_mut() {
                    Some(t) => t.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = cancel.cancelled() => break,
                () = wake.notified() => self.due = true,
                () = tokio::time::sleep_until(deadline) => {}
                end = turn => {
                    self.turn = None;
                    self.turn_ended(end);
                }
                Some(joined) = self.running.join_next(), if !self.running.is_empty() => {
                    self.ended(joined)
                }
            }
        }
        self.stop().await;
    }

    /// When the loop must look again without a wake-up: the poll, the
    /// upkeep, and — only while no turn is in flight (its end wakes the
    /// loop) — a failed turn's retry, else the wait of ended attempts.
    fn deadline(&self) -> Instant {
        let timers = self.next_poll.min(self.next_maintain);
        let turn = match (&self.turn, self.retry_at) {
            (Some(_), _) => None,
            (None, Some(retry)) => Some(retry),
            (None, None) => self.settle_by,
        };
        turn.map_or(timers, |at| at.min(timers))
    }

    /// Keep a finished attempt's outcome. An attempt task that panicked
    /// leaves its row in its committed step: lease recovery decides (never
    /// a blind repeat); its serial key stays busy until then.
    fn ended(&mut self, joined: Result<Ended<Q>, tokio::task::JoinError>) {
        let (row, outcome) = match joined {
            Ok(ended) => ended,
            Err(err) => {
                tracing::error!(kind = Q::NAME, error = %err, "an attempt task failed");
                return;
            }
        };
        self.held.remove(Q::id(&row));
        if let Some(key) = Q::serial_key(&row) {
            self.busy.remove(key);
        }
        let Some(outcome) = outcome else {
            tracing::warn!(
                kind = Q::NAME,
                id = Q::id(&row),
                "lease lost; the row is left to its owner"
            );
            return;
        };
        if self.done.is_empty() {
            self.settle_by = Some(Instant::now() + self.config.settle_delay);
        }
        self.done.push((row, outcome));
    }

    fn timers(&mut self) {
        let now = Instant::now();
        if now >= self.next_poll {
            self.next_poll = now + self.config.poll;
            self.due = true;
        }
        let idle = self.upkeep.as_ref().is_none_or(|u| u.is_finished());
        if now >= self.next_maintain && idle {
            self.next_maintain = now + self.config.maintain_every;
            // Beside the loop, so a slow upkeep never holds the attempts up;
            // one at a time.
            let upkeep = self.queue_impl.maintain();
            self.upkeep = Some(tokio::spawn(
                upkeep.instrument(tracing::info_span!("upkeep", kind = Q::NAME)),
            ));
        }
    }

    fn take_handed_off(&mut self) {
        for row in self.queue_impl.handed_off() {
            if self.held.insert(Q::id(&row).to_owned()) {
                self.queue.push_back(row);
            }
        }
    }

    /// The lease of `row` still covers a whole attempt (a margin configured
    /// longer than the lease needs half of the lease, so a row leased for a
    /// free slot always starts).
    fn lease_covers_an_attempt(&self, row: &Q::Row) -> bool {
        let Some(until) = Q::lease_until(row) else {
            return true;
        };
        let need =
            chrono::Duration::from_std(self.config.start_margin).unwrap_or(chrono::Duration::MAX);
        until - Utc::now() > need
    }

    fn release_queued(&mut self, id: &str) {
        tracing::info!(
            kind = Q::NAME,
            id,
            "a queued row's lease ran short: released"
        );
        self.held.remove(id);
        self.released.push(id.to_owned());
    }

    /// Queued rows whose lease no longer covers an attempt go back before
    /// their lease could expire.
    fn release_short_leases(&mut self) {
        let queue = std::mem::take(&mut self.queue);
        for row in queue {
            if self.lease_covers_an_attempt(&row) {
                self.queue.push_back(row);
            } else {
                self.release_queued(Q::id(&row));
            }
        }
    }

    /// Free slots take queued rows whose serial key is free, in order.
    fn start_queued(&mut self) {
        let mut i = 0;
        while self.running.len() < self.config.max_in_flight && i < self.queue.len() {
            let free = self
                .queue
                .get(i)
                .and_then(Q::serial_key)
                .is_none_or(|key| !self.busy.contains(key));
            if !free {
                i += 1;
                continue;
            }
            let Some(row) = self.queue.remove(i) else {
                break;
            };
            if !self.lease_covers_an_attempt(&row) {
                self.release_queued(Q::id(&row));
                continue;
            }
            if let Some(key) = Q::serial_key(&row) {
                self.busy.insert(key.to_owned());
            }
            let span = Q::span(&row);
            let attempt = self.queue_impl.attempt(row.clone());
            self.running.spawn(
                async move {
                    let outcome = attempt.await;
                    (row, outcome)
                }
                .instrument(span),
            );
        }
    }

    /// The next turn, if one is worth a transaction now: rows to lease (the
    /// queue ran low and rows may be due), rows to release, or ended
    /// attempts that have waited long enough or are many enough.
    fn next_turn(&mut self) -> Option<Turn<Q>> {
        let now = Instant::now();
        if self.retry_at.is_some_and(|at| now < at) {
            return None;
        }
        self.retry_at = None;
        if self.queue_impl.takes_new_work() {
            self.release_short_leases();
        } else {
            for row in std::mem::take(&mut self.queue) {
                self.held.remove(Q::id(&row));
                self.released.push(Q::id(&row).to_owned());
            }
            self.due = false;
        }
        let leased = self.running.len() + self.queue.len();
        let capacity = self.config.max_in_flight + self.ahead;
        // Refill once the queue is down to a quarter of what is leased
        // ahead: early enough that it does not run dry while the turn
        // commits, late enough that a turn leases several rows.
        // Rows waiting only for their serial key do not count as ready.
        let ready = self
            .queue
            .iter()
            .filter(|row| Q::serial_key(row).is_none_or(|key| !self.busy.contains(key)))
            .count();
        let refill = self.due && leased < capacity && ready <= self.ahead / 4;
        let limit = if refill { capacity - leased } else { 0 };
        // Ended attempts ride with a refill; on their own only when many
        // (or without leasing ahead), when nothing else runs, or when the
        // first of them has waited `settle_delay`.
        let settle = !self.done.is_empty()
            && (limit > 0
                || self.ahead == 0
                || self.done.len() >= self.config.max_in_flight + self.ahead / 2
                || self.running.is_empty()
                || self.settle_by.is_some_and(|at| now >= at));
        if limit == 0 && !settle && self.released.is_empty() {
            return None;
        }
        let done = if settle {
            self.settle_by = None;
            std::mem::take(&mut self.done)
        } else {
            Vec::new()
        };
        let released = std::mem::take(&mut self.released);
        let turn = self.queue_impl.turn(
            done.clone(),
            released.clone(),
            u32::try_from(limit).unwrap_or(u32::MAX),
        );
        Some(Box::pin(async move {
            TurnEnd {
                result: turn.await,
                done,
                released,
                limit,
            }
        }))
    }

    fn turn_ended(&mut self, end: TurnEnd<Q>) {
        match end.result {
            Ok(claimed) => {
                self.failures = 0;
                if end.limit > 0 {
                    self.due = claimed.len() == end.limit;
                }
                for row in claimed {
                    // A row still running or queued here: the claim renewed
                    // its lease; it is not done twice.
                    if self.held.insert(Q::id(&row).to_owned()) {
                        self.queue.push_back(row);
                    }
                }
            }
            Err(err) => {
                self.failures += 1;
                tracing::error!(kind = Q::NAME, error = ?err, failures = self.failures,
                    "cannot record attempts / lease rows");
                // Releases are always tried again.
                let mut released = end.released;
                released.append(&mut self.released);
                self.released = released;
                if self.failures <= SETTLE_RETRIES {
                    let mut done = end.done;
                    done.append(&mut self.done);
                    self.done = done;
                } else {
                    // Left in their committed step under our lease: lease
                    // recovery decides once it expires (never a blind repeat).
                    tracing::error!(
                        kind = Q::NAME,
                        rows = end.done.len(),
                        "giving up recording these attempts"
                    );
                    self.failures = 0;
                }
                if !self.done.is_empty() {
                    self.settle_by.get_or_insert_with(Instant::now);
                }
                self.retry_at =
                    Some(Instant::now() + Duration::from_millis(100) * self.failures.max(1));
            }
        }
    }

    async fn stop(mut self) {
        if let Some(upkeep) = self.upkeep.take() {
            upkeep.abort();
        }
        if let Some(turn) = self.turn.take() {
            let end = turn.await;
            self.turn_ended(end);
        }
        let drained = tokio::time::timeout(self.config.drain, async {
            while let Some(joined) = self.running.join_next().await {
                self.ended(joined);
            }
        })
        .await;
        if drained.is_err() {
            // Rows still in flight keep their committed step and lease: the
            // next start of this node recovers them.
            tracing::warn!(
                kind = Q::NAME,
                left = self.running.len(),
                "worker stopped with attempts in flight"
            );
            self.running.abort_all();
        }
        self.take_handed_off();
        let never_started: Vec<String> =
            self.queue.drain(..).map(|r| Q::id(&r).to_owned()).collect();
        self.released.extend(never_started);
        if !self.done.is_empty() || !self.released.is_empty() {
            let done = std::mem::take(&mut self.done);
            let released = std::mem::take(&mut self.released);
            match self.queue_impl.turn(done, released, 0).await {
                Ok(_) => {}
                // Released rows come back at the next start of this node.
                Err(err) => {
                    tracing::error!(kind = Q::NAME, error = ?err, "cannot record the last attempts")
                }
            }
        }
        tracing::info!(kind = Q::NAME, "worker stopped");
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
