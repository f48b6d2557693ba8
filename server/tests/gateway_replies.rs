//! Gateway replies over real HTTP with the gateway CLI double (issue
//! 28.5): a queued continuation is acknowledged once, as a native reply to
//! the person's message (`--reply-to`), through the gateway's configured
//! CLI; a failed send is retried after its backoff; a send that may have
//! happened (an error that printed a message id) is SENT_UNVERIFIED and
//! never sent again.

use crate::common;

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");
const PATH: &str = "/api/internal/harness/gateway-task";

fn token(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("secrets").join("gateway.token"))
        .unwrap()
        .trim()
        .to_string()
}

/// `(state, attempts, platform message id, argv-free text)` of the reply to
/// the inbound message `pmid`, if one exists.
async fn reply_of(dir: &Path, pmid: &str) -> Option<(String, i64, Option<String>, String)> {
    let url = format!("sqlite://{}?mode=ro", dir.join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let rows: Vec<(String, i64, Option<String>, String)> = sqlx::query_as(
        "SELECT r.state, r.attempts, r.platform_message_id, r.content FROM gateway_replies r \
         JOIN gateway_inbound i ON i.id = r.inbound_id WHERE i.platform_message_id = ?1",
    )
    .bind(pmid)
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    assert!(rows.len() <= 1, "one reply per message: {rows:?}");
    rows.into_iter().next()
}

async fn wait_reply(dir: &Path, pmid: &str, state: &str) -> (String, i64, Option<String>, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let row = reply_of(dir, pmid).await;
        if let Some(row) = row.as_ref().filter(|r| r.0 == state) {
            return row.clone();
        }
        assert!(Instant::now() < deadline, "never {state}: {row:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn sends_of(record: &Path, pmid: &str) -> Vec<Value> {
    if !record.exists() {
        return Vec::new();
    }
    common::json_lines(record)
        .into_iter()
        .filter(|r| {
            r["argv"]
                .as_array()
                .is_some_and(|a| a.windows(2).any(|w| w[0] == "--reply-to" && w[1] == pmid))
                || r["text"].as_str().is_some_and(|t| t.contains(pmid))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_queued_continuation_is_acknowledged_once_as_a_native_reply() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(dir.path(), |cfg| {
        cfg.outbox.cli_timeout = Duration::from_secs(2)
    })
    .await;
    let record = dir.path().join("sends.jsonl");
    let control = dir.path().join("double-mode");
    std::fs::write(&control, "ok\n").unwrap();
    let gw = |_: &str| {
        json!({"cliPath": DOUBLE, "env": {"GATEWAY_DOUBLE_RECORD": record,
               "GATEWAY_DOUBLE_CONTROL": control},
               "accessPolicy": {"ownerIds": {"telegram": ["42"]}}})
    };
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": gw("openclaw"), "hermes": gw("hermes")})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let token = token(dir.path());
    let t = s.task("acknowledge me").await;
    let body = |gateway: &str, pmid: &str| {
        json!({"gateway": gateway, "platform": "telegram", "chatId": "-100777",
               "platformMessageId": pmid, "senderId": "42", "taskId": t,
               "content": "continue"})
    };

    // OpenClaw: a native reply to the person's message, once.
    let (st, out) = s
        .call("PUT", PATH, Some(&token), Some(body("openclaw", "m1")))
        .await;
    assert_eq!(
        (st, &out["mode"]),
        (StatusCode::OK, &json!("continued_task")),
        "{out}"
    );
    let (_, again) = s
        .call("PUT", PATH, Some(&token), Some(body("openclaw", "m1")))
        .await;
    assert_eq!(again["noOp"], true, "{again}");
    let (_, attempts, pmid, content) = wait_reply(dir.path(), "m1", "DELIVERED").await;
    assert_eq!(attempts, 1);
    assert!(content.contains("acknowledge me"), "{content}");
    let sends = sends_of(&record, "m1");
    assert_eq!(sends.len(), 1, "{sends:?}");
    let argv: Vec<&str> = sends[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        &argv[..8],
        [
            "message",
            "send",
            "--channel",
            "telegram",
            "--target",
            "-100777",
            "--reply-to",
            "m1"
        ]
    );
    assert_eq!(pmid.as_deref(), sends[0]["messageId"].as_str());

    // A failed send (nothing posted) is retried after its backoff.
    std::fs::write(&control, "fail\n").unwrap();
    let (_, out) = s
        .call("PUT", PATH, Some(&token), Some(body("hermes", "m2")))
        .await;
    assert_eq!(out["mode"], "continued_task", "{out}");
    let (_, attempts, _, _) = wait_reply(dir.path(), "m2", "FAILED").await;
    assert_eq!(attempts, 1);
    std::fs::write(&control, "ok\n").unwrap();
    let (_, attempts, _, _) = wait_reply(dir.path(), "m2", "DELIVERED").await;
    assert_eq!(attempts, 2);
    let hermes: Vec<Value> = common::json_lines(&record)
        .into_iter()
        .filter(|r| r["gateway"] == "hermes")
        .collect();
    assert_eq!(hermes.len(), 2, "{hermes:?}");
    assert_eq!(hermes[0]["target"], "telegram:-100777");
    assert_eq!(
        (&hermes[0]["sent"], &hermes[1]["sent"]),
        (&json!(false), &json!(true))
    );

    // A send that may have happened is never sent again: the next reply
    // goes out while this one stays SENT_UNVERIFIED with its one send.
    std::fs::write(&control, "error-id\n").unwrap();
    s.call("PUT", PATH, Some(&token), Some(body("openclaw", "m3")))
        .await;
    let (_, _, pmid, _) = wait_reply(dir.path(), "m3", "SENT_UNVERIFIED").await;
    assert!(pmid.is_some(), "the printed id is kept");
    std::fs::write(&control, "ok\n").unwrap();
    s.call("PUT", PATH, Some(&token), Some(body("openclaw", "m4")))
        .await;
    wait_reply(dir.path(), "m4", "DELIVERED").await;
    assert_eq!(sends_of(&record, "m3").len(), 1);
    assert_eq!(
        reply_of(dir.path(), "m3").await.unwrap().0,
        "SENT_UNVERIFIED"
    );
    // A person decides (docs/decisions.md D9 follows docs/decisions.md D7): an unverified reply is marked
    // delivered (retrying it is tested in gateway_reply_actions.rs); an
    // unknown one is a 404.
    let id = reply_id(dir.path(), "m3").await;
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/gateway/replies/{id}/mark-delivered"),
            None,
        )
        .await;
    assert_eq!(
        (st, &out["state"]),
        (StatusCode::OK, &json!("DELIVERED")),
        "{out}"
    );
    assert_eq!(sends_of(&record, "m3").len(), 1);
    let (st, _) = s
        .admin(
            "POST",
            "/api/gateway/replies/cnotarealreplyid000000000/retry",
            None,
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    s.shutdown().await;
}

async fn reply_id(dir: &Path, pmid: &str) -> String {
    let url = format!("sqlite://{}?mode=ro", dir.join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let (id,): (String,) = sqlx::query_as(
        "SELECT r.id FROM gateway_replies r JOIN gateway_inbound i ON i.id = r.inbound_id \
         WHERE i.platform_message_id = ?1",
    )
    .bind(pmid)
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    id
}
