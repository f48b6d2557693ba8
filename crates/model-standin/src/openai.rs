//! `POST /v1/responses` as Codex calls it (streaming SSE:
//! `response.created`, `response.output_item.added`, text or function-call
//! argument deltas, `response.output_item.done`, `response.completed`).

use std::sync::Arc;

use axum::{Json, extract::State, response::Response};
use serde_json::{Value, json};

use crate::{Answer, Shared, Turn, event_stream, failure, render, resolve_tool, sse};

/// `(namespace, name)` of the offered tool `tool` (exact, or `…__tool`),
/// looking into namespaces (Codex groups each MCP server's tools in a
/// `{"type":"namespace","name":"mcp__harness","tools":[…]}`).
fn find_tool(
    tool: &str,
    tools: &Value,
    namespace: Option<&str>,
) -> Option<(Option<String>, String)> {
    let suffix = format!("__{tool}");
    for t in tools.as_array().into_iter().flatten() {
        let Some(name) = t["name"].as_str() else {
            continue;
        };
        if t["tools"].is_array() {
            if let Some(found) = find_tool(tool, &t["tools"], Some(name)) {
                return Some(found);
            }
        } else if name == tool || name.ends_with(&suffix) {
            return Some((namespace.map(str::to_string), name.to_string()));
        }
    }
    None
}

/// Tool names offered, including tools nested in namespaces.
fn offered_tools(body: &Value) -> Vec<String> {
    fn walk(tools: &Value, prefix: &str, out: &mut Vec<String>) {
        for t in tools.as_array().into_iter().flatten() {
            let Some(name) = t["name"].as_str() else {
                continue;
            };
            if t["tools"].is_array() {
                walk(&t["tools"], &format!("{prefix}{name}"), out);
            } else {
                out.push(format!("{prefix}{name}"));
            }
        }
    }
    let mut out = Vec::new();
    walk(&body["tools"], "", &mut out);
    out
}

/// The text of the last user message of `input`.
pub(crate) fn last_user_text(body: &Value) -> String {
    let Some(msg) = body["input"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    match &msg["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `input` with the string `"{session_id}"` replaced by the number of the
/// last session Codex reported running ("Process running with session ID
/// <n>" in a tool's output; 0 when none): how a script types into the
/// terminal session an earlier `exec_command` opened (`write_stdin`).
fn with_session_id(input: &Value, body: &Value) -> Value {
    const MARK: &str = "session ID ";
    let last = body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .filter(|i| i["type"] == "function_call_output")
        .find_map(|i| {
            let out = i["output"].as_str()?;
            let at = out.rfind(MARK)? + MARK.len();
            out[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0);
    match input {
        Value::String(s) if s == "{session_id}" => json!(last),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), with_session_id(v, body)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The output item of one answer.
fn item(answer: Answer, body: &Value, id: usize) -> Value {
    let text = |t: String| {
        json!({"type": "message", "id": format!("msg_standin_{id:04}"), "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": t, "annotations": []}]})
    };
    match answer {
        // (failures are answered before; `Always` is unwrapped when served)
        Answer::Side | Answer::Turn(Turn::Fail { .. } | Turn::Drop | Turn::Always(_)) => {
            text("OK".into())
        }
        Answer::Turn(Turn::Say(t)) => text(render(&t, &last_user_text(body))),
        Answer::Turn(Turn::Call { tool, input }) => {
            let (namespace, name) = find_tool(&tool, &body["tools"], None)
                .unwrap_or_else(|| (None, resolve_tool(&tool, &offered_tools(body))));
            let mut call = json!({
                "type": "function_call", "id": format!("fc_standin_{id:04}"), "status": "completed",
                "call_id": format!("call_standin_{id:04}"),
                "name": name,
                "arguments": with_session_id(&input, body).to_string(),
            });
            if let Some(ns) = namespace {
                call["namespace"] = json!(ns);
            }
            call
        }
    }
}

pub(crate) async fn responses(
    State(shared): State<Arc<Shared>>,
    Json(body): Json<Value>,
) -> Response {
    let answer = shared.answer("POST", "/v1/responses", &body, &offered_tools(&body));
    let id = shared.log.lock().map(|l| l.len()).unwrap_or_default();
    let response_id = format!("resp_standin_{id:04}");
    let model = body["model"].as_str().unwrap_or("gpt-standin").to_string();
    let first = sse(
        "response.created",
        &json!({"type": "response.created", "sequence_number": 0, "response": {
            "id": response_id, "object": "response", "created_at": 0, "status": "in_progress",
            "model": model, "output": []}}),
    );
    if let Some(response) = failure(&answer, first) {
        return response;
    }
    let done = item(answer, &body, id);
    let response = |status: &str, output: Value| {
        json!({"id": response_id, "object": "response", "created_at": 0, "status": status, "model": model,
               "output": output,
               "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}})
    };
    let mut seq = 0u64;
    let mut out = String::new();
    let mut emit = |event: &str, mut data: Value| {
        data["type"] = json!(event);
        data["sequence_number"] = json!(seq);
        seq += 1;
        out += &sse(event, &data);
    };
    emit(
        "response.created",
        json!({"response": response("in_progress", json!([]))}),
    );
    let mut added = done.clone();
    added["status"] = json!("in_progress");
    let item_id = done["id"].clone();
    if done["type"] == "message" {
        added["content"] = json!([]);
        emit(
            "response.output_item.added",
            json!({"output_index": 0, "item": added}),
        );
        let text = done["content"][0]["text"].clone();
        emit(
            "response.content_part.added",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0,
              "part": {"type": "output_text", "text": "", "annotations": []}}),
        );
        emit(
            "response.output_text.delta",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0, "delta": text}),
        );
        emit(
            "response.output_text.done",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0, "text": text}),
        );
        emit(
            "response.content_part.done",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0,
              "part": done["content"][0]}),
        );
    } else {
        added["arguments"] = json!("");
        emit(
            "response.output_item.added",
            json!({"output_index": 0, "item": added}),
        );
        emit(
            "response.function_call_arguments.delta",
            json!({"item_id": item_id, "output_index": 0, "delta": done["arguments"]}),
        );
        emit(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": 0, "arguments": done["arguments"]}),
        );
    }
    emit(
        "response.output_item.done",
        json!({"output_index": 0, "item": done}),
    );
    emit(
        "response.completed",
        json!({"response": response("completed", json!([done]))}),
    );
    event_stream(out)
}
