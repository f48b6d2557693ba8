//! `harness doctor`'s gateway-CLI check against a running server: the
//! configured notify targets' CLIs are read over REST and run.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use harness_server::doctor::{self, Outcome};
use reqwest::StatusCode;
use serde_json::json;

async fn gateway_lines(data_dir: &std::path::Path) -> Vec<(Outcome, String)> {
    let inputs = doctor::Inputs {
        data_dir: data_dir.to_path_buf(),
        site_root: None,
        min_free_bytes: 0,
        database_url: None,
    };
    tokio::task::spawn_blocking(move || doctor::run(&inputs))
        .await
        .unwrap()
        .into_iter()
        .filter(|c| c.name == "gateway CLI")
        .map(|c| (c.outcome.clone(), c.line()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_runs_the_configured_gateway_clis() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;

    // Nothing configured: passes.
    let lines = gateway_lines(dir.path()).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].0, Outcome::Pass, "{lines:?}");

    let bin = tempfile::tempdir().unwrap();
    let cli = bin.path().join("hermes-cli");
    std::fs::write(&cli, "#!/bin/sh\necho 'hermes 9.8.7'\n").unwrap();
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (status, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"hermes": {"cliPath": cli.display().to_string()}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(
                json!({"targets": [{"gateway": "hermes", "downstream": "feishu",
                "dest": "oc_doctor", "scope": "unattended"}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let lines = gateway_lines(dir.path()).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].0, Outcome::Pass, "{lines:?}");
    assert!(lines[0].1.contains("hermes 9.8.7"), "{lines:?}");

    // The configured CLI disappears: the check fails with its fix.
    std::fs::remove_file(&cli).unwrap();
    let lines = gateway_lines(dir.path()).await;
    assert_eq!(lines[0].0, Outcome::Fail, "{lines:?}");
    assert!(lines[0].1.contains("fix:"), "{lines:?}");
    s.shutdown().await;
}

/// Every check of a `harness doctor` run, as (name, outcome, line).
async fn all_checks(
    data_dir: &std::path::Path,
    database_url: Option<String>,
) -> Vec<(&'static str, Outcome, String)> {
    let inputs = doctor::Inputs {
        data_dir: data_dir.to_path_buf(),
        site_root: None,
        min_free_bytes: 0,
        database_url,
    };
    tokio::task::spawn_blocking(move || doctor::run(&inputs))
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.name, c.outcome.clone(), c.line()))
        .collect()
}

fn named<'a>(
    checks: &'a [(&'static str, Outcome, String)],
    name: &str,
) -> Vec<&'a (&'static str, Outcome, String)> {
    checks.iter().filter(|c| c.0 == name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_the_database_and_names_pg_dump_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();

    // A database Harness has not started on: a note, not a failure.
    let before = all_checks(dir.path(), Some(db.url.clone())).await;
    let database = named(&before, "database");
    assert_eq!(database.len(), 1, "{before:?}");
    assert_eq!(database[0].1, Outcome::Note, "{before:?}");
    assert!(
        database[0].2.contains("no Harness tables yet"),
        "{before:?}"
    );

    let s = common::start_on(dir.path(), Some(db.url.clone())).await;
    let checks = all_checks(dir.path(), Some(db.url.clone())).await;
    let database = named(&checks, "database");
    assert_eq!(database[0].1, Outcome::Pass, "{checks:?}");
    assert!(
        database[0].2.contains("PostgreSQL") && database[0].2.contains("(current)"),
        "{checks:?}"
    );
    // No SQLite file is expected; the secrets still are, and pass.
    assert!(
        checks.iter().all(|c| !c.2.contains("harness.db")),
        "{checks:?}"
    );
    let permissions = named(&checks, "permissions");
    assert_eq!(permissions.len(), 3, "{checks:?}");
    assert!(
        permissions.iter().all(|c| c.1 == Outcome::Pass),
        "{checks:?}"
    );
    assert_eq!(named(&checks, "server")[0].1, Outcome::Pass, "{checks:?}");
    // What to use instead of `harness backup`, with the exact command.
    let backup = named(&checks, "backup");
    assert_eq!(backup[0].1, Outcome::Note, "{checks:?}");
    assert!(
        backup[0]
            .2
            .contains("pg_dump --format=custom --no-owner --file")
            && backup[0].2.contains("pg_restore --clean"),
        "{checks:?}"
    );

    // A database that does not exist: the check fails with its fix.
    let missing = common::pg::with_database(&db.url, "harness_doctor_no_such_db");
    let checks = all_checks(dir.path(), Some(missing)).await;
    let database = named(&checks, "database");
    assert_eq!(database[0].1, Outcome::Fail, "{checks:?}");
    assert!(
        database[0].2.contains("does not answer") && database[0].2.contains("fix:"),
        "{checks:?}"
    );
    s.shutdown().await;
}
