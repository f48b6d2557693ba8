//! SIGKILL the real `harness serve` in the middle of a burst of routed
//! gateway messages, restart it on the same data and deliver every message
//! again (as a gateway retries): each message is then recorded exactly
//! once, and every recorded work request has exactly one Workbench event
//! and one acknowledgement — a crash between routing and the Workbench
//! enqueue cannot leave a message routed without its event, nor make a
//! redelivery act twice. On SQLite and on PostgreSQL.

use crate::common;

use common::process::ServerProcess as Life;

use std::{
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const ROUTE: &str = "/api/internal/harness/gateway";
/// Below the project's admission limit (100 queued); one chat each, so
/// the per-sender rate limit (30 a minute in one chat) does not apply.
const MESSAGES: usize = 80;

async fn start(data: &Path, db: Option<&str>) -> Life {
    Life::start_with(data, |cmd| {
        common::process::on_database(cmd, db);
        cmd.env("HARNESS_LOG", "warn")
            .env("HARNESS_OPENCLAW_BIN", "/bin/false");
    })
    .await
}

async fn scalar(data: &Path, db: Option<&str>, sql: &str) -> i64 {
    let sql = sqlx::AssertSqlSafe(sql.to_string());
    match db {
        Some(url) => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
        None => {
            let url = format!("sqlite://{}?mode=ro", data.join("harness.db").display());
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        }
    }
}

/// Waits until no session but this one is connected to `url`'s database.
async fn until_no_other_session(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    loop {
        let others: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if others == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the killed server's {others} database sessions never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pool.close().await;
}

fn message(i: usize) -> Value {
    json!({"gateway": "openclaw", "platform": "telegram", "chatId": format!("-{i}"),
        "platformMessageId": format!("m{i}"), "senderId": "42", "intent": "PROJECT_WORK",
        "project": "shop", "content": format!("request {i}")})
}

async fn route(life: &Life, token: &str, body: &Value) -> Result<(StatusCode, Value), ()> {
    let resp = life
        .client
        .post(format!("{}{ROUTE}", life.base))
        .bearer_auth(token)
        .json(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|_| ())?;
    Ok(common::decode(resp).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_routing_then_redelivery_records_each_message_once() {
    kill_mid_routing(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_routing_then_redelivery_records_each_message_once_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        kill_mid_routing(Some(&db.url)).await;
    } else {
        eprintln!("skipped: no PostgreSQL");
    }
}

async fn kill_mid_routing(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = start(&data, db).await;
    life.set_owners("openclaw", &["42"]).await;
    let path = dir.path().join("shop");
    std::fs::create_dir_all(&path).unwrap();
    let (st, out) = life
        .call(
            "POST",
            "/api/projects",
            Some(json!({"name": "shop", "path": path})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{out}");
    let token = std::fs::read_to_string(data.join("secrets/gateway.token"))
        .unwrap()
        .trim()
        .to_string();

    // A burst: every message twice, concurrently; SIGKILL once some are in.
    let life = Arc::new(life);
    let mut burst = Vec::new();
    for round in 0..2 {
        for i in 0..MESSAGES {
            let (life, token) = (life.clone(), token.clone());
            burst.push(tokio::spawn(async move {
                if round == 1 {
                    tokio::task::yield_now().await;
                }
                let _ = route(&life, &token, &message(i)).await;
            }));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while scalar(&data, db, "SELECT count(*) FROM gateway_inbound").await < 5 {
        assert!(Instant::now() < deadline, "no message was routed");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // SIGKILL by pid: requests in flight still hold the handle.
    let pid = life.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    for b in burst {
        let _ = b.await;
    }
    if let Ok(life) = Arc::try_unwrap(life) {
        life.kill(); // reaps it
    }
    if let Some(url) = db {
        // PostgreSQL still finishes what the killed server sent it (a
        // COMMIT already on the wire commits): count once its sessions
        // are gone.
        until_no_other_session(url).await;
    }
    let before = scalar(&data, db, "SELECT count(*) FROM gateway_inbound").await;
    eprintln!("{before} of {MESSAGES} messages were recorded before the kill");

    // Restarted, the gateway delivers every message again.
    let life = start(&data, db).await;
    let mut acted = 0;
    for i in 0..MESSAGES {
        let (st, out) = route(&life, &token, &message(i)).await.unwrap();
        assert_eq!(st, StatusCode::OK, "{out}");
        match out["mode"].as_str() {
            Some("project_work") => acted += 1,
            Some("in_progress") => {
                assert_eq!(out["state"], "QUEUED", "{out}");
                assert_eq!(out["originalMode"], "project_work", "{out}");
            }
            _ => panic!("m{i}: {out}"),
        }
    }
    assert_eq!(
        acted as i64 + before,
        MESSAGES as i64,
        "a message recorded before the kill never acts again"
    );
    assert_eq!(
        scalar(&data, db, "SELECT count(*) FROM gateway_inbound").await,
        MESSAGES as i64
    );
    let incomplete = "SELECT count(*) FROM gateway_inbound i WHERE i.state <> 'QUEUED' \
         OR i.session_id IS NULL \
         OR (SELECT count(*) FROM workbench_events e WHERE e.dedup_key = 'gateway-work:' || i.id) <> 1 \
         OR (SELECT count(*) FROM gateway_replies r WHERE r.inbound_id = i.id \
             AND r.kind = 'QUEUED_ACK') <> 1";
    assert_eq!(
        scalar(&data, db, incomplete).await,
        0,
        "every message has its session, one event and one acknowledgement"
    );
    assert_eq!(
        scalar(
            &data,
            db,
            "SELECT count(*) FROM workbench_events WHERE kind = 'GATEWAY_WORK_REQUEST'"
        )
        .await,
        MESSAGES as i64
    );
    life.kill();
}
