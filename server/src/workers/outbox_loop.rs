//! The outbox sender's loop. One task owns every write of the sender: a
//! *turn* ([`Harness::settle_and_claim`], one transaction) records the
//! attempts that ended, releases leased rows it will not start, and leases
//! the next due rows. Turns run beside the sends: at most one is in flight,
//! and the sends that end meanwhile wait for the next one.
//!
//! With a spawn journal the sender leases up to [`LEASE_AHEAD`] ×
//! `max_in_flight` rows ahead of a free slot, so a slot that frees up starts
//! its next send at once — the database is off the path between two sends —
//! and a turn carries several messages (one commit for about twice
//! `max_in_flight` under load). A queued row's CLI is
//! spawned only after its line is in the journal (written by the send task
//! just before the spawn: what crash recovery reads), and only while its
//! lease still covers a whole CLI run; otherwise, and at a stop, it is
//! released. Without a journal a lease is taken only for a free
//! slot (a leased row then counts as started after a crash).

use std::{collections::VecDeque, future::Future, pin::Pin, sync::Arc, time::Duration};

use harness_core::{
    CoreResult, Harness,
    outbox::{Outbound, SendOutcome},
};
use tokio::{task::JoinSet, time::Instant};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    outbox::{OutboxConfig, SendSettings, SettingsCache, send_one},
    spawn_journal::SpawnJournal,
};

/// The journal, shared by the send tasks (each writes its line just before
/// its spawn) and the loop (which drops the lines of ended sends).
pub(super) type Journal = Arc<std::sync::Mutex<SpawnJournal>>;

/// An attempt that ended, waiting to be recorded with the sender's next turn.
pub(super) type Done = (Outbound, SendOutcome);

/// What a turn carried (kept to retry a failed write) and how it ended.
struct TurnEnd {
    result: CoreResult<Vec<Outbound>>,
    done: Vec<Done>,
    released: Vec<String>,
    limit: usize,
}

type Turn = Pin<Box<dyn Future<Output = TurnEnd> + Send>>;

/// Failed writes of one turn's outcomes before they are left to lease recovery.
const SETTLE_RETRIES: u32 = 5;
/// How long an ended attempt may wait for a turn that has more to carry.
const SETTLE_DELAY: Duration = Duration::from_millis(5);
/// Rows leased ahead of a free slot, per slot (with a spawn journal).
const LEASE_AHEAD: usize = 3;
/// A queued row starts only if its lease outlasts a whole CLI run by this.
const LEASE_SLACK: Duration = Duration::from_secs(10);

pub(super) struct SenderLoop {
    harness: Harness,
    owner: String,
    config: OutboxConfig,
    lease: chrono::Duration,
    journal: Option<Journal>,
    /// Rows leased ahead of a free slot (0 without a journal).
    ahead: usize,
    cache: SettingsCache,
    running: JoinSet<Done>,
    queue: VecDeque<Outbound>,
    done: Vec<Done>,
    released: Vec<String>,
    turn: Option<Turn>,
    /// Rows may be due: at start, after a wake-up or a poll, and while the
    /// last lease took all it asked for.
    due: bool,
    failures: u32,
    /// A failed turn is tried again from then.
    retry_at: Option<Instant>,
    /// The first ended attempt not yet carried waits until then at most.
    settle_by: Option<Instant>,
    next_poll: Instant,
    next_recovery: Instant,
}

/// Keep a finished send's outcome (a send task that panicked leaves its row
/// SENDING: lease recovery makes it SENT_UNVERIFIED, never a blind resend).
fn collect(joined: Result<Done, tokio::task::JoinError>, done: &mut Vec<Done>) {
    match joined {
        Ok(d) => done.push(d),
        Err(err) => tracing::error!(error = %err, "an outbound send task failed"),
    }
}

impl SenderLoop {
    pub(super) fn new(
        harness: Harness,
        owner: String,
        config: OutboxConfig,
        journal: Option<SpawnJournal>,
    ) -> Self {
        let journal = journal.map(|j| Arc::new(std::sync::Mutex::new(j)));
        let lease = chrono::Duration::from_std(config.lease)
            .unwrap_or_else(|_| chrono::Duration::seconds(120));
        let ahead = if journal.is_some() {
            LEASE_AHEAD * config.max_in_flight
        } else {
            0
        };
        let now = Instant::now();
        Self {
            next_poll: now + config.poll,
            next_recovery: now,
            harness,
            owner,
            config,
            lease,
            journal,
            ahead,
            cache: SettingsCache::default(),
            running: JoinSet::new(),
            queue: VecDeque::new(),
            done: Vec::new(),
            released: Vec::new(),
            turn: None,
            due: true,
            failures: 0,
            retry_at: None,
            settle_by: None,
        }
    }

