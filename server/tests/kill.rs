//! SIGKILL the real `harness serve` process at random points between the
//! answer and the injection, again and again on one data directory: every
//! answered ask must end typed into its agent's terminal exactly once, or
//! UNVERIFIED (caught mid-write: never written twice) — none lost.
//!
//! Each agent is a shell loop appending every line it reads to a transcript
//! file, so what reached the terminal is known across the agent's restarts.
//! `HARNESS_KILL_ITERATIONS` (default 50) and `HARNESS_KILL_SEED` change the
//! run; the default seed is fixed so CI is repeatable.

use crate::common;

use common::process::ServerProcess as Life;

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::json;

/// xorshift64*: a small deterministic generator (no extra dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Case {
    task: String,
    marker: String,
    transcript: PathBuf,
}

/// Wait for the case's ask to be settled: answered and delivered or
/// unverified (or never answered: the kill came before the reply).
/// Returns the final state word.
async fn settle(life: &Life, case: &Case) -> &'static str {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, rows) = life
            .call(
                reqwest::Method::GET,
                &format!("/api/tasks/{}/deliveries", case.task),
                None,
            )
            .await;
        let state = rows[0]["state"].as_str().unwrap_or_default().to_string();
        if rows.as_array().is_some_and(Vec::is_empty) {
            let (_, p) = life
                .call(
                    reqwest::Method::GET,
                    &format!("/api/internal/harness/pending?taskId={}", case.task),
                    None,
                )
                .await;
            assert_eq!(
                p["pending"], true,
                "no delivery row, so the ask must be unanswered: {p}"
            );
            eprintln!("unanswered at {}: rows {rows} pending {p}", life.base);
            return "unanswered";
        }
        match state.as_str() {
            "DELIVERED" => return "delivered",
            "UNVERIFIED" => return "unverified",
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "delivery of {} never settled: {rows}",
            case.task
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn count(case: &Case) -> usize {
    std::fs::read_to_string(&case.transcript)
        .unwrap_or_default()
        .matches(&case.marker)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_between_answer_and_injection_never_loses_or_repeats_a_reply() {
    sigkill_between_answer_and_injection(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_between_answer_and_injection_never_loses_or_repeats_a_reply_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        sigkill_between_answer_and_injection(Some(&db.url)).await;
    }
}

async fn sigkill_between_answer_and_injection(db: Option<&str>) {
    let iterations: usize = std::env::var("HARNESS_KILL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let seed: u64 = std::env::var("HARNESS_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let started = Instant::now();
    let mut waiting: Vec<Case> = Vec::new();
    let mut done: Vec<Case> = Vec::new();
    let mut unverified: Vec<String> = Vec::new();
    let mut tally = std::collections::BTreeMap::<&str, usize>::new();
    for i in 0..=iterations {
        let life = Life::start_on(&data, db).await;
        // What the previous life owed is done by this one.
        for case in waiting.drain(..) {
            let state = settle(&life, &case).await;
            // The agent appends what it read a moment after the write.
            let n = if state == "delivered" {
                let deadline = Instant::now() + Duration::from_secs(5);
                while count(&case) == 0 && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                count(&case)
            } else {
                count(&case)
            };
            match state {
                "delivered" if n != 1 => {
                    let (_, rows) = life
                        .call(
                            reqwest::Method::GET,
                            &format!("/api/tasks/{}/deliveries", case.task),
                            None,
                        )
                        .await;
                    let (_, view) = life
                        .call(
                            reqwest::Method::GET,
                            &format!("/api/tasks/{}", case.task),
                            None,
                        )
                        .await;
                    let log = std::fs::read_to_string(data.join("server.log")).unwrap_or_default();
                    let tail: Vec<&str> = log
                        .lines()
                        .filter(|l| l.contains(&case.task) || l.contains("deliver"))
                        .collect();
                    panic!(
                        "{} typed {n} times (seed {seed}): {rows}\n{view}\ntranscript: {:?}\nlog:\n{}",
                        case.marker,
                        std::fs::read_to_string(&case.transcript).unwrap_or_default(),
                        tail.join("\n")
                    );
                }
                "delivered" => {}
                "unverified" => assert!(n <= 1, "{} typed {n} times (seed {seed})", case.marker),
                _ if n != 0 => {
                    let log = std::fs::read_to_string(data.join("server.log")).unwrap_or_default();
                    let (_, view) = life
                        .call(
                            reqwest::Method::GET,
                            &format!("/api/tasks/{}", case.task),
                            None,
                        )
                        .await;
                    let (_, msgs) = life
                        .call(
                            reqwest::Method::GET,
                            &format!("/api/harness/messages?view=all&taskId={}", case.task),
                            None,
                        )
                        .await;
                    let (_, rows) = life
                        .call(
                            reqwest::Method::GET,
                            &format!("/api/tasks/{}/deliveries", case.task),
                            None,
                        )
                        .await;
                    panic!(
                        "an unanswered ask was typed: {} {} {view}\n{msgs}\n{rows}\n{log}",
                        case.marker, life.base
                    );
                }
                _ => {}
            }
            *tally.entry(state).or_default() += 1;
            if state == "unverified" {
                unverified.push(case.task.clone());
            }
            done.push(case);
        }
        if i == iterations {
            // An UNVERIFIED row is shown with its two actions; a person decides.
            if let Some(task) = unverified.first() {
                let page = life
                    .client
                    .get(format!("{}/tasks/{task}", life.base))
                    .bearer_auth(&life.admin)
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                assert!(
                    page.contains(r#"data-delivery-state="UNVERIFIED""#),
                    "{page}"
                );
                assert!(page.contains("delivery-again") && page.contains("delivery-mark"));
                let (_, rows) = life
                    .call(
                        reqwest::Method::GET,
                        &format!("/api/tasks/{task}/deliveries"),
                        None,
                    )
                    .await;
                let id = rows[0]["id"].as_str().unwrap().to_string();
                let (status, marked) = life
                    .call(
                        reqwest::Method::POST,
                        &format!("/api/deliveries/{id}/mark-delivered"),
                        None,
                    )
                    .await;
                assert_eq!(
                    (status, marked["state"].as_str()),
                    (StatusCode::OK, Some("DELIVERED"))
                );
            }
            life.kill();
            break;
        }
        // Two agents parked on an ask each, answered, then a kill at a random moment.
        let mut cases = Vec::new();
        let mut requests = Vec::new();
        for k in 0..2 {
            let work = dir.path().join(format!("t{i}-{k}"));
            std::fs::create_dir_all(&work).unwrap();
            let transcript = work.join("transcript.txt");
            let script = format!(
                "echo ready; while IFS= read -r l; do printf '%s\\n' \"$l\" >> '{}'; done",
                transcript.display()
            );
            let (status, t) = life
                .call(
                    reqwest::Method::POST,
                    "/api/tasks",
                    Some(json!({"title": format!("kill {i}-{k}"), "agent": {
                        "provider": "command", "command": ["sh", "-c", script], "cwd": work}})),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{t}");
            let task = t["id"].as_str().unwrap().to_string();
            let (status, out) = life
                .call(
                    reqwest::Method::POST,
                    &format!("/api/tasks/{task}/start"),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{out}");
            let (status, out) = life
                .call(
                    reqwest::Method::POST,
                    "/api/internal/harness/ask",
                    Some(json!({"taskId": task, "question": format!("Question {i}-{k}?")})),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{out}");
            cases.push(Case {
                task,
                marker: format!("answer-{i}-{k}-zq"),
                transcript,
            });
        }
        for case in &cases {
            let req = life
                .client
                .post(format!("{}/api/internal/harness/reply", life.base))
                .bearer_auth(&life.admin)
                .json(&json!({"taskId": case.task, "text": case.marker}));
            requests.push(tokio::spawn(async move {
                let _ = req.send().await;
            }));
            tokio::time::sleep(Duration::from_millis(rng.below(40))).await;
        }
        // Anywhere from before the answer commits to after the write.
        tokio::time::sleep(Duration::from_millis(rng.below(700))).await;
        life.kill();
        // A request of the dead server must not reach the next one.
        for r in requests {
            r.abort();
            let _ = r.await;
        }
        waiting = cases;
    }
    // Nothing was typed again by any later life.
    for case in &done {
        assert!(
            count(case) <= 1,
            "{} typed twice (seed {seed})",
            case.marker
        );
    }
    eprintln!(
        "{iterations} kills in {:.1} s (seed {seed}): {tally:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        tally.get("delivered").copied().unwrap_or(0) > 0,
        "nothing was ever delivered: {tally:?}"
    );
}
