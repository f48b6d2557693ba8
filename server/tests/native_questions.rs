//! Native question menus become Harness questions: the real
//! `harness hook pre-tool` binary, given the PreToolUse payloads of Claude
//! Code's `AskUserQuestion` and Codex's `request_user_input` on an
//! unattended task, records an ask with the same options on a real server
//! and tells the agent the question is on its way; with the server
//! unreachable it fails open to the old deny (use ask_human).

use crate::common;

use std::{
    io::Write,
    path::Path,
    process::{Command, Stdio},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_harness");

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/native")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs the hook in its own process (blocking: called off the runtime).
fn hook(stdin: &str, env: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(BIN);
    cmd.args(["hook", "pre-tool"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    v["hookSpecificOutput"].clone()
}

async fn run_hook(payload: &Value, env: Vec<(String, String)>) -> Value {
    let stdin = payload.to_string();
    tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        hook(&stdin, &env)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_menus_on_unattended_tasks_become_asks_with_the_same_options() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let signals = tempfile::tempdir().unwrap();
    for file in [
        "claude_ask_user_question.captured.json",
        "codex_request_user_input.captured.json",
        "claude_ask_user_question.schema.json",
        "codex_request_user_input.schema.json",
    ] {
        let payload = fixture(file);
        let tool = payload["tool_name"].as_str().unwrap().to_string();
        let task = server.task(&format!("native {tool}")).await;
        // Unattended: the signal file the hook reads.
        std::fs::write(signals.path().join(format!("unattended-{task}")), "1").unwrap();
        let env = vec![
            ("TOWER_TASK_ID".to_string(), task.clone()),
            (
                "TOWER_SIGNAL_DIR".to_string(),
                signals.path().display().to_string(),
            ),
            ("TOWER_API_URL".to_string(), server.base.clone()),
            ("TOWER_API_TOKEN".to_string(), server.admin.clone()),
        ];
        let out = run_hook(&payload, env.clone()).await;
        assert_eq!(out["permissionDecision"], "deny", "{file}");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("ALREADY recorded"), "{file}: {reason}");
        assert!(reason.contains("END YOUR TURN"), "{file}: {reason}");

        let (status, page) = server
            .admin(
                "GET",
                &format!("/api/harness/messages?view=pending&taskId={task}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let rows = page["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{file}: one ask recorded: {page}");
        let row = &rows[0];
        assert!(reason.contains(row["id"].as_str().unwrap()), "{reason}");
        let q = &payload["tool_input"]["questions"][0];
        assert!(
            row["content"]
                .as_str()
                .unwrap()
                .contains(q["question"].as_str().unwrap()),
            "{row}"
        );
        // The same options, label for label, description for description.
        let want: Vec<Value> = q["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| json!({"label": o["label"], "description": o["description"]}))
            .collect();
        assert_eq!(row["options"], Value::Array(want), "{file}");
        assert_eq!(
            row["multiSelect"],
            q.get("multiSelect").cloned().unwrap_or(json!(false))
        );

        // Fail-open: server unreachable → the old instruction to use ask_human.
        let mut down = env.clone();
        down[2].1 = "http://127.0.0.1:9".into();
        let out = run_hook(&payload, down).await;
        assert_eq!(out["permissionDecision"], "deny");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("ask_human"), "{reason}");
        assert!(!reason.contains("ALREADY recorded"), "{reason}");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_endpoint_accepts_choices_and_names_the_bad_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let task = server.task("rest choices").await;
    let (status, body) = server
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": task, "question": "Retry or skip?",
                "options": [{"label": "Retry"}, {"label": "Skip", "description": "move on"}],
                "default": "Skip", "deadline": 600, "urgency": "high"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for (bad, field) in [
        (
            json!({"options": (0..9).map(|i| json!({"label": i.to_string()})).collect::<Vec<_>>()}),
            "options",
        ),
        (
            json!({"options": [{"label": "A"}, {"label": "a"}]}),
            "options",
        ),
        (
            json!({"options": [{"label": "A"}], "default": "B", "deadline": 600}),
            "default",
        ),
        (json!({"deadline": 5}), "deadline"),
        (json!({"urgency": "asap"}), "urgency"),
    ] {
        let mut b = bad.clone();
        b["taskId"] = json!(task);
        b["question"] = json!("q?");
        let (status, body) = server
            .admin("POST", "/api/internal/harness/ask", Some(b))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_eq!(body["field"], field, "{bad}: {body}");
    }
    // Backward compatible: a plain ask as before.
    let (status, _) = server
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": task, "question": "free?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    server.shutdown().await;
}

async fn mcp(s: &common::Server, token: &str, id: u64, arguments: Value) -> (bool, Value) {
    let (status, body) = common::decode(
        s.client
            .post(s.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(token)
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "ask_human", "arguments": arguments}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    (
        body["result"]["isError"].as_bool().unwrap(),
        serde_json::from_str(text).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_ask_human_takes_options_default_and_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let t = s.task("mcp choices").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let (is_error, payload) = mcp(
        &s,
        &token,
        1,
        json!({"question": "Ship it?", "options": [{"label": "Yes"}, {"label": "No", "description": "wait"}],
               "default": "No", "deadline": "2099-01-01T00:00:00Z"}),
    )
    .await;
    assert!(is_error, "beyond the TTL: {payload}");
    assert!(
        payload["error"].as_str().unwrap().contains("deadline"),
        "{payload}"
    );
    let (is_error, payload) = mcp(
        &s,
        &token,
        2,
        json!({"question": "Ship it?", "options": [{"label": "Yes"}, {"label": "No", "description": "wait"}],
               "default": "No", "deadline": 120, "urgency": "low"}),
    )
    .await;
    assert!(!is_error, "{payload}");
    let id = payload["requestId"].as_str().unwrap().to_string();
    let c = &s
        .running
        .harness
        .asks()
        .choices_for(std::slice::from_ref(&id))
        .await
        .unwrap()[&id];
    assert_eq!(c.default.as_deref(), Some("No"));
    assert_eq!(c.options[1].description.as_deref(), Some("wait"));
    let (is_error, payload) = mcp(&s, &token, 3, json!({"question": 42})).await;
    assert!(is_error);
    assert!(
        payload["error"].as_str().unwrap().contains("question"),
        "{payload}"
    );
    s.shutdown().await;
}
