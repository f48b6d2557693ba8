//! The durable delivery queue (issue 10; decisions D3, D5, D6): every write
//! into an agent's terminal that Harness owes somebody — a reply to an ask,
//! terminal input with an idempotency key — is a `deliveries` row written in
//! the same transaction as its cause and done by the delivery worker
//! (`server/src/workers/deliveries.rs`). The row id is the injection id; the
//! row, not memory, is the exactly-once ledger.
//!
//! States: QUEUED → WAITING_BOUNDARY → RESUMING → WRITING → DELIVERED.
//! A clean failure (nothing was written) is FAILED, due again after a
//! backoff of 2, 4, 8 … 256 s, until [`MAX_ATTEMPTS`]. A row found WRITING
//! with an expired lease (the process died mid-write) is UNVERIFIED: the text
//! may or may not be in the terminal, so it is never written again
//! automatically — a person chooses "deliver again" or "mark as delivered".

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{CoreError, CoreResult, Harness, events::HarnessEvent, ids, validate};

/// After this many failed attempts a FAILED row is no longer due by itself.
pub const MAX_ATTEMPTS: u32 = 20;
/// How long the answering transaction leases a reply's row to this
/// process's worker (the hand-off).
pub const HANDOFF_LEASE: Duration = Duration::from_secs(60);
/// Backoff cap.
pub const MAX_BACKOFF: Duration = Duration::from_secs(256);

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DeliveryState {
    Queued,
    WaitingBoundary,
    Resuming,
    Writing,
    Delivered,
    Failed,
    Unverified,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "QUEUED",
            Self::WaitingBoundary => "WAITING_BOUNDARY",
            Self::Resuming => "RESUMING",
            Self::Writing => "WRITING",
            Self::Delivered => "DELIVERED",
            Self::Failed => "FAILED",
            Self::Unverified => "UNVERIFIED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "QUEUED" => Self::Queued,
            "WAITING_BOUNDARY" => Self::WaitingBoundary,
            "RESUMING" => Self::Resuming,
            "WRITING" => Self::Writing,
            "DELIVERED" => Self::Delivered,
            "FAILED" => Self::Failed,
            "UNVERIFIED" => Self::Unverified,
            _ => return None,
        })
    }

    /// Nothing more happens by itself (DELIVERED, UNVERIFIED, or FAILED is
    /// reported to the waiting caller as it stands).
    pub fn settled(self) -> bool {
        matches!(self, Self::Delivered | Self::Unverified | Self::Failed)
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryKind {
    /// The answer to an ask.
    Reply,
    /// `POST /api/tasks/{id}/input` / `send_task_terminal_input` with an idempotency key.
    Input,
}

impl DeliveryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reply => "reply",
            Self::Input => "input",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "reply" => Some(Self::Reply),
            "input" => Some(Self::Input),
            _ => None,
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Also the injection id.
    pub id: String,
    pub task_id: String,
    pub kind: DeliveryKind,
    pub message_id: Option<String>,
    pub node_id: Option<String>,
    pub text: String,
    pub question: Option<String>,
    pub submit: bool,
    pub dedup_key: Option<String>,
    pub state: DeliveryState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub done_at: Option<DateTime<Utc>>,
    /// When the terminal is gone, resume the agent first (work owed to a
    /// derived child or a parent: decision D4).
    #[serde(default)]
    pub resume: bool,
}

pub use crate::store::{Claimed, DeliveryClaim, DeliveryStore, NewInput};

/// Backoff before attempt `attempts + 1`: 2, 4, 8 … 256 s.
pub fn backoff(attempts: u32) -> Duration {
    let exp = attempts.clamp(1, 8);
    Duration::from_secs(1u64 << exp).min(MAX_BACKOFF)
}

/// When a row that failed for the `attempts`-th time is due again (`None`: gave up).
pub fn next_attempt(attempts: u32, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let wait = chrono::Duration::from_std(backoff(attempts)).ok()?;
    now.checked_add_signed(wait)
}

/// Short status of a delivery for callers: `delivered`, `queued`, `failed`, `unverified`.
pub fn status_word(state: DeliveryState) -> &'static str {
    match state {
        DeliveryState::Delivered => "delivered",
        DeliveryState::Failed => "failed",
        DeliveryState::Unverified => "unverified",
        _ => "queued",
    }
}

impl Harness {
    /// Wake the delivery worker (a row was queued).
    pub fn wake_deliveries(&self) {
        self.deliveries_wake().notify_one();
    }

    /// The lease a new reply row is written with, when this process runs a
    /// delivery worker (`HarnessConfig::delivery_owner`).
    pub(crate) fn handoff_claim(&self, now: DateTime<Utc>) -> Option<DeliveryClaim> {
        let owner = self.config().delivery_owner.clone()?;
        let until = now.checked_add_signed(chrono::Duration::from_std(HANDOFF_LEASE).ok()?)?;
        Some(DeliveryClaim {
            owner,
            node: self.config().node_id.clone(),
            until,
        })
    }

    /// A queued row: handed straight to this process's worker when the
    /// writing transaction leased it to it, else the worker is woken to claim.
    pub(crate) fn queued(&self, row: &Delivery) {
        self.delivery_changed(row);
        let ours = row.lease_owner.is_some()
            && row.lease_owner.as_deref() == self.config().delivery_owner.as_deref();
        if ours {
            self.hand_off(row.clone());
        }
        self.wake_deliveries();
    }

