//! An approval answered from chat (issue 31 point 4): a reply "approve" /
//! "1" or "deny" / "2" to the approval's push — through `reply_to_ask`,
//! `relay_channel_reply` or `route_gateway_message` — decides it, recorded
//! as `gateway:<sender>`. The first answer wins; a later one is told
//! "already decided" (never typed into the task as text).

use serde_json::{Value, json};

use super::flow::parse_answer;
use crate::{CoreError, CoreResult, Harness, auth::Person, store::ApprovalState};

/// The start of every refusal of an answer to an approval that is no
/// longer pending (`Conflict`): decided, or ended with its ask.
pub const ALREADY_DECIDED: &str = "already decided";
pub const CANCELLED: &str = "cancelled:";

/// Whether a Conflict's text is such a refusal.
pub fn is_settled(message: &str) -> bool {
    message.starts_with(ALREADY_DECIDED) || message.starts_with(CANCELLED)
}

impl Harness {
    /// The approval a reply to `task_id` decides: that of the task's OPEN
    /// ask, else of its latest ask; `None` when that ask is no approval.
    pub(crate) async fn approval_for_reply(
        &self,
        task_id: &str,
    ) -> CoreResult<Option<crate::store::Approval>> {
        let ask = match self.store().open_ask(task_id).await? {
            Some(open) => open,
            None => match self.store().latest_ask(task_id).await? {
                Some(latest) => latest,
                None => return Ok(None),
            },
        };
        Ok(self.store().approval_for_request(&ask.id).await?)
    }

    /// A chat reply about `task_id`'s approval — the approval is pending,
    /// or the text is a plain approve / deny — decided as `gateway:<sender>`:
    /// the JSON the gateway tools answer. `None`: the reply is not about an
    /// approval (the caller goes on as for any reply).
    pub(crate) async fn chat_approval_answer(
        &self,
        person: &Person,
        task_id: &str,
        text: &str,
        sender: Option<&str>,
    ) -> CoreResult<Option<Value>> {
        let Some(approval) = self.approval_for_reply(task_id).await? else {
            return Ok(None);
        };
        if approval.state != ApprovalState::Pending && parse_answer(text).is_none() {
            return Ok(None);
        }
        match self
            .reply_from(person, task_id, Some(text), false, sender)
            .await
        {
            Ok(out) => {
                let a = self.approval(&approval.id).await?;
                let word = if a.state == ApprovalState::Approved {
                    "Approved"
                } else {
                    "Denied"
                };
                Ok(Some(json!({
                    "ok": true, "mode": "approval_decided", "taskId": task_id,
                    "approvalId": a.id, "state": a.state.as_str(), "decidedBy": a.decided_by,
                    "deliveryId": out.delivery_id, "delivery": out.delivery,
                    "acknowledgement": format!("{word}: the agent has been told."),
                    "instructions": "The approval is decided. Tell the person in one short line; \
                        do not answer anything else.",
                })))
            }
            Err(CoreError::Conflict(message)) if is_settled(&message) => Ok(Some(json!({
                "ok": false, "mode": "approval_already_decided", "alreadyDecided": true,
                "taskId": task_id, "approvalId": approval.id, "error": message,
                "instructions": "Nothing was changed: tell the person this approval was already \
                    decided (the first answer wins).",
            }))),
            Err(other) => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_recognised_by_their_start() {
        assert!(is_settled("already decided: APPROVED by admin at x"));
        assert!(is_settled(
            "cancelled: this approval's question was expired"
        ));
        assert!(!is_settled("No open ask for this task"));
    }
}
