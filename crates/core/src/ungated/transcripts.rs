//! The tool calls an agent CLI wrote into its own record of the session,
//! as the real CLIs write them (checked with Claude Code 2.1.332 and Codex
//! 0.171.0; `server/tests/ungated_real.rs`):
//!
//! * Claude Code's transcript (`~/.claude/projects/<dir>/<session>.jsonl`,
//!   the `transcript_path` of its hooks): an `assistant` line holds
//!   `message.content[]` blocks `{"type":"tool_use","id","name","input"}`;
//!   a `user` line answers each with `{"type":"tool_result","tool_use_id",
//!   "content","is_error"}`. The `id` is the `tool_use_id` its hooks get.
//! * Codex's session file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`):
//!   `{"timestamp","type":"response_item","payload":{"type":"function_call",
//!   "name","namespace"?,"arguments":"<json>","call_id"}}` (also
//!   `custom_tool_call` with `input`, `local_shell_call` with `action`),
//!   answered by `function_call_output` / `custom_tool_call_output`. The
//!   `call_id` is the `tool_use_id` its hooks get (`exec_command` arrives at
//!   the hook as `Bash`; an MCP tool as `<namespace>__<name>`).
//!
//! A call the CLI answered as a tool it does not have never ran and reached
//! no hook: it is marked [`SeenCall::unknown_tool`]. Lines that are not JSON
//! (a file being written) are skipped.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// One tool call found in a CLI's record of its session.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenCall {
    /// The CLI's id of the call (what its hooks report as `tool_use_id`).
    pub call_id: Option<String>,
    /// The tool as the CLI named it to the model.
    pub tool: String,
    pub input: Value,
    /// When the CLI wrote it, if the line says.
    pub at: Option<DateTime<Utc>>,
    /// Answered as a call of no tool the CLI has: it never ran.
    pub unknown_tool: bool,
    /// Stopped by the person before it ran (Claude Code's interrupt).
    pub interrupted: bool,
}

fn time_of(line: &Value) -> Option<DateTime<Utc>> {
    line.get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc))
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
}

/// The calls of a Claude Code transcript, in order.
pub fn claude_calls(text: &str) -> Vec<SeenCall> {
    let mut calls: Vec<SeenCall> = Vec::new();
    let mut results: HashMap<String, String> = HashMap::new();
    for line in lines(text) {
        let Some(blocks) = line
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => calls.push(SeenCall {
                    call_id: b.get("id").and_then(Value::as_str).map(str::to_string),
                    tool: b
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input: b.get("input").cloned().unwrap_or(Value::Null),
                    at: time_of(&line),
                    unknown_tool: false,
                    interrupted: false,
                }),
                Some("tool_result") => {
                    if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                        let content = text_of(b.get("content").unwrap_or(&Value::Null));
                        results.insert(id.to_string(), content);
                    }
                }
                _ => {}
            }
        }
    }
    for c in &mut calls {
        if let Some(r) = c.call_id.as_ref().and_then(|id| results.get(id)) {
            c.unknown_tool = r.contains("No such tool available");
            c.interrupted = r.starts_with("[Request interrupted by user");
        }
    }
    calls
}

/// The calls of a Codex session file, in order.
pub fn codex_calls(text: &str) -> Vec<SeenCall> {
    let mut calls: Vec<SeenCall> = Vec::new();
    let mut outputs: HashMap<String, String> = HashMap::new();
    for line in lines(text) {
        if line.get("type").and_then(Value::as_str) != Some("response_item") {
            continue;
        }
        let Some(p) = line.get("payload") else {
            continue;
        };
        let call_id = p.get("call_id").and_then(Value::as_str).map(str::to_string);
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let tool = match p.get("namespace").and_then(Value::as_str) {
            Some(ns) if !ns.is_empty() => format!("{ns}__{name}"),
            _ => name.to_string(),
        };
        let input = match p.get("type").and_then(Value::as_str) {
            Some("function_call") => p
                .get("arguments")
                .and_then(Value::as_str)
                .and_then(|a| serde_json::from_str(a).ok())
                .unwrap_or(Value::Null),
            Some("custom_tool_call") => p.get("input").cloned().unwrap_or(Value::Null),
            Some("local_shell_call") => p.get("action").cloned().unwrap_or(Value::Null),
            Some("function_call_output" | "custom_tool_call_output") => {
                if let Some(id) = call_id {
                    let out = text_of(p.get("output").unwrap_or(&Value::Null));
                    outputs.insert(id, out);
                }
                continue;
            }
            _ => continue,
        };
        let tool = if p.get("type").and_then(Value::as_str) == Some("local_shell_call") {
            "local_shell".to_string()
        } else {
            tool
        };
        calls.push(SeenCall {
            call_id,
            tool,
            input,
            at: time_of(&line),
            unknown_tool: false,
            interrupted: false,
        });
    }
    for c in &mut calls {
        if let Some(o) = c.call_id.as_ref().and_then(|id| outputs.get(id)) {
            c.unknown_tool = o.starts_with("unsupported call");
        }
    }
    calls
}
