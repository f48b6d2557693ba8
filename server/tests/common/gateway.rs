//! Helpers of the gateway inbound tests: the gateway token, OWNER ids,
//! projects, route bodies, MCP calls with the gateway token, row counts.

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::Server;

pub const ROUTE: &str = "/api/internal/harness/gateway";
pub const QUERY: &str = "/api/internal/harness/gateway-query";
pub const TASK: &str = "/api/internal/harness/gateway-task";

pub fn secret(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join("secrets").join(name))
        .unwrap()
        .trim()
        .to_string()
}

/// `ids` are the OWNERs of `gateway` on Telegram.
pub async fn owners(s: &Server, gateway: &str, ids: &[&str]) {
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({gateway: {"accessPolicy": {"ownerIds": {"telegram": ids}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

pub async fn project(s: &Server, dir: &Path, name: &str) -> String {
    let path = dir.join(name.replace(' ', "-"));
    std::fs::create_dir_all(&path).unwrap();
    let (st, out) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": name, "path": path})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{out}");
    out["id"].as_str().unwrap().to_string()
}

/// An OpenClaw Telegram message from OWNER 42 in chat -100.
pub fn message(pmid: &str, intent: &str, content: &str) -> Value {
    json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
        "platformMessageId": pmid, "senderId": "42", "intent": intent, "content": content})
}

pub fn with(mut v: Value, extra: Value) -> Value {
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

pub async fn rpc(s: &Server, token: &str, body: Value) -> Value {
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.json().await.unwrap()
}

/// A tool call: (isError, the JSON of its text).
pub async fn tool(s: &Server, token: &str, name: &str, args: Value) -> (bool, Value) {
    let out = rpc(
        s,
        token,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": name, "arguments": args}}),
    )
    .await;
    let text = out["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    (
        out["result"]["isError"].as_bool().unwrap_or(false),
        serde_json::from_str(text).unwrap_or_else(|_| json!({"text": text})),
    )
}

pub async fn pool(dir: &Path) -> sqlx::SqlitePool {
    let url = format!("sqlite://{}", dir.join("harness.db").display());
    sqlx::SqlitePool::connect(&url).await.unwrap()
}

/// One statement with one text bind (`SELECT count(*)` or an `UPDATE`).
pub async fn exec(dir: &Path, sql: &str, bind: &str) -> i64 {
    let pool = pool(dir).await;
    let q = sqlx::AssertSqlSafe(sql.to_string());
    let n = if sql.trim_start().to_ascii_uppercase().starts_with("SELECT") {
        sqlx::query_scalar::<_, i64>(q)
            .bind(bind)
            .fetch_one(&pool)
            .await
            .unwrap()
    } else {
        sqlx::query(q)
            .bind(bind)
            .execute(&pool)
            .await
            .unwrap()
            .rows_affected() as i64
    };
    pool.close().await;
    n
}

/// Rows of every table but the nonces (the "writes nothing" check).
pub async fn row_counts(dir: &Path) -> Vec<(String, i64)> {
    let pool = pool(dir).await;
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name <> 'gateway_nonces' ORDER BY name",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut out = Vec::new();
    for table in tables {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM \"{table}\""
        )))
        .fetch_one(&pool)
        .await
        .unwrap();
        out.push((table, n));
    }
    pool.close().await;
    out
}
