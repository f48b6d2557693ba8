//! The body `harness hook stop` reports (docs/tower-workbench.md §2.1, docs/tower-messaging.md §3): the
//! execution, the provider session, a stable id of the turn (Codex's
//! `turn_id`, else the id of the transcript's last assistant record) and the
//! last reply (≤ 2000 chars). One turn always yields the same body, so a
//! retried or duplicated callback is deduplicated by the parent's inbox.

use std::io::{Read, Seek, SeekFrom};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::hooks::HookEnv;

const MAX_REPLY: usize = 2000;
/// How much of the transcript's end is read.
const TAIL: u64 = 256 * 1024;

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.trim().to_string(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}

/// The last assistant record of a JSONL transcript: (event id, reply).
fn last_assistant(path: &str) -> Option<(String, String)> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    for line in text.lines().rev() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let role = record
            .pointer("/message/role")
            .or_else(|| record.get("type"))
            .and_then(Value::as_str);
        if role != Some("assistant") {
            continue;
        }
        let id = record
            .get("uuid")
            .or_else(|| record.pointer("/message/id"))
            .or_else(|| record.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| hex::encode(Sha256::digest(line.as_bytes())));
        let content = record
            .pointer("/message/content")
            .or_else(|| record.get("content"))
            .unwrap_or(&Value::Null);
        return Some((id, text_of(content)));
    }
    None
}

/// The JSON body of `POST /api/internal/hooks/stop`.
pub fn body(env: &HookEnv, input: Option<&str>) -> Value {
    let event: Value = input
        .and_then(|i| serde_json::from_str(i).ok())
        .unwrap_or(Value::Null);
    let session_id = event.get("session_id").and_then(Value::as_str);
    let transcript = event
        .get("transcript_path")
        .and_then(Value::as_str)
        .and_then(last_assistant);
    let turn_id = event
        .get("turn_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    let event_id = turn_id.or_else(|| transcript.as_ref().map(|(id, _)| id.clone()));
    let reply = transcript
        .map(|(_, r)| r)
        .filter(|r| !r.is_empty())
        .or_else(|| {
            event
                .get("last_assistant_message")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default();
    let reply: String = reply.trim().chars().take(MAX_REPLY).collect();
    json!({
        "taskId": env.task_id,
        "executionId": env.execution_id,
        "sessionId": session_id,
        "eventId": event_id,
        "lastReply": reply,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> HookEnv {
        HookEnv {
            task_id: Some("ctask".into()),
            has_parent: true,
            signal_dir: None,
            api_url: None,
            api_token: None,
            execution_id: Some("cexec".into()),
            approval_snapshot: None,
        }
    }

    #[test]
    fn prefers_the_codex_turn_id_and_reads_the_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"go\"}}\n\
             {\"type\":\"assistant\",\"uuid\":\"u-1\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Need A or B?\"}]}}\n",
        )
        .unwrap();
        let input =
            json!({"session_id": "s", "transcript_path": path, "turn_id": "turn-9"}).to_string();
        let b = body(&env(), Some(&input));
        assert_eq!(b["eventId"], "turn-9");
        assert_eq!(b["lastReply"], "Need A or B?");
        assert_eq!(b["executionId"], "cexec");
        let input = json!({"session_id": "s", "transcript_path": path}).to_string();
        assert_eq!(body(&env(), Some(&input))["eventId"], "u-1");
        let b = body(&env(), Some("{\"last_assistant_message\":\"done\"}"));
        assert_eq!(b["lastReply"], "done");
        assert!(b["eventId"].is_null());
    }
}
