//! The escalation-ladder hook and the unattended signal files, driving the
//! real `harness` binary with hook JSON on stdin.

use crate::common;

use std::{
    io::Write,
    os::unix::fs::PermissionsExt,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_harness");

struct Out {
    code: i32,
    stdout: String,
}

fn hook(event: &str, stdin: Option<&str>, env: &[(&str, &str)]) -> Out {
    let mut cmd = Command::new(BIN);
    cmd.arg("hook")
        .arg(event)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

fn tool_call(tool: &str) -> String {
    json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "PreToolUse",
           "tool_name": tool, "tool_input": {"questions": [{"question": "A or B?"}]}, "tool_use_id": "tu1"})
    .to_string()
}

const TASK: &str = "cabcdefghijklmnopqrstuvwx";

#[test]
fn four_case_matrix_for_every_blocked_tool() {
    let signals = tempfile::tempdir().unwrap();
    let dir = signals.path().to_str().unwrap();
    for tool in harness_core::ladder::BLOCKED_TOOLS {
        for (has_parent, unattended) in [(false, false), (false, true), (true, false), (true, true)]
        {
            let file = signals.path().join(format!("unattended-{TASK}"));
            if unattended {
                std::fs::write(&file, "1").unwrap();
            } else {
                let _ = std::fs::remove_file(&file);
            }
            let mut env = vec![("TOWER_TASK_ID", TASK), ("TOWER_SIGNAL_DIR", dir)];
            if has_parent {
                env.push(("TOWER_HAS_PARENT", "1"));
            }
            let out = hook("pre-tool", Some(&tool_call(tool)), &env);
            assert_eq!(out.code, 0, "{tool} {has_parent} {unattended}");
            if !has_parent && !unattended {
                assert_eq!(out.stdout, "", "allow prints nothing");
                continue;
            }
            let v: Value = serde_json::from_str(&out.stdout).expect("exactly one JSON object");
            let spec = &v["hookSpecificOutput"];
            assert_eq!(spec["hookEventName"], "PreToolUse");
            assert_eq!(spec["permissionDecision"], "deny");
            let reason = spec["permissionDecisionReason"].as_str().unwrap();
            if has_parent {
                assert!(
                    reason.contains("parent") && reason.contains("end your turn"),
                    "{reason}"
                );
            } else {
                assert!(
                    reason.contains("ask_human") && reason.contains("push_to_human"),
                    "{reason}"
                );
            }
            assert_eq!(v.as_object().unwrap().len(), 1);
            assert_eq!(out.stdout.trim().lines().count(), 1);
        }
    }
}

