//! Reminders of an OPEN ask that reached a chat, end to
//! end: a real server, the real outbox worker and the gateway CLI double.
//! The clock is passed in (`send_due_reminders(now)`), so nothing sleeps
//! for minutes: the schedule per urgency, each reminder sent once whatever
//! the number of passes, its text (the wait, the question, the same task
//! token), the stop when the ask is answered, and the settings route.

use crate::common;

use common::outbox::double_gateways;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use chrono::Utc;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The unattended channel → the double, recording into `record`.
async fn configure(s: &common::Server, record: &Path) {
    let env = json!({"env": {"GATEWAY_DOUBLE_RECORD": record}});
    double_gateways(s, &["hermes", "openclaw"], env).await;
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
}

/// The texts the double was asked to send, once `n` of them are there.
async fn sent_texts(record: &Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let texts: Vec<String> = common::json_lines(record)
            .iter()
            .filter_map(|r| r["argv"].as_array()?.last()?.as_str().map(str::to_string))
            .collect();
        if texts.len() >= n {
            return texts;
        }
        assert!(
            Instant::now() < deadline,
            "{n} sends expected, got {texts:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The platform message id of the `i`-th send, once its delivery mapping
/// is written (the send is settled by the worker's next turn).
async fn wait_mapped(s: &common::Server, record: &Path, i: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    let pmid = common::json_lines(record)[i]["messageId"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!(
        "/api/internal/harness/delivery-map?gateway=hermes&platform=telegram&chatId=4242&messageId={pmid}"
    );
    loop {
        let (_, map) = s.admin("GET", &path, None).await;
        if !map.is_null() {
            return pmid;
        }
        assert!(Instant::now() < deadline, "the reminder was never mapped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unanswered_ask_is_reminded_on_its_schedule_once_each_and_stops_when_answered() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record).await;
    let t = s.task("Nightly build").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let (st, out) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(&token),
            Some(
                json!({"message": "Postgres or SQLite?", "scope": "unattended", "urgency": "high"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["state"], "DELIVERED", "{out}");
    let asked = Utc::now();
    let h = &s.running.harness;

    // High urgency: 10 min, 30 min, 2 h.
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(9))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(11))
            .await
            .unwrap(),
        1
    );
    let texts = sent_texts(&record, 2).await;
    assert!(
        texts[1].starts_with("Reminder 1: the agent has been waiting 11 min"),
        "{}",
        texts[1]
    );
    assert!(
        texts[1].ends_with(&format!(
            "Postgres or SQLite?\n\nTask ID: [[tower:task={t}]]"
        )),
        "{}",
        texts[1]
    );
    // A reply to the reminder in the chat is a reply to this task, whose
    // ask is the open one (the reminder's mapping names the task).
    let pmid = wait_mapped(&s, &record, 1).await;
    let (st, ctx) = s
        .admin("POST", "/api/internal/harness/gateway-task", Some(json!({
            "gateway": "hermes", "platform": "telegram", "chatId": "4242", "replyToMessageId": pmid
        })))
        .await;
    assert_eq!(st, StatusCode::OK, "{ctx}");
    assert_eq!(
        (
            ctx["bound"].as_bool(),
            ctx["subjectTaskId"].as_str(),
            ctx["hasOpenAsk"].as_bool()
        ),
        (Some(true), Some(t.as_str()), Some(true)),
        "{ctx}"
    );
    // Any number of passes, on this node or after the ask was reminded: once.
    for _ in 0..5 {
        assert_eq!(
            h.asks()
                .send_due_reminders(asked + chrono::Duration::minutes(12))
                .await
                .unwrap(),
            0
        );
    }
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(31))
            .await
            .unwrap(),
        1
    );
    let texts = sent_texts(&record, 3).await;
    assert!(
        texts[2].starts_with("Reminder 2: the agent has been waiting 31 min"),
        "{}",
        texts[2]
    );

    // The ask is answered: no further reminder.
    let (st, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "SQLite"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::hours(3))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        common::json_lines(&record).len(),
        3,
        "nothing sent after the answer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_schedule_is_a_setting_checked_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (st, body) = s.admin("GET", "/api/settings/reminders", None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(
        body,
        json!({"high": [600, 1800, 7200], "normal": [3600, 14400], "low": [],
            "escalateAfter": 1800, "escalateTo": {}, "quietHours": {}})
    );
    for (bad, field) in [
        (json!({"high": [600, 600], "normal": [], "low": []}), "high"),
        (json!({"high": [], "normal": [5], "low": []}), "normal"),
        (json!({"high": [], "normal": [], "low": "never"}), "low"),
    ] {
        let (st, body): (StatusCode, Value) = s
            .admin("PUT", "/api/settings/reminders", Some(bad.clone()))
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad} → {body}");
        assert_eq!(body["field"], field, "{bad} → {body}");
    }
    let (_, unchanged) = s.admin("GET", "/api/settings/reminders", None).await;
    assert_eq!(
        unchanged["normal"],
        json!([3600, 14400]),
        "a refused schedule changes nothing"
    );
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/reminders",
            Some(json!({"high": [300], "normal": [1800], "low": [86400]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (_, stored) = s.admin("GET", "/api/settings/reminders", None).await;
    assert_eq!(
        stored,
        json!({"high": [300], "normal": [1800], "low": [86400],
            "escalateAfter": 1800, "escalateTo": {}, "quietHours": {}})
    );
}
