//! SIGKILL the real `harness serve` between the claim of a parent's inbox
//! and the injection of its batch, again and again on one data directory:
//! every child event ends typed into the parent exactly once (per the
//! double agent's input log, across its restarts), or is left in a batch
//! whose delivery is UNVERIFIED (caught mid-write: never typed twice) —
//! none lost, none doubled. `HARNESS_WB_KILL_ITERATIONS` (default 8) and
//! `HARNESS_KILL_SEED` change the run.

use crate::common;

use common::process::ServerProcess as Life;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// This file's helpers on the shared server process.
trait LifeExt {
    async fn inbox(&self, task: &str) -> Value;
    async fn screen(&self, task: &str) -> String;
    async fn ensure_parent(&self, parent: &str);
}

impl LifeExt for Life {
    async fn inbox(&self, task: &str) -> Value {
        self.call(Method::GET, &format!("/api/tasks/{task}/inbox"), None)
            .await
            .1
    }

    async fn screen(&self, task: &str) -> String {
        let (_, s) = self
            .call(Method::GET, &format!("/api/tasks/{task}/screen"), None)
            .await;
        s["text"].as_str().unwrap_or_default().to_string()
    }

    /// Start the parent unless it runs (a resumed delivery may have started it).
    async fn ensure_parent(&self, parent: &str) {
        let (status, body) = self
            .call(Method::POST, &format!("/api/tasks/{parent}/start"), None)
            .await;
        assert!(
            status == StatusCode::OK || status == StatusCode::CONFLICT,
            "{status} {body}"
        );
        // Running already: a parent that outlived the killed server in its
        // holder drew long ago (its banner may have scrolled away since).
        let running = status == StatusCode::CONFLICT;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen(parent).await;
            if screen.contains("parent ready") || (running && !screen.trim().is_empty()) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the parent never drew:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}
fn typed_batches(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<String>(l).ok())
        .filter_map(|l| {
            l.split("[Tower durable batch: ")
                .nth(1)
                .and_then(|rest| rest.split(']').next())
                .map(str::to_string)
        })
        .collect()
}

fn states(inbox: &Value, state: &str) -> usize {
    inbox["events"]
        .as_array()
        .map_or(0, |a| a.iter().filter(|e| e["state"] == state).count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_between_claim_and_injection_never_loses_or_doubles_a_batch() {
    sigkill_between_claim_and_injection(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_between_claim_and_injection_never_loses_or_doubles_a_batch_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        sigkill_between_claim_and_injection(Some(&db.url)).await;
    }
}

async fn sigkill_between_claim_and_injection(db: Option<&str>) {
    let iterations: u64 = std::env::var("HARNESS_WB_KILL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let mut seed: u64 = std::env::var("HARNESS_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let log = dir.path().join("parent-inputs.log");

    let life = Life::start_on(&data, db).await;
    let (_, p) = life
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"title": "parent", "agent": {
            "provider": "claude", "command": [common::double().display().to_string()],
            "cwd": std::env::temp_dir(), "env": {"HARNESS_DOUBLE_SCRIPT": "say parent ready",
                "HARNESS_DOUBLE_INPUT_LOG": log.display().to_string()}}})),
        )
        .await;
    let parent = p["id"].as_str().unwrap().to_string();
    let (_, c) = life
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"title": "flaky child", "parentTaskId": parent,
            "agent": {"provider": "command", "command": ["sh", "-c", "exit 1"]}})),
        )
        .await;
    let child = c["id"].as_str().unwrap().to_string();
    let mut life = life;
    for i in 0..iterations {
        // A new child failure: one more HIGH event in the parent's inbox.
        let before = life.inbox(&parent).await["events"]
            .as_array()
            .map_or(0, Vec::len);
        let (status, body) = life
            .call(Method::POST, &format!("/api/tasks/{child}/start"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while life.inbox(&parent).await["events"]
            .as_array()
            .map_or(0, Vec::len)
            <= before
        {
            assert!(Instant::now() < deadline, "no event for the child's exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        life.ensure_parent(&parent).await;
        // The parent's turn end opens the latch; the kill lands somewhere
        // between the claim and the injection (or after).
        let (status, _) = life
            .call(
                Method::POST,
                &format!("/api/tasks/{parent}/input"),
                Some(json!({"text": "!stop_hook"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(seed % 400)).await;
        eprintln!("iteration {i}: kill after {} ms", seed % 400);
        life.kill();
        life = Life::start_on(&data, db).await;
    }
    // Settle: the last life drains whatever is owed.
    let deadline = Instant::now() + Duration::from_secs(60);
    let final_inbox = loop {
        let inbox = life.inbox(&parent).await;
        // A batch on its way: its delivery is done, or UNVERIFIED (a person decides).
        let mut in_flight = false;
        for b in inbox["batches"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["state"] == "CLAIMED")
        {
            let (_, d) = life
                .call(
                    Method::GET,
                    &format!("/api/deliveries/{}", b["id"].as_str().unwrap()),
                    None,
                )
                .await;
            if d["state"] != "UNVERIFIED" {
                in_flight = true;
            }
        }
        // Claimed, its batch not written yet (the claim and the batch are
        // two transactions; a kill between them is released at the start).
        in_flight |= inbox["events"].as_array().is_some_and(|a| {
            a.iter()
                .any(|e| e["state"] == "PROCESSING" && e["batchId"].is_null())
        });
        let pending = states(&inbox, "PENDING");
        if pending == 0 && !in_flight {
            break inbox;
        }
        if pending > 0 && !in_flight {
            life.ensure_parent(&parent).await;
            let screen = life.screen(&parent).await;
            if screen.trim_end().ends_with('>') {
                life.call(
                    Method::POST,
                    &format!("/api/tasks/{parent}/input"),
                    Some(json!({"text": "!stop_hook"})),
                )
                .await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the inbox never settled: {inbox:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_millis(500)).await; // the double logs a moment after reading
    let typed = typed_batches(&log);
    let events = final_inbox["events"].as_array().unwrap();
    assert_eq!(
        events.len() as u64,
        iterations,
        "one event per child failure: {final_inbox:#}"
    );
    for b in final_inbox["batches"].as_array().unwrap() {
        let id = b["id"].as_str().unwrap();
        let n = typed.iter().filter(|t| *t == id).count();
        let (_, d) = life
            .call(Method::GET, &format!("/api/deliveries/{id}"), None)
            .await;
        match d["state"].as_str().unwrap() {
            "DELIVERED" => assert_eq!(n, 1, "batch {id} typed exactly once: {typed:?}"),
            "UNVERIFIED" => assert!(n <= 1, "batch {id} never typed twice: {typed:?}"),
            _ => assert_eq!(n, 0, "a failed batch {id} was not typed: {typed:?} {d}"),
        }
    }
    for e in events {
        let state = e["state"].as_str().unwrap();
        assert!(
            ["DELIVERED", "CONSUMED", "PROCESSING"].contains(&state),
            "no event left behind: {e}"
        );
        if state == "PROCESSING" {
            let (_, d) = life
                .call(
                    Method::GET,
                    &format!(
                        "/api/deliveries/{}",
                        e["batchId"].as_str().unwrap_or_else(|| panic!(
                            "a PROCESSING event without its batch: {e}\n{final_inbox:#}"
                        ))
                    ),
                    None,
                )
                .await;
            assert_eq!(d["state"], "UNVERIFIED", "{e} {d}");
        }
    }
    eprintln!("typed batches: {typed:?}");
    life.kill();
}
