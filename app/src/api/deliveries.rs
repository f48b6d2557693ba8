//! Deliveries into agents' terminals as the UI shows them, and the two
//! manual actions on a row the worker will not touch by itself.

use harness_types::{DeliveryKind, DeliveryState};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// One delivery row, shortened for the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryInfo {
    pub id: String,
    pub state: DeliveryState,
    pub attempts: u32,
    pub error: Option<String>,
    /// Unix milliseconds: when it was typed (DELIVERED).
    pub done_ms: Option<i64>,
    /// Unix milliseconds: when a FAILED row is tried again (`None`: gave up).
    pub next_ms: Option<i64>,
    pub kind: DeliveryKind,
    /// The text typed (first 200 characters).
    pub text: String,
}

#[cfg(feature = "ssr")]
impl From<harness_core::deliveries::Delivery> for DeliveryInfo {
    fn from(d: harness_core::deliveries::Delivery) -> Self {
        Self {
            id: d.id,
            state: d.state,
            attempts: d.attempts,
            error: d.last_error,
            done_ms: d.done_at.map(|t| t.timestamp_millis()),
            next_ms: d.next_attempt_at.map(|t| t.timestamp_millis()),
            kind: d.kind,
            text: d.text.chars().take(200).collect(),
        }
    }
}

/// "Deliver again" (FAILED or UNVERIFIED → QUEUED).
#[server(prefix = "/sfn", endpoint = "retry_delivery")]
pub async fn retry_delivery(id: String) -> Result<DeliveryInfo, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.deliveries()
        .retry_delivery(&id)
        .await
        .map_err(ssr::to_sfn)?
        .into())
}

/// "Mark as delivered" (UNVERIFIED → DELIVERED).
#[server(prefix = "/sfn", endpoint = "mark_delivered")]
pub async fn mark_delivered(id: String) -> Result<DeliveryInfo, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.deliveries()
        .mark_delivered(&id)
        .await
        .map_err(ssr::to_sfn)?
        .into())
}

/// The task's terminal input sent with an idempotency key (newest first):
/// the replies are shown with their asks in the timeline.
#[server(prefix = "/sfn", endpoint = "task_inputs")]
pub async fn task_inputs(task_id: String) -> Result<Vec<DeliveryInfo>, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.deliveries()
        .task_deliveries(&task_id)
        .await
        .map_err(ssr::to_sfn)?
        .into_iter()
        .filter(|d| d.kind == DeliveryKind::Input)
        .map(DeliveryInfo::from)
        .collect())
}
