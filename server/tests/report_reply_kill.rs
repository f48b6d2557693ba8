//! SIGKILL the real `harness serve` while it applies a numbered batch reply
//! to a morning report sent to chat — routed through
//! `route_gateway_message` (the gateway's `/api/internal/harness/gateway`,
//! the path the chat gateways use) — restart it on the same data and
//! deliver the same chat message again, as a gateway retries: every item
//! is applied exactly once (the items applied before the kill are reported
//! taken, "already, with this answer", never answered again or otherwise),
//! the answer back is given once (the retry's), and a further retry of the
//! same message applies nothing (`already_processed`). On SQLite and on
//! PostgreSQL.

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
/// Enough numbered items that the kill lands while they are applied.
const QUESTIONS: usize = 80;

async fn start(data: &Path, db: Option<&str>, record: &Path) -> Life {
    Life::start_with(data, |cmd| {
        common::process::on_database(cmd, db);
        cmd.env("HARNESS_LOG", "warn")
            .env("HARNESS_OPENCLAW_BIN", common::outbox::DOUBLE)
            .env("GATEWAY_DOUBLE_RECORD", record);
    })
    .await
}

async fn rows(data: &Path, db: Option<&str>, sql: &str, bind: &str) -> Vec<Vec<String>> {
    use sqlx::Row;
    let sql = sqlx::AssertSqlSafe(sql.to_string());
    let read = |cols: usize, get: &dyn Fn(usize) -> Option<String>| {
        (0..cols)
            .map(|i| get(i).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    match db {
        Some(url) => {
            let pool = sqlx::PgPool::connect(url).await.unwrap();
            let out = sqlx::query(sql)
                .bind(bind)
                .fetch_all(&pool)
                .await
                .unwrap()
                .iter()
                .map(|r| {
                    read(r.len(), &|i| {
                        r.try_get::<Option<String>, _>(i).ok().flatten()
                    })
                })
                .collect();
            pool.close().await;
            out
        }
        None => {
            let url = format!("sqlite://{}?mode=ro", data.join("harness.db").display());
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            let out = sqlx::query(sql)
                .bind(bind)
                .fetch_all(&pool)
                .await
                .unwrap()
                .iter()
                .map(|r| {
                    read(r.len(), &|i| {
                        r.try_get::<Option<String>, _>(i).ok().flatten()
                    })
                })
                .collect();
            pool.close().await;
            out
        }
    }
}

/// The questions of this test answered so far.
async fn answered(data: &Path, db: Option<&str>) -> usize {
    rows(
        data,
        db,
        "SELECT id FROM harness_messages WHERE kind = 'ask' AND state = 'ANSWERED' \
         AND content LIKE $1",
        "Batch question %",
    )
    .await
    .len()
}

async fn route(life: &Life, token: &str, body: &Value) -> Result<(StatusCode, Value), ()> {
    let resp = life
        .client
        .post(format!("{}{ROUTE}", life.base))
        .bearer_auth(token)
        .json(body)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .map_err(|_| ())?;
    Ok(common::decode(resp).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_batch_reply_then_redelivery_applies_each_item_once() {
    kill_mid_batch(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_batch_reply_then_redelivery_applies_each_item_once_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        kill_mid_batch(Some(&db.url)).await;
    } else {
        eprintln!("skipped: no PostgreSQL");
    }
}

async fn kill_mid_batch(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let record = dir.path().join("sent.jsonl");
    let life = start(&data, db, &record).await;
    life.set_owners("openclaw", &["42"]).await;
    let targets = json!({"targets": [{"label": "phone", "gateway": "openclaw",
        "downstream": "telegram", "dest": "-100777", "scope": "unattended"}]});
    let (st, out) = life
        .call("PUT", "/api/settings/notify-targets", Some(targets))
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");

    // The night: QUESTIONS open questions with options, one per task.
    let mut asks = Vec::new();
    for i in 0..QUESTIONS {
        let (st, task) = life
            .call(
                "POST",
                "/api/tasks",
                Some(json!({"title": format!("Batch task {i}"),
                    "agent": {"provider": "command", "command": ["true"]}})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{task}");
        let (st, ask) = life
            .call(
                "POST",
                "/api/internal/harness/ask",
                Some(
                    json!({"taskId": task["id"], "question": format!("Batch question {i}"),
                    "options": [{"label": "Alpha"}, {"label": "Beta"}]}),
                ),
            )
            .await;
        assert_eq!(st, StatusCode::OK, "{ask}");
        asks.push(ask["requestId"].as_str().unwrap().to_string());
    }

    // The report, sent to chat: its first part is the message replied to.
    let (st, sent) = life
        .call("POST", "/api/report/send", Some(json!({"since": "1h"})))
        .await;
    assert_eq!(st, StatusCode::OK, "{sent}");
    let report_id = sent["report"]["id"].as_str().unwrap().to_string();
    let waiting = sent["report"]["waiting"].as_array().unwrap().clone();
    assert_eq!(waiting.len(), QUESTIONS, "{sent}");
    let first_part = format!("report:{report_id}:0");
    let map_sql = "SELECT m.platform, m.chat_id, m.platform_message_id \
         FROM harness_delivery_map m JOIN harness_outbound o ON o.id = m.outbound_id \
         WHERE o.dedup_key = $1";
    let deadline = Instant::now() + Duration::from_secs(30);
    let mapped = loop {
        if let Some(r) = rows(&data, db, map_sql, &first_part).await.pop() {
            break r;
        }
        assert!(Instant::now() < deadline, "the report was never delivered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let token = std::fs::read_to_string(data.join("secrets/gateway.token"))
        .unwrap()
        .trim()
        .to_string();

    // One reply answering every item, by number: odd ones by option label,
    // even ones by option number.
    let mut expected = std::collections::BTreeMap::new();
    let mut lines = Vec::new();
    for w in &waiting {
        let n = w["number"].as_u64().unwrap();
        let (pick, label) = if n % 2 == 0 {
            ("2", "Beta")
        } else {
            ("Alpha", "Alpha")
        };
        lines.push(format!("{n} {pick}"));
        expected.insert(w["refId"].as_str().unwrap().to_string(), label);
    }
    let message = json!({"gateway": "openclaw", "platform": mapped[0], "chatId": mapped[1],
        "platformMessageId": "reply-1", "senderId": "42", "intent": "PROJECT_WORK",
        "replyToMessageId": mapped[2], "content": lines.join("\n")});

    // SIGKILL while the items are applied: once the first is, before the
    // reply is recorded.
    let life = Arc::new(life);
    let sending = {
        let (life, token, message) = (life.clone(), token.clone(), message.clone());
        tokio::spawn(async move { route(&life, &token, &message).await })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while answered(&data, db).await == 0 {
        assert!(Instant::now() < deadline, "no item was applied");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let pid = life.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let first = sending.await.unwrap();
    assert!(first.is_err(), "the killed server answered: {first:?}");
    if let Ok(life) = Arc::try_unwrap(life) {
        life.kill(); // reaps it
    }
    let before = answered(&data, db).await;
    let recorded = rows(
        &data,
        db,
        "SELECT id FROM gateway_inbound WHERE platform_message_id = $1",
        "reply-1",
    )
    .await;
    eprintln!(
        "{before} of {QUESTIONS} items were applied before the kill; the reply was {}recorded",
        if recorded.is_empty() { "not " } else { "" }
    );
    assert!(before >= 1);

    // Restarted, the gateway delivers the same message again.
    let life = start(&data, db, &record).await;
    let (st, out) = route(&life, &token, &message).await.unwrap();
    assert_eq!(st, StatusCode::OK, "{out}");
    if recorded.is_empty() {
        assert_eq!(out["mode"], "report_answered", "{out}");
        let items = out["items"].as_array().unwrap();
        assert_eq!(items.len(), QUESTIONS, "{out}");
        let again = items
            .iter()
            .filter(|i| {
                assert_eq!(i["taken"], true, "{i}");
                i["detail"]
                    .as_str()
                    .unwrap()
                    .ends_with("(already, with this answer)")
            })
            .count();
        assert_eq!(
            again, before,
            "the items applied before the kill are reported taken, not applied again: {out}"
        );
        // The answer back, once: every item, taken.
        let ack = out["acknowledgement"].as_str().unwrap();
        assert!(ack.starts_with(&format!("Taken ({QUESTIONS}):")), "{ack}");
        assert!(!ack.contains("Not taken"), "{ack}");
    } else {
        // Recorded with its answer back before the kill: a retry is a no-op.
        assert_eq!(out["noOp"], true, "{out}");
    }
    // Every item answered exactly once, with its own answer.
    for (id, label) in &expected {
        let got = rows(
            &data,
            db,
            "SELECT state, reply_text FROM harness_messages WHERE id = $1",
            id,
        )
        .await;
        assert_eq!(
            got,
            [vec!["ANSWERED".to_string(), (*label).to_string()]],
            "{id}"
        );
        let via_chat = rows(
            &data,
            db,
            "SELECT message_id FROM ask_gateway_answers WHERE message_id = $1",
            id,
        )
        .await;
        assert_eq!(via_chat.len(), 1, "{id}: answered from chat once");
    }
    // The message is recorded once, with the answer back.
    let inbound = rows(
        &data,
        db,
        "SELECT state, response FROM gateway_inbound WHERE platform_message_id = $1",
        "reply-1",
    )
    .await;
    assert_eq!(inbound.len(), 1, "{inbound:?}");
    assert_eq!(inbound[0][0], "PROCESSED");
    let response: Value = serde_json::from_str(&inbound[0][1]).unwrap();
    assert_eq!(response["mode"], "report_answered", "{response}");

    // Another retry of the same message: nothing applied, no second answer back.
    let (st, again) = route(&life, &token, &message).await.unwrap();
    assert_eq!(st, StatusCode::OK, "{again}");
    assert_eq!(again["mode"], "already_processed", "{again}");
    assert_eq!(again["noOp"], true, "{again}");
    assert!(again.get("acknowledgement").is_none(), "{again}");
    assert_eq!(answered(&data, db).await, QUESTIONS);
    life.kill();
}
