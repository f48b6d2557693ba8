//! The real outbox worker draining a queue through the gateway CLI double:
//! every row ends in the state its send earned, and the sender's writes come
//! in turns — one write transaction records the attempts that ended and
//! leases the next rows — so a drain of `n` messages takes at most about `n`
//! writes (one claim and one settle per message would be at least `1.25 n`).
//! The sender leases rows ahead of a free slot and commits each send's
//! "started" mark just before its spawn; a stop releases the rows it never
//! started.

use crate::common;

use std::time::{Duration, Instant};

use harness_server::workers::outbox::{self as sender, OutboxConfig};
use reqwest::StatusCode;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::outbox::{double_gateways, queued, sends_of};

fn writes(h: &harness_core::Harness) -> u64 {
    h.reports().transaction_latency().counts.iter().sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_is_sent_in_turns_of_one_write_each() {
    let dir = tempfile::tempdir().unwrap();
    // The server's own sender is off: the test starts one on a full queue.
    // (A push answers at once instead of waiting for a first attempt.)
    let s = common::start_with(dir.path(), |cfg| {
        cfg.outbox.max_in_flight = 0;
        cfg.outbox_wait = Duration::ZERO;
    })
    .await;
    let record = dir.path().join("sent.jsonl");
    let env = json!({"env": {"GATEWAY_DOUBLE_RECORD": record}});
    double_gateways(&s, &["openclaw"], env).await;
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let mut tasks = Vec::new();
    for k in 0..5 {
        tasks.push(s.task(&format!("drain {k}")).await);
    }
    // 100 messages: every tenth fails at the gateway, every seventh is a
    // question (its task parks).
    let n = 100;
    let mut ids = Vec::new();
    for i in 0..n {
        let text = if i % 10 == 0 {
            format!("message {i} [[double:fail]]")
        } else {
            format!("message {i}")
        };
        let (st, out) = s
            .admin(
                "POST",
                "/api/internal/harness/outbound",
                Some(json!({"taskId": tasks[i % tasks.len()], "message": text,
                    "scope": "work", "expectReply": i % 7 == 0})),
            )
            .await;
        assert_eq!(st, StatusCode::OK, "{out}");
        assert_eq!(out["state"], "PENDING", "nothing sends yet");
        ids.push(out["outboundId"].as_str().unwrap().to_string());
    }

    let h = s.running.harness.clone();
    let before = writes(&h);
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let config = OutboxConfig {
        max_in_flight: 4,
        ..OutboxConfig::default()
    };
    let owner = format!("{}:drain-test", h.config().node_id);
    let job = tokio::spawn(sender::run(h.clone(), owner, config, cancel.clone()));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = h.outbox().list_outbound(None, 500).await.unwrap();
        if rows.iter().filter(|r| r.state.attempted()).count() == n {
            break;
        }
        assert!(Instant::now() < deadline, "the queue did not drain");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed();
    let during = writes(&h) - before;
    cancel.cancel();
    job.await.unwrap();

    for (i, id) in ids.iter().enumerate() {
        let row = h.outbox().outbound(id).await.unwrap();
        let want = if i % 10 == 0 { "FAILED" } else { "DELIVERED" };
        assert_eq!(row.state.as_str(), want, "message {i}");
        assert_eq!(row.attempts, 1, "message {i}: one attempt in the drain");
        if want == "FAILED" {
            assert!(
                row.next_attempt_at.is_some(),
                "message {i}: due again later"
            );
        }
    }
    // Sent questions are OPEN asks (the last one of each task stands).
    for t in &tasks {
        let pending = h.asks().pending(t).await.unwrap();
        let asked = (0..n).any(|i| i % 7 == 0 && i % 10 != 0 && tasks[i % tasks.len()] == *t);
        assert_eq!(pending.pending, asked, "task {t}");
    }
    // Each turn settles what ended since the last one and leases the next
    // rows: at most one write per message, plus the first lease and a
    // claim-only turn per poll or wake-up.
    let bound = n as u64 + 3 + took.as_secs();
    eprintln!("{during} write transactions for {n} messages in {took:?}");
    assert!(
        during <= bound,
        "{during} write transactions for {n} messages in {took:?} (at most {bound})"
    );
    let sends = common::json_lines(&record);
    assert_eq!(sends.len(), n, "one CLI run per message");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_releases_the_rows_leased_ahead_and_never_started() {
    let dir = tempfile::tempdir().unwrap();
    // Each send takes 400 ms: one slot, so most rows wait in the queue.
    let (s, ids) = queued(dir.path(), "slow:400", "queued", 6).await;
    let record = dir.path().join("sent.jsonl");
    let h = s.running.harness.clone();
    let cancel = CancellationToken::new();
    let config = OutboxConfig {
        max_in_flight: 1,
        ..OutboxConfig::default()
    };
    let owner = format!("{}:stop-test", h.config().node_id);
    let job = tokio::spawn(sender::run(h.clone(), owner, config, cancel.clone()));
    // One send running, more rows leased ahead of the slot.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let rows = h.outbox().list_outbound(None, 50).await.unwrap();
        let sending = rows
            .iter()
            .filter(|r| r.state.as_str() == "SENDING")
            .count();
        if sending >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "nothing was leased ahead");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel();
    job.await.unwrap();

    // The send in flight finished (the drain); every other row is due
    // again with no attempt counted: a row's attempts are its real sends.
    let sends = common::json_lines(&record);
    assert!(!sends.is_empty(), "the running send finished");
    let mut released = 0;
    for (i, id) in ids.iter().enumerate() {
        let row = h.outbox().outbound(id).await.unwrap();
        let real = sends_of(&sends, "queued", i);
        assert_eq!(
            row.attempts as usize, real,
            "row {i}: attempts are real sends"
        );
        match row.state.as_str() {
            "DELIVERED" => assert_eq!(real, 1, "row {i}"),
            "PENDING" => {
                assert_eq!(real, 0, "row {i}");
                assert!(row.lease_owner.is_none(), "row {i}: no lease left");
                released += 1;
            }
            other => panic!("row {i} ended {other}"),
        }
    }
    assert!(released >= 1, "rows were leased ahead and released");
    // The database recorded exactly the starts.
    let mut marked = 0;
    for id in &ids {
        marked += usize::from(
            h.outbox()
                .outbound(id)
                .await
                .unwrap()
                .started_attempt
                .is_some(),
        );
    }
    assert_eq!(marked, sends.len(), "one started mark per start");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_row_whose_lease_ran_short_is_released_and_leased_again_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    // 1.5 s per send, one slot: the last rows leased at the start wait in
    // the queue while their 5 s lease runs down.
    let (s, ids) = queued(dir.path(), "slow:1500", "short", 4).await;
    let record = dir.path().join("sent.jsonl");
    let h = s.running.harness.clone();
    let cancel = CancellationToken::new();
    // Lease recovery every 100 ms: a row started with its lease almost
    // gone would be taken for a dead send (SENT_UNVERIFIED) mid-send.
    let config = OutboxConfig {
        max_in_flight: 1,
        lease: Duration::from_secs(5),
        cli_timeout: Duration::from_secs(3),
        recover_every: Duration::from_millis(100),
        ..OutboxConfig::default()
    };
    let owner = format!("{}:short-lease-test", h.config().node_id);
    let job = tokio::spawn(sender::run(h.clone(), owner, config, cancel.clone()));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows = h.outbox().list_outbound(None, 50).await.unwrap();
        if rows.iter().filter(|r| r.state.attempted()).count() == ids.len() {
            break;
        }
        assert!(Instant::now() < deadline, "the queue did not drain");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    job.await.unwrap();
    let sends = common::json_lines(&record);
    for (i, id) in ids.iter().enumerate() {
        let row = h.outbox().outbound(id).await.unwrap();
        assert_eq!(row.state.as_str(), "DELIVERED", "row {i}: {row:?}");
        assert_eq!(
            row.attempts, 1,
            "row {i}: a release does not count an attempt"
        );
        let real = sends_of(&sends, "short", i);
        assert_eq!(real, 1, "row {i}: sent once");
    }
    s.shutdown().await;
}

/// Lines in the double's record so far.
fn recorded(path: &std::path::Path) -> usize {
    std::fs::read(path).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_a_send_and_its_settle_never_frees_the_row() {
    // Sends that ended while their settle waits for a turn: a crash in that
    // window must leave the row SENT_UNVERIFIED (its started mark is in the
    // database), never released for the next life to send again.
    let dir = tempfile::tempdir().unwrap();
    let n = 240;
    let (s, ids) = queued(dir.path(), "ok", "seam", n).await;
    let record = dir.path().join("sent.jsonl");
    let h = s.running.harness.clone();
    let config = || OutboxConfig {
        max_in_flight: 4,
        ..OutboxConfig::default()
    };
    let node = h.config().node_id.clone();
    let mut seed: u64 = 0x5eed_5ea5;
    let mut caught_mid_flight = 0;
    for life in 0..8 {
        let before = recorded(&record);
        let job = tokio::spawn(sender::run(
            h.clone(),
            format!("{node}:seam-{life}"),
            config(),
            CancellationToken::new(),
        ));
        let deadline = Instant::now() + Duration::from_secs(20);
        while recorded(&record) < before + 12 {
            assert!(Instant::now() < deadline, "life {life} sent nothing");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        tokio::time::sleep(Duration::from_micros((seed >> 33) % 8000)).await;
        // The crash: the loop, its turn and its send tasks are dropped
        // wherever they are (an open transaction rolls back).
        job.abort();
        let _ = job.await;
        let rows = h.outbox().list_outbound(None, 500).await.unwrap();
        caught_mid_flight += rows
            .iter()
            .filter(|r| r.state.as_str() == "SENDING")
            .count();
    }
    assert!(caught_mid_flight > 0, "no crash caught a row mid-flight");
    let cancel = CancellationToken::new();
    let job = tokio::spawn(sender::run(
        h.clone(),
        format!("{node}:seam-last"),
        config(),
        cancel.clone(),
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = h.outbox().list_outbound(None, 500).await.unwrap();
        if rows.iter().filter(|r| r.state.attempted()).count() == n {
            break;
        }
        assert!(Instant::now() < deadline, "the queue did not drain");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    job.await.unwrap();
    // Killed CLIs may still be flushing their record: wait for it to settle.
    let mut last = usize::MAX;
    while recorded(&record) != last {
        last = recorded(&record);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let sends = common::json_lines(&record);
    let (mut unverified, mut never_sent) = (0, 0);
    for (i, id) in ids.iter().enumerate() {
        let row = h.outbox().outbound(id).await.unwrap();
        let real = sends_of(&sends, "seam", i);
        assert!(real <= 1, "row {i} was sent {real} times: {row:?}");
        match row.state.as_str() {
            "DELIVERED" => assert_eq!(real, 1, "row {i}"),
            "SENT_UNVERIFIED" => {
                unverified += 1;
                never_sent += usize::from(real == 0);
            }
            other => panic!("row {i} ended {other}"),
        }
    }
    // Sends that ended before their settle are rightly "may have been
    // sent"; only a CLI killed before it sent can be unverified unsent, at
    // most one per slot per crash.
    assert!(
        never_sent <= 8 * 4,
        "{never_sent} of {unverified} unverified rows never sent, after 8 crashes"
    );
    s.shutdown().await;
}
