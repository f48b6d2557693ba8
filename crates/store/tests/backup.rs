//! The backup module against real SQLite files.

use harness_store::{SqliteOptions, SqliteStore, backup};

async fn store(dir: &std::path::Path, name: &str) -> (String, SqliteStore) {
    let url = format!("sqlite://{}", dir.join(name).display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    (url, store)
}

#[tokio::test]
async fn a_backup_from_a_newer_schema_is_refused_and_the_database_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (url, store) = store(dir.path(), "live.db").await;
    let copy = dir.path().join("copy.db");
    let summary = backup::backup(&url, &copy).await.unwrap();
    assert_eq!(summary.schema_version, backup::supported_schema_version());
    assert!(summary.tables.iter().any(|(t, _)| t == "tasks"));
    store.close().await;

    // Pretend a newer binary wrote it.
    {
        let (copy_url, _) = (format!("sqlite://{}", copy.display()), ());
        let pool = sqlx::SqlitePool::connect(&copy_url).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99999, 'future', 1, x'00', 0)",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
    }
    let target = dir.path().join("target.db");
    std::fs::write(&target, b"keep me").unwrap();
    let target_url = format!("sqlite://{}", target.display());
    let err = backup::restore(&target_url, &copy).await.unwrap_err();
    assert!(err.to_string().contains("newer Harness"), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
}

#[tokio::test]
async fn a_restored_copy_opens_and_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let (url, store) = store(dir.path(), "live.db").await;
    let copy = dir.path().join("copy.db");
    backup::backup(&url, &copy).await.unwrap();
    store.close().await;
    let fresh = format!("sqlite://{}", dir.path().join("fresh/harness.db").display());
    let restored = backup::restore(&fresh, &copy).await.unwrap();
    assert!(restored.previous.is_none());
    let reopened = SqliteStore::open(SqliteOptions::new(&fresh)).await.unwrap();
    reopened.close().await;
}
