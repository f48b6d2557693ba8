//! What a person sees of gateway inbound: the inbound
//! rows by state with their routing result and their replies, and the
//! sessions. Reads only.

use crate::gateway::Gateway;
use serde::Serialize;
use serde_json::Value;

use crate::{
    CoreError, CoreResult,
    store::{GatewayInbound, GatewayReply, GatewaySession, InboundState},
};

/// Most rows one listing answers.
pub const MAX_ROWS: u32 = 500;

/// An inbound row with its parsed result and its replies.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InboundView {
    #[serde(flatten)]
    pub inbound: GatewayInbound,
    /// `response` parsed (the routing result), `null` without one.
    pub result: Value,
    pub replies: Vec<GatewayReply>,
}

impl Gateway<'_> {
    /// Inbound rows, newest first (`state`: only those; 400 naming `state`
    /// for another word).
    pub async fn gateway_inbound(
        &self,
        state: Option<&str>,
        limit: Option<u32>,
    ) -> CoreResult<Vec<InboundView>> {
        let state = match state.map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(InboundState::parse(&s.to_ascii_uppercase()).ok_or_else(|| {
                CoreError::invalid(
                    "state",
                    "state must be RECEIVED, QUEUED, PROCESSING, PROCESSED or FAILED",
                )
            })?),
        };
        let limit = limit.unwrap_or(100).clamp(1, MAX_ROWS);
        let rows = self.h.store().list_inbound(state, limit).await?;
        let mut out = Vec::with_capacity(rows.len());
        for inbound in rows {
            let replies = self.h.store().replies_for_inbound(&inbound.id).await?;
            let result = inbound
                .response
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok())
                .unwrap_or(Value::Null);
            out.push(InboundView {
                inbound,
                result,
                replies,
            });
        }
        Ok(out)
    }

    /// Gateway sessions, newest activity first.
    pub async fn gateway_sessions(&self, limit: Option<u32>) -> CoreResult<Vec<GatewaySession>> {
        let limit = limit.unwrap_or(100).clamp(1, MAX_ROWS);
        Ok(self.h.store().list_sessions(limit).await?)
    }
}
