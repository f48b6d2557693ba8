//! Work that can only be done on one node records the node of the execution
//! it serves, not the node that received the request: keyed
//! input sent to server B for an agent running on server A is A's row, and
//! A types it — once.

use crate::common;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn input_received_by_another_node_is_the_agents_nodes_work() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let a = common::start(&dir.path().join("a")).await;
    let shared = format!("sqlite://{}", dir.path().join("a/harness.db").display());
    let b = common::start_on(&dir.path().join("b"), Some(shared)).await;
    let (node_a, node_b) = (
        a.running.harness.config().node_id.clone(),
        b.running.harness.config().node_id.clone(),
    );
    assert_ne!(node_a, node_b);

    let transcript = work.join("typed.txt");
    let script = format!(
        "while IFS= read -r line; do printf '%s\\n' \"$line\" >> '{}'; done",
        transcript.display()
    );
    let (status, task) = a
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "on node A", "agent": {
                "provider": "command", "command": ["sh", "-c", script], "cwd": work}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, body) = a
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Node B receives the input.
    let (status, sent) = b
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "from B", "submit": true, "idempotencyKey": "k1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    let id = sent["deliveryId"].as_str().unwrap().to_string();
    let (_, row) = b.admin("GET", &format!("/api/deliveries/{id}"), None).await;
    assert_eq!(
        row["nodeId"],
        node_a.as_str(),
        "the agent's node, not B's: {row}"
    );

    // A types it, once.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, row) = a.admin("GET", &format!("/api/deliveries/{id}"), None).await;
        if row["state"] == "DELIVERED" {
            break;
        }
        assert!(Instant::now() < deadline, "never delivered: {row}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let typed = std::fs::read_to_string(&transcript).unwrap_or_default();
        if typed.contains("from B") {
            assert_eq!(typed.matches("from B").count(), 1, "{typed}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not typed into A's terminal: {typed:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    b.shutdown().await;
    a.shutdown().await;
}
