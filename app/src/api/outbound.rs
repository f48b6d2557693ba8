//! Pushed messages (the outbox) as the UI shows them under their message,
//! and the two manual actions: "retry now" (FAILED / DEAD) and "mark as
//! delivered" (SENT_UNVERIFIED).

use harness_types::OutboundState;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// One outbound row, shortened for the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboundInfo {
    pub id: String,
    pub state: OutboundState,
    pub gateway: String,
    pub attempts: u32,
    pub error: Option<String>,
    pub platform_message_id: Option<String>,
}

#[cfg(feature = "ssr")]
impl From<harness_core::outbox::Outbound> for OutboundInfo {
    fn from(o: harness_core::outbox::Outbound) -> Self {
        Self {
            id: o.id,
            state: o.state,
            gateway: o.gateway,
            attempts: o.attempts,
            error: o.last_error,
            platform_message_id: o.platform_message_id,
        }
    }
}

/// Attach each message's outbound row (one query).
#[cfg(feature = "ssr")]
pub(crate) async fn attach(
    h: &harness_core::Harness,
    mut rows: Vec<super::Row>,
) -> Result<Vec<super::Row>, ServerFnError> {
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let found = h
        .outbox()
        .outbound_for_messages(&ids)
        .await
        .map_err(ssr::to_sfn)?;
    let mut by_message: std::collections::HashMap<String, OutboundInfo> = found
        .into_iter()
        .filter_map(|o| Some((o.message_id.clone()?, OutboundInfo::from(o))))
        .collect();
    for row in &mut rows {
        row.outbound = by_message.remove(&row.id);
    }
    Ok(rows)
}

/// "Retry now" (FAILED or DEAD → PENDING).
#[server(prefix = "/sfn", endpoint = "retry_outbound")]
pub async fn retry_outbound(id: String) -> Result<OutboundInfo, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.outbox()
        .retry_outbound(&id)
        .await
        .map_err(ssr::to_sfn)?
        .into())
}

/// "Mark as delivered" (SENT_UNVERIFIED → DELIVERED).
#[server(prefix = "/sfn", endpoint = "mark_outbound_delivered")]
pub async fn mark_outbound_delivered(id: String) -> Result<OutboundInfo, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.outbox()
        .mark_outbound_delivered(&id)
        .await
        .map_err(ssr::to_sfn)?
        .into())
}
