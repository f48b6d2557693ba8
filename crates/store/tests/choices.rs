//! Structured questions (issue 16) through the core, on a real SQLite file:
//! choices stored with the ask, validation without half-written rows, the
//! default after the deadline answered exactly once against people answering
//! at the same moment — on a multi-threaded runtime, through two stores
//! (two writer connections) on one database file.

use std::{sync::Arc, time::Duration};

use chrono::Utc;
use harness_core::{
    CoreError, Harness, HarnessConfig, ids,
    model::{MessageQuery, MessageState, MessageView},
    options::{ANSWERED_BY_DEFAULT, ChoicesInput},
    tasks::CreateTask,
};
use harness_store::{SqliteOptions, SqliteStore};
use serde_json::json;

const ADMIN: &str = "admin-secret";

struct Db {
    _dir: tempfile::TempDir,
    url: String,
    store: SqliteStore,
    harness: Harness,
}

async fn open(url: &str) -> (SqliteStore, Harness) {
    let store = SqliteStore::open(SqliteOptions::new(url)).await.unwrap();
    let harness = Harness::new(
        Arc::new(store.clone()),
        HarnessConfig::new(ids::token_hash(ADMIN)),
    );
    (store, harness)
}

async fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let (store, harness) = open(&url).await;
    Db {
        _dir: dir,
        url,
        store,
        harness,
    }
}

async fn task(h: &Harness) -> String {
    h.create_task(CreateTask {
        title: Some("choices".into()),
        ..Default::default()
    })
    .await
    .unwrap()
    .task
    .id
}

fn input(v: serde_json::Value) -> ChoicesInput {
    serde_json::from_value(v).unwrap()
}

fn db_choice() -> ChoicesInput {
    input(json!({
        "options": [{"label": "Postgres", "description": "a server"}, {"label": "SQLite"}],
        "default": "SQLite", "deadline": 60, "urgency": "high"
    }))
}

/// Move the ask's deadline (as if time had passed): the API refuses
/// deadlines under a minute, the tests do not wait for one.
async fn set_deadline(store: &SqliteStore, ask_id: &str, at: chrono::DateTime<Utc>) {
    sqlx::query("UPDATE ask_choices SET deadline_at = ? WHERE message_id = ?")
        .bind(at.timestamp_millis())
        .bind(ask_id)
        .execute(store.writer_pool())
        .await
        .unwrap();
}

