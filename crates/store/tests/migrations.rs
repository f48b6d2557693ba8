//! SQLite migrations on databases that already hold data.

use chrono::Utc;
use harness_core::{
    ids,
    model::{AgentConfig, ExecutionStatus, Provider},
    store::{MessageStore, NewExecution, NewTask, StoreError, TaskStore},
};
use harness_store::{SqliteOptions, SqliteStore};

/// Migration 0005 adds the invariants (one OPEN ask, one live execution per
/// task) as unique indexes. A database written before it may break them; the
/// migration repairs such data first (the newest row wins) instead of
/// failing, and afterwards a violating write is refused as a duplicate.
#[tokio::test]
async fn invariants_migration_repairs_violating_data_first() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let task_id = ids::new_id();
    store
        .create_task(NewTask {
            id: task_id.clone(),
            title: "old data".into(),
            description: None,
            project_id: None,
            parent_task_id: None,
            agent: AgentConfig {
                provider: Provider::Command,
                command: Some(vec!["true".into()]),
                cwd: None,
                env: Default::default(),
            },
            now: Utc::now(),
        })
        .await
        .unwrap();
    // Back to the schema before 0005, then write what it forbids.
    let pool = store.writer_pool();
    for sql in [
        "DROP INDEX harness_messages_one_open_ask",
        "DROP INDEX executions_one_live",
        "DELETE FROM _sqlx_migrations WHERE version = 5",
    ] {
        sqlx::query(sql).execute(pool).await.unwrap();
    }
    let (old_ask, new_ask) = (ids::new_id(), ids::new_id());
    for (id, at) in [(&old_ask, 1_000), (&new_ask, 2_000)] {
        sqlx::query(
            "INSERT INTO harness_messages (id, task_id, kind, state, content, created_at) \
             VALUES (?, ?, 'ask', 'OPEN', 'q', ?)",
        )
        .bind(id)
        .bind(&task_id)
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
    }
    let (old_exec, new_exec) = (ids::new_id(), ids::new_id());
    for (id, status, at) in [(&old_exec, "RUNNING", 1_000), (&new_exec, "PAUSED", 2_000)] {
        sqlx::query(
            "INSERT INTO executions (id, task_id, status, token_hash, created_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(&task_id)
        .bind(status)
        .bind(ids::token_hash(id))
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
    }
    store.close().await;

    // Reopening runs 0005 again: repair, then the indexes.
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let state = |id: String| {
        let pool = store.writer_pool().clone();
        async move {
            sqlx::query_as::<_, (String, Option<String>)>(
                "SELECT state, NULL FROM harness_messages WHERE id = ? \
                 UNION ALL SELECT status, end_reason FROM executions WHERE id = ?",
            )
            .bind(&id)
            .bind(&id)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    assert_eq!(state(old_ask).await.0, "CANCELLED");
    assert_eq!(state(new_ask.clone()).await.0, "OPEN");
    assert_eq!(
        state(old_exec).await,
        ("FAILED".to_string(), Some("interrupted".to_string()))
    );
    assert_eq!(state(new_exec.clone()).await.0, "PAUSED");
    assert_eq!(store.open_ask(&task_id).await.unwrap().unwrap().id, new_ask);
    assert_eq!(
        store.live_execution(&task_id).await.unwrap().unwrap().id,
        new_exec
    );
    // The invariant now holds for every writer.
    let err = store
        .create_execution(NewExecution {
            id: ids::new_id(),
            task_id: task_id.clone(),
            token_hash: ids::token_hash("another"),
            status: ExecutionStatus::Running,
            node_id: None,
            now: Utc::now(),
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Duplicate(_)), "{err:?}");
    let err = sqlx::query(
        "INSERT INTO harness_messages (id, task_id, kind, state, content, created_at) \
         VALUES (?, ?, 'ask', 'OPEN', 'again', 3000)",
    )
    .bind(ids::new_id())
    .bind(&task_id)
    .execute(store.writer_pool())
    .await
    .unwrap_err();
    assert!(err.to_string().contains("UNIQUE"), "{err}");
    store.close().await;
}

/// Migration 0008 widens the state CHECK in place: PENDING_DELIVERY is
/// accepted, other unknown states are still refused, the file is sound.
#[tokio::test]
async fn the_state_check_is_widened_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let t = ids::new_id();
    store
        .create_task(NewTask {
            id: t.clone(),
            title: "Fix CI".into(),
            description: None,
            project_id: None,
            parent_task_id: None,
            agent: AgentConfig {
                provider: Provider::Command,
                command: Some(vec!["true".into()]),
                cwd: None,
                env: Default::default(),
            },
            now: Utc::now(),
        })
        .await
        .unwrap();
    let pool = store.writer_pool();
    let insert = |state: &'static str| {
        sqlx::query(
            "INSERT INTO harness_messages (id, task_id, kind, state, content, created_at) VALUES (?, ?, 'notify', ?, 'x', 1)",
        )
        .bind(ids::new_id())
        .bind(t.clone())
        .bind(state)
        .execute(pool)
    };
    insert("PENDING_DELIVERY").await.unwrap();
    assert!(insert("BOGUS").await.is_err(), "the CHECK still holds");
    let sql: String =
        sqlx::query_scalar("SELECT sql FROM sqlite_master WHERE name = 'harness_messages'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(sql.matches("PENDING_DELIVERY").count(), 1, "{sql}");
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    store.close().await;
    // Reopened (a fresh connection reads the edited schema).
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM harness_messages WHERE state = 'PENDING_DELIVERY'",
    )
    .fetch_one(store.writer_pool())
    .await
    .unwrap();
    assert_eq!(n, 1);
}