    /// Publish a change of a delivery (after its commit).
    pub fn delivery_changed(&self, d: &Delivery) {
        self.publish(HarnessEvent::DeliveryChanged {
            id: d.id.clone(),
            task_id: d.task_id.clone(),
            message_id: d.message_id.clone(),
        });
    }

    /// Wait up to `wait` for the delivery to settle; returns its latest row.
    /// The caller must have subscribed (`events`) before the row could change.
    pub async fn wait_delivery(
        &self,
        id: &str,
        wait: Duration,
        mut events: tokio::sync::broadcast::Receiver<HarnessEvent>,
    ) -> CoreResult<Option<Delivery>> {
        // Without an agent runtime nobody in this process delivers: no wait.
        let wait = if self.runtime().is_some() {
            wait
        } else {
            Duration::ZERO
        };
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let row = self.store().get_delivery(id).await?;
            match &row {
                Some(d) if !d.state.settled() => {}
                _ => return Ok(row),
            }
            let woke = tokio::time::timeout_at(deadline, async {
                loop {
                    match events.recv().await {
                        Ok(HarnessEvent::DeliveryChanged { id: changed, .. }) if changed == id => {
                            return true;
                        }
                        Ok(_) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return true,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return false,
                    }
                }
            })
            .await;
            if !matches!(woke, Ok(true)) {
                return self.store().get_delivery(id).await.map_err(Into::into);
            }
        }
    }

    /// Queue terminal input with an idempotency key. Returns the row and
    /// whether this call created it (`false`: a duplicate of the key).
    pub async fn enqueue_input(
        &self,
        task_id: &str,
        text: &str,
        submit: bool,
        key: &str,
    ) -> CoreResult<(Delivery, bool)> {
        let task_id = validate::task_id(Some(task_id))?;
        let (row, created) = self
            .store()
            .enqueue_input(NewInput {
                id: ids::new_id(),
                task_id,
                node_id: Some(self.config().node_id.clone()),
                text: text.to_string(),
                submit,
                dedup_key: key.to_string(),
                resume: false,
                now: Utc::now(),
            })
            .await?;
        if created {
            self.delivery_changed(&row);
            self.wake_deliveries();
        }
        Ok((row, created))
    }

    pub async fn delivery(&self, id: &str) -> CoreResult<Delivery> {
        let id = validate::cuid("deliveryId", id.trim())?;
        self.store()
            .get_delivery(&id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Delivery not found".into()))
    }

    /// The deliveries of these answered asks (for the notification rows).
    pub async fn deliveries_for_messages(
        &self,
        message_ids: &[String],
    ) -> CoreResult<Vec<Delivery>> {
        let mut out = Vec::new();
        for chunk in message_ids.chunks(500) {
            out.extend(self.store().deliveries_for_messages(chunk).await?);
        }
        Ok(out)
    }

    pub async fn task_deliveries(&self, task_id: &str) -> CoreResult<Vec<Delivery>> {
        let task_id = validate::task_id(Some(task_id))?;
        Ok(self.store().task_deliveries(&task_id, 50).await?)
    }

    /// "Deliver again": a FAILED or UNVERIFIED row is queued once more (admin).
    pub async fn retry_delivery(&self, id: &str) -> CoreResult<Delivery> {
        let id = validate::cuid("deliveryId", id.trim())?;
        let from = [DeliveryState::Failed, DeliveryState::Unverified];
        match self
            .store()
            .requeue_delivery(&id, &from, Utc::now())
            .await?
        {
            Some(row) => {
                tracing::info!(delivery_id = %row.id, "delivery queued again by a person");
                self.delivery_changed(&row);
                self.wake_deliveries();
                Ok(row)
            }
            None => Err(self.not_in(&id, "FAILED or UNVERIFIED").await),
        }
    }

    /// "Mark as delivered": an UNVERIFIED row is closed as DELIVERED (admin).
    pub async fn mark_delivered(&self, id: &str) -> CoreResult<Delivery> {
        let id = validate::cuid("deliveryId", id.trim())?;
        match self
            .store()
            .mark_delivery_delivered(&id, Utc::now())
            .await?
        {
            Some(row) => {
                self.delivery_changed(&row);
                Ok(row)
            }
            None => Err(self.not_in(&id, "UNVERIFIED").await),
        }
    }

    async fn not_in(&self, id: &str, expected: &str) -> CoreError {
        match self.store().get_delivery(id).await {
            Ok(Some(row)) => CoreError::Conflict(format!(
                "Delivery is {} (expected {expected})",
                row.state.as_str()
            )),
            Ok(None) => CoreError::NotFound("Delivery not found".into()),
            Err(err) => err.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_two_to_256_seconds() {
        let secs: Vec<u64> = (1..=10).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(secs, [2, 4, 8, 16, 32, 64, 128, 256, 256, 256]);
        assert_eq!(backoff(0).as_secs(), 2);
    }

    #[test]
    fn gives_up_after_max_attempts() {
        let now = Utc::now();
        assert!(next_attempt(MAX_ATTEMPTS - 1, now).is_some());
        assert!(next_attempt(MAX_ATTEMPTS, now).is_none());
        let next = next_attempt(3, now).map(|t| (t - now).num_seconds());
        assert_eq!(next, Some(8));
    }

    #[test]
    fn states_round_trip() {
        for s in [
            DeliveryState::Queued,
            DeliveryState::WaitingBoundary,
            DeliveryState::Resuming,
            DeliveryState::Writing,
            DeliveryState::Delivered,
            DeliveryState::Failed,
            DeliveryState::Unverified,
        ] {
            assert_eq!(DeliveryState::parse(s.as_str()), Some(s));
        }
    }
}