async fn count(store: &SqliteStore, sql: &'static str, id: &str) -> i64 {
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_one(store.writer_pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn choices_are_stored_with_the_ask_and_plain_asks_have_none() {
    let db = db().await;
    let h = &db.harness;
    let t = task(h).await;
    let plain = h.ask(&t, Some("free text?")).await.unwrap();
    let asked = h
        .ask_with(&t, Some("Which DB?"), &db_choice())
        .await
        .unwrap();
    let found = h
        .choices_for(&[plain.request_id.clone(), asked.request_id.clone()])
        .await
        .unwrap();
    assert!(!found.contains_key(&plain.request_id));
    let c = &found[&asked.request_id];
    assert_eq!(c.options.len(), 2);
    assert_eq!(c.options[0].description.as_deref(), Some("a server"));
    assert_eq!(c.default.as_deref(), Some("SQLite"));
    assert!(c.deadline_at.is_some());
    assert_eq!(c.answered_by, None);
    // The free-text box: "2", "2." and a label map to the option.
    for typed in ["2", "2.", "sqlite"] {
        assert_eq!(h.reply_text_for(&t, typed).await.unwrap(), "SQLite");
    }
    assert_eq!(h.reply_text_for(&t, "MySQL").await.unwrap(), "MySQL");
}

#[tokio::test]
async fn invalid_choices_write_nothing_and_name_the_field() {
    let db = db().await;
    let h = &db.harness;
    let t = task(h).await;
    let nine: Vec<_> = (0..9).map(|i| json!({"label": format!("o{i}")})).collect();
    for (bad, field) in [
        (json!({"options": nine}), "options"),
        (json!({"options": ["A", "a"]}), "options"),
        (
            json!({"options": ["A", "B"], "default": "C", "deadline": 60}),
            "default",
        ),
        (
            json!({"options": ["A", "B"], "default": "A", "deadline": 30}),
            "deadline",
        ),
        (json!({"urgency": "now"}), "urgency"),
    ] {
        match h.ask_with(&t, Some("q?"), &input(bad.clone())).await {
            Err(CoreError::Invalid { field: Some(f), .. }) => assert_eq!(f, field, "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    let asks = count(
        &db.store,
        "SELECT COUNT(*) FROM harness_messages WHERE task_id = ?",
        &t,
    )
    .await;
    assert_eq!(asks, 0, "a refused ask writes no row");
}

#[tokio::test]
async fn default_after_deadline_answers_like_a_reply_and_is_marked() {
    let db = db().await;
    let h = &db.harness;
    let t = task(h).await;
    h.begin_execution(&t).await.unwrap();
    let asked = h
        .ask_with(&t, Some("Which DB?"), &db_choice())
        .await
        .unwrap();
    assert_eq!(h.apply_due_defaults().await.unwrap(), 0, "not due yet");
    set_deadline(
        &db.store,
        &asked.request_id,
        Utc::now() - chrono::Duration::seconds(1),
    )
    .await;
    assert_eq!(h.apply_due_defaults().await.unwrap(), 1);
    assert_eq!(h.apply_due_defaults().await.unwrap(), 0, "exactly once");
    let m = h
        .store()
        .get_message(&asked.request_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(m.state, MessageState::Answered);
    assert_eq!(m.reply_text.as_deref(), Some("SQLite"));
    let c = &h.choices_for(std::slice::from_ref(&m.id)).await.unwrap()[&m.id];
    assert_eq!(c.answered_by.as_deref(), Some(ANSWERED_BY_DEFAULT));
    // The reply's delivery row, as for a person's reply; the agent is told
    // the default was applied.
    let d = h
        .store()
        .delivery_for_message(&m.id)
        .await
        .unwrap()
        .unwrap();
    assert!(d.text.starts_with("SQLite"), "{}", d.text);
    assert!(d.text.contains("default"), "{}", d.text);
    assert_eq!(d.question.as_deref(), Some("Which DB?"));
    // The parked execution runs again, and a late reply is a conflict.
    let view = h.get_task(&t).await.unwrap();
    assert!(!view.open_ask);
    assert!(matches!(
        h.reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("Postgres"),
            false
        )
        .await,
        Err(CoreError::Conflict(_))
    ));
    // An ask without a default is never answered by the sweep.
    let plain = h
        .ask_with(&t, Some("Why?"), &input(json!({"deadline": 60})))
        .await
        .unwrap();
    set_deadline(
        &db.store,
        &plain.request_id,
        Utc::now() - chrono::Duration::seconds(1),
    )
    .await;
    assert_eq!(h.apply_due_defaults().await.unwrap(), 0);
    let page = h
        .list_messages(MessageQuery {
            view: MessageView::Pending,
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.rows.len(), 1, "the plain ask stays open");
}

/// 50 concurrent tries around the deadline — 25 people replying, 25 default
/// sweeps — on two stores (two writer connections) of one file, several
/// rounds: exactly one answer and one delivery row every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deadline_default_races_people_exactly_once() {
    let db = db().await;
    let (_store_b, harness_b) = open(&db.url).await;
    let a = db.harness.clone();
    let mut outcomes = std::collections::BTreeMap::<&str, usize>::new();
    for round in 0..6 {
        let t = task(&a).await;
        a.begin_execution(&t).await.unwrap();
        let asked = a
            .ask_with(&t, Some("Which DB?"), &db_choice())
            .await
            .unwrap();
        let start = tokio::time::Instant::now() + Duration::from_millis(120);
        let deadline = Utc::now() + chrono::Duration::milliseconds(150);
        set_deadline(&db.store, &asked.request_id, deadline).await;
        let mut jobs = Vec::new();
        for i in 0..50u64 {
            let h = if i % 4 < 2 {
                a.clone()
            } else {
                harness_b.clone()
            };
            let t = t.clone();
            // Each kind spread over 60 ms around the deadline (150 ms);
            // people later each round, so either side wins some rounds.
            let person = i % 2 == 0;
            let shift = if person { round * 8 } else { 0 };
            let at = start + Duration::from_millis(10 + i * 60 / 50 + shift);
            jobs.push(tokio::spawn(async move {
                tokio::time::sleep_until(at).await;
                if person {
                    match h
                        .reply(
                            &harness_core::auth::Person::admin(),
                            &t,
                            Some(&format!("person {i}")),
                            false,
                        )
                        .await
                    {
                        Ok(out) if !out.deduped => "person",
                        Ok(_) => "deduped",
                        Err(CoreError::Conflict(_)) => "lost",
                        Err(e) => panic!("reply failed: {e:?}"),
                    }
                } else {
                    match h.apply_due_defaults().await {
                        Ok(0) => "lost",
                        Ok(1) => "default",
                        Ok(n) => panic!("{n} defaults applied for one ask"),
                        Err(e) => panic!("sweep failed: {e:?}"),
                    }
                }
            }));
        }
        let mut wins = Vec::new();
        for job in jobs {
            let r = job.await.unwrap();
            if r == "person" || r == "default" {
                wins.push(r);
            }
        }
        // The sweep may have run entirely before the deadline: catch up.
        if wins.is_empty() {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if a.apply_due_defaults().await.unwrap() == 1 {
                wins.push("default");
            }
        }
        assert_eq!(wins.len(), 1, "round {round}: winners {wins:?}");
        *outcomes.entry(wins[0]).or_default() += 1;
        let deliveries = count(
            &db.store,
            "SELECT COUNT(*) FROM deliveries WHERE message_id = ?",
            &asked.request_id,
        )
        .await;
        assert_eq!(deliveries, 1, "round {round}: one delivery row");
        let m = a
            .store()
            .get_message(&asked.request_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(m.state, MessageState::Answered);
        let by_default =
            a.choices_for(std::slice::from_ref(&m.id)).await.unwrap()[&m.id].answered_by_default();
        assert_eq!(by_default, wins[0] == "default", "round {round}");
        if by_default {
            assert_eq!(m.reply_text.as_deref(), Some("SQLite"));
        } else {
            assert!(m.reply_text.unwrap().starts_with("person "));
        }
    }
    eprintln!("winners over the rounds: {outcomes:?}");
}
