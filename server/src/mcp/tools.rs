//! The MCP tools: schemas, profiles and dispatch to the core. Names and
//! camelCase parameters are the reference's (contract.md §5).

use std::sync::Arc;

use harness_core::{CoreError, Harness, auth::Identity, tasks::CreateTask};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{tool_error, tool_ok};

/// Tools an agent token may use (the reference's `task` profile subset).
const AGENT_TOOLS: &[&str] = &[
    "ask_human",
    "notify_human",
    "get_task",
    "create_task",
    "set_goal_mode",
    "send_task_terminal_input",
    "ack_workbench_batch",
    "heartbeat_workbench_batch",
    "resolve_workbench_batch",
    "list_notify_targets",
    "push_to_human",
];

pub(super) fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

pub(super) fn task_id_prop() -> Value {
    json!({"type": "string", "description": "Task id (CUID). Defaults to this terminal's TOWER_TASK_ID."})
}

fn all_tools() -> Vec<Tool> {
    input_tools()
        .into_iter()
        .map(|t| {
            let output = schema(super::outputs::output_schema(&t.name));
            t.with_raw_output_schema(output)
        })
        .collect()
}

fn input_tools() -> Vec<Tool> {
    let mut tools = base_tools();
    tools.extend(super::workbench_tools::tools());
    tools.extend(super::outbox_tools::tools());
    tools
}

fn base_tools() -> Vec<Tool> {
    vec![
        terminal_input_tool(),
        Tool::new(
            "ask_human",
            "Ask the human a blocking question. Records an OPEN ask and parks this task; \
             sends nothing by itself. After calling it, END YOUR TURN and wait: the reply is \
             typed into this terminal. Include the options you see: pass them as `options` \
             (the human answers in one click) and, if you can proceed without an answer, a \
             `default` label with a `deadline` — that label becomes the answer when it passes.",
            schema(json!({
                "type": "object",
                "properties": {
                    "taskId": task_id_prop(),
                    "question": {"type": "string", "minLength": 1, "maxLength": 4000},
                    "idempotencyKey": {"type": "string", "maxLength": 200,
                        "description": "Optional: a retry with the same key returns the ask recorded before instead of asking again."},
                    "options": {
                        "type": "array", "maxItems": 8,
                        "description": "The choices (AskUserQuestion's shape); the human answers in one click.",
                        "items": {"type": "object", "properties": {
                            "label": {"type": "string", "minLength": 1, "maxLength": 200},
                            "description": {"type": "string", "maxLength": 1000}
                        }, "required": ["label"]}
                    },
                    "multiSelect": {"type": "boolean", "description": "Several options may be chosen."},
                    "default": {"type": "string", "description": "The option label you will take if nobody answers by the deadline (needs a deadline)."},
                    "deadline": {
                        "type": ["integer", "string"],
                        "description": "Seconds from now, or an RFC 3339 time; at least 60 s, at most the ask TTL (14 days). With a default, that label is your answer when it passes."
                    },
                    "urgency": {"type": "string", "enum": ["low", "normal", "high"]}
                },
                "required": ["question"]
            })),
        ),
        Tool::new(
            "notify_human",
            "Record an FYI progress line for the human (CLOSED, nothing waits). Continue working.",
            schema(json!({
                "type": "object",
                "properties": {
                    "taskId": task_id_prop(),
                    "message": {"type": "string", "minLength": 1, "maxLength": 4000}
                },
                "required": ["message"]
            })),
        ),
        Tool::new(
            "reply_to_ask",
            "Answer a task's OPEN ask; the parked task resumes. Returns no_pending when the \
             task has no open question (treat the text as an ordinary message then).",
            schema(json!({
                "type": "object",
                "properties": {
                    "taskId": task_id_prop(),
                    "text": {"type": "string", "minLength": 1, "maxLength": 8000}
                },
                "required": ["text"]
            })),
        ),
        Tool::new(
            "get_task",
            "Read a task: status, parent, unattended flag, latest execution, open ask.",
            schema(json!({
                "type": "object",
                "properties": {"taskId": task_id_prop()}
            })),
        ),
        Tool::new(
            "create_task",
            "Create a task. Called from a task terminal, the new task becomes a derived child of \
             this task (parentTaskId defaults to TOWER_TASK_ID).",
            schema(json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 500},
                    "description": {"type": "string"},
                    "projectId": {"type": "string"},
                    "parentTaskId": {"type": "string"},
                    "agent": {
                        "type": "object",
                        "properties": {
                            "provider": {"type": "string", "enum": ["claude", "codex", "command"]},
                            "command": {"type": "array", "items": {"type": "string"}},
                            "cwd": {"type": "string"},
                            "env": {"type": "object", "additionalProperties": {"type": "string"}}
                        }
                    }
                },
                "required": ["title"]
            })),
        ),
        Tool::new(
            "set_goal_mode",
            "Turn unattended (goal) mode on or off for a task. On: no human watches the terminal, \
             native question menus are blocked and questions go to ask_human / push_to_human. \
             Turning it on needs an active unattended notify channel (hermes or openclaw).",
            schema(json!({
                "type": "object",
                "properties": {
                    "taskId": task_id_prop(),
                    "on": {"type": "boolean"}
                },
                "required": ["on"]
            })),
        ),
    ]
}

