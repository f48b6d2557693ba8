//! `StatsStore` on a real SQLite file: counts by state (outbox included)
//! and the answer-time histogram counted in SQL.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{Harness, HarnessConfig, ids, store::StatsStore, tasks::CreateTask};
use harness_store::{SqliteOptions, SqliteStore};

async fn open(dir: &tempfile::TempDir) -> (String, SqliteStore, Harness) {
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let harness = Harness::new(
        Arc::new(store.clone()),
        HarnessConfig::new(ids::token_hash("admin")),
    );
    (url, store, harness)
}

/// One answered ask whose question was asked `age` ago and answered after `wait_ms`.
async fn answered(h: &Harness, pool: &sqlx::SqlitePool, age: Duration, wait_ms: i64) {
    let t = h
        .create_task(CreateTask {
            title: Some("t".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id;
    let ask = h.ask(&t, Some("?")).await.unwrap();
    h.reply(&harness_core::auth::Person::admin(), &t, Some("ok"), true)
        .await
        .unwrap();
    let created = (Utc::now() - age).timestamp_millis();
    sqlx::query("UPDATE harness_messages SET created_at = ?, replied_at = ? WHERE id = ?")
        .bind(created)
        .bind(created + wait_ms)
        .bind(&ask.request_id)
        .execute(pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn answer_histogram_counts_waits_into_buckets_in_sql() {
    let dir = tempfile::tempdir().unwrap();
    let (url, store, h) = open(&dir).await;
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let hour = Duration::hours(1);
    answered(&h, &pool, hour, 500).await; // ≤ 1 s
    answered(&h, &pool, hour, 1_000).await; // ≤ 1 s (bounds are inclusive)
    answered(&h, &pool, hour, 3_000).await; // (2, 4]
    answered(&h, &pool, hour, 100_000).await; // above the last bound
    answered(&h, &pool, Duration::days(10), 500).await; // before `since`: not counted
    // An open ask is not counted either.
    let open_task = h
        .create_task(CreateTask {
            title: Some("open".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id;
    h.ask(&open_task, Some("still open?")).await.unwrap();

    let bounds = [1.0, 2.0, 4.0, 8.0];
    let hist = store
        .answer_histogram(Utc::now() - Duration::days(7), &bounds)
        .await
        .unwrap();
    assert_eq!(hist.counts, vec![2, 0, 1, 0, 1]);
    assert_eq!(hist.total(), 4);
    assert!(
        (hist.sum_seconds - 104.5).abs() < 1e-9,
        "{}",
        hist.sum_seconds
    );

    let empty = store
        .answer_histogram(Utc::now() + Duration::days(1), &bounds)
        .await
        .unwrap();
    assert_eq!(empty.counts, vec![0; 5]);
    assert_eq!(empty.sum_seconds, 0.0);
}

#[tokio::test]
async fn counts_include_outbox_rows_by_state_with_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let (url, store, _h) = open(&dir).await;
    assert!(store.counts().await.unwrap().outbound.is_empty());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let now = Utc::now().timestamp_millis();
    for (id, state, attempts) in [
        ("o1", "PENDING", 0),
        ("o2", "FAILED", 3),
        ("o3", "FAILED", 2),
    ] {
        sqlx::query(
            "INSERT INTO harness_outbound (id, dedup_key, gateway, scope, expect_reply, message, \
             state, attempts, created_at, updated_at) VALUES (?, ?, 'hermes', 'work', 0, 'hi', ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(format!("k-{id}"))
        .bind(state)
        .bind(attempts)
        .bind(now)
        .bind(now)
        .execute(&pool)
        .await
        .unwrap();
    }
    let counts = store.counts().await.unwrap();
    assert_eq!(
        counts.outbound,
        vec![("FAILED".to_string(), 2, 5), ("PENDING".to_string(), 1, 0)]
    );
}
