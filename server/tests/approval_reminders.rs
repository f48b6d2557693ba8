//! Reminders of a pending approval, end to end: a real
//! server, the real outbox worker and the gateway CLI double, the clock
//! passed in (`send_due_reminders(now)`). An approval whose push reached
//! the chat is reminded on the high schedule with a text that says an
//! approval waits and quotes the call, with the same task token; "approve"
//! replied to the reminder decides it; after the decision nothing more is
//! sent.

use crate::approvals_chat::{Chat, approval, chat_task, held, mapped, posted, tool};

use chrono::Utc;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pending_approval_is_reminded_and_approve_replied_to_the_reminder_decides_it() {
    let dir = tempfile::tempdir().unwrap();
    let Chat {
        s,
        record,
        gw,
        task,
        ..
    } = chat_task(dir.path()).await;
    let id = held(&s, &task, "git push --force origin main").await;
    let asked = Utc::now();
    let (_, pmid) = posted(&record, 1).await[0].clone();
    mapped(&s, &pmid).await;
    let h = &s.running.harness;

    // The high schedule: nothing at 9 min, reminder 1 at 11 min, once.
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(9))
            .await
            .unwrap(),
        0
    );
    for expected in [1, 0, 0] {
        assert_eq!(
            h.asks()
                .send_due_reminders(asked + chrono::Duration::minutes(11))
                .await
                .unwrap(),
            expected
        );
    }
    let posts = posted(&record, 2).await;
    let (text, reminder_pmid) = posts[1].clone();
    assert!(
        text.starts_with(
            "Reminder 1: an approval is still waiting — the agent has been held 11 min"
        ),
        "{text}"
    );
    for part in [
        "[Approval needed]",
        "$ git push --force origin main",
        "Working directory: /srv/repo",
        "\"approve\" (or 1)",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    assert!(
        text.ends_with(&format!("Task ID: [[tower:task={task}]]")),
        "{text}"
    );
    mapped(&s, &reminder_pmid).await;
    let (st, a) = s.admin("GET", &format!("/api/approvals/{id}"), None).await;
    assert_eq!((st, &a["state"]), (StatusCode::OK, &json!("PENDING")));

    // "approve" replied to the reminder decides the approval.
    let (is_error, out) = tool(
        &s,
        &gw,
        "relay_channel_reply",
        json!({"text": "approve", "gateway": "hermes", "platform": "telegram",
            "chatId": "4242", "platformMessageId": reminder_pmid, "senderId": "42"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "approval_decided", "{out}");
    let a = approval(&s, &id).await;
    assert_eq!(
        (&a["state"], &a["decidedBy"]),
        (&json!("APPROVED"), &json!("gateway:42")),
        "{a}"
    );

    // Decided: no further reminder, whatever the clock says.
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(31))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::hours(3))
            .await
            .unwrap(),
        0
    );
    // Nothing is left to send: the push and reminder 1 went out, no row waits.
    let (_, rows) = s
        .admin("GET", &format!("/api/tasks/{task}/outbound"), None)
        .await;
    let states: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["dedupKey"].as_str().unwrap(),
                r["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(states.len(), 2, "{states:?}");
    assert!(
        states.iter().all(|(_, st)| *st == "DELIVERED"),
        "{states:?}"
    );
    s.shutdown().await;
}
