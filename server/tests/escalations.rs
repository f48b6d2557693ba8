//! Escalation, quiet hours and reachability, end to
//! end: a real server, the real outbox worker and the gateway CLI double;
//! the reminder pass is judged at a test clock (`send_due_reminders(now)`).

use crate::common;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use chrono::{DateTime, Timelike, Utc};

use crate::approvals_chat::tool;
use harness_core::store::{InboundIntent, NewInbound};
use reqwest::StatusCode;
use serde_json::{Value, json};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

async fn put(s: &common::Server, path: &str, body: Value) -> Value {
    let (st, out) = s.admin("PUT", path, Some(body)).await;
    assert_eq!(st, StatusCode::OK, "{path}: {out}");
    out
}

/// Both gateways → the double (recording into `record`, its mode read from
/// `control`), and these notify targets.
async fn configure(s: &common::Server, record: &Path, control: &Path, targets: Value) {
    std::fs::write(control, "ok").unwrap();
    let settings = json!({"cliPath": DOUBLE, "env": {
        "GATEWAY_DOUBLE_RECORD": record, "GATEWAY_DOUBLE_CONTROL": control}});
    put(
        s,
        "/api/settings/gateways",
        json!({"hermes": settings, "openclaw": settings}),
    )
    .await;
    put(
        s,
        "/api/settings/notify-targets",
        json!({ "targets": targets }),
    )
    .await;
}

