//! The `outputSchema` of each tool: the shape of its `structuredContent`
//! (the same JSON as the text content). Error results (`isError: true`)
//! carry only the text `{error}` and are not bound by these schemas.

use serde_json::{Value, json};

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn task_view() -> Value {
    object(
        json!({
            "id": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "string"},
            "parentTaskId": {"type": ["string", "null"]},
            "unattended": {"type": "boolean"},
            "execution": {"type": ["object", "null"]},
            "openAsk": {"type": "boolean"}
        }),
        &["id", "title", "status"],
    )
}

/// The output schema of `tool` (every tool has one).
pub fn output_schema(tool: &str) -> Value {
    if let Some(schema) = super::outbox_tools::output_schema(tool) {
        return schema;
    }
    match tool {
        "ask_human" => object(
            json!({
                "parked": {"type": "boolean"},
                "requestId": {"type": "string"},
                "message": {"type": "string"},
                "noChannelConfigured": {"type": "boolean"},
                "deduped": {"type": "boolean"}
            }),
            &["parked", "requestId", "message"],
        ),
        "notify_human" => object(
            json!({"ok": {"type": "boolean"}, "messageId": {"type": "string"}}),
            &["ok", "messageId"],
        ),
        "reply_to_ask" => object(
            json!({
                "ok": {"type": "boolean"},
                "taskId": {"type": "string"},
                "mode": {"type": "string"},
                "injected": {"type": "boolean"},
                "deduped": {"type": "boolean"},
                "no_pending": {"type": "boolean"}
            }),
            &["taskId"],
        ),
        "get_task" | "create_task" => task_view(),
        "set_goal_mode" => object(
            json!({
                "ok": {"type": "boolean"},
                "taskId": {"type": "string"},
                "goalMode": {"type": "boolean"},
                "authorizationGranted": {"type": "boolean"}
            }),
            &["ok", "taskId", "goalMode"],
        ),
        "send_task_terminal_input" => object(
            json!({
                "taskId": {"type": "string"},
                "submitted": {"type": "boolean"},
                "deduped": {"type": "boolean"}
            }),
            &["taskId", "submitted", "deduped"],
        ),
        _ => json!({"type": "object"}),
    }
}
