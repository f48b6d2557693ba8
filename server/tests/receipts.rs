//! The receipt of a question (docs/evidence.md), with a real PTY and the double
//! agent: asked with its screen, answered on the web, typed into the
//! terminal once, the agent going on, and the first lines it wrote after
//! the answer — captured a few seconds after the answer was typed, redacted.

use crate::{
    common,
    evidence::{pending_request, screen_shows},
};

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

/// A fake key the agent prints after the answer.
const PLANTED_AFTER: &str = "sk-ant-api03-AFTERfakeKEY0123456789abcdefXYZ";

async fn receipt(s: &common::Server, id: &str) -> Value {
    let (status, r) = s
        .admin("GET", &format!("/api/messages/{id}/receipt"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    r
}

fn step<'a>(r: &'a Value, kind: &str) -> &'a Value {
    r["steps"]
        .as_array()
        .and_then(|steps| steps.iter().find(|s| s["step"] == kind))
        .unwrap_or_else(|| panic!("no {kind} step in {r:#}"))
}

/// Wait until the receipt's `kind` step is `status`.
async fn receipt_until(s: &common::Server, id: &str, kind: &str, status: &str) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = receipt(s, id).await;
        let done = last["steps"].as_array().is_some_and(|steps| {
            steps
                .iter()
                .any(|x| x["step"] == kind && x["status"] == status)
        });
        if done {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the {kind} step never became {status}: {last:#}");
}

#[tokio::test]
async fn a_question_shows_its_way_from_asked_to_the_agent_going_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let script = format!(
        "say running migration 7 of 9\n\
         ask_human Should I keep the legacy invoice format?\nwait_reply\n\
         say keeping the legacy format\nsay exporting with {PLANTED_AFTER}\nwait_reply"
    );
    let body = json!({"title": "receipt", "agent": {
        "provider": "command", "command": [common::double().display().to_string()],
        "cwd": std::env::temp_dir(),
        "env": {"HARNESS_DOUBLE_SCRIPT": script}}});
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    let request = pending_request(&s, &task).await;

    // Asked, with its screen; nothing stalled while it waits.
    let r = receipt(&s, &request).await;
    assert_eq!(r["messageId"], request.as_str());
    assert_eq!(r["state"], "OPEN");
    assert!(
        r["screen"]
            .as_str()
            .is_some_and(|x| x.contains("running migration 7 of 9")),
        "{r:#}"
    );
    assert_eq!(step(&r, "asked")["status"], "done");
    assert_eq!(step(&r, "answered")["status"], "waiting");
    assert_eq!(r["stalledAt"], Value::Null);
    // Both path families answer the same.
    let (status, same) = s
        .admin(
            "GET",
            &format!("/api/harness/messages/{request}/receipt"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same["screen"], r["screen"]);
    let (status, evidence) = s
        .admin("GET", &format!("/api/messages/{request}/evidence"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{evidence}");
    assert_eq!(evidence["screen"], r["screen"]);

    // Answered on the web: typed once, the agent goes on, its next lines.
    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "keep it"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    screen_shows(&s, &task, "keeping the legacy format").await;
    let r = receipt_until(&s, &request, "screen_after", "done").await;
    assert_eq!(r["state"], "ANSWERED");
    let answered = step(&r, "answered");
    assert_eq!(answered["status"], "done");
    assert_eq!(answered["by"], "person");
    assert_eq!(answered["surface"], "web");
    let typed = step(&r, "typed");
    assert_eq!(typed["status"], "done", "{r:#}");
    assert_eq!(typed["deliveryId"], reply["deliveryId"]);
    assert_eq!(typed["deliveryState"], "DELIVERED");
    assert_eq!(step(&r, "resumed")["status"], "done", "{r:#}");
    let after = step(&r, "screen_after")["screen"]
        .as_str()
        .expect("a screen after the answer")
        .to_string();
    assert!(after.contains("keeping the legacy format"), "{after}");
    assert!(
        after.contains("exporting with sk-ant-[REDACTED]"),
        "{after}"
    );
    assert!(!after.contains("AFTERfakeKEY"), "{after}");
    assert!(
        !after.contains("running migration 7"),
        "only what came after the answer: {after}"
    );
    assert!(after.len() <= harness_core::evidence::MAX_BYTES);
    assert_eq!(r["stalledAt"], Value::Null);
    // Not pushed anywhere: no pushed step.
    assert!(
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["step"] != "pushed"),
        "{r:#}"
    );
}

#[tokio::test]
async fn a_receipt_is_only_for_a_question() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let (status, none) = s
        .admin(
            "GET",
            &format!("/api/messages/{}/receipt", harness_core::ids::new_id()),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{none}");
    let (status, bad) = s
        .admin("GET", "/api/messages/not-an-id/receipt", None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    assert_eq!(bad["field"], "messageId", "{bad}");
    // A notice has no receipt.
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "notice", "agent": {"provider": "command",
                "command": ["true"], "cwd": std::env::temp_dir()}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let notice = s
        .running
        .harness
        .asks()
        .notify(t["id"].as_str().unwrap(), Some("fyi"))
        .await
        .unwrap();
    let (status, body) = s
        .admin("GET", &format!("/api/messages/{}/receipt", notice.id), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}
