//! Approvals, closing the audit's gaps: the server — not the
//! agent's signal file — says whether a task is attended, and MCP
//! `decide_approval` with the admin credential.

use crate::{
    approvals::{approvals_of, bash, child_task, hook, reason},
    common,
};

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

/// An agent cannot switch its own approvals off: the server,
/// not the signal file, says whether a task is attended — a hook without
/// (or with a deleted) signal file still holds an unattended task's risky
/// call; the file decides only when the server cannot be reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_says_whether_a_task_is_attended_not_the_agents_signal_file() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let top = server.task("unattended top").await;
    let (status, body) = server
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(
                json!({"targets": [{"gateway": "hermes", "scope": "unattended", "active": true}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server
        .admin(
            "PUT",
            &format!("/api/tasks/{top}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The agent deleted its signal file: an empty signal directory.
    let empty = dir.path().join("signals");
    std::fs::create_dir_all(&empty).unwrap();
    let env = vec![
        ("TOWER_TASK_ID", top.clone()),
        ("TOWER_SIGNAL_DIR", empty.display().to_string()),
        ("TOWER_API_URL", server.base.clone()),
        ("TOWER_API_TOKEN", server.admin.clone()),
    ];
    let held = tokio::spawn(hook(bash("git push --force"), env));
    let pending = loop {
        if let Some(r) = approvals_of(&server, &top).await.first() {
            break r.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(pending["state"], "PENDING");
    let id = pending["id"].as_str().unwrap();
    let (status, d) = server
        .admin(
            "POST",
            &format!("/api/approvals/{id}/decide"),
            Some(json!({"decision": "deny", "reason": "not from an agent"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    let r = reason(&held.await.unwrap());
    assert!(r.contains("not from an agent"), "{r}");
    // Offline, the file alone decides: no file and no parent → attended.
    let down = vec![
        ("TOWER_TASK_ID", top.clone()),
        ("TOWER_SIGNAL_DIR", empty.display().to_string()),
        ("TOWER_API_URL", "http://127.0.0.1:9".to_string()),
        ("TOWER_API_TOKEN", "x".to_string()),
    ];
    assert_eq!(hook(bash("git push --force"), down).await, "");
    server.shutdown().await;
}

/// MCP `decide_approval` with the admin credential decides (recorded as
/// the admin, from `mcp`); a second decision is "already decided".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_decides_over_mcp_and_the_first_decision_wins() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let task = child_task(&server).await;
    let (_, held) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(
                json!({"taskId": task, "tool": "Bash", "input": {"command": "git push -f"},
                "waitSeconds": 0}),
            ),
        )
        .await;
    assert_eq!(held["waiting"], true, "{held}");
    let id = held["approvalId"].as_str().unwrap().to_string();
    let call = |decision: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "decide_approval",
                "arguments": {"id": id, "decision": decision, "reason": "fine"}}});
        server
            .client
            .post(server.url("/mcp"))
            .bearer_auth(&server.admin)
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let payload = |v: &Value| -> (bool, Value) {
        let text = v["result"]["content"][0]["text"].as_str().unwrap_or("null");
        (
            v["result"]["isError"].as_bool().unwrap_or(false),
            serde_json::from_str(text).unwrap_or(Value::Null),
        )
    };
    let (status, v) = common::decode(call("approve").await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (is_error, a) = payload(&v);
    assert!(!is_error, "{v}");
    assert_eq!(
        (&a["state"], &a["decidedBy"], &a["decidedVia"]),
        (&json!("APPROVED"), &json!("admin"), &json!("mcp")),
        "{a}"
    );
    let (_, v) = common::decode(call("deny").await.unwrap()).await;
    let (is_error, _) = payload(&v);
    assert!(is_error, "{v}");
    assert!(v.to_string().contains("already decided"), "{v}");
    // The grant is used by the retried call, once.
    let (_, retry) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(json!({"taskId": task, "tool": "Bash", "input": {"command": "git push -f"}})),
        )
        .await;
    assert_eq!(retry["decision"], "allow", "{retry}");
    server.shutdown().await;
}

/// The audit export pages (`before`) and is bounded by time (`since`,
/// `until`); a bad value is a 400 naming its field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_export_pages_and_names_a_bad_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let task = child_task(&server).await;
    for cmd in ["git push a", "git push b", "git push c"] {
        let (_, v) = server
            .admin(
                "POST",
                "/api/internal/approvals/check",
                Some(
                    json!({"taskId": task, "tool": "Bash", "input": {"command": cmd},
                    "waitSeconds": 0}),
                ),
            )
            .await;
        assert_eq!(v["waiting"], true, "{v}");
    }
    let (status, first) = server
        .admin(
            "GET",
            &format!("/api/approvals?taskId={task}&limit=2"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first.as_array().unwrap().len(), 2);
    let last = first[1]["id"].as_str().unwrap();
    let (_, next) = server
        .admin(
            "GET",
            &format!("/api/approvals?taskId={task}&limit=2&before={last}"),
            None,
        )
        .await;
    assert_eq!(next.as_array().unwrap().len(), 1, "{next}");
    assert_ne!(next[0]["id"], first[0]["id"]);
    assert_ne!(next[0]["id"], first[1]["id"]);
    let (_, none) = server
        .admin("GET", "/api/approvals?since=2999-01-01T00:00:00Z", None)
        .await;
    assert_eq!(none, json!([]));
    let (_, all) = server
        .admin("GET", "/api/approvals?until=2999-01-01T00:00:00Z", None)
        .await;
    assert_eq!(all.as_array().unwrap().len(), 3, "{all}");
    for (query, field) in [
        ("since=yesterday", "since"),
        ("until=2026-13-01", "until"),
        ("before=cnotanapprovalnotanapprov", "before"),
        ("before=x", "before"),
        (
            "since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z",
            "until",
        ),
    ] {
        let (status, e) = server
            .admin("GET", &format!("/api/approvals?{query}"), None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {e}");
        assert_eq!(e["field"], field, "{query}: {e}");
    }
    server.shutdown().await;
}
