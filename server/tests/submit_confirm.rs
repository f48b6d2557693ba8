//! The submit key, confirmed (`server/src/terminals/submit.rs`): a CLI that
//! takes a delivery's Enter as a newline of the paste (Claude Code busy
//! starting a resumed session under load did, leaving an approval unsent in
//! its box) gets the submit key again, and the text is submitted once. The
//! agent is `fixtures/agents/swallowing_box.py` run as a `claude` task: it
//! draws Claude Code's input box and swallows the first Enter after text.

use crate::common;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

async fn until(s: &common::Server, t: &str, what: &str, mut check: impl FnMut() -> bool) {
    let checked = || std::future::ready(check().then_some(()));
    common::until_with(what, Duration::from_secs(30), checked, || async {
        let (_, screen) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        let (_, rows) = s
            .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
            .await;
        format!(
            "screen:\n{}\ndeliveries: {rows}",
            screen["text"].as_str().unwrap_or_default()
        )
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn text_left_unsent_in_the_box_is_submitted_once_by_the_submit_key_again() {
    unsent_text_submitted_once(0).await;
}

/// The box gone for a moment after the Enter (a CLI busy redrawing when the
/// delivery first reads its screen) is not "no box": the screen is watched
/// until the box is back and the text in it is submitted. Real Claude Code
/// under load left an approval unsent this way (CI, stop 56 era).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_box_redrawn_after_the_enter_is_still_confirmed() {
    unsent_text_submitted_once(700).await;
}

async fn unsent_text_submitted_once(blank_ms: u64) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let log = dir.path().join("submitted.log"); // the agent's working directory
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/swallowing_box.py");
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "a busy box", "agent": {
                "provider": "claude", "command": ["python3", script.display().to_string()],
                "cwd": dir.path(), "env": {"SWALLOW_BLANK_MS": blank_ms.to_string()}}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let (status, body) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Typed once the box is drawn (its reader runs).
    let drawn = || async {
        let (_, screen) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        screen["text"]
            .as_str()
            .unwrap_or_default()
            .contains("0 submitted")
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !drawn().await {
        assert!(Instant::now() < deadline, "the box was never drawn");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let submitted = || std::fs::read_to_string(&log).unwrap_or_default();
    for (i, text) in ["the decision: approved", "and a second one"]
        .iter()
        .enumerate()
    {
        let (status, out) = s
            .admin(
                "POST",
                &format!("/api/tasks/{t}/input"),
                Some(json!({"text": text, "submit": true, "idempotencyKey": format!("k{i}")})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{out}");
        until(&s, &t, &format!("{text:?} submitted"), || {
            submitted().contains(text)
        })
        .await;
    }
    // Both deliveries done (the second confirms the box emptied), and
    // nothing more comes: each text once, no empty submit logged.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, rows) = s
            .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
            .await;
        let rows = rows.as_array().cloned().unwrap_or_default();
        if rows.len() == 2 && rows.iter().all(|r| r["state"] == "DELIVERED") {
            break;
        }
        assert!(Instant::now() < deadline, "{rows:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(2000)).await; // a third Enter would land by now
    assert_eq!(
        submitted(),
        "the decision: approved\nand a second one\n",
        "each text submitted exactly once"
    );
}
