//! A person's decisions on a gateway reply (docs/decisions.md D7 via docs/decisions.md D9): a
//! FAILED, DEAD or SENT_UNVERIFIED reply is sent again on request ("retry
//! now" — for SENT_UNVERIFIED the person accepts a possible duplicate), and
//! a SENT_UNVERIFIED one is closed as DELIVERED by a person who saw it
//! arrive. The reply worker never does either on its own.

use crate::gateway::Gateway;
use chrono::Utc;

use crate::{
    CoreError, CoreResult,
    store::{GatewayReply, ReplyState},
    validate,
    work::{Kind, ManualAction, ManualActions},
};

impl Gateway<'_> {
    /// FAILED, DEAD or SENT_UNVERIFIED (`ManualAction::Retry`'s states) →
    /// PENDING, due now (admin).
    pub async fn retry_gateway_reply(&self, id: &str) -> CoreResult<GatewayReply> {
        let id = validate::cuid("replyId", id.trim())?;
        match self
            .h
            .store()
            .decide_reply(
                &id,
                ReplyState::accepted_by(ManualAction::Retry),
                ReplyState::Pending,
                Utc::now(),
            )
            .await?
        {
            Some(row) => {
                tracing::info!(reply_id = %row.id, "gateway reply queued again by a person");
                self.h.wake(Kind::GatewayReplies);
                Ok(row)
            }
            None => Err(self.reply_not_in(&id, ManualAction::Retry).await),
        }
    }

    /// SENT_UNVERIFIED → DELIVERED (admin).
    pub async fn mark_gateway_reply_delivered(&self, id: &str) -> CoreResult<GatewayReply> {
        let id = validate::cuid("replyId", id.trim())?;
        match self
            .h
            .store()
            .decide_reply(
                &id,
                ReplyState::accepted_by(ManualAction::MarkDelivered),
                ReplyState::Delivered,
                Utc::now(),
            )
            .await?
        {
            Some(row) => Ok(row),
            None => Err(self.reply_not_in(&id, ManualAction::MarkDelivered).await),
        }
    }

    async fn reply_not_in(&self, id: &str, action: ManualAction) -> CoreError {
        let found = self.h.store().get_reply(id).await;
        crate::work::refused("Gateway reply", found.map(|r| r.map(|r| r.state)), action)
    }
}
