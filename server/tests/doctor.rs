//! `harness doctor`'s gateway-CLI check against a running server: the
//! configured notify targets' CLIs are read over REST and run.

mod common;

use std::os::unix::fs::PermissionsExt;

use harness_server::doctor::{self, Outcome};
use reqwest::StatusCode;
use serde_json::json;

async fn gateway_lines(data_dir: &std::path::Path) -> Vec<(Outcome, String)> {
    let inputs = doctor::Inputs {
        data_dir: data_dir.to_path_buf(),
        site_root: None,
        min_free_bytes: 0,
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
