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
                restart_on_interrupt: false,
                recovery: None,
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
                restart_on_interrupt: false,
                recovery: None,
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

/// Migration 0014 keys the delivery mapping per chat: rows mapped before
/// keep their id and values and get the gateway of their outbound row ('' when
/// it is gone); afterwards the same message id in another chat is a second
/// row instead of replacing the first.
#[tokio::test]
async fn the_delivery_mapping_becomes_per_chat_with_its_rows() {
    use harness_core::store::GatewayStore;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let pool = store.writer_pool();
    // Back to the schema before 0014, with a mapping written then.
    for sql in [
        "DROP TABLE gateway_replies",
        "DROP TABLE gateway_inbound",
        "DROP TABLE gateway_nonces",
        "DROP TABLE harness_delivery_map",
        "CREATE TABLE harness_delivery_map (id TEXT PRIMARY KEY NOT NULL, harness_message_id TEXT, \
         task_id TEXT, outbound_id TEXT, platform TEXT NOT NULL, chat_id TEXT NOT NULL DEFAULT '', \
         platform_message_id TEXT NOT NULL, scope TEXT NOT NULL, \
         expect_reply INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL)",
        "INSERT INTO harness_outbound (id, dedup_key, gateway, scope, message, state, created_at, \
         updated_at) VALUES ('o1', 'k1', 'openclaw', 'work', 'm', 'DELIVERED', 1, 1)",
        "INSERT INTO harness_delivery_map VALUES ('telegram:77', NULL, 'ct', 'o1', 'telegram', \
         '-100111', '77', 'work', 1, 1000)",
        "INSERT INTO harness_delivery_map VALUES ('feishu:om_1', NULL, 'cu', 'gone', 'feishu', \
         'oc_a', 'om_1', 'unattended', 0, 2000)",
        "DELETE FROM _sqlx_migrations WHERE version = 14",
    ] {
        sqlx::query(sql).execute(pool).await.unwrap();
    }
    store.close().await;

    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    let kept = store
        .delivery_mappings("openclaw", "telegram", "77")
        .await
        .unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (
            kept[0].id.as_str(),
            kept[0].gateway.as_str(),
            kept[0].task_id.as_deref()
        ),
        ("telegram:77", "openclaw", Some("ct"))
    );
    assert_eq!(kept[0].chat_id, "-100111");
    assert!(kept[0].expect_reply);
    // Its outbound row is gone: no gateway, found through any gateway.
    let orphan = store
        .delivery_mappings("hermes", "feishu", "om_1")
        .await
        .unwrap();
    assert_eq!(orphan.len(), 1);
    assert_eq!(orphan[0].gateway, "");
    // The same id in a second chat is a second row.
    sqlx::query(
        "INSERT INTO harness_delivery_map (id, gateway, task_id, platform, chat_id, \
         platform_message_id, scope, created_at) \
         VALUES ('o2', 'openclaw', 'cv', 'telegram', '-100222', '77', 'work', 3000)",
    )
    .execute(store.writer_pool())
    .await
    .unwrap();
    let both = store
        .delivery_mappings("openclaw", "telegram", "77")
        .await
        .unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(both[0].task_id.as_deref(), Some("cv"), "newest first");
    store.close().await;
}
