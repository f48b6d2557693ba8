//! SQLite's own connection settings: WAL with synchronous=NORMAL and
//! foreign keys, and WAL checkpoints run in the background (the backend
//! contract every store meets is `conformance/`).

use std::sync::Arc;

use harness_core::{Harness, HarnessConfig, ids, tasks::CreateTask};
use harness_store::{SqliteOptions, SqliteStore};

struct Db {
    _dir: tempfile::TempDir,
    url: String,
    store: SqliteStore,
    harness: Harness,
}

async fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let mut config = HarnessConfig::new(ids::token_hash("admin-secret"));
    // The checkpoint story asks hundreds of times on one task: past the
    // per-task rate limit, which is not what it tests (`rate_limit`).
    let unbounded = harness_core::rate_limit::Rate {
        burst: u32::MAX,
        every: std::time::Duration::from_secs(1),
    };
    config.rate_limits = harness_core::rate_limit::RateLimits {
        ask: unbounded,
        notify: unbounded,
        push: unbounded,
    };
    let harness = Harness::new(Arc::new(store.clone()), config);
    Db {
        _dir: dir,
        url,
        store,
        harness,
    }
}

async fn task(h: &Harness, title: &str) -> String {
    h.tasks()
        .create_task(CreateTask {
            title: Some(title.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id
}

#[tokio::test]
async fn sqlite_is_wal_normal_with_foreign_keys() {
    let db = db().await;
    let pool = db.store.writer_pool();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(pool)
        .await
        .unwrap();
    let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(pool)
        .await
        .unwrap();
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(sync, 1, "synchronous=NORMAL");
    assert_eq!(fk, 1);
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("timed out waiting until {what}");
}

/// WAL checkpoints run in the background, not inside commits; a reader that
/// pins old frames only delays them, and the backlog is copied once it ends.
#[tokio::test]
async fn the_wal_is_checkpointed_in_the_background_even_after_a_long_reader() {
    use sqlx::{ConnectOptions, Connection};
    let db = db().await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let auto: i64 = sqlx::query_scalar("PRAGMA wal_autocheckpoint")
        .fetch_one(db.store.writer_pool())
        .await
        .unwrap();
    assert_eq!(
        auto, 16_000,
        "the writer's own checkpoint is only a safety net"
    );

    // A reader holding a snapshot: frames written after it cannot be copied.
    let mut reader = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db.url.trim_start_matches("sqlite://"))
        .connect()
        .await
        .unwrap();
    let mut snapshot = reader.begin().await.unwrap();
    let _: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tasks")
        .fetch_one(&mut *snapshot)
        .await
        .unwrap();
    for i in 0..200 {
        h.asks()
            .ask(&t, Some(&format!("question {i}?")))
            .await
            .unwrap();
    }
    let stats = db.store.checkpoint_stats();
    let runs = stats.runs();
    wait_until("a checkpoint ran after the writes", || {
        stats.runs() > runs + 1
    })
    .await;
    assert!(
        stats.backlog() > 0,
        "frames pinned by the open reader stay in the WAL"
    );

    snapshot.rollback().await.unwrap();
    reader.close().await.unwrap();
    wait_until("the backlog is copied", || stats.backlog() == 0).await;
    assert_eq!(stats.errors(), 0);
    // Everything is still there.
    assert!(h.asks().pending(&t).await.unwrap().pending);
}