    /// Run until `cancel`, then stop cleanly (see [`Self::stop`]).
    pub(super) async fn run(mut self, cancel: CancellationToken) {
        let wake = self.harness.waker(harness_core::work::Kind::Outbox);
        loop {
            while let Some(joined) = self.running.try_join_next() {
                self.ended(joined);
            }
            self.timers().await;
            self.start_queued().await;
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
    /// recovery, and — only while no turn is in flight (its end wakes the
    /// loop) — a failed turn's retry, else the wait of ended attempts.
    fn deadline(&self) -> Instant {
        let timers = self.next_poll.min(self.next_recovery);
        let turn = match (&self.turn, self.retry_at) {
            (Some(_), _) => None,
            (None, Some(retry)) => Some(retry),
            (None, None) => self.settle_by,
        };
        turn.map_or(timers, |at| at.min(timers))
    }

    fn ended(&mut self, joined: Result<Done, tokio::task::JoinError>) {
        let before = self.done.len();
        collect(joined, &mut self.done);
        if before == 0 && !self.done.is_empty() {
            self.settle_by = Some(Instant::now() + SETTLE_DELAY);
        }
    }

    async fn timers(&mut self) {
        let now = Instant::now();
        if now >= self.next_poll {
            self.next_poll = now + self.config.poll;
            self.due = true;
        }
        if now >= self.next_recovery {
            self.next_recovery = now + self.config.recover_every;
            match self.harness.recover_expired_outbound().await {
                Ok(0) => {}
                Ok(n) => tracing::warn!(
                    count = n,
                    "outbound sends with an expired lease: SENT_UNVERIFIED"
                ),
                Err(err) => tracing::error!(error = ?err, "cannot recover expired outbound leases"),
            }
        }
    }

    /// The lease of `row` still covers a whole CLI run (with a slack; a
    /// lease configured shorter than that needs half of itself left, so a
    /// row leased for a free slot always starts).
    fn lease_covers_a_run(&self, row: &Outbound) -> bool {
        let need = (self.config.cli_timeout + LEASE_SLACK).min(self.config.lease / 2);
        let need =
            chrono::Duration::from_std(need).unwrap_or_else(|_| chrono::Duration::seconds(60));
        row.lease_expires_at
            .is_some_and(|until| until - chrono::Utc::now() > need)
    }

    /// Queued rows whose lease no longer covers a run (every slot was busy
    /// for long) go back before their lease could expire.
    fn release_short_leases(&mut self) {
        let (keep, short): (VecDeque<Outbound>, VecDeque<Outbound>) =
            std::mem::take(&mut self.queue)
                .into_iter()
                .partition(|row| self.lease_covers_a_run(row));
        self.queue = keep;
        for row in short {
            tracing::info!(outbound_id = %row.id, "a queued outbound row's lease ran short: released");
            self.released.push(row.id);
        }
    }

    /// Free slots take queued rows (the send task journals, then spawns).
    async fn start_queued(&mut self) {
        let mut settings: Option<CoreResult<Arc<SendSettings>>> = None;
        while self.running.len() < self.config.max_in_flight {
            let Some(row) = self.queue.pop_front() else {
                break;
            };
            if !self.lease_covers_a_run(&row) {
                tracing::info!(outbound_id = %row.id, "a queued outbound row's lease ran short: released");
                self.released.push(row.id);
                continue;
            }
            if settings.is_none() {
                // Read once per round of starts (cached across rounds).
                settings = Some(self.cache.get(&self.harness).await);
            }
            let settings = match &settings {
                Some(Ok(s)) => Ok(s.clone()),
                Some(Err(err)) => Err(harness_core::CoreError::Conflict(err.to_string())),
                None => Err(harness_core::CoreError::Conflict(
                    "no gateway settings were read".into(),
                )),
            };
            let span = tracing::info_span!("outbound", outbound_id = %row.id, gateway = %row.gateway, attempt = row.attempts);
            let (h, timeout) = (self.harness.clone(), self.config.cli_timeout);
            let journal = self.journal.clone();
            self.running.spawn(
                async move {
                    let outcome = send_one(&h, &row, timeout, settings, journal.as_ref()).await;
                    (row, outcome)
                }
                .instrument(span),
            );
        }
    }

    /// The next turn, if one is worth a transaction now: rows to lease (the
    /// queue ran low and rows may be due), rows to release, or ended
    /// attempts that have waited long enough or are many enough.
    fn next_turn(&mut self) -> Option<Turn> {
        let now = Instant::now();
        if self.retry_at.is_some_and(|at| now < at) {
            return None;
        }
        self.retry_at = None;
        self.release_short_leases();
        let leased = self.running.len() + self.queue.len();
        let capacity = self.config.max_in_flight + self.ahead;
        // Refill once the queue is down to a quarter of what is leased
        // ahead: early enough that it does not run dry while the turn
        // commits, late enough that a turn leases several rows.
        let refill = self.due && leased < capacity && self.queue.len() <= self.ahead / 4;
        let limit = if refill { capacity - leased } else { 0 };
        // Ended attempts ride with a refill; on their own only when many
        // (or without leasing ahead), when nothing else runs, or when the
        // first of them has waited SETTLE_DELAY.
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
        let (h, owner, lease) = (self.harness.clone(), self.owner.clone(), self.lease);
        Some(Box::pin(async move {
            let result = h
                .settle_and_claim(
                    &owner,
                    done.clone(),
                    released.clone(),
                    lease,
                    u32::try_from(limit).unwrap_or(u32::MAX),
                )
                .await;
            TurnEnd {
                result,
                done,
                released,
                limit,
            }
        }))
    }

    fn turn_ended(&mut self, end: TurnEnd) {
        match end.result {
            Ok(claimed) => {
                self.failures = 0;
                // Only now may a send's journal line go at the next rotation:
                // until its settle committed, a crash leaves the row SENDING
                // and recovery must still find the line (else it would
                // release a row that may have been sent).
                if let Some(journal) = &self.journal {
                    let mut journal = journal.lock().unwrap_or_else(|p| p.into_inner());
                    for (row, _) in &end.done {
                        journal.finished(&row.id);
                    }
                }
                if end.limit > 0 {
                    self.due = claimed.len() == end.limit;
                }
                self.queue.extend(claimed);
            }
            Err(err) => {
                self.failures += 1;
                tracing::error!(error = ?err, failures = self.failures, "cannot record outbound attempts / lease rows");
                // Releases are always tried again (a row left leased and
                // unjournaled would read as sent after its lease expired).
                let mut released = end.released;
                released.append(&mut self.released);
                self.released = released;
                if self.failures <= SETTLE_RETRIES {
                    let mut done = end.done;
                    done.append(&mut self.done);
                    self.done = done;
                } else {
                    // Left SENDING under our lease: recovery makes them
                    // SENT_UNVERIFIED once it expires (never a blind resend).
                    tracing::error!(
                        rows = end.done.len(),
                        "giving up recording these outbound attempts"
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

    /// Stop: the turn in flight ends (its leases must be known), the sends
    /// in flight finish (bounded by `drain`), and one last turn records
    /// what ended and releases the rows never started.
    async fn stop(mut self) {
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
            // Rows still SENDING keep their lease and their journal line:
            // the next start of this node makes them SENT_UNVERIFIED (they
            // may have been sent).
            tracing::warn!(
                left = self.running.len(),
                "outbox worker stopped with sends in flight"
            );
            self.running.abort_all();
        }
        self.released.extend(self.queue.drain(..).map(|row| row.id));
        if (!self.done.is_empty() || !self.released.is_empty())
            && let Err(err) = self
                .harness
                .settle_and_claim(
                    &self.owner,
                    std::mem::take(&mut self.done),
                    std::mem::take(&mut self.released),
                    self.lease,
                    0,
                )
                .await
        {
            // Unjournaled rows are released by the next start of this node.
            tracing::error!(error = ?err, "cannot record the last outbound attempts");
        }
        tracing::info!("outbox worker stopped");
    }
}
