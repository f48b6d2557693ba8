//! Several nodes on one PostgreSQL: the event bus is
//! LISTEN/NOTIFY, so an event published on one node reaches the live
//! subscribers of every node (a browser's SSE stream), caches are
//! invalidated cluster-wide (a setting written on node A is what node B
//! answers next, without a restart), a node never hears its own events
//! twice, and a lost LISTEN connection comes back and tells subscribers to
//! reload. Skipped (passes) without `HARNESS_TEST_POSTGRES_URL`.

use crate::common;

use std::time::{Duration, Instant};

use harness_core::HarnessEvent;
use reqwest::StatusCode;
use serde_json::json;

/// A browser's live stream: the SSE text received so far.
struct Sse {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    _reader: tokio::task::JoinHandle<()>,
}

impl Sse {
    async fn open(s: &common::Server) -> Self {
        let resp = s
            .client
            .get(s.url("/events/harness"))
            .bearer_auth(&s.admin)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = text.clone();
        let reader = tokio::spawn(async move {
            let mut resp = resp;
            while let Ok(Some(chunk)) = resp.chunk().await {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk));
            }
        });
        let sse = Self {
            text,
            _reader: reader,
        };
        sse.wait_for(": connected", Duration::from_secs(5)).await;
        sse
    }

    async fn wait_for(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let text = self.text.lock().unwrap().clone();
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "never saw {needle:?} in the stream: {text}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn two_nodes() -> Option<(
    common::pg::FreshDb,
    tempfile::TempDir,
    common::Server,
    common::Server,
)> {
    let db = common::pg::fresh().await?;
    let dir = tempfile::tempdir().unwrap();
    let a = common::start_on(&dir.path().join("a"), Some(db.url.clone())).await;
    let b = common::start_on(&dir.path().join("b"), Some(db.url.clone())).await;
    Some((db, dir, a, b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_event_on_one_node_reaches_a_browser_on_another_on_postgres() {
    let Some((_db, _dir, a, b)) = two_nodes().await else {
        return;
    };
    let on_b = Sse::open(&b).await;
    let mut on_a = a.running.harness.subscribe();
    let first = a.task("made on A").await;
    on_b.wait_for(&format!("\"taskId\":\"{first}\""), Duration::from_secs(5))
        .await;
    // A second event after it: once B has it, A's listener has had both
    // NOTIFYs too — and must have dropped them as its own.
    let second = a.task("also made on A").await;
    on_b.wait_for(&format!("\"taskId\":\"{second}\""), Duration::from_secs(5))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut seen = Vec::new();
    while let Ok(event) = on_a.try_recv() {
        if let HarnessEvent::TaskChanged { task_id } = event {
            seen.push(task_id);
        }
    }
    assert_eq!(
        seen,
        [first.clone(), second],
        "each of A's own events once on A"
    );
    // The other direction too.
    let on_a_sse = Sse::open(&a).await;
    let third = b.task("made on B").await;
    on_a_sse
        .wait_for(&format!("\"taskId\":\"{third}\""), Duration::from_secs(5))
        .await;
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_setting_changed_on_one_node_is_seen_by_another_without_restart_on_postgres() {
    let Some((_db, _dir, a, b)) = two_nodes().await else {
        return;
    };
    // B reads (and caches) the notify targets: none yet.
    let (st, before) = b.admin("GET", "/api/settings/notify-targets", None).await;
    assert_eq!(st, StatusCode::OK, "{before}");
    assert_eq!(before, json!([]), "{before}");
    let generation = b.running.harness.settings_generation();
    let (st, body) = a
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [
                {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"}
            ]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, now) = b.admin("GET", "/api/settings/notify-targets", None).await;
        if now[0]["dest"] == "4242" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "B still answers its cached targets: {now}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        b.running.harness.settings_generation() > generation,
        "B's settings caches (the outbox's) see the change too"
    );
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_listen_connection_comes_back_and_subscribers_reload_on_postgres() {
    let Some((db, _dir, a, b)) = two_nodes().await else {
        return;
    };
    let on_b = Sse::open(&b).await;
    let mut bus_b = b.running.harness.subscribe();
    // Cut every LISTEN connection of this database (B's and A's).
    let admin = sqlx::PgPool::connect(&db.url).await.unwrap();
    let killed: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&admin)
    .await
    .unwrap();
    assert_eq!(killed.len(), 2, "one LISTEN connection per node");
    // B's subscribers are told to reload once it listens again.
    on_b.wait_for("event: reload", Duration::from_secs(10))
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout(Duration::from_millis(100), bus_b.recv()).await {
            Ok(Ok(HarnessEvent::Resync)) => break,
            Ok(Ok(_)) | Err(_) => {}
            Ok(Err(err)) => panic!("bus closed: {err}"),
        }
        assert!(Instant::now() < deadline, "no Resync on B's bus");
    }
    // And it hears A again.
    let fresh = Sse::open(&b).await;
    let task = a.task("after the reconnect").await;
    fresh
        .wait_for(&format!("\"taskId\":\"{task}\""), Duration::from_secs(10))
        .await;
    admin.close().await;
    a.shutdown().await;
    b.shutdown().await;
}

/// A reply or keyed input received by node B for an agent on node A is A's
/// row; A's delivery worker is woken by B's NOTIFY (its poll set to a
/// minute here, so only the wake can make it in time) and types it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn work_queued_on_one_node_wakes_the_owners_worker_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let a = common::start_with(&dir.path().join("a"), |cfg| {
        cfg.database_url = Some(db.url.clone());
        cfg.deliveries.poll = Duration::from_secs(60);
    })
    .await;
    let b = common::start_on(&dir.path().join("b"), Some(db.url.clone())).await;
    let transcript = work.join("typed.txt");
    let script = format!(
        "while IFS= read -r line; do printf '%s\\n' \"$line\" >> '{}'; done",
        transcript.display()
    );
    let (status, task) = a
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "on node A", "agent": {
                "provider": "command", "command": ["sh", "-c", script], "cwd": work}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, body) = a
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Let A's worker go idle on its (long) poll first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let (status, sent) = b
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "woken from B", "submit": true, "idempotencyKey": "w1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    let deadline = started + Duration::from_secs(10);
    loop {
        let typed = std::fs::read_to_string(&transcript).unwrap_or_default();
        if typed.contains("woken from B") {
            assert_eq!(typed.matches("woken from B").count(), 1, "{typed}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "A's worker was not woken (its poll is 60 s): {typed:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    b.shutdown().await;
    a.shutdown().await;
}
