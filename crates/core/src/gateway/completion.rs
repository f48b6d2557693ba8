//! `PATCH /api/internal/harness/gateway` (docs/tower-messaging.md §5.7, docs/tower-messaging.md §3.3
//! "any → PROCESSED"): the gateway closes an inbound row itself with a
//! result of its own (`completeGatewayInbound`) — state PROCESSED, the
//! response kept as JSON, processed now, the last error cleared. Writes no
//! reply and starts nothing.

use crate::gateway::Gateway;
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::context::text;
use crate::{CoreError, CoreResult, store::InboundFinish, store::InboundState, validate};

/// The stored response's budget (its JSON text).
pub const MAX_COMPLETION_CHARS: usize = 64_000;
/// The longest `inboundId` read (it must then be a CUID).
pub const MAX_INBOUND_ID_CHARS: usize = 128;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompletionInput {
    pub inbound_id: Option<String>,
    /// Any JSON value (absent: `null`).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub response: Option<Value>,
}

impl Gateway<'_> {
    /// `{ok: true, inboundId, state: "PROCESSED"}`; an unknown row → 404.
    pub async fn complete_gateway_inbound(&self, input: &CompletionInput) -> CoreResult<Value> {
        let id = text(
            input.inbound_id.as_deref(),
            "inboundId",
            MAX_INBOUND_ID_CHARS,
        )?
        .ok_or_else(|| CoreError::invalid("inboundId", "inboundId required"))?;
        let id = validate::cuid("inboundId", &id)?;
        let response = input.response.clone().unwrap_or(Value::Null).to_string();
        if response.chars().count() > MAX_COMPLETION_CHARS {
            return Err(CoreError::invalid(
                "response",
                format!("response must be at most {MAX_COMPLETION_CHARS} characters of JSON"),
            ));
        }
        let done = self
            .h
            .store()
            .finish_inbound(InboundFinish {
                id: id.clone(),
                state: InboundState::Processed,
                response,
                last_error: None,
                now: Utc::now(),
                reply: None,
            })
            .await?;
        match done {
            Some(row) => Ok(json!({"ok": true, "inboundId": row.id, "state": row.state.as_str()})),
            None => Err(CoreError::NotFound(
                "Gateway inbound message not found".into(),
            )),
        }
    }
}
