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
//! A call the CLI answered as not run — a tool it does not have (no hook
//! ran either), a `write_stdin` into a session that is gone, a call the
//! person interrupted — is marked [`SeenCall::not_run`]. Lines that are not JSON
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
    /// The CLI answered that it did not run it: a tool it does not have, a
    /// session that is gone (`write_stdin`), a call the person interrupted.
    pub not_run: bool,
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

/// The longest part of a call's result kept (enough to tell a call of no
/// such tool, or an interrupted one).
const RESULT_PREFIX: usize = 200;

fn prefix(s: &str) -> String {
    s.chars().take(RESULT_PREFIX).collect()
}

/// Which CLI wrote a session record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Claude Code's transcript.
    Claude,
    /// Codex's session (rollout) file.
    Codex,
}

/// The calls of one session record, read a part at a time (whole lines;
/// the watch feeds what the CLI appended since the last reading). Keeps the
/// calls and the start of each result, not the records themselves.
#[derive(Debug, Clone)]
pub struct Reading {
    format: Format,
    calls: Vec<SeenCall>,
    results: HashMap<String, String>,
}

impl Reading {
    pub fn new(format: Format) -> Self {
        Self {
            format,
            calls: Vec::new(),
            results: HashMap::new(),
        }
    }

    /// Read more whole lines of the record.
    pub fn feed(&mut self, text: &str) {
        for line in lines(text) {
            match self.format {
                Format::Claude => self.claude_line(&line),
                Format::Codex => self.codex_line(&line),
            }
        }
    }

    /// The calls so far, in order, each marked by its result.
    pub fn calls(&self) -> Vec<SeenCall> {
        let mut calls = self.calls.clone();
        for c in &mut calls {
            let Some(r) = c.call_id.as_ref().and_then(|id| self.results.get(id)) else {
                continue;
            };
            match self.format {
                Format::Claude => {
                    c.not_run = r.contains("No such tool available")
                        || r.starts_with("[Request interrupted by user");
                }
                Format::Codex => {
                    c.not_run =
                        r.starts_with("unsupported call") || r.starts_with("write_stdin failed")
                }
            }
        }
        calls
    }

    fn claude_line(&mut self, line: &Value) {
        let Some(blocks) = line
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            return;
        };
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => self.calls.push(SeenCall {
                    call_id: b.get("id").and_then(Value::as_str).map(str::to_string),
                    tool: b
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input: b.get("input").cloned().unwrap_or(Value::Null),
                    at: time_of(line),
                    not_run: false,
                }),
                Some("tool_result") => {
                    if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                        let content = text_of(b.get("content").unwrap_or(&Value::Null));
                        self.results.insert(id.to_string(), prefix(&content));
                    }
                }
                _ => {}
            }
        }
    }

    fn codex_line(&mut self, line: &Value) {
        if line.get("type").and_then(Value::as_str) != Some("response_item") {
            return;
        }
        let Some(p) = line.get("payload") else {
            return;
        };
        let call_id = p.get("call_id").and_then(Value::as_str).map(str::to_string);
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let (tool, input) = match p.get("type").and_then(Value::as_str) {
            Some("function_call") => (
                match p.get("namespace").and_then(Value::as_str) {
                    Some(ns) if !ns.is_empty() => format!("{ns}__{name}"),
                    _ => name.to_string(),
                },
                p.get("arguments")
                    .and_then(Value::as_str)
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null),
            ),
            Some("custom_tool_call") => (
                name.to_string(),
                p.get("input").cloned().unwrap_or(Value::Null),
            ),
            Some("local_shell_call") => (
                "local_shell".to_string(),
                p.get("action").cloned().unwrap_or(Value::Null),
            ),
            Some("function_call_output" | "custom_tool_call_output") => {
                if let Some(id) = call_id {
                    let out = text_of(p.get("output").unwrap_or(&Value::Null));
                    self.results.insert(id, prefix(&out));
                }
                return;
            }
            _ => return,
        };
        self.calls.push(SeenCall {
            call_id,
            tool,
            input,
            at: time_of(line),
            not_run: false,
        });
    }
}

/// The calls of a whole Claude Code transcript, in order.
pub fn claude_calls(text: &str) -> Vec<SeenCall> {
    let mut r = Reading::new(Format::Claude);
    r.feed(text);
    r.calls()
}

/// The calls of a whole Codex session file, in order.
pub fn codex_calls(text: &str) -> Vec<SeenCall> {
    let mut r = Reading::new(Format::Codex);
    r.feed(text);
    r.calls()
}
