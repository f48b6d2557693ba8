//! The deadline of a structured question: when it passes with the
//! ask still OPEN and a default was given, the default is the answer —
//! committed in one transaction with the reply's delivery row, exactly like
//! a person's reply (`ChoicesStore::answer_with_default` shares the reply's
//! second half; [`Asks::answered`] its after-commit part), and marked
//! answered by "default after deadline". A person's reply and the default
//! race on the same conditional OPEN → ANSWERED: exactly one wins.
//!
//! The loop applies overdue defaults at start-up (a server that was down
//! past a deadline catches up), then sleeps until the next deadline or at
//! most [`MAX_SLEEP`]; a change of a message (a new ask may have an earlier
//! deadline) makes it read the next deadline again (once per burst of
//! changes, not once per change: every node hears every node's changes).
//! Each pass also queues the due reminders of OPEN asks (`crate::reminders`).
//! Bounded (a pass takes at most [`BATCH`] asks at a time), cancellable,
//! restart-safe (its state is the `ask_choices` rows).

use std::time::Duration;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::asks::Asks;
use crate::{
    CoreResult, Harness, events::HarnessEvent, ids, messaging::ReplyOutcome, options,
    store::DueDefault,
};

/// Longest sleep between passes (a missed wake-up is caught by then).
pub const MAX_SLEEP: Duration = Duration::from_secs(30);
/// Asks answered per store query.
pub const BATCH: u32 = 100;

impl Asks<'_> {
    /// Apply the default of one due ask. `None`: it was no longer OPEN (a
    /// person answered first) or is not due.
    pub async fn apply_default(&self, due: &DueDefault) -> CoreResult<Option<ReplyOutcome>> {
        let now = Utc::now();
        let delivery_id = ids::new_id();
        let claim = self.h.deliveries().handoff_claim(now);
        let text = options::default_delivery_text(&due.default_label);
        let Some(answered) = self
            .h
            .store()
            .answer_with_default(&due.message_id, &text, &delivery_id, claim.as_ref(), now)
            .await?
        else {
            return Ok(None);
        };
        tracing::info!(request_id = %due.message_id, task_id = %due.task_id,
            default = %due.default_label, "deadline passed: default applied");
        self.answered(answered, None).await.map(Some)
    }

    /// Apply every overdue default now; returns how many were applied.
    pub async fn apply_due_defaults(&self) -> CoreResult<usize> {
        let mut applied = 0;
        loop {
            let due = self.h.store().due_defaults(Utc::now(), BATCH).await?;
            let mut won = 0;
            for ask in &due {
                if self.apply_default(ask).await?.is_some() {
                    won += 1;
                }
            }
            applied += won;
            // Fewer than a batch, or nothing won (all lost to other writers): done.
            if due.len() < BATCH as usize || won == 0 {
                return Ok(applied);
            }
        }
    }
}

/// How long to sleep before the next pass.
async fn next_sleep(harness: &Harness) -> Duration {
    match harness.store().next_default_deadline().await {
        Ok(Some(at)) => (at - Utc::now())
            .to_std()
            .unwrap_or(Duration::ZERO)
            .min(MAX_SLEEP),
        Ok(None) => MAX_SLEEP,
        Err(err) => {
            tracing::warn!(%err, "cannot read the next ask deadline");
            MAX_SLEEP
        }
    }
}

/// How long a change event waits for the rest of its burst before the next
/// deadline is read again (a burst of asks, or a busy outbox that publishes
/// several changes per message, costs one read, not one per event).
const EVENT_DEBOUNCE: Duration = Duration::from_millis(100);
/// The shortest wait after a pass (a due ask that cannot be answered, e.g.
/// a failing store, is retried at this pace, not in a busy loop).
const MIN_PASS_GAP: Duration = Duration::from_millis(200);

/// Whether the bus woke the loop (`false`: the bus is gone).
async fn message_changed(events: &mut crate::events::EventStream) -> bool {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(HarnessEvent::MessageChanged { .. }) | Err(RecvError::Lagged(_)) => return true,
            Ok(_) => {}
            Err(RecvError::Closed) => return false,
        }
    }
}

pub async fn run(harness: Harness, cancel: CancellationToken) {
    let mut events = harness.subscribe();
    let mut reminded: Option<std::time::Instant> = None;
    let mut bus_open = true;
    'pass: loop {
        let passed = tokio::time::Instant::now();
        if let Err(err) = harness.asks().apply_due_defaults().await {
            tracing::warn!(%err, "applying overdue defaults failed; retrying at the next pass");
        }
        // The other clock of an OPEN ask: its reminders (`crate::reminders`),
        // due at minute granularity: at most once per MAX_SLEEP, not on
        // every message change that wakes this loop (a pass writes).
        // A draining node leaves them to the others (`crate::drain`).
        if !harness.cluster().draining() && reminded.is_none_or(|at| at.elapsed() >= MAX_SLEEP) {
            reminded = Some(std::time::Instant::now());
            if let Err(err) = harness.asks().send_due_reminders(Utc::now()).await {
                tracing::warn!(%err, "sending due reminders failed; retrying at the next pass");
            }
        }
        // Wait for the next deadline. A message change (a new ask may have
        // an earlier deadline) only reads the next deadline again; the pass
        // runs when one is due or MAX_SLEEP has passed.
        loop {
            let sleep = next_sleep(&harness).await;
            // A stream of changes never pushes the pass past MAX_SLEEP.
            let until = (tokio::time::Instant::now() + sleep)
                .min(passed + MAX_SLEEP)
                .max(passed + MIN_PASS_GAP);
            let woke = async {
                if bus_open {
                    message_changed(&mut events).await
                } else {
                    std::future::pending().await
                }
            };
            tokio::select! {
                () = cancel.cancelled() => break 'pass,
                () = tokio::time::sleep_until(until) => continue 'pass,
                open = woke => {
                    if !open {
                        // No bus any more: the timer alone.
                        bus_open = false;
                        continue;
                    }
                    tokio::select! {
                        () = cancel.cancelled() => break 'pass,
                        () = tokio::time::sleep(EVENT_DEBOUNCE) => {}
                    }
                    use tokio::sync::broadcast::error::TryRecvError;
                    while matches!(events.try_recv(), Ok(_) | Err(TryRecvError::Lagged(_))) {}
                }
            }
        }
    }
    tracing::debug!("deadline sweeper stopped");
}
