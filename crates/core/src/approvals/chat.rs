//! An approval answered from chat: a reply "approve" /
//! "1" or "deny" / "2" to the approval's push — through `reply_to_ask`,
//! `relay_channel_reply` or `route_gateway_message` — decides it, recorded
//! as `gateway:<sender>`. The first answer wins; a later one is told
//! "already decided" (never typed into the task as text).

use crate::approvals::Approvals;
use serde_json::{Value, json};

use super::flow::parse_answer;
use crate::{CoreError, CoreResult, auth::Person, messaging::Aim, store::ApprovalState};

/// The start of every refusal of an answer to an approval that is no
/// longer pending (`Conflict`): decided, or ended with its ask.
pub const ALREADY_DECIDED: &str = "already decided";
pub const CANCELLED: &str = "cancelled:";

/// Whether a Conflict's text is such a refusal.
pub fn is_settled(message: &str) -> bool {
    message.starts_with(ALREADY_DECIDED) || message.starts_with(CANCELLED)
}

impl Approvals<'_> {
    /// The approval a reply to `task_id` decides: that of the task's OPEN
    /// ask, else of its latest ask; `None` when that ask is no approval.
    pub(crate) async fn approval_for_reply(
        &self,
        task_id: &str,
    ) -> CoreResult<Option<crate::store::Approval>> {
        let ask = match self.h.store().open_ask(task_id).await? {
            Some(open) => open,
            None => match self.h.store().latest_ask(task_id).await? {
                Some(latest) => latest,
                None => return Ok(None),
            },
        };
        Ok(self.h.store().approval_for_request(&ask.id).await?)
    }

    /// The approval an answer decides. Aimed at an ask (`request_id`: the
    /// row the person tapped, the push they replied to): that ask's
    /// approval, whatever its state (a cancelled or decided one is then
    /// refused by the decision, never passed on to the approval that
    /// replaced it); aimed at an ordinary question while an approval is
    /// the task's open ask: refused. Not aimed: the open (or latest) ask's.
    pub(crate) async fn aimed_approval(
        &self,
        task_id: &str,
        request_id: Option<&str>,
    ) -> CoreResult<Option<crate::store::Approval>> {
        let Some(aimed) = request_id else {
            return self.approval_for_reply(task_id).await;
        };
        if let Some(a) = self.h.store().approval_for_request(aimed).await? {
            if a.task_id != task_id {
                return Err(CoreError::invalid(
                    "requestId",
                    "requestId is not a question of this task",
                ));
            }
            return Ok(Some(a));
        }
        match self.approval_for_reply(task_id).await? {
            Some(open) if open.state == ApprovalState::Pending => {
                Err(CoreError::Conflict(format!(
                    "{CANCELLED} the question you answered is no longer open: an approval \
                 replaced it; nothing was answered. Answer the approval itself."
                )))
            }
            _ => Ok(None),
        }
    }

    /// The ask a chat message Harness sent was about, from its outbound
    /// row's key: an approval's push (`approval:<id>`), a reminder or an
    /// escalation of an ask (`reminder:<ask>:<n>`, `escalation:<ask>:<n>`).
    /// `None`: another kind of message (the reply is not aimed).
    pub(crate) async fn aimed_ask_of(
        &self,
        mapping: Option<&crate::store::DeliveryMapping>,
    ) -> CoreResult<Option<String>> {
        let Some(outbound_id) = mapping.and_then(|m| m.outbound_id.as_deref()) else {
            return Ok(None);
        };
        let Some(row) = self.h.store().get_outbound(outbound_id).await? else {
            return Ok(None);
        };
        Ok(match aimed_key(&row.dedup_key) {
            Some(Aimed::Approval(id)) => {
                self.h.store().get_approval(id).await?.map(|a| a.request_id)
            }
            Some(Aimed::Ask(id)) => Some(id.to_string()),
            None => None,
        })
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
        mapping: Option<&crate::store::DeliveryMapping>,
    ) -> CoreResult<Option<Value>> {
        let aimed = self.aimed_ask_of(mapping).await?;
        let approval = match self.aimed_approval(task_id, aimed.as_deref()).await {
            Ok(Some(a)) => a,
            Ok(None) => return Ok(None),
            Err(CoreError::Conflict(message)) if is_settled(&message) => {
                return Ok(Some(settled(task_id, None, &message)));
            }
            Err(other) => return Err(other),
        };
        if approval.state != ApprovalState::Pending && parse_answer(text).is_none() {
            return Ok(None);
        }
        let aim = Aim {
            request_id: aimed.as_deref(),
            ..Aim::default()
        };
        match self
            .h
            .asks()
            .reply_aimed(person, task_id, Some(text), false, sender, aim)
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
            Err(CoreError::Conflict(message)) if is_settled(&message) => {
                Ok(Some(settled(task_id, Some(&approval.id), &message)))
            }
            Err(other) => Err(other),
        }
    }
}

/// What a chat message's outbound key says it asked.
#[derive(Debug, PartialEq, Eq)]
enum Aimed<'a> {
    Approval(&'a str),
    Ask(&'a str),
}

fn aimed_key(key: &str) -> Option<Aimed<'_>> {
    if let Some(id) = key.strip_prefix("approval:") {
        return Some(Aimed::Approval(id));
    }
    let rest = key
        .strip_prefix("reminder:")
        .or_else(|| key.strip_prefix("escalation:"))?;
    rest.split(':')
        .next()
        .filter(|s| !s.is_empty())
        .map(Aimed::Ask)
}

/// The gateway's answer to a refused decision: nothing changed.
fn settled(task_id: &str, approval_id: Option<&str>, message: &str) -> Value {
    json!({
        "ok": false, "mode": "approval_already_decided", "alreadyDecided": true,
        "taskId": task_id, "approvalId": approval_id, "error": message,
        "instructions": "Nothing was changed: tell the person this approval was already \
            decided or is no longer waiting (the first answer wins; a replaced one is cancelled).",
    })
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

    #[test]
    fn a_chat_message_names_the_ask_it_asked() {
        assert_eq!(aimed_key("approval:cabc"), Some(Aimed::Approval("cabc")));
        assert_eq!(aimed_key("reminder:cask:2"), Some(Aimed::Ask("cask")));
        assert_eq!(aimed_key("escalation:cask:0"), Some(Aimed::Ask("cask")));
        assert_eq!(aimed_key("harness:ctask:abc"), None);
        assert_eq!(aimed_key("reminder:"), None);
    }
}
