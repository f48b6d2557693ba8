//! `harness backup` under write load, `harness restore` into a fresh data
//! directory, and the data-directory lock that keeps a restore (or a second
//! server) away from a running server. Real binary, real processes, real HTTP.

use std::{
    path::Path,
    process::{Command, Output, Stdio},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use crate::common;

use common::process::ServerProcess as Life;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

async fn create_task(client: &Client, base: &str, admin: &str, title: &str) -> String {
    let resp = client
        .post(format!("{base}/api/tasks"))
        .bearer_auth(admin)
        .json(&json!({"title": title, "agent": {"provider": "command", "command": ["true"]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let body: Value = resp.json().await.unwrap();
    body["id"].as_str().unwrap().to_string()
}

async fn tasks(client: &Client, base: &str, admin: &str) -> Vec<Value> {
    let resp = client
        .get(format!("{base}/api/tasks"))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    body.as_array()
        .or_else(|| body["tasks"].as_array())
        .cloned()
        .unwrap_or_else(|| panic!("unexpected task list {body}"))
}

fn harness(args: &[&str], data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backup_under_write_load_restores_every_row_into_a_fresh_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let file = tmp.path().join("snapshot.db");
    let life = Life::start(&a).await;
    let client = Client::new();
    let mut before = Vec::new();
    for i in 0..40 {
        before.push(create_task(&client, &life.base, &life.admin, &format!("before {i}")).await);
    }
    // Writers keep committing while the backup runs.
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..3 {
        let (client, base, admin, stop) = (
            client.clone(),
            life.base.clone(),
            life.admin.clone(),
            stop.clone(),
        );
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                create_task(&client, &base, &admin, &format!("during {w}/{n}")).await;
                n += 1;
            }
            n
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let file_arg = file.to_str().unwrap().to_string();
    let a_arg = a.clone();
    let out = tokio::task::spawn_blocking(move || harness(&["backup", &file_arg], &a_arg))
        .await
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let mut during = 0;
    for w in writers {
        during += w.await.unwrap();
    }
    assert!(out.status.success(), "backup failed: {}", text(&out));
    assert!(text(&out).contains("tasks"), "{}", text(&out));
    assert!(during > 0, "no write ran during the backup");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a backup holds the data; it must be private");
    }
    // A second backup never overwrites the first.
    let again = harness(&["backup", file.to_str().unwrap()], &a);
    assert!(!again.status.success());
    assert!(text(&again).contains("already exists"), "{}", text(&again));

    // While the server runs: no restore, no second server on the data dir.
    let refused = harness(&["restore", file.to_str().unwrap()], &a);
    assert!(!refused.status.success(), "restore ran under a live server");
    assert!(
        text(&refused).contains("stop it first"),
        "{}",
        text(&refused)
    );
    let second = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(&a)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !second.status.success(),
        "a second server shared the data dir"
    );
    assert!(
        text(&second).contains("another Harness process"),
        "{}",
        text(&second)
    );

    let original = tasks(&client, &life.base, &life.admin).await;
    life.stop();

    // Restore into a fresh data directory and read every row back over HTTP.
    let out = harness(&["restore", file.to_str().unwrap()], &b);
    assert!(out.status.success(), "restore failed: {}", text(&out));
    let restored_life = Life::start(&b).await;
    let restored = tasks(&client, &restored_life.base, &restored_life.admin).await;
    let by_id = |list: &[Value]| {
        list.iter()
            .map(|t| (t["id"].as_str().unwrap().to_string(), t.clone()))
            .collect::<std::collections::HashMap<_, _>>()
    };
    let (original, restored) = (by_id(&original), by_id(&restored));
    for id in &before {
        assert_eq!(
            original.get(id),
            restored.get(id),
            "task {id} differs after restore"
        );
    }
    // The snapshot is one consistent point: every restored row is a row the
    // original had, byte for byte, and nothing from after the copy is torn.
    for (id, row) in &restored {
        assert_eq!(
            original.get(id),
            Some(row),
            "restored row {id} is not an original row"
        );
    }
    assert!(restored.len() >= before.len());
    restored_life.stop();

    // Restoring over an existing database keeps the old one aside.
    let out = harness(&["restore", file.to_str().unwrap()], &b);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("before-restore"), "{}", text(&out));
    let kept = std::fs::read_dir(&b)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .contains("harness.db.before-restore-")
        });
    assert!(kept, "the replaced database was not kept");
}

#[tokio::test]
async fn restore_refuses_files_that_are_not_harness_backups_and_touches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d");
    std::fs::create_dir_all(&data).unwrap();
    let garbage = tmp.path().join("garbage.db");
    std::fs::write(&garbage, b"this is not a database").unwrap();
    let out = harness(&["restore", garbage.to_str().unwrap()], &data);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not a readable Harness database"),
        "{}",
        text(&out)
    );
    assert!(
        !data.join("harness.db").exists(),
        "a refused restore wrote a database"
    );
    let missing = harness(
        &["restore", tmp.path().join("nope.db").to_str().unwrap()],
        &data,
    );
    assert!(!missing.status.success());
    assert!(
        text(&missing).contains("no backup file"),
        "{}",
        text(&missing)
    );
}
