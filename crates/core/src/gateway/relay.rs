//! `relay_channel_reply` (docs/tower-messaging.md §8.6), the compatibility tool:
//! it answers a task's question only when the reply is owed to an OPEN
//! ask; an ordinary reply returns the task's context and never resumes or
//! types anything (`resolve_gateway_task_context` + `continue_bound_task`
//! are the explicit path). Unlike the reference, the delivery mapping is
//! trusted only from its own chat (docs/decisions.md D11).

use crate::gateway::Gateway;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    context::{MAX_ID_CHARS, MAX_PLATFORM_CHARS, MAX_QUOTED_CHARS, MAX_TASK_ID_CHARS, text},
    ids,
};
use crate::{CoreError, CoreResult, auth::Person, outbox::token, store::DeliveryMapping, validate};

/// The tool's arguments (`platformMessageId` is the id of the Harness
/// message being replied to; `gateway` is ours: without it both are tried).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelayInput {
    pub text: Option<String>,
    pub task_id: Option<String>,
    pub gateway: Option<String>,
    pub platform: Option<String>,
    pub chat_id: Option<String>,
    pub platform_message_id: Option<String>,
    pub quoted_text: Option<String>,
    /// The gateway's verified sender: who decided, when the reply decides
    /// an approval.
    #[serde(default)]
    pub sender_id: Option<String>,
}

const INSTRUCTIONS: &str = "This is an ordinary reply to a task, not an answer to an open question: \
     nothing was typed into the task. To act on it, call continue_bound_task (explicit OWNER \
     continuation) or answer from resolve_gateway_task_context.";

impl Gateway<'_> {
    /// docs/tower-messaging.md §8.6 with the chat check of docs/decisions.md D11; `person` is who answers (the
    /// gateway as the OWNER, `gateway::owner`).
    pub async fn relay_channel_reply(
        &self,
        person: &Person,
        input: &RelayInput,
    ) -> CoreResult<Value> {
        let reply = validate::text("text", input.text.as_deref(), validate::MAX_REPLY_CHARS)?;
        let platform = text(input.platform.as_deref(), "platform", MAX_PLATFORM_CHARS)?
            .map(|p| ids::normalize(&p));
        let chat = text(input.chat_id.as_deref(), "chatId", MAX_ID_CHARS)?;
        let pmid = text(
            input.platform_message_id.as_deref(),
            "platformMessageId",
            MAX_ID_CHARS,
        )?;
        let quoted = text(input.quoted_text.as_deref(), "quotedText", MAX_QUOTED_CHARS)?;
        let explicit = text(input.task_id.as_deref(), "taskId", MAX_TASK_ID_CHARS)?;
        let gateways: Vec<String> =
            match text(input.gateway.as_deref(), "gateway", MAX_PLATFORM_CHARS)? {
                Some(g) => vec![super::context::gateway_name(Some(&g))?],
                None => vec!["openclaw".into(), "hermes".into()],
            };
        let mut delivery: Option<DeliveryMapping> = None;
        if let (Some(platform), Some(chat), Some(pmid)) = (&platform, &chat, &pmid) {
            for gateway in &gateways {
                if let Some(found) = self.delivery_mapping(gateway, platform, chat, pmid).await? {
                    delivery = Some(found);
                    break;
                }
            }
        }
        let task_id = delivery
            .as_ref()
            .and_then(|d| d.task_id.clone())
            .or(explicit)
            .or_else(|| token::extract_from(quoted.as_deref(), Some(&reply)));
        let Some(task_id) = task_id else {
            return Ok(json!({"error": "No tower task token found", "no_task_token": true}));
        };
        let task_id = validate::task_id(Some(&task_id.to_ascii_lowercase()))?;
        let view = self.h.tasks().get_task(&task_id).await?;
        let should_answer = match &delivery {
            Some(d) => d.expect_reply,
            None => view.open_ask,
        };
        let mut body = vec![
            "[External Channel Reply]".to_string(),
            format!("Task: {}", view.task.title),
            token::task_line(&task_id),
        ];
        if let (Some(p), Some(c)) = (&platform, &chat) {
            let id = pmid
                .as_deref()
                .map(|m| format!(" (message {m})"))
                .unwrap_or_default();
            body.push(format!("Source: {p}:{c}{id}"));
        }
        body.push(format!("Reply: {reply}"));
        body.push("Continue only this task with the reply above.".into());
        body.push("Answer in the language the human wrote in.".into());
        if should_answer {
            // An approval's push answered "approve" / "deny": the
            // words themselves decide it, not the wrapped reply below.
            let sender = text(
                input.sender_id.as_deref(),
                "senderId",
                validate::MAX_SENDER_ID_CHARS,
            )?;
            if let Some(mut out) = self
                .h
                .approvals()
                .chat_approval_answer(
                    person,
                    &task_id,
                    &reply,
                    sender.as_deref(),
                    delivery.as_ref(),
                )
                .await?
            {
                out["delivery"] = serde_json::to_value(&delivery).unwrap_or(Value::Null);
                return Ok(out);
            }
            match self
                .h
                .asks()
                .reply(person, &task_id, Some(&body.join("\n")), false)
                .await
            {
                Ok(out) => {
                    return Ok(json!({
                        "ok": true, "mode": "ask_reply", "taskId": task_id,
                        "injected": out.injected, "deduped": out.deduped,
                        "deliveryId": out.delivery_id, "delivery": delivery,
                    }));
                }
                Err(CoreError::Conflict(_))
                    if delivery.as_ref().is_some_and(|d| d.expect_reply) =>
                {
                    return Ok(
                        json!({"no_pending": true, "taskId": task_id, "delivery": delivery}),
                    );
                }
                Err(CoreError::Conflict(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(json!({
            "ok": true, "mode": "task_context", "taskId": task_id, "delivery": delivery,
            "resumed": false, "continuationRequired": true, "instructions": INSTRUCTIONS,
        }))
    }
}