#[test]
fn other_tools_always_pass() {
    let out = hook(
        "pre-tool",
        Some(&tool_call("Bash")),
        &[("TOWER_TASK_ID", TASK), ("TOWER_HAS_PARENT", "1")],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
}

#[test]
fn fails_open_on_bad_or_missing_input() {
    let parent = [("TOWER_TASK_ID", TASK), ("TOWER_HAS_PARENT", "1")];
    for input in [
        None,
        Some(""),
        Some("{not json"),
        Some("[]"),
        Some("{\"tool_name\": 5}"),
    ] {
        let out = hook("pre-tool", input, &parent);
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{input:?}");
    }
    // Not a Harness terminal: allow even a blocked tool.
    let out = hook(
        "pre-tool",
        Some(&tool_call("AskUserQuestion")),
        &[("TOWER_HAS_PARENT", "1")],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
}

#[test]
fn fails_open_after_five_seconds_without_input() {
    let mut child = Command::new(BIN)
        .args(["hook", "pre-tool"])
        .env_clear()
        .env("TOWER_TASK_ID", TASK)
        .env("TOWER_HAS_PARENT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_stdin_open = child.stdin.take();
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    let waited = start.elapsed();
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(15),
        "{waited:?}"
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn unattended_flag_mirrors_signal_files_and_reconciles_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("goal").await;
    let signal = s.running.signal_dir.join(format!("unattended-{t}"));
    // The same core rule as the MCP tool: no channel that reaches a human → 409.
    let (status, body) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("notify channel"),
        "{body}"
    );
    assert!(!signal.exists());
    let (status, _) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [{"gateway": "openclaw", "scope": "unattended", "active": true}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["unattended"], true);
    assert!(signal.exists());
    assert_eq!(mode(&signal), 0o600);
    assert_eq!(mode(&s.running.signal_dir), 0o700);
    // The hook now denies for this parentless task.
    let sig_dir = s.running.signal_dir.to_str().unwrap().to_string();
    let out = hook(
        "pre-tool",
        Some(&tool_call("AskUserQuestion")),
        &[("TOWER_TASK_ID", &t), ("TOWER_SIGNAL_DIR", &sig_dir)],
    );
    assert!(out.stdout.contains("\"deny\""));
    let (status, _) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": false})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(!signal.exists());
    let (status, body) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({})),
        )
        .await;
    assert_eq!(
        (status, body["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("on"))
    );

    // Crash: the database says on, the file is missing; a stale file exists for another task.
    s.admin(
        "PUT",
        &format!("/api/tasks/{t}/unattended"),
        Some(json!({"on": true})),
    )
    .await;
    let signals = s.running.signal_dir.clone();
    s.shutdown().await;
    std::fs::remove_file(&signal).unwrap();
    let stale = signals.join("unattended-cstalestalestalestalestale");
    std::fs::write(&stale, "1").unwrap();
    let s = common::start(dir.path()).await;
    assert!(signal.exists(), "reconciled from the database");
    assert!(!stale.exists(), "stale mirror removed");
    s.shutdown().await;
}

#[tokio::test]
async fn set_goal_mode_fails_closed_without_a_channel() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("goal").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let call = |on: bool| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "set_goal_mode", "arguments": {"on": on}}});
    let post = |body: Value| {
        s.client
            .post(s.url("/mcp"))
            .bearer_auth(&token)
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let (_, resp) = common::decode(post(call(true)).await.unwrap()).await;
    assert_eq!(resp["result"]["isError"], true, "{resp}");
    s.admin(
        "PUT",
        "/api/settings/notify-targets",
        Some(json!({"targets": [{"gateway": "hermes", "scope": "unattended", "active": true}]})),
    )
    .await;
    let (_, resp) = common::decode(post(call(true)).await.unwrap()).await;
    assert_eq!(resp["result"]["isError"], false, "{resp}");
    assert!(
        s.running
            .signal_dir
            .join(format!("unattended-{t}"))
            .exists()
    );
    // Off only by a person: the agent's token is refused and
    // the task stays unattended, its signal file in place.
    let (_, resp) = common::decode(post(call(false)).await.unwrap()).await;
    assert_eq!(resp["result"]["isError"], true, "{resp}");
    assert!(resp.to_string().contains("only a person may"), "{resp}");
    assert!(
        s.running
            .harness
            .tasks()
            .get_task(&t)
            .await
            .unwrap()
            .task
            .unattended
    );
    assert!(
        s.running
            .signal_dir
            .join(format!("unattended-{t}"))
            .exists()
    );
    let (status, _) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": false})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "the admin token may");
    assert!(
        !s.running
            .signal_dir
            .join(format!("unattended-{t}"))
            .exists()
    );
    s.shutdown().await;
}

#[tokio::test]
async fn session_start_reports_the_session_id_first_write_wins() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("session").await;
    let (exec, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let env = [
        ("TOWER_TASK_ID", t.as_str()),
        ("TOWER_EXECUTION_ID", exec.id.as_str()),
        ("TOWER_API_URL", s.base.as_str()),
        ("TOWER_API_TOKEN", token.as_str()),
    ];
    let input = |sid: &str| {
        json!({"session_id": sid, "hook_event_name": "SessionStart", "source": "startup", "cwd": "/tmp"}).to_string()
    };
    let env_owned: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let first = tokio::task::spawn_blocking({
        let env = env_owned.clone();
        let input = input("sess-1");
        move || hook_owned("session-start", &input, &env)
    })
    .await
    .unwrap();
    assert_eq!(first, 0);
    let second = tokio::task::spawn_blocking({
        let env = env_owned.clone();
        let input = input("sess-2");
        move || hook_owned("session-start", &input, &env)
    })
    .await
    .unwrap();
    assert_eq!(second, 0);
    let view = s.running.harness.tasks().get_task(&t).await.unwrap();
    assert_eq!(
        view.execution.unwrap().session_id.as_deref(),
        Some("sess-1")
    );
    s.shutdown().await;
}

fn hook_owned(event: &str, input: &str, env: &[(String, String)]) -> i32 {
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    hook(event, Some(input), &pairs).code
}