/// The sends the double recorded (target, text), once `n` are there.
async fn sends(record: &Path, n: usize) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let lines: Vec<(String, String)> = common::json_lines(record)
            .iter()
            .filter(|r| r["sent"] == true)
            .map(|r| {
                (
                    r["target"].as_str().unwrap_or("").to_string(),
                    r["text"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "{n} sends expected, got {lines:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An ask of a new task, pushed and DELIVERED: (task, when).
async fn ask(
    s: &common::Server,
    title: &str,
    question: &str,
    urgency: &str,
) -> (String, DateTime<Utc>) {
    let t = s.task(title).await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let (st, out) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(&token),
            Some(json!({"message": question, "scope": "unattended", "urgency": urgency})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["state"], "DELIVERED", "{out}");
    (t, Utc::now())
}

async fn reply(s: &common::Server, t: &str, text: &str) {
    let (st, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": text})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
}

fn mins(m: i64) -> chrono::Duration {
    chrono::Duration::minutes(m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_the_last_reminder_the_ask_is_escalated_once_and_its_answer_tells_everyone() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (record, control) = (dir.path().join("sent.jsonl"), dir.path().join("mode"));
    configure(&s, &record, &control, json!([
        {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"},
        {"label": "boss", "gateway": "hermes", "downstream": "telegram", "dest": "777", "scope": "unattended", "active": false}
    ]))
    .await;
    // Names are checked against the targets, fields named.
    for (bad, field) in [
        (
            json!({"high": [], "normal": [3600], "low": [], "escalateTo": {"unattended": ["nobody"]}}),
            "escalateTo",
        ),
        (
            json!({"high": [], "normal": [3600], "low": [], "escalateTo": {"night": ["boss"]}}),
            "escalateTo",
        ),
        (
            json!({"high": [], "normal": [3600], "low": [], "escalateAfter": 1}),
            "escalateAfter",
        ),
    ] {
        let (st, body) = s
            .admin("PUT", "/api/settings/reminders", Some(bad.clone()))
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad} → {body}");
        assert_eq!(body["field"], field, "{bad} → {body}");
    }
    put(
        &s,
        "/api/settings/reminders",
        json!({"high": [600], "normal": [3600], "low": [],
        "escalateAfter": 1800, "escalateTo": {"unattended": ["boss"]}}),
    )
    .await;
    let (t, asked) = ask(&s, "Nightly build", "Postgres or SQLite?", "normal").await;
    let h = &s.running.harness;

    assert_eq!(
        h.asks().send_due_reminders(asked + mins(61)).await.unwrap(),
        1
    );
    assert_eq!(sends(&record, 2).await[1].0, "telegram:4242");
    // 30 min after the last reminder (1 h): not before.
    assert_eq!(
        h.asks().send_due_reminders(asked + mins(89)).await.unwrap(),
        0
    );
    assert_eq!(
        h.asks().send_due_reminders(asked + mins(91)).await.unwrap(),
        1
    );
    let all = sends(&record, 3).await;
    assert_eq!(all[2].0, "telegram:777", "to the escalation target");
    assert!(
        all[2]
            .1
            .starts_with("Escalated to you: \"phone\" has not answered for 1 h 31 min"),
        "{}",
        all[2].1
    );
    assert!(
        all[2].1.contains(&format!("[[tower:task={t}]]")),
        "the same task token: {}",
        all[2].1
    );
    // Marked once, whatever the passes.
    for m in [92, 200, 600] {
        assert_eq!(
            h.asks().send_due_reminders(asked + mins(m)).await.unwrap(),
            0
        );
    }
    let asks = h.store().reminder_candidates(None, 10).await.unwrap();
    assert_eq!(asks.len(), 1, "the ask still waits: {asks:?}");
    assert!(asks[0].escalated, "marked escalated");

    // The first answer wins; every chat reached is told, once.
    reply(&s, &t, "SQLite").await;
    let all = sends(&record, 5).await;
    let mut told: Vec<&str> = all[3..].iter().map(|(to, _)| to.as_str()).collect();
    told.sort_unstable();
    assert_eq!(told, vec!["telegram:4242", "telegram:777"]);
    for (_, text) in &all[3..] {
        assert!(text.starts_with("Answered — no reply needed"), "{text}");
    }
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + mins(700))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sends(&record, 5).await.len(), 5, "nothing more");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn normal_reminders_wait_out_the_quiet_hours_and_high_ones_still_go() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (record, control) = (dir.path().join("sent.jsonl"), dir.path().join("mode"));
    configure(&s, &record, &control, json!([
        {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"}
    ]))
    .await;
    let (st, body) = s
        .admin("PUT", "/api/settings/reminders", Some(json!({"high": [600], "normal": [3600], "low": [],
            "quietHours": {"phone": {"start": "22:00", "end": "07:00", "timeZone": "Mars/Olympus"}}})))
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["field"], "quietHours", "{body}");

    let (normal, asked) = ask(&s, "Nightly build", "Postgres or SQLite?", "normal").await;
    let (high, _) = ask(&s, "Hotfix", "Roll back?", "high").await;
    // Quiet from the minute of the ask for 3 hours, in the target's zone
    // (India: UTC+05:30 all year, so the window is not on a UTC hour).
    let local = asked + chrono::Duration::minutes(330);
    let (hh, mm) = (local.hour(), local.minute());
    let quiet = json!({"phone": {"start": format!("{hh:02}:{mm:02}"),
        "end": format!("{:02}:{mm:02}", (hh + 3) % 24), "timeZone": "Asia/Kolkata"}});
    let stored = put(
        &s,
        "/api/settings/reminders",
        json!({"high": [600], "normal": [3600], "low": [], "quietHours": quiet}),
    )
    .await;
    assert_eq!(stored["quietHours"], quiet);
    let h = &s.running.harness;

    assert_eq!(
        h.asks().send_due_reminders(asked + mins(61)).await.unwrap(),
        1,
        "only the high one goes in the quiet hours"
    );
    let all = sends(&record, 3).await;
    assert!(
        all[2].1.starts_with("Reminder 1:") && all[2].1.contains("Roll back?"),
        "{}",
        all[2].1
    );
    reply(&s, &high, "yes").await;
    assert_eq!(
        h.asks().send_due_reminders(asked + mins(62)).await.unwrap(),
        0
    );

    let end = asked.with_second(0).unwrap() + chrono::Duration::hours(3);
    assert_eq!(h.asks().send_due_reminders(end - mins(1)).await.unwrap(), 0);
    assert_eq!(h.asks().send_due_reminders(end + mins(1)).await.unwrap(), 1);
    let all = sends(&record, 4).await;
    assert!(
        all[3].1.starts_with("Reminder 1:") && all[3].1.contains("Postgres or SQLite?"),
        "{}",
        all[3].1
    );
    reply(&s, &normal, "SQLite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_chat_past_its_window_is_warned_about_and_its_ask_escalated_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (record, control) = (dir.path().join("sent.jsonl"), dir.path().join("mode"));
    configure(&s, &record, &control, json!([
        {"label": "wx", "gateway": "openclaw", "downstream": "weixin", "dest": "wxid_1", "scope": "unattended"},
        {"label": "boss", "gateway": "hermes", "downstream": "telegram", "dest": "777", "scope": "unattended", "active": false}
    ]))
    .await;
    put(
        &s,
        "/api/settings/reminders",
        json!({"high": [600], "normal": [3600], "low": [],
        "escalateTo": {"unattended": ["boss"]}}),
    )
    .await;
    let h = &s.running.harness;
    // The person last wrote 25 hours ago.
    let wrote = Utc::now() - chrono::Duration::hours(25);
    h.store()
        .create_inbound(NewInbound {
            id: harness_core::ids::new_id(),
            dedup_key: "wx-1".into(),
            gateway: "openclaw".into(),
            platform: "weixin".into(),
            chat_id: "wxid_1".into(),
            sender_id: None,
            platform_message_id: "p1".into(),
            thread_id: None,
            root_message_id: None,
            reply_to_message_id: None,
            intent: InboundIntent::Direct,
            content: "hello".into(),
            now: wrote,
        })
        .await
        .unwrap();
    let (st, list) = s.admin("GET", "/api/settings/reachability", None).await;
    assert_eq!(st, StatusCode::OK, "{list}");
    let wx = &list[0];
    assert_eq!(
        (
            wx["label"].as_str(),
            wx["windowSecs"].as_i64(),
            wx["windowPassed"].as_bool()
        ),
        (Some("wx"), Some(86_400), Some(true)),
        "{list}"
    );
    assert!(
        wx["warning"].as_str().is_some_and(|w| w.contains("24 h")),
        "{list}"
    );
    assert_eq!(list[1]["warning"], Value::Null, "{list}");

    let (t, asked) = ask(&s, "Nightly build", "Postgres or SQLite?", "normal").await;
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::seconds(1))
            .await
            .unwrap(),
        1,
        "escalated at once"
    );
    let all = sends(&record, 2).await;
    assert_eq!(all[1].0, "telegram:777");
    assert!(
        all[1].1.starts_with("Escalated to you: \"wx\""),
        "{}",
        all[1].1
    );
    let esc = h
        .store()
        .escalations_for(
            &h.store()
                .reminder_candidates(None, 10)
                .await
                .unwrap()
                .iter()
                .map(|c| c.message_id.clone())
                .collect::<Vec<_>>(),
        )
        .await
        .unwrap();
    assert_eq!(esc.len(), 1);
    assert_eq!(
        (esc[0].target.as_str(), esc[0].reason.as_str()),
        ("boss", "unreachable")
    );
    assert_eq!(
        h.asks().send_due_reminders(asked + mins(61)).await.unwrap(),
        0,
        "no reminder to a chat that cannot receive it"
    );
    // `/harness` says so: unreachable, escalated to boss…
    let ask_id = esc[0].message_id.clone();
    let f = h
        .asks()
        .follow_ups(std::slice::from_ref(&ask_id))
        .await
        .unwrap();
    let f = f.get(&ask_id).expect("its follow-up");
    assert_eq!(
        (
            f.unreachable,
            f.no_escalation_target,
            f.escalated_to.clone()
        ),
        (true, false, vec!["boss".to_string()]),
        "{f:?}"
    );
    // …and, once no target is left to escalate to, that nobody is told.
    put(
        &s,
        "/api/settings/reminders",
        json!({"high": [600], "normal": [3600], "low": []}),
    )
    .await;
    let f = h
        .asks()
        .follow_ups(std::slice::from_ref(&ask_id))
        .await
        .unwrap();
    assert!(
        f[&ask_id].unreachable && f[&ask_id].no_escalation_target,
        "{f:?}"
    );

    // A send to the target that keeps failing shows with its last error.
    std::fs::write(&control, "fail").unwrap();
    let t2 = s.task("Status").await;
    let (_, token) = h.tasks().begin_execution(&t2).await.unwrap();
    let (st, out) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(&token),
            Some(json!({"message": "Status update", "scope": "unattended", "expectReply": false})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, list) = s.admin("GET", "/api/settings/reachability", None).await;
        if let Some(err) = list[0]["lastError"].as_str() {
            assert!(
                list[0]["failedAttempts"].as_u64().is_some_and(|n| n >= 1),
                "{list}"
            );
            assert!(
                err.contains("send failed"),
                "the double's own failure, not a deliberate drop: {list}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the failure never showed: {list}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    reply(&s, &t, "SQLite").await;
}

/// The reachability line of the target `label`.
async fn reach(s: &common::Server, label: &str) -> Value {
    let (st, list) = s.admin("GET", "/api/settings/reachability", None).await;
    assert_eq!(st, StatusCode::OK, "{list}");
    list.as_array()
        .and_then(|l| l.iter().find(|r| r["label"] == label))
        .cloned()
        .unwrap_or_else(|| panic!("{label} in {list}"))
}

/// The platform message id of the send to `chat` whose text starts with
/// `text`, once its delivery mapping is written.
async fn mapped_send(s: &common::Server, record: &Path, text: &str, chat: &str) -> String {
    let pmid = common::json_lines(record)
        .iter()
        .find(|r| {
            r["sent"] == true
                && r["target"] == format!("telegram:{chat}")
                && r["text"].as_str().is_some_and(|t| t.starts_with(text))
        })
        .and_then(|r| r["messageId"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no send {text:?} to {chat}"));
    let path = format!(
        "/api/internal/harness/delivery-map?gateway=hermes&platform=telegram&chatId={chat}&messageId={pmid}"
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, map) = s.admin("GET", &path, None).await;
        if !map.is_null() {
            return pmid;
        }
        assert!(Instant::now() < deadline, "{text:?} was never mapped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_answer_from_the_escalated_chat_wins_and_only_chat_answers_count_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (record, control) = (dir.path().join("sent.jsonl"), dir.path().join("mode"));
    configure(&s, &record, &control, json!([
        {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"},
        {"label": "boss", "gateway": "hermes", "downstream": "telegram", "dest": "777", "scope": "unattended", "active": false}
    ]))
    .await;
    // The chats' OWNER writes as sender 42.
    let settings = json!({"cliPath": DOUBLE, "env": {
        "GATEWAY_DOUBLE_RECORD": record, "GATEWAY_DOUBLE_CONTROL": control},
        "accessPolicy": {"ownerIds": {"telegram": ["42"]}}});
    put(
        &s,
        "/api/settings/gateways",
        json!({"hermes": settings, "openclaw": settings}),
    )
    .await;
    put(
        &s,
        "/api/settings/reminders",
        json!({"high": [600], "normal": [3600], "low": [],
        "escalateAfter": 1800, "escalateTo": {"unattended": ["boss"]}}),
    )
    .await;
    let gw = std::fs::read_to_string(dir.path().join("secrets").join("gateway.token"))
        .unwrap()
        .trim()
        .to_string();
    let h = &s.running.harness;
    let (t, asked) = ask(&s, "Nightly build", "Postgres or SQLite?", "normal").await;
    assert_eq!(
        h.asks().send_due_reminders(asked + mins(61)).await.unwrap(),
        1
    );
    sends(&record, 2).await;
    assert_eq!(
        h.asks().send_due_reminders(asked + mins(91)).await.unwrap(),
        1
    );
    let all = sends(&record, 3).await;
    assert_eq!(all[2].0, "telegram:777", "escalated: {all:?}");

    // The boss replies in their chat to the escalation: that answers it.
    let pmid = mapped_send(&s, &record, "Escalated to you", "777").await;
    let (is_error, out) = tool(
        &s,
        &gw,
        "relay_channel_reply",
        json!({"text": "SQLite", "gateway": "hermes", "platform": "telegram",
            "chatId": "777", "platformMessageId": pmid, "senderId": "42"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "ask_reply", "{out}");
    assert_eq!(out["taskId"], t.as_str(), "{out}");
    // A later answer from the first chat's person loses.
    let (st, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "Postgres"})),
        )
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "the first answer won: {body}");
    // Everyone reached is told, once each.
    let all = sends(&record, 5).await;
    let mut told: Vec<&str> = all[3..].iter().map(|(to, _)| to.as_str()).collect();
    told.sort_unstable();
    assert_eq!(told, vec!["telegram:4242", "telegram:777"]);
    for (_, text) in &all[3..] {
        assert!(
            text.starts_with("Answered — no reply needed any more: \"Nightly build\""),
            "{text}"
        );
    }
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + mins(700))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sends(&record, 5).await.len(), 5, "nothing more");
    // Which chat answered an escalated ask is not known: the first chat's
    // person is not taken to have written.
    assert_eq!(reach(&s, "phone").await["lastWrote"], Value::Null);

    // An answer on the web says nothing about the chat…
    let (t2, _) = ask(&s, "Deploy", "Deploy now?", "normal").await;
    reply(&s, &t2, "yes").await;
    assert_eq!(
        reach(&s, "phone").await["lastWrote"],
        Value::Null,
        "answered on the web: the chat did not write"
    );
    // …an answer in the chat does.
    let (t3, _) = ask(&s, "Release", "Release now?", "normal").await;
    let pmid = mapped_send(&s, &record, "Release", "4242").await;
    let (is_error, out) = tool(
        &s,
        &gw,
        "relay_channel_reply",
        json!({"text": "yes", "gateway": "hermes", "platform": "telegram",
            "chatId": "4242", "platformMessageId": pmid, "senderId": "42"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(
        (out["mode"].as_str(), out["taskId"].as_str()),
        (Some("ask_reply"), Some(t3.as_str())),
        "{out}"
    );
    assert!(
        reach(&s, "phone").await["lastWrote"].is_string(),
        "answered in the chat: it wrote"
    );
}
