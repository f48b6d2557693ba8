//! events for a parent whose terminal is gone stay PENDING (never
//! dropped, never typed into nothing, the parent is not woken by its inbox)
//! and are drained as one batch at the resumed parent's first turn end.

use crate::common;

use common::workbench::*;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn post(s: &common::Server, path: &str, body: Option<Value>) {
    let (status, out) = s.admin("POST", path, body).await;
    assert_eq!(status, StatusCode::OK, "{path}: {out}");
}

async fn execution_status(s: &common::Server, task: &str) -> String {
    let (_, t) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
    t["execution"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn events_for_a_parent_without_a_terminal_wait_for_its_resumed_turn_end() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let log = dir.path().join("parent-inputs.log");
    let parent = double_task_log(&s, "parent", "stop_hook", None, &log).await;
    post(&s, &format!("/api/tasks/{parent}/start"), None).await;
    // Idle at a provider-confirmed turn end: its drain latch is open.
    wait_for(&s, &parent, "the parent idle", |t| t.contains("STOP OK")).await;
    // Its PTY is killed without any input (the latch is not closed by one).
    post(&s, &format!("/api/tasks/{parent}/stop"), None).await;
    let mut gone = false;
    for _ in 0..100 {
        if execution_status(&s, &parent).await != "RUNNING" {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the parent's execution ended");
    let stopped_as = execution_status(&s, &parent).await;

    // A child ends its turn while the parent has no terminal.
    let child_log = dir.path().join("child-inputs.log");
    let child = double_task_log(
        &s,
        "child",
        "stop_hook All done while the parent was away",
        Some(&parent),
        &child_log,
    )
    .await;
    post(&s, &format!("/api/tasks/{child}/start"), None).await;
    wait_inbox(&s, &parent, "the child's event", |i| {
        count(i, "events", "PENDING") == 1
    })
    .await;
    // Room for a wrong drain (into the dead PTY, or a resume by the inbox).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let still = inbox(&s, &parent).await;
    assert_eq!(count(&still, "events", "PENDING"), 1, "{still:#}");
    assert!(
        still["batches"].as_array().unwrap().is_empty(),
        "nothing drained without a terminal: {still:#}"
    );
    assert_eq!(
        execution_status(&s, &parent).await,
        stopped_as,
        "the inbox does not start the parent"
    );
    assert!(
        !inputs(&log)
            .iter()
            .any(|l| l.contains("All done while the parent was away")),
        "nothing typed"
    );

    // The parent is resumed; its script ends its first turn: one batch.
    post(
        &s,
        &format!("/api/tasks/{parent}/start"),
        Some(json!({"resume": true})),
    )
    .await;
    let done = wait_inbox(&s, &parent, "the batch delivered", |i| {
        count(i, "events", "DELIVERED") == 1
    })
    .await;
    let batches = done["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 1, "{done:#}");
    let prompt = batches[0]["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("All done while the parent was away"),
        "{prompt}"
    );
    let batch_id = batches[0]["id"].as_str().unwrap();
    let footer = format!("[Tower durable batch: {batch_id}]");
    wait_input(&log, "the batch typed", &footer).await;
    post(
        &s,
        &format!("/api/tasks/{parent}/input"),
        Some(json!({"text": "marker-after-batch", "submit": true})),
    )
    .await;
    let got = wait_input(&log, "the marker", "marker-after-batch").await;
    assert_eq!(
        got.iter().filter(|l| l.contains(&footer)).count(),
        1,
        "typed once: {got:#?}"
    );
    s.shutdown().await;
}
