//! `POST /v1/messages` as Claude Code calls it: streaming (SSE
//! `message_start`, `content_block_start|delta|stop`, `message_delta`,
//! `message_stop`) or not.

use std::sync::Arc;

use axum::{Json, extract::State, response::Response};
use serde_json::{Value, json};

use crate::{Answer, Shared, Turn, event_stream, failure, render, resolve_tool, sse};

const MODEL_FALLBACK: &str = "claude-standin";

fn offered_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of the last user message (text blocks and tool results).
pub(crate) fn last_user_text(body: &Value) -> String {
    let Some(msg) = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    match &msg["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(str::to_string),
                Some("tool_result") => Some(match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The content blocks and stop reason of one answer.
fn content(answer: Answer, body: &Value, id: usize) -> (Vec<Value>, &'static str) {
    match answer {
        // (failures are answered before; `Always` is unwrapped when served)
        Answer::Side | Answer::Turn(Turn::Fail { .. } | Turn::Drop | Turn::Always(_)) => {
            (vec![json!({"type": "text", "text": "OK"})], "end_turn")
        }
        Answer::Turn(Turn::Say(text)) => (
            vec![json!({"type": "text", "text": render(&text, &last_user_text(body))})],
            "end_turn",
        ),
        Answer::Turn(Turn::Call { tool, input }) => (
            vec![json!({
                "type": "tool_use",
                "id": format!("toolu_standin_{id:04}"),
                "name": resolve_tool(&tool, &offered_tools(body)),
                "input": input,
            })],
            "tool_use",
        ),
    }
}

pub(crate) async fn messages(
    State(shared): State<Arc<Shared>>,
    Json(body): Json<Value>,
) -> Response {
    let answer = shared.answer("POST", "/v1/messages", &body, &offered_tools(&body));
    let id = shared.log.lock().map(|l| l.len()).unwrap_or_default();
    let model = body["model"].as_str().unwrap_or(MODEL_FALLBACK).to_string();
    let message_id = format!("msg_standin_{id:04}");
    let first = sse(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }}),
    );
    if let Some(response) = failure(&answer, first.clone()) {
        return response;
    }
    let (blocks, stop) = content(answer, &body, id);
    let usage = json!({"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    if body["stream"] != true {
        return axum::response::IntoResponse::into_response(Json(json!({
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": null, "usage": usage,
        })));
    }
    let mut out = first;
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("tool_use") => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            ),
            _ => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
        };
        out += &sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        out += &sse(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        );
        out += &sse(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
    }
    out += &sse(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    );
    out += &sse("message_stop", &json!({"type": "message_stop"}));
    event_stream(out)
}

pub(crate) async fn count_tokens(Json(_body): Json<Value>) -> Json<Value> {
    Json(json!({"input_tokens": 10}))
}
