//! An agent's first turn has Harness's tools: Claude Code sends its first
//! model request without waiting for its MCP servers, but after its
//! SessionStart hooks (seen with the real CLI; `terminals::mcp_ready`). So
//! `harness hook session-start` holds the start until the agent's own
//! token has listed its tools over MCP — bounded, and only at a start or a
//! resume.

use crate::common;

use std::{
    io::Write,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

/// `tools/list` over MCP with `token`: the tool names.
async fn list_tools(s: &common::Server, token: &str) -> Vec<String> {
    let (status, body) = common::decode(
        s.client
            .post(s.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(token)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {body}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// `harness hook session-start` as the CLI runs it, with `event` on stdin;
/// returns its child process.
fn session_hook(
    s: &common::Server,
    token: &str,
    task: &str,
    exec: &str,
    event: Value,
) -> std::process::Child {
    let mut child = Command::new(HARNESS)
        .args(["hook", "session-start"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TOWER_API_URL", &s.base)
        .env("TOWER_API_TOKEN", token)
        .env("TOWER_TASK_ID", task)
        .env("TOWER_EXECUTION_ID", exec)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(event.to_string().as_bytes()).unwrap();
    drop(stdin);
    child
}

async fn exited(child: &mut std::process::Child, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_start_up_hook_waits_for_the_agents_tool_listing() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let task = s.task("tools first").await;
    let (exec, token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task)
        .await
        .unwrap();
    let exec = exec.id;

    // Nothing listed yet: a short wait ends with `listed: false`.
    let started = Instant::now();
    let (status, out) = s
        .call(
            "POST",
            "/api/internal/hooks/tools-ready",
            Some(&token),
            Some(json!({"waitMs": 300})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(out["listed"], false, "{out}");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "it did not wait"
    );

    // The hook at a start waits, and ends when the agent lists its tools.
    let mut hook = session_hook(
        &s,
        &token,
        &task,
        &exec,
        json!({"session_id": "s-1", "source": "startup"}),
    );
    assert!(
        !exited(&mut hook, Duration::from_millis(1500)).await,
        "the hook ended before the agent listed its tools"
    );
    // Another token's listing (the admin's) is not the agent's.
    let admin = s.admin.clone();
    assert!(!list_tools(&s, &admin).await.is_empty());
    assert!(
        !exited(&mut hook, Duration::from_millis(500)).await,
        "an admin's listing ended the agent's wait"
    );
    let listed_at = Instant::now();
    let tools = list_tools(&s, &token).await;
    assert!(tools.iter().any(|t| t == "ask_human"), "{tools:?}");
    assert!(
        exited(&mut hook, Duration::from_secs(10)).await,
        "the hook still waits after the listing"
    );
    assert!(listed_at.elapsed() < Duration::from_secs(10));
    let out = hook.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("not listed"),
        "{out:?}"
    );
    // The session id was reported on the way.
    let (_, t) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
    assert!(t.to_string().contains("s-1"), "{t}");

    // A clear or a compact keeps the connected tools: no wait.
    let task2 = s.task("compacted").await;
    let (exec2, token2) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task2)
        .await
        .unwrap();
    let mut hook = session_hook(
        &s,
        &token2,
        &task2,
        &exec2.id,
        json!({"session_id": "s-2", "source": "compact"}),
    );
    assert!(
        exited(&mut hook, Duration::from_secs(5)).await,
        "a compact waited for a listing"
    );

    // A task without a live execution: at once, `listed: false`.
    let idle = s.task("idle").await;
    let started = Instant::now();
    let (status, out) = s
        .admin(
            "POST",
            "/api/internal/hooks/tools-ready",
            Some(json!({"taskId": idle})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(out["listed"], false, "{out}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Bad input names its field.
    let (status, out) = s
        .call(
            "POST",
            "/api/internal/hooks/tools-ready",
            Some(&token),
            Some(json!({"waitMs": -1})),
        )
        .await;
    assert!(status.is_client_error(), "{status} {out}");
    assert!(out.to_string().contains("waitMs"), "{out}");
    s.shutdown().await;
}
