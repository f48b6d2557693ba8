//! The parent's inbox and the double agent in real PTYs: helpers shared by
//! the workbench tests (screen and inbox waits, the agent's recorded inputs,
//! derived double-agent tasks).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

pub async fn screen(s: &super::Server, task: &str) -> String {
    let (_, screen) = s
        .admin("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    screen["text"].as_str().unwrap_or_default().to_string()
}

pub async fn wait_for<F: Fn(&str) -> bool>(
    s: &super::Server,
    task: &str,
    what: &str,
    pred: F,
) -> String {
    let mut last = String::new();
    for _ in 0..300 {
        last = screen(s, task).await;
        if pred(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; screen:\n{last}");
}

pub async fn inbox(s: &super::Server, task: &str) -> Value {
    let (status, body) = s
        .admin("GET", &format!("/api/tasks/{task}/inbox"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub async fn wait_inbox<F: Fn(&Value) -> bool>(
    s: &super::Server,
    task: &str,
    what: &str,
    pred: F,
) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = inbox(s, task).await;
        if pred(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; inbox: {last:#}");
}

pub fn count(inbox: &Value, key: &str, state: &str) -> usize {
    inbox[key]
        .as_array()
        .map_or(0, |a| a.iter().filter(|e| e["state"] == state).count())
}

/// What the agent received, one JSON string per submitted input.
pub fn inputs(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .collect()
}

pub async fn wait_input(log: &std::path::Path, what: &str, needle: &str) -> Vec<String> {
    for _ in 0..300 {
        let got = inputs(log);
        if got.iter().any(|l| l.contains(needle)) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; inputs: {:#?}", inputs(log));
}

pub async fn double_task(
    s: &super::Server,
    title: &str,
    script: &str,
    parent: Option<&str>,
) -> String {
    let log = std::env::temp_dir().join(format!(
        "harness-wb-{}-{}.log",
        std::process::id(),
        title.replace(' ', "-")
    ));
    double_task_log(s, title, script, parent, &log).await
}

pub async fn double_task_log(
    s: &super::Server,
    title: &str,
    script: &str,
    parent: Option<&str>,
    log: &std::path::Path,
) -> String {
    let mut body = json!({"title": title, "agent": {
        "provider": "claude", "command": [super::double().display().to_string()],
        "cwd": std::env::temp_dir(), "env": {"HARNESS_DOUBLE_SCRIPT": script,
            "HARNESS_DOUBLE_INPUT_LOG": log.display().to_string()}}});
    if let Some(p) = parent {
        body["parentTaskId"] = json!(p);
    }
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

pub async fn start(s: &super::Server, task: &str) {
    let (status, body) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

pub async fn type_line(s: &super::Server, task: &str, text: &str) {
    let (status, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{task}/input"),
            Some(json!({"text": text, "submit": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
}

pub async fn execution_of(s: &super::Server, task: &str) -> Value {
    let (_, t) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
    t["execution"].clone()
}
