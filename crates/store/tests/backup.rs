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

/// every file of a backup in progress is private from its
/// first byte (another local user once read the world-readable temporary
/// file while `VACUUM INTO` wrote it). The directory next to the destination
/// is watched from another thread during a backup of a 48 MiB database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_in_progress_is_private_from_the_first_byte() {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    };

    let dir = tempfile::tempdir().unwrap();
    let (url, store) = store(dir.path(), "live.db").await;
    {
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE filler (b BLOB)")
            .execute(&pool)
            .await
            .unwrap();
        for _ in 0..48 {
            sqlx::query("INSERT INTO filler VALUES (randomblob(1048576))")
                .execute(&pool)
                .await
                .unwrap();
        }
        pool.close().await;
    }
    let out = tempfile::tempdir().unwrap();
    // The destination directory itself is as a user has it (0755).
    std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dest = out.path().join("copy.db");
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        let root = out.path().to_path_buf();
        std::thread::spawn(move || {
            let mut seen: Vec<(String, u32, u64)> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let mut dirs = vec![root.clone()];
                while let Some(d) = dirs.pop() {
                    let Ok(entries) = std::fs::read_dir(&d) else {
                        continue;
                    };
                    for entry in entries.flatten() {
                        let Ok(meta) = entry.metadata() else { continue };
                        let name = entry.path().display().to_string();
                        if meta.is_dir() {
                            dirs.push(entry.path());
                        }
                        if name.ends_with("copy.db") {
                            continue; // the finished copy, renamed into place
                        }
                        seen.push((name, meta.permissions().mode() & 0o7777, meta.len()));
                    }
                }
            }
            seen
        })
    };
    let summary = backup::backup(&url, &dest).await.unwrap();
    stop.store(true, Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert!(summary.bytes > 40 * 1024 * 1024);
    assert!(
        seen.iter().any(|(_, _, len)| *len > 0),
        "the copy in progress was never observed: {seen:?}"
    );
    for (name, mode, _) in &seen {
        assert_eq!(
            mode & 0o077,
            0,
            "{name} was readable by others during the backup (mode {mode:o})"
        );
    }
    let mode = std::fs::metadata(&dest).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Nothing is left next to the copy.
    let left: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("copy.db")]);
    store.close().await;
}