fn terminal_input_tool() -> Tool {
    Tool::new(
        "send_task_terminal_input",
        "Type text into a task's live terminal (your own, or a derived child's to deliver your \
         decision). With idempotencyKey the text is written at most once.",
        schema(json!({
            "type": "object",
            "properties": {
                "taskId": task_id_prop(),
                "text": {"type": "string", "minLength": 1, "maxLength": 10000},
                "submit": {"type": "boolean", "default": true},
                "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": 256}
            },
            "required": ["taskId", "text"]
        })),
    )
}

fn allowed(identity: &Identity, name: &str) -> bool {
    match identity {
        Identity::Admin => true,
        Identity::Agent { .. } => AGENT_TOOLS.contains(&name),
        Identity::Browser => false,
    }
}

pub fn visible(identity: Option<&Identity>) -> Vec<Tool> {
    let Some(identity) = identity else {
        return Vec::new();
    };
    all_tools()
        .into_iter()
        .filter(|t| allowed(identity, &t.name))
        .collect()
}

pub(super) fn args<T: for<'de> Deserialize<'de>>(object: JsonObject) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(object))
        .map_err(|e| format!("invalid arguments at {}: {}", e.path(), e.inner()))
}

pub(super) fn message_of(err: &CoreError) -> String {
    if err.http_status() >= 500 {
        tracing::error!(error = ?err, "MCP tool failed");
    }
    err.client_message()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskArg {
    task_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AskArgs {
    task_id: Option<String>,
    question: Option<String>,
    idempotency_key: Option<String>,
    /// options, multiSelect, default, deadline, urgency (issue 16).
    #[serde(flatten)]
    choices: harness_core::options::ChoicesInput,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotifyArgs {
    task_id: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReplyArgs {
    task_id: Option<String>,
    text: Option<String>,
}

pub async fn call(
    harness: &Harness,
    terminals: &crate::terminals::Terminals,
    identity: &Identity,
    name: &str,
    arguments: JsonObject,
) -> CallToolResult {
    if !all_tools().iter().any(|t| t.name == name) {
        return tool_error(format!("unknown tool {name:?}"));
    }
    if !allowed(identity, name) {
        return tool_error(format!("tool {name:?} is not available to this credential"));
    }
    let outcome = match name {
        "ask_human" => ask_human(harness, identity, arguments).await,
        "notify_human" => notify_human(harness, identity, arguments).await,
        "reply_to_ask" => reply_to_ask(harness, identity, arguments).await,
        "get_task" => get_task(harness, identity, arguments).await,
        "create_task" => create_task(harness, identity, arguments).await,
        "set_goal_mode" => set_goal_mode(harness, identity, arguments).await,
        "send_task_terminal_input" => send_input(harness, terminals, identity, arguments).await,
        n if super::workbench_tools::NAMES.contains(&n) => {
            super::workbench_tools::call(harness, identity, n, arguments).await
        }
        n if super::outbox_tools::NAMES.contains(&n) => {
            super::outbox_tools::call(harness, identity, n, arguments).await
        }
        _ => Err(format!("unknown tool {name:?}")),
    };
    match outcome {
        Ok(value) => tool_ok(value),
        Err(message) => tool_error(message),
    }
}

async fn ask_human(h: &Harness, who: &Identity, a: JsonObject) -> Result<Value, String> {
    let a: AskArgs = args(a)?;
    let task_id = who
        .bind_task(a.task_id.as_deref())
        .map_err(|e| message_of(&e))?;
    let out = h
        .ask_keyed(
            &task_id,
            a.question.as_deref(),
            &a.choices,
            a.idempotency_key.as_deref(),
        )
        .await
        .map_err(|e| message_of(&e))?;
    let mut body = json!({
        "parked": true,
        "requestId": out.request_id,
        "deduped": out.deduped,
        "message": "Question recorded and your task is parked. End your turn now and wait; \
                    the human's reply will be typed into this terminal.",
    });
    if out.no_channel_configured {
        body["noChannelConfigured"] = json!(true);
        body["message"] = json!(
            "Question recorded and your task is parked; it is answerable in the Harness \
             notification center (/harness). No chat channel is configured, so nobody is \
             notified elsewhere: mention that the user can configure one in Settings → \
             Notifications. End your turn now and wait for the reply."
        );
    }
    Ok(body)
}

async fn notify_human(h: &Harness, who: &Identity, a: JsonObject) -> Result<Value, String> {
    let a: NotifyArgs = args(a)?;
    let task_id = who
        .bind_task(a.task_id.as_deref())
        .map_err(|e| message_of(&e))?;
    let message = h
        .notify(&task_id, a.message.as_deref())
        .await
        .map_err(|e| message_of(&e))?;
    Ok(json!({ "ok": true, "messageId": message.id }))
}

async fn reply_to_ask(h: &Harness, who: &Identity, a: JsonObject) -> Result<Value, String> {
    let person = who.person().map_err(|e| message_of(&e))?;
    let a: ReplyArgs = args(a)?;
    let task_id = who
        .bind_task(a.task_id.as_deref())
        .map_err(|e| message_of(&e))?;
    match h.reply(&person, &task_id, a.text.as_deref(), false).await {
        Ok(out) => Ok(json!({
            "ok": true,
            "taskId": out.task_id,
            "mode": out.mode,
            "injected": out.injected,
            "deduped": out.deduped,
            "deliveryId": out.delivery_id,
            "delivery": out.delivery,
        })),
        Err(CoreError::Conflict(_)) => Ok(json!({ "no_pending": true, "taskId": task_id })),
        Err(e) => Err(message_of(&e)),
    }
}

async fn get_task(h: &Harness, who: &Identity, a: JsonObject) -> Result<Value, String> {
    let a: TaskArg = args(a)?;
    // An agent may read its own task and its derived children (core rule).
    let view = h
        .task_for(who, a.task_id.as_deref())
        .await
        .map_err(|e| message_of(&e))?;
    serde_json::to_value(view).map_err(|e| e.to_string())
}

async fn create_task(h: &Harness, who: &Identity, a: JsonObject) -> Result<Value, String> {
    let input: CreateTask = args(a)?;
    let view = h
        .create_task_as(who, input)
        .await
        .map_err(|e| message_of(&e))?;
    serde_json::to_value(view).map_err(|e| e.to_string())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GoalArgs {
    task_id: Option<String>,
    on: Option<bool>,
    wake_after_seconds: Option<i64>,
}

async fn set_goal_mode(h: &Harness, who: &Identity, a: JsonObject) -> Result<Value, String> {
    let a: GoalArgs = args(a)?;
    let task_id = who
        .bind_task(a.task_id.as_deref())
        .map_err(|e| message_of(&e))?;
    let on = a.on.ok_or("on (boolean) required")?;
    if a.wake_after_seconds.is_some() {
        return Err("scheduled wake-ups are not supported by this Harness version".into());
    }
    // Turning it on needs an active unattended channel: checked by the core.
    let view = h
        .set_unattended(&task_id, on)
        .await
        .map_err(|e| message_of(&e))?;
    Ok(
        json!({"ok": true, "taskId": task_id, "goalMode": view.task.unattended, "authorizationGranted": false}),
    )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputArgs {
    task_id: Option<String>,
    text: Option<String>,
    submit: Option<bool>,
    idempotency_key: Option<String>,
}

async fn send_input(
    h: &Harness,
    terminals: &crate::terminals::Terminals,
    who: &Identity,
    a: JsonObject,
) -> Result<Value, String> {
    let a: InputArgs = args(a)?;
    let task_id =
        harness_core::validate::task_id(a.task_id.as_deref()).map_err(|e| message_of(&e))?;
    h.authorize_terminal(who, &task_id)
        .await
        .map_err(|e| message_of(&e))?;
    let text = a.text.ok_or("text required")?;
    let out = terminals
        .input(
            &task_id,
            &text,
            a.submit.unwrap_or(true),
            a.idempotency_key.as_deref(),
        )
        .await
        .map_err(|e| message_of(&e))?;
    serde_json::to_value(out).map_err(|e| e.to_string())
}
