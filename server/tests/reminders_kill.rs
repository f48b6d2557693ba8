//! No duplicate reminder across a SIGKILL at its send:
//! the real `harness serve` process sends a reminder through the gateway
//! CLI double, is SIGKILLed while the CLI runs, and restarts on the same
//! data directory. The reminder is SENT_UNVERIFIED (its started mark shows
//! the start: never resent), the passes after the restart write no second
//! reminder 1, and the next reminder on the schedule still goes, once.
//! The reminder pass runs in this test process, on the same database, at a
//! test clock.

use crate::common;

use common::process::ServerProcess as Life;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use chrono::Utc;
use harness_core::{
    Harness, HarnessConfig,
    outbox::{OutboundState, PushInput},
    store::Store,
};
use harness_store::AnyStore;
use reqwest::StatusCode;
use serde_json::json;

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

async fn start(data: &Path, record: &Path, control: &Path) -> Life {
    Life::start_with(data, |cmd| {
        cmd.env("HARNESS_HERMES_BIN", DOUBLE)
            .env("HARNESS_OPENCLAW_BIN", DOUBLE)
            .env("GATEWAY_DOUBLE_RECORD", record)
            .env("GATEWAY_DOUBLE_CONTROL", control)
            .env("GATEWAY_DOUBLE_STARTED", record.with_extension("started"));
    })
    .await
}

/// How many sends the double has started.
fn sends_started(record: &Path) -> usize {
    std::fs::read_to_string(record.with_extension("started"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The texts the double sent, once `n` are there.
async fn sent(record: &Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let texts: Vec<String> = common::json_lines(record)
            .iter()
            .filter(|r| r["sent"] == true)
            .filter_map(|r| r["text"].as_str().map(str::to_string))
            .collect();
        if texts.len() >= n {
            return texts;
        }
        assert!(Instant::now() < deadline, "{n} sends expected: {texts:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn state_of(store: &dyn Store, id: &str, want: OutboundState) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let row = store.get_outbound(id).await.unwrap().unwrap();
        if row.state == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{id}: {:?}, {want:?} expected",
            row.state
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether `id`'s current attempt is marked started (committed just
/// before the spawn).
async fn started(store: &dyn harness_core::store::Store, id: &str) -> bool {
    store
        .get_outbound(id)
        .await
        .unwrap()
        .is_some_and(|row| row.attempt_started())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reminder_caught_mid_send_by_a_sigkill_is_never_sent_twice() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (record, control) = (dir.path().join("sent.jsonl"), dir.path().join("mode"));
    std::fs::write(&control, "ok").unwrap();
    let life = start(&data, &record, &control).await;
    let (st, body) = life
        .call("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");

    // This process's core on the server's database: the ask, and the passes.
    let url = format!("sqlite://{}", data.join("harness.db").display());
    let store = AnyStore::open(&url).await.unwrap().port();
    let h = Harness::new(store.clone(), HarnessConfig::new("x".repeat(64)));
    let t = h
        .tasks()
        .create_task(harness_core::tasks::CreateTask {
            title: Some("Nightly build".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id;
    h.tasks().begin_execution(&t).await.unwrap();
    let out = h
        .outbox()
        .push_to_human(PushInput {
            task_id: Some(t.clone()),
            message: Some("Postgres or SQLite?".into()),
            scope: Some("unattended".into()),
            expect_reply: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let asked = Utc::now();
    sent(&record, 1).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while store
        .reminder_candidates(None, 10)
        .await
        .unwrap()
        .is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "the ask was never settled as sent"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Reminder 1's CLI runs for 4 s; the server dies meanwhile.
    std::fs::write(&control, "slow:4000").unwrap();
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(61))
            .await
            .unwrap(),
        1
    );
    let ask = out.message_id.unwrap();
    let reminder = store
        .reminders_for(std::slice::from_ref(&ask))
        .await
        .unwrap()[0]
        .outbound_id
        .clone();
    // Its attempt marked started, and the CLI running (the mark is written
    // before the spawn: a kill between them would leave no CLI to finish).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started(store.as_ref(), &reminder).await || sends_started(&record) < 2 {
        assert!(
            Instant::now() < deadline,
            "the reminder's send never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    life.kill();

    // The CLI finishes on its own (the platform got it); the restarted
    // server finds the started send: SENT_UNVERIFIED, not resent.
    let life = start(&data, &record, &control).await;
    state_of(store.as_ref(), &reminder, OutboundState::SentUnverified).await;
    let texts = sent(&record, 2).await;
    assert!(texts[1].starts_with("Reminder 1:"), "{}", texts[1]);
    std::fs::write(&control, "ok").unwrap();
    for m in [62, 90, 200] {
        assert_eq!(
            h.asks()
                .send_due_reminders(asked + chrono::Duration::minutes(m))
                .await
                .unwrap(),
            0,
            "no second reminder 1"
        );
    }
    // The schedule goes on: reminder 2 (normal: 4 h), once.
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(241))
            .await
            .unwrap(),
        1
    );
    let texts = sent(&record, 3).await;
    assert!(texts[2].starts_with("Reminder 2:"), "{}", texts[2]);
    // Past the poll of the restarted sender: nothing else went out.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let texts = sent(&record, 3).await;
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("Reminder 1:"))
            .count(),
        1,
        "{texts:?}"
    );
    assert_eq!(texts.len(), 3, "{texts:?}");
    life.stop();
}
