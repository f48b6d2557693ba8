//! Editing a project over REST — `PATCH /api/projects/{id}`
//! (400 naming the field, 404, a taken name) — and the resident Workbench's
//! runtime state (docs/tower-workbench.md §2.9) derived from its
//! real PTY, its execution and its inbox: STOPPED → BUSY (turn in progress)
//! → IDLE at its turn end → a child's event pending → BUSY while the batch is
//! processed → IDLE after the next turn end → STOPPED.

use crate::common;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn project(s: &common::Server, name: &str, path: &std::path::Path) -> String {
    let (status, body) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": name, "path": path})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_project_is_renamed_and_moved_with_errors_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let pa = project(&s, "alpha", &a).await;
    project(&s, "beta", &b).await;

    let url = format!("/api/projects/{pa}");
    let (status, body) = s
        .admin("PATCH", &url, Some(json!({"name": "alpha-2", "path": b})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["name"], "alpha-2");
    assert_eq!(body["path"], b.display().to_string());
    // Only the name: the path stays.
    let (status, body) = s
        .admin("PATCH", &url, Some(json!({"name": "alpha-3"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["path"], b.display().to_string());
    let (_, list) = s.admin("GET", "/api/projects", None).await;
    let stored = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == pa.as_str())
        .cloned()
        .unwrap();
    assert_eq!(stored["name"], "alpha-3", "durable: {list}");

    for (body, field) in [
        (json!({"path": "relative/dir"}), "path"),
        (json!({"name": "  "}), "name"),
        (json!({"name": "beta"}), "name"),
    ] {
        let (status, got) = s.admin("PATCH", &url, Some(body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} → {got}");
        assert_eq!(got["field"], field, "{body} → {got}");
    }
    let (status, _) = s
        .admin(
            "PATCH",
            "/api/projects/cnope00000000000000000000",
            Some(json!({"name": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    s.shutdown().await;
}

async fn runtime(s: &common::Server, pid: &str) -> Value {
    let (status, body) = s
        .admin(
            "GET",
            &format!("/api/projects/{pid}/workbench/runtime"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn wait_runtime<F: Fn(&Value) -> bool>(
    s: &common::Server,
    pid: &str,
    what: &str,
    pred: F,
) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = runtime(s, pid).await;
        if pred(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}: {last:#}");
}

async fn turn_end(s: &common::Server, task: &str, event: &str, reply: &str) {
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/hooks/stop",
            Some(json!({"taskId": task, "eventId": event, "lastReply": reply})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ownsTurn"], true, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_workbench_runtime_state_follows_its_terminal_and_inbox() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let path = dir.path().join("proj");
    std::fs::create_dir_all(&path).unwrap();
    let pid = project(&s, "runtime", &path).await;
    let (status, _) = s
        .admin(
            "GET",
            &format!("/api/projects/{pid}/workbench/runtime"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no Workbench yet");
    let agent =
        json!({"provider": "command", "command": ["sh", "-c", "exec cat >/dev/null"], "cwd": path});
    let (status, wb) = s
        .admin(
            "POST",
            &format!("/api/projects/{pid}/workbench"),
            Some(json!({ "agent": agent })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{wb}");
    let wb = wb["id"].as_str().unwrap().to_string();

    let r = runtime(&s, &pid).await;
    assert_eq!(
        (r["state"].as_str(), r["blockedReason"].as_str()),
        (Some("STOPPED"), Some("not_running")),
        "{r}"
    );
    let (status, body) = s
        .admin("POST", &format!("/api/tasks/{wb}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let r = runtime(&s, &pid).await;
    assert_eq!(
        (r["state"].as_str(), r["blockedReason"].as_str()),
        (Some("BUSY"), Some("turn_in_progress")),
        "{r}"
    );
    assert!(r["executionId"].is_string(), "{r}");

    turn_end(&s, &wb, "wb-turn-1", "ready").await;
    let r = wait_runtime(&s, &pid, "IDLE", |r| r["state"] == "IDLE").await;
    assert!(r["blockedReason"].is_null(), "{r}");
    assert_eq!(r["pendingEvents"], 0, "{r}");

    // The Workbench works on a turn (input submitted closes the latch); a
    // child ends a turn meanwhile: its event waits, PENDING.
    let (status, body) = s
        .admin(
            "POST",
            &format!("/api/tasks/{wb}/input"),
            Some(json!({"text": "work on it", "submit": true})),
        )
        .await;
    assert!(status.is_success(), "{body}");
    wait_runtime(&s, &pid, "a turn in progress", |r| {
        r["blockedReason"] == "turn_in_progress"
    })
    .await;
    let (status, child) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "child", "parentTaskId": wb,
                "agent": {"provider": "command", "command": ["sh", "-c", "exec sleep 60"]}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{child}");
    let child = child["id"].as_str().unwrap().to_string();
    let (status, body) = s
        .admin("POST", &format!("/api/tasks/{child}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    turn_end(&s, &child, "child-turn-1", "done with the sub-goal").await;
    let r = runtime(&s, &pid).await;
    assert_eq!(r["state"], "BUSY", "{r}");
    assert_eq!(r["pendingEvents"], 1, "{r}");
    assert!(r["oldestPendingAt"].is_string(), "{r}");

    // The Workbench's turn end: the batch goes in and is being processed.
    turn_end(&s, &wb, "wb-turn-2", "next").await;
    let r = wait_runtime(&s, &pid, "a batch in flight", |r| {
        r["blockedReason"] == "processing_batch"
    })
    .await;
    assert_eq!(r["state"], "BUSY", "{r}");
    assert!(r["activeBatchId"].is_string(), "{r}");
    // Typed in (DISPATCHED); its next turn end is the receipt: idle again.
    let mut dispatched = false;
    for _ in 0..300 {
        let (_, inbox) = s
            .admin("GET", &format!("/api/tasks/{wb}/inbox"), None)
            .await;
        if inbox["batches"][0]["state"] == "DISPATCHED" {
            dispatched = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(dispatched, "the batch was typed into the Workbench");
    let r = runtime(&s, &pid).await;
    assert_eq!(
        (r["state"].as_str(), r["pendingEvents"].as_u64()),
        (Some("BUSY"), Some(0)),
        "delivered events are not pending: {r}"
    );
    turn_end(&s, &wb, "wb-turn-3", "reviewed").await;
    let r = wait_runtime(&s, &pid, "IDLE after the batch", |r| r["state"] == "IDLE").await;
    assert!(r["activeBatchId"].is_null(), "{r}");

    let (status, _) = s
        .admin("POST", &format!("/api/tasks/{wb}/stop"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    wait_runtime(&s, &pid, "STOPPED", |r| r["state"] == "STOPPED").await;
    s.admin("POST", &format!("/api/tasks/{child}/stop"), None)
        .await;
    s.shutdown().await;
}
