//! A node that stalls past the dead-after without crashing (a paused VM, a
//! frozen process): the survivors declare it dead, fence its boot and take
//! its work over; when it wakes, its heartbeat is refused and it stops —
//! its agents with it — instead of running beside their replacements
//!. Real `harness serve` processes on PostgreSQL; SIGSTOP /
//! SIGCONT stand for the stall.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::cluster::{node, node_id, pool, share_secrets};
use crate::common;

/// Processes of this user whose environment holds `mark` (the agent).
fn processes_with(mark: &str) -> Vec<u32> {
    common::process::pids_with("environ", mark)
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_that_stalls_past_the_dead_after_is_fenced_and_stops_with_its_agents_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sent.jsonl");
    let (da, db_) = (dir.path().join("a"), dir.path().join("b"));
    let mut a = node(&da, &db.url, &record, "ok").await;
    share_secrets(&da, &db_);
    let b = node(&db_, &db.url, &record, "ok").await;
    let p = pool(&db.url).await;

    let mark = format!("HARNESS_FENCE_TEST={}", harness_core::ids::new_id());
    let (key, value) = mark.split_once('=').unwrap();
    let (st, t) = a
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "on node A", "agent": {
                "provider": "command", "command": [common::double().display().to_string()],
                "cwd": std::env::temp_dir(),
                "env": {"HARNESS_DOUBLE_SCRIPT": "say up\nsleep 600000", key: value}}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let (st, body) = a.call("POST", &format!("/api/tasks/{t}/start"), None).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_with(&mark).is_empty() {
        assert!(Instant::now() < deadline, "the agent never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A stalls (heartbeat every 1 s, dead after 5 s): B declares it dead,
    // fences its boot and interrupts its run.
    signal(a.child.id(), "-STOP");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status: String = sqlx::query_scalar("SELECT status FROM executions WHERE task_id = $1")
            .bind(&t)
            .fetch_one(&p)
            .await
            .unwrap();
        if status == "FAILED" {
            break;
        }
        assert!(Instant::now() < deadline, "B never recovered A ({status})");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (boot, fenced): (String, Option<String>) =
        sqlx::query_as("SELECT boot, fenced_boot FROM harness_nodes WHERE id = $1")
            .bind(node_id(&da))
            .fetch_one(&p)
            .await
            .unwrap();
    assert_eq!(fenced.as_deref(), Some(boot.as_str()), "A's boot is fenced");
    assert!(
        !processes_with(&mark).is_empty(),
        "the stalled node's agent still runs"
    );

    // A wakes: its next heartbeat is refused; it stops with an error, and
    // its agent with it.
    signal(a.child.id(), "-CONT");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = a.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the fenced node kept running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        !status.success(),
        "a fenced node exits with an error: {status}"
    );
    let log = std::fs::read_to_string(da.join("server.log")).unwrap();
    assert!(log.contains("declared dead by the cluster"), "{log}");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !processes_with(&mark).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the fenced node's agent survived it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Its row stays dead and fenced (the refused heartbeats wrote nothing).
    let alive: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM harness_nodes WHERE id = $1 AND heartbeat_at > \
         CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) - 2000",
    )
    .bind(node_id(&da))
    .fetch_one(&p)
    .await
    .unwrap();
    assert_eq!(alive, 0);

    // The task resumes on B, the survivor: one live run, B's.
    let (st, body) = b.call("POST", &format!("/api/tasks/{t}/start"), None).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let live: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT node_id FROM executions WHERE task_id = $1 AND status IN ('RUNNING', 'PAUSED')",
    )
    .bind(&t)
    .fetch_all(&p)
    .await
    .unwrap();
    assert_eq!(live, vec![Some(node_id(&db_))]);
    p.close().await;
    b.stop();
}
