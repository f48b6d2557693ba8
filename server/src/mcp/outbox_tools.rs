//! The outbox's MCP tools (tower-messaging.md §4.3): `list_notify_targets`
//! and `push_to_human`. Thin adapters: bind the task, call the core.

use harness_core::{Harness, auth::Identity, outbox::PushInput};
use rmcp::model::{JsonObject, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use super::tools::{args, message_of, schema, task_id_prop};

pub(super) const NAMES: &[&str] = &["list_notify_targets", "push_to_human"];

pub(super) fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "list_notify_targets",
            "Before sending: the active chat channel for this task's scope (work, or unattended \
             when goal mode is on) and exactly how to send to it, with the task token. Read-only.",
            schema(json!({
                "type": "object",
                "properties": {
                    "taskId": task_id_prop(),
                    "scope": {"type": "string", "enum": ["work", "unattended"]}
                }
            })),
        ),
        Tool::new(
            "push_to_human",
            "Send a message to a human through the configured gateway (Hermes / OpenClaw). It is \
             persisted first and sent by the outbox: never lost, never sent twice. With \
             expectReply (default in the unattended scope) it is an ask: once sent your task is \
             parked — end your turn and wait; the reply is typed into this terminal. With \
             `options` (and a `default` with a `deadline`) the chat shows them numbered.",
            schema(json!({
                "type": "object",
                "properties": {
                    "taskId": task_id_prop(),
                    "message": {"type": "string", "minLength": 1, "maxLength": 4000},
                    "scope": {"type": "string", "enum": ["work", "unattended"]},
                    "to": {"type": "string", "maxLength": 1024},
                    "expectReply": {"type": "boolean"},
                    "dedupKey": {"type": "string", "minLength": 1, "maxLength": 256},
                    "options": {
                        "type": "array", "maxItems": 8,
                        "description": "The choices (AskUserQuestion's shape); the chat message lists them numbered and a reply of `2` or a label picks one. Makes the message a question (expectReply).",
                        "items": {"type": "object", "properties": {
                            "label": {"type": "string", "minLength": 1, "maxLength": 200},
                            "description": {"type": "string", "maxLength": 1000}
                        }, "required": ["label"]}
                    },
                    "multiSelect": {"type": "boolean", "description": "Several options may be chosen."},
                    "default": {"type": "string", "description": "The option label you will take if nobody answers by the deadline (needs a deadline)."},
                    "deadline": {
                        "type": ["integer", "string"],
                        "description": "Seconds from now, or an RFC 3339 time; at least 60 s, at most the ask TTL (14 days)."
                    },
                    "urgency": {"type": "string", "enum": ["low", "normal", "high"]}
                },
                "required": ["message"]
            })),
        ),
    ]
}

pub(super) fn output_schema(tool: &str) -> Option<Value> {
    match tool {
        "list_notify_targets" => Some(json!({
            "type": "object",
            "properties": {
                "scope": {"type": "string"},
                "active": {"type": ["object", "null"]},
                "noChannelConfigured": {"type": "boolean"},
                "capabilityUnavailable": {"type": "boolean"},
                "error": {"type": "string"},
                "instructions": {"type": "string"}
            },
            "required": ["scope", "instructions"]
        })),
        "push_to_human" => Some(json!({
            "type": "object",
            "properties": {
                "ok": {"type": "boolean"},
                "scope": {"type": "string"},
                "expectReply": {"type": "boolean"},
                "outboundId": {"type": "string"},
                "state": {"type": "string"},
                "deduped": {"type": "boolean"},
                "sent": {"type": "boolean"},
                "parked": {"type": "boolean"},
                "platformMessageId": {"type": ["string", "null"]},
                "lastError": {"type": ["string", "null"]}
            },
            "required": ["ok", "outboundId", "state", "deduped", "sent", "parked"]
        })),
        _ => None,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TargetsArgs {
    task_id: Option<String>,
    scope: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushArgs {
    task_id: Option<String>,
    message: Option<String>,
    scope: Option<String>,
    to: Option<String>,
    expect_reply: Option<bool>,
    dedup_key: Option<String>,
    #[serde(flatten)]
    choices: harness_core::options::ChoicesInput,
}

pub(super) async fn call(
    h: &Harness,
    who: &Identity,
    name: &str,
    a: JsonObject,
) -> Result<Value, String> {
    match name {
        "list_notify_targets" => {
            let a: TargetsArgs = args(a)?;
            let task_id = who
                .bind_task(a.task_id.as_deref())
                .map_err(|e| message_of(&e))?;
            let out = h
                .list_notify_targets(&task_id, a.scope.as_deref())
                .await
                .map_err(|e| message_of(&e))?;
            serde_json::to_value(out).map_err(|e| e.to_string())
        }
        "push_to_human" => {
            let a: PushArgs = args(a)?;
            let task_id = who
                .bind_task(a.task_id.as_deref())
                .map_err(|e| message_of(&e))?;
            let input = PushInput {
                task_id: Some(task_id),
                message: a.message,
                scope: a.scope,
                to: a.to,
                expect_reply: a.expect_reply,
                dedup_key: a.dedup_key,
                choices: a.choices,
                ..Default::default()
            };
            match h.push_to_human(input).await {
                Ok(out) => serde_json::to_value(out).map_err(|e| e.to_string()),
                Err(e) => Err(message_of(&e)),
            }
        }
        other => Err(format!("unknown tool {other:?}")),
    }
}
