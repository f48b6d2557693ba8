//! SIGKILL the real `harness serve` while a gateway reply is being sent
//! (the CLI double hangs mid-send), restart it on the same data: the reply
//! is SENT_UNVERIFIED — it may have reached the chat — and is never sent
//! again, while the next reply goes out (docs/decisions.md D7/docs/decisions.md D9). On SQLite and
//! on PostgreSQL.

use crate::common;

use common::process::ServerProcess as Life;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

async fn start(data: &Path, db: Option<&str>, record: &Path, mode: &str) -> Life {
    Life::start_with(data, |cmd| {
        common::process::on_database(cmd, db);
        cmd.env("HARNESS_LOG", "warn")
            .env("HARNESS_OPENCLAW_BIN", DOUBLE)
            .env("GATEWAY_DOUBLE_RECORD", record)
            .env("GATEWAY_DOUBLE_MODE", mode);
    })
    .await
}

/// The state of the reply to the inbound message `pmid` (`None`: no row).
async fn state(data: &Path, db: Option<&str>, pmid: &str) -> Option<String> {
    const SQL: &str = "SELECT r.state FROM gateway_replies r \
         JOIN gateway_inbound i ON i.id = r.inbound_id WHERE i.platform_message_id = $1";
    match db {
        Some(url) => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            let s = sqlx::query_scalar(SQL)
                .bind(pmid)
                .fetch_optional(&pool)
                .await
                .unwrap();
            pool.close().await;
            s
        }
        None => {
            let url = format!("sqlite://{}?mode=ro", data.join("harness.db").display());
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            let s = sqlx::query_scalar(SQL)
                .bind(pmid)
                .fetch_optional(&pool)
                .await
                .unwrap();
            pool.close().await;
            s
        }
    }
}

async fn wait_state(data: &Path, db: Option<&str>, pmid: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = state(data, db, pmid).await;
        if got.as_deref() == Some(want) {
            return;
        }
        assert!(Instant::now() < deadline, "{pmid}: never {want}, {got:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn lines(record: &Path) -> Vec<Value> {
    if record.exists() {
        common::json_lines(record)
    } else {
        Vec::new()
    }
}

/// Continue task `task` from platform message `pmid` with the gateway token.
async fn continue_from(life: &Life, data: &Path, task: &str, pmid: &str) {
    let token = std::fs::read_to_string(data.join("secrets").join("gateway.token")).unwrap();
    let resp = life
        .client
        .put(format!("{}/api/internal/harness/gateway-task", life.base))
        .bearer_auth(token.trim())
        .json(
            &json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100777",
            "platformMessageId": pmid, "senderId": "42", "taskId": task, "content": "go on"}),
        )
        .send()
        .await
        .unwrap();
    let (st, out) = common::decode(resp).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["mode"], "continued_task", "{out}");
}

/// End the doubles a killed server left hanging (they and their children
/// are in their own process groups; the record names them).
fn end_hung_doubles(record: &Path) {
    for line in lines(record) {
        if line["hang"] == true {
            for pid in [&line["pid"], &line["childPid"]] {
                if let Some(pid) = pid.as_u64() {
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_reply_leaves_it_unverified_and_never_resent() {
    sigkill_mid_reply(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_reply_leaves_it_unverified_and_never_resent_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        sigkill_mid_reply(Some(&db.url)).await;
    }
}

async fn sigkill_mid_reply(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let record = dir.path().join("sent.jsonl");
    let life = start(&data, db, &record, "hang").await;
    life.set_owners("openclaw", &["42"]).await;
    let (st, t) = life
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "killed mid-reply",
                "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    continue_from(&life, &data, &task, "m1").await;

    // The double has started and hangs: the reply is mid-send. Kill.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !lines(&record).iter().any(|l| l["hang"] == true) {
        assert!(Instant::now() < deadline, "the reply was never attempted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state(&data, db, "m1").await.as_deref(), Some("SENDING"));
    life.kill();
    end_hung_doubles(&record);

    let life = start(&data, db, &record, "ok").await;
    wait_state(&data, db, "m1", "SENT_UNVERIFIED").await;
    // The next reply goes out; the interrupted one is not sent again.
    continue_from(&life, &data, &task, "m2").await;
    wait_state(&data, db, "m2", "DELIVERED").await;
    let sends = lines(&record);
    assert_eq!(sends.len(), 2, "one attempt each: {sends:?}");
    assert_eq!(sends[0]["hang"], true);
    assert_eq!(sends[1]["sent"], true);
    assert_eq!(
        state(&data, db, "m1").await.as_deref(),
        Some("SENT_UNVERIFIED")
    );
    life.stop();
}
