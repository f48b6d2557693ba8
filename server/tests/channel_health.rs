//! End to end: a test message whose gateway CLI cannot
//! even start fails once and is not sent again in the background, and the
//! Inbox's banner then says the channel does not work (it used to vanish as
//! soon as any channel existed).

use crate::common;

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::json;

async fn start(dir: &Path) -> common::Server {
    common::start_with(dir, |cfg| cfg.outbox.cli_timeout = Duration::from_secs(2)).await
}

async fn page(s: &common::Server, path: &str) -> String {
    s.client
        .get(s.url(path))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_test_message_is_not_retried_and_the_banner_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let missing = dir.path().join("no-such-gateway-cli");
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"hermes": {"cliPath": missing}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, added) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(json!({"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{added}");
    let id = added["id"].as_str().unwrap();

    // Before any attempt: no evidence against the channel, no banner.
    let html = page(&s, "/harness").await;
    assert!(!html.contains("id=\"no-channel\""), "{html}");

    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/settings/notify-targets/{id}/test"),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["state"], "DEAD", "tried once, given up: {out}");
    let row_id = out["outboundId"].as_str().unwrap().to_string();
    // Past the first backoff (2 s): still one attempt.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (_, row) = s
        .admin("GET", &format!("/api/outbound/{row_id}"), None)
        .await;
    assert_eq!(
        (row["state"].as_str(), row["attempts"].as_u64()),
        (Some("DEAD"), Some(1)),
        "{row}"
    );

    // The Inbox says the channel does not work.
    let html = page(&s, "/harness").await;
    assert!(
        html.contains("data-channel=\"failing\""),
        "the banner names the failing channel: {html}"
    );
    assert!(html.contains("phone"), "{html}");
    s.shutdown().await;
}
