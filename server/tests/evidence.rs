//! The evidence of a question (docs/evidence.md), with a real PTY and the double
//! agent: the last lines of its screen when it asked are stored with the
//! ask, redacted of a planted provider key, a `Bearer` credential, its own
//! token and the exact value of a variable Harness gave it.

use crate::common;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

/// A fake Anthropic key the agent shows on its screen.
const PLANTED: &str = "sk-ant-api03-PLANTEDfakeKEY0123456789abcdefXYZ";
/// A value of the task's own environment, under a name that says nothing.
const ENV_VALUE: &str = "correct-horse-battery-staple";

pub(crate) async fn screen_shows(s: &common::Server, task: &str, needle: &str) {
    let mut last = String::new();
    for _ in 0..200 {
        let (status, screen) = s
            .admin("GET", &format!("/api/tasks/{task}/screen"), None)
            .await;
        if status == StatusCode::OK {
            last = screen["text"].as_str().unwrap_or_default().to_string();
            if last.contains(needle) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {needle:?}; screen:\n{last}");
}

pub(crate) async fn pending_request(s: &common::Server, task: &str) -> String {
    for _ in 0..200 {
        let (_, p) = s
            .admin(
                "GET",
                &format!("/api/internal/harness/pending?taskId={task}"),
                None,
            )
            .await;
        if p["pending"] == true {
            return p["requestId"].as_str().unwrap().to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the agent never asked");
}

#[tokio::test]
async fn the_screen_at_ask_time_is_stored_with_the_ask_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    // The agent shows its secrets, waits for a go (so that the test knows
    // the screen holds them), then asks.
    let script = format!(
        "say running migration 7 of 9\nsay using key {PLANTED}\n\
         say curl -H 'Authorization: Bearer abcdefgh12345678'\n\
         print_env DEPLOY_HINT\nprint_env TOWER_API_TOKEN\nwait_reply\n\
         ask_human Should I keep the legacy invoice format?\nwait_reply\nsay carrying on"
    );
    let body = json!({"title": "evidence", "agent": {
        "provider": "command", "command": [common::double().display().to_string()],
        "cwd": std::env::temp_dir(),
        "env": {"HARNESS_DOUBLE_SCRIPT": script, "DEPLOY_HINT": ENV_VALUE}}});
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    screen_shows(&s, &task, "ENV TOWER_API_TOKEN=hxa_").await;
    let (status, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{task}/input"),
            Some(json!({"text": "go", "submit": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let request = pending_request(&s, &task).await;

    let (status, evidence) = s
        .admin(
            "GET",
            &format!("/api/harness/messages/{request}/evidence"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{evidence}");
    assert_eq!(evidence["messageId"], request.as_str());
    let screen = evidence["screen"].as_str().expect("a screen was stored");
    assert!(screen.contains("running migration 7 of 9"), "{screen}");
    assert!(screen.contains("using key sk-ant-[REDACTED]"), "{screen}");
    assert!(screen.contains("Bearer [REDACTED]"), "{screen}");
    assert!(screen.contains("ENV DEPLOY_HINT=[REDACTED]"), "{screen}");
    assert!(
        screen.contains("ENV TOWER_API_TOKEN=hxa_[REDACTED]")
            || screen.contains("ENV TOWER_API_TOKEN=[REDACTED]"),
        "{screen}"
    );
    for secret in [PLANTED, "PLANTEDfakeKEY", ENV_VALUE, "abcdefgh12345678"] {
        assert!(!screen.contains(secret), "{secret} leaked:\n{screen}");
    }
    assert!(screen.len() <= harness_core::evidence::MAX_BYTES);
    assert!(screen.lines().count() <= harness_core::evidence::DEFAULT_LINES);

    // An unknown message is a 404.
    let (status, none) = s
        .admin(
            "GET",
            &format!(
                "/api/harness/messages/{}/evidence",
                harness_core::ids::new_id()
            ),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{none}");

    // The reply still reaches the agent.
    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "keep it"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    screen_shows(&s, &task, "carrying on").await;
}

#[tokio::test]
async fn an_ask_without_a_terminal_has_no_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(
                json!({"title": "no terminal", "agent": {"provider": "command",
                "command": ["true"], "cwd": std::env::temp_dir()}}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap();
    let asked = s
        .running
        .harness
        .asks()
        .ask(task, Some("anyone?"))
        .await
        .unwrap();
    let (status, evidence) = s
        .admin(
            "GET",
            &format!("/api/harness/messages/{}/evidence", asked.request_id),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{evidence}");
    assert_eq!(evidence["screen"], Value::Null);
}
