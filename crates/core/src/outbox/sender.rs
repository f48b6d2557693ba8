//! How a sender's attempts end (its state machine):
//! DELIVERED / SENT_UNVERIFIED with the activation, FAILED with backoff,
//! DEAD after the configured attempts — recorded for a whole turn of the
//! sender at once, together with the lease of the next due rows.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::{Outbound, OutboundState, SendOutcome};
use crate::outbox::Outbox;
use crate::{
    CoreResult,
    events::HarnessEvent,
    model::MessageState,
    store::{Settle, SettleBatch, Settled},
    work::RetryPolicy,
};

impl Outbox<'_> {
    /// What an attempt's end does to its row.
    fn settle_for(&self, row: &Outbound, outcome: SendOutcome, now: DateTime<Utc>) -> Settle {
        match outcome {
            SendOutcome::Delivered(r) => Settle::Sent {
                state: OutboundState::Delivered,
                platform: r.platform,
                chat_id: r.chat_id,
                platform_message_id: r.message_id,
                note: None,
            },
            SendOutcome::Unverified(r, why) => Settle::Sent {
                state: OutboundState::SentUnverified,
                platform: r.platform,
                chat_id: r.chat_id,
                platform_message_id: r.message_id,
                note: Some(why),
            },
            // `attempts` already counts this attempt (it is counted at the claim).
            SendOutcome::Failed(error) => Settle::Failed {
                // A test message is tried once: the person saw its result.
                next: if super::target_edits::is_test_message(row) {
                    None
                } else {
                    RetryPolicy::new(self.h.config().outbox_max_attempts)
                        .next_attempt(row.attempts, now)
                },
                error,
            },
            // Not owed any more, or cannot be sent as it is: DEAD at once,
            // never sent.
            SendOutcome::Skipped(error) | SendOutcome::GaveUp(error) => {
                Settle::Failed { error, next: None }
            }
        }
    }

    /// Apply the end of a send attempt of a row leased to `owner`.
    /// `None`: the row was no longer SENDING under that lease.
    pub async fn finish_send(
        &self,
        row: &Outbound,
        owner: &str,
        outcome: SendOutcome,
    ) -> CoreResult<Option<Outbound>> {
        let now = Utc::now();
        let settle = self.settle_for(row, outcome, now);
        self.settle(row, owner, None, settle, now).await
    }

    /// A sender's turn, in one transaction per group: record every attempt
    /// in `done` (as [`Self::finish_send`]), release the rows of `released`
    /// (leased ahead, never started: due again, the attempt not counted) and
    /// lease up to `limit` due rows to `owner` until `now + lease`. Answers
    /// the leased rows (their change is published). Two sent asks of one
    /// task go in separate, ordered transactions (the later one supersedes
    /// the earlier, as if they had settled one by one); the releases go in
    /// the first and the lease in the last, so an error never leaves a row
    /// leased but unknown to the caller.
    pub async fn settle_and_claim(
        &self,
        owner: &str,
        done: Vec<(Outbound, SendOutcome)>,
        released: Vec<String>,
        lease: chrono::Duration,
        limit: u32,
    ) -> CoreResult<Vec<Outbound>> {
        let mut released = Some(released);
        let now = Utc::now();
        let mut left: Vec<(Outbound, Settle)> = done
            .into_iter()
            .map(|(row, outcome)| {
                let settle = self.settle_for(&row, outcome, now);
                (row, settle)
            })
            .collect();
        loop {
            let mut asks = HashSet::new();
            let (mut group, mut later) = (Vec::new(), Vec::new());
            for (row, settle) in left {
                let opens_ask = row.expect_reply && matches!(settle, Settle::Sent { .. });
                match &row.task_id {
                    Some(task) if opens_ask && !asks.insert(task.clone()) => {
                        later.push((row, settle))
                    }
                    _ => group.push((row, settle)),
                }
            }
            let last = later.is_empty();
            let batch = SettleBatch {
                owner: owner.to_string(),
                expired_before: None,
                settles: group
                    .iter()
                    .map(|(row, settle)| (row.id.clone(), settle.clone()))
                    .collect(),
                now,
                lease_until: now.checked_add_signed(lease).unwrap_or(now),
                limit: if last { limit } else { 0 },
                released: released.take().unwrap_or_default(),
            };
            let result = self.h.store().settle_and_claim_outbound(batch).await?;
            for (row, _) in &group {
                if !result.settled.iter().any(|s| s.row.id == row.id) {
                    tracing::warn!(outbound_id = %row.id, "outbound lease lost before its result was recorded");
                }
            }
            for s in &result.settled {
                self.settled(s);
            }
            for row in &result.released {
                tracing::info!(outbound_id = %row.id, state = row.state.as_str(), "outbound released unsent: due again");
                self.outbound_changed(row);
            }
            if last {
                for row in &result.claimed {
                    self.outbound_changed(row);
                }
                return Ok(result.claimed);
            }
            left = later;
        }
    }

    /// Finish one row (recovery passes `expired_before`).
    pub(super) async fn settle(
        &self,
        row: &Outbound,
        owner: &str,
        expired_before: Option<DateTime<Utc>>,
        settle: Settle,
        now: DateTime<Utc>,
    ) -> CoreResult<Option<Outbound>> {
        let Some(done) = self
            .h
            .store()
            .settle_outbound(&row.id, owner, expired_before, settle, now)
            .await?
        else {
            tracing::warn!(outbound_id = %row.id, "outbound lease lost before its result was recorded");
            return Ok(None);
        };
        self.settled(&done);
        Ok(Some(done.row))
    }

    fn settled(&self, done: &Settled) {
        let row = &done.row;
        match row.state {
            OutboundState::Delivered => {
                tracing::info!(outbound_id = %row.id, attempts = row.attempts, "outbound delivered")
            }
            OutboundState::SentUnverified => {
                tracing::warn!(outbound_id = %row.id, error = ?row.last_error, "outbound SENT_UNVERIFIED")
            }
            OutboundState::Dead => {
                tracing::error!(outbound_id = %row.id, attempts = row.attempts, error = ?row.last_error, "outbound DEAD: gave up")
            }
            _ => {
                tracing::warn!(outbound_id = %row.id, attempts = row.attempts, error = ?row.last_error, "outbound attempt failed")
            }
        }
        if let Some(task_id) = &row.task_id {
            for id in &done.cancelled {
                self.h.publish(HarnessEvent::MessageChanged {
                    id: id.clone(),
                    task_id: task_id.clone(),
                });
            }
            if let (Some(m), Some(_)) = (&row.message_id, done.message_state) {
                self.h.publish(HarnessEvent::MessageChanged {
                    id: m.clone(),
                    task_id: task_id.clone(),
                });
            }
            if done.message_state == Some(MessageState::Open) {
                if !done.paused.is_empty() {
                    self.h.publish(HarnessEvent::TaskChanged {
                        task_id: task_id.clone(),
                    });
                }
                if let Some(runtime) = self.h.runtime() {
                    runtime.parked(task_id);
                }
            }
        }
        self.outbound_changed(row);
    }
}
