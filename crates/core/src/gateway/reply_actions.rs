//! A person's decisions on a gateway reply (docs/decisions.md D7 via docs/decisions.md D9): a
//! FAILED, DEAD or SENT_UNVERIFIED reply is sent again on request ("retry
//! now" — for SENT_UNVERIFIED the person accepts a possible duplicate), and
//! a SENT_UNVERIFIED one is closed as DELIVERED by a person who saw it
//! arrive. The reply worker never does either on its own.

use chrono::Utc;

use crate::{
    CoreError, CoreResult, Harness,
    store::{GatewayReply, ReplyState},
    validate,
    work::Kind,
};

/// The states "retry now" accepts.
pub const RETRY_FROM: [ReplyState; 3] = [
    ReplyState::Failed,
    ReplyState::Dead,
    ReplyState::SentUnverified,
];

/// The state "mark as delivered" accepts.
pub const MARK_DELIVERED_FROM: [ReplyState; 1] = [ReplyState::SentUnverified];

impl Harness {
    /// FAILED, DEAD or SENT_UNVERIFIED → PENDING, due now (admin).
    pub async fn retry_gateway_reply(&self, id: &str) -> CoreResult<GatewayReply> {
        let id = validate::cuid("replyId", id.trim())?;
        match self
            .store()
            .decide_reply(&id, &RETRY_FROM, ReplyState::Pending, Utc::now())
            .await?
        {
            Some(row) => {
                tracing::info!(reply_id = %row.id, "gateway reply queued again by a person");
                self.wake(Kind::GatewayReplies);
                Ok(row)
            }
            None => Err(self
                .reply_not_in(&id, "FAILED, DEAD or SENT_UNVERIFIED")
                .await),
        }
    }

    /// SENT_UNVERIFIED → DELIVERED (admin).
    pub async fn mark_gateway_reply_delivered(&self, id: &str) -> CoreResult<GatewayReply> {
        let id = validate::cuid("replyId", id.trim())?;
        match self
            .store()
            .decide_reply(&id, &MARK_DELIVERED_FROM, ReplyState::Delivered, Utc::now())
            .await?
        {
            Some(row) => Ok(row),
            None => Err(self.reply_not_in(&id, "SENT_UNVERIFIED").await),
        }
    }

    async fn reply_not_in(&self, id: &str, expected: &str) -> CoreError {
        match self.store().get_reply(id).await {
            Ok(Some(row)) => CoreError::Conflict(format!(
                "Gateway reply is {} (expected {expected})",
                row.state.as_str()
            )),
            Ok(None) => CoreError::NotFound("Gateway reply not found".into()),
            Err(err) => err.into(),
        }
    }
}
