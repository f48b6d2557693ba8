//! Structured questions through the core:
//! choices stored with the ask, validation without half-written rows, the
//! default after the deadline answered exactly once against people answering
//! at the same moment — on a multi-threaded runtime, through two stores
//! (two writer connections) on one database.

use std::{sync::Arc, time::Duration};

use chrono::Utc;
use harness_core::{
    CoreError, Harness,
    model::{MessageQuery, MessageState, MessageView},
    options::{ANSWERED_BY_DEFAULT, ChoicesInput},
    store::Store,
    tasks::CreateTask,
};
use serde_json::json;

use super::{
    Backend,
    support::{ask_due_at, harness_on},
};

struct Db {
    store: Arc<dyn Store>,
    harness: Harness,
}

async fn db(b: &Backend) -> Db {
    let store = b.store.clone();
    let harness = harness_on(store.clone(), "node-a");
    Db { store, harness }
}

async fn task(h: &Harness) -> String {
    h.tasks()
        .create_task(CreateTask {
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

pub async fn choices_are_stored_with_the_ask_and_plain_asks_have_none(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h).await;
    let plain = h.asks().ask(&t, Some("free text?")).await.unwrap();
    let asked = h
        .asks()
        .ask_with(&t, Some("Which DB?"), &db_choice())
        .await
        .unwrap();
    let found = h
        .asks()
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
        assert_eq!(h.asks().reply_text_for(&t, typed).await.unwrap(), "SQLite");
    }
    assert_eq!(h.asks().reply_text_for(&t, "MySQL").await.unwrap(), "MySQL");
}

pub async fn invalid_choices_write_nothing_and_name_the_field(b: &Backend) {
    let db = db(b).await;
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
        match h.asks().ask_with(&t, Some("q?"), &input(bad.clone())).await {
            Err(CoreError::Invalid { field: Some(f), .. }) => assert_eq!(f, field, "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    let asks = db
        .store
        .list_messages(&MessageQuery {
            view: MessageView::All,
            task_id: Some(t.clone()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(asks.is_empty(), "a refused ask writes no row: {asks:?}");
    assert!(db.store.latest_ask(&t).await.unwrap().is_none());
}

pub async fn default_after_deadline_answers_like_a_reply_and_is_marked(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h).await;
    h.tasks().begin_execution(&t).await.unwrap();
    let asked = h
        .asks()
        .ask_with(&t, Some("Which DB?"), &db_choice())
        .await
        .unwrap();
    assert_eq!(
        h.asks().apply_due_defaults().await.unwrap(),
        0,
        "not due yet"
    );
    let later = Utc::now() + chrono::Duration::seconds(61);
    let due = db.store.due_defaults(later, 10).await.unwrap();
    assert_eq!(due.len(), 1, "due at its deadline");
    assert_eq!(due[0].message_id, asked.request_id);
    assert_eq!(due[0].default_label, "SQLite");
    assert!(db.store.next_default_deadline().await.unwrap().is_some());
    // The same question again, its deadline already passed (the port
    // takes any deadline; the API's one-minute minimum is the core's).
    let asked_id = ask_due_at(
        db.store.as_ref(),
        &t,
        "Which DB?",
        &["Postgres", "SQLite"],
        Some("SQLite"),
        Utc::now() - chrono::Duration::seconds(1),
    )
    .await;
    let superseded = db
        .store
        .get_message(&asked.request_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(superseded.state, MessageState::Cancelled);
    assert_eq!(h.asks().apply_due_defaults().await.unwrap(), 1);
    assert_eq!(
        h.asks().apply_due_defaults().await.unwrap(),
        0,
        "exactly once"
    );
    let m = h.store().get_message(&asked_id).await.unwrap().unwrap();
    assert_eq!(m.state, MessageState::Answered);
    assert_eq!(m.reply_text.as_deref(), Some("SQLite"));
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&m.id))
        .await
        .unwrap()[&m.id];
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
    let view = h.tasks().get_task(&t).await.unwrap();
    assert!(!view.open_ask);
    assert!(matches!(
        h.asks()
            .reply(
                &harness_core::auth::Person::admin(),
                &t,
                Some("Postgres"),
                false
            )
            .await,
        Err(CoreError::Conflict(_))
    ));
    // An ask without a default is never answered by the sweep.
    ask_due_at(
        db.store.as_ref(),
        &t,
        "Why?",
        &[],
        None,
        Utc::now() - chrono::Duration::seconds(1),
    )
    .await;
    assert_eq!(h.asks().apply_due_defaults().await.unwrap(), 0);
    let page = h
        .asks()
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
/// sweeps — on two stores (two writer connections) of one database, several
/// rounds: exactly one answer and one delivery row every time.
pub async fn deadline_default_races_people_exactly_once(b: &Backend) {
    let db = db(b).await;
    let harness_b = harness_on(b.another().await, "node-a");
    let a = db.harness.clone();
    let mut outcomes = std::collections::BTreeMap::<&str, usize>::new();
    for round in 0..6 {
        let t = task(&a).await;
        a.tasks().begin_execution(&t).await.unwrap();
        let start = tokio::time::Instant::now() + Duration::from_millis(120);
        let deadline = Utc::now() + chrono::Duration::milliseconds(150);
        let asked_id = ask_due_at(
            db.store.as_ref(),
            &t,
            "Which DB?",
            &["Postgres", "SQLite"],
            Some("SQLite"),
            deadline,
        )
        .await;
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
                        .asks()
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
                    match h.asks().apply_due_defaults().await {
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
            if a.asks().apply_due_defaults().await.unwrap() == 1 {
                wins.push("default");
            }
        }
        assert_eq!(wins.len(), 1, "round {round}: winners {wins:?}");
        *outcomes.entry(wins[0]).or_default() += 1;
        let deliveries = db
            .store
            .deliveries_for_messages(std::slice::from_ref(&asked_id))
            .await
            .unwrap();
        assert_eq!(deliveries.len(), 1, "round {round}: one delivery row");
        let m = a.store().get_message(&asked_id).await.unwrap().unwrap();
        assert_eq!(m.state, MessageState::Answered);
        let by_default = a
            .asks()
            .choices_for(std::slice::from_ref(&m.id))
            .await
            .unwrap()[&m.id]
            .answered_by_default();
        assert_eq!(by_default, wins[0] == "default", "round {round}");
        if by_default {
            assert_eq!(m.reply_text.as_deref(), Some("SQLite"));
        } else {
            assert!(m.reply_text.unwrap().starts_with("person "));
        }
    }
    eprintln!("winners over the rounds: {outcomes:?}");
}
