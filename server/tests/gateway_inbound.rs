//! Gateway inbound over real HTTP: signed requests (a replay
//! refused after a restart too), the gateway token and its tool profile,
//! `resolve_gateway_task_context` writing nothing, `continue_bound_task`
//! once per platform message for the OWNER only, bad input → 400 naming the
//! field with no row written.

use crate::common::{self, gateway::row_counts};

use std::path::Path;

use chrono::{Duration, Utc};
use harness_core::gateway::signing;
use reqwest::StatusCode;
use serde_json::{Value, json};

const PATH: &str = "/api/internal/harness/gateway-task";

fn secret(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join("secrets").join(name))
        .unwrap()
        .trim()
        .to_string()
}

fn nonce() -> String {
    let id = harness_core::ids::new_id();
    // 36 characters of [0-9a-f-]: hex of the id's bytes, UUID-shaped.
    let hex = hex::encode(id.as_bytes());
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A request with the given signature headers (already computed).
async fn send(
    s: &common::Server,
    method: &str,
    path: &str,
    headers: &[(&'static str, String); 4],
    body: &str,
) -> (StatusCode, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = s
        .client
        .request(method, s.url(path))
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        req = req.header(*name, value);
    }
    common::decode(req.send().await.unwrap()).await
}

fn signed(key: &str, method: &str, path: &str, body: &str) -> [(&'static str, String); 4] {
    signing::sign(
        key.as_bytes(),
        Utc::now(),
        &nonce(),
        method,
        path,
        body.as_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_requests_are_checked_and_a_replay_is_refused_after_a_restart_too() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let key = secret(dir.path(), "internal-api.key");
    let t = s.task("signed").await;
    let body =
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100", "taskId": t})
            .to_string();
    let first = signed(&key, "POST", PATH, &body);
    let (st, out) = send(&s, "POST", PATH, &first, &body).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["bound"], true, "{out}");
    assert_eq!(out["bindingSource"], "explicit_task");

    // The same request again: a replay.
    let (st, out) = send(&s, "POST", PATH, &first, &body).await;
    assert_eq!(
        (st, out),
        (
            StatusCode::CONFLICT,
            json!({"error": "Replayed internal request"})
        )
    );
    // Another body under a signed hash; a bad signature; a stale timestamp;
    // a malformed nonce; a signature for another path.
    let other = signed(&key, "POST", PATH, &body);
    let (st, out) = send(&s, "POST", PATH, &other, "{}").await;
    assert_eq!(
        (st, out),
        (
            StatusCode::UNAUTHORIZED,
            json!({"error": "Invalid internal request body"})
        )
    );
    let unauthorized = (
        StatusCode::UNAUTHORIZED,
        json!({"error": "Unauthorized internal request"}),
    );
    let wrong_key = signed("not the key", "POST", PATH, &body);
    assert_eq!(
        send(&s, "POST", PATH, &wrong_key, &body).await,
        unauthorized
    );
    let stale = signing::sign(
        key.as_bytes(),
        Utc::now() - Duration::minutes(6),
        &nonce(),
        "POST",
        PATH,
        body.as_bytes(),
    );
    assert_eq!(send(&s, "POST", PATH, &stale, &body).await, unauthorized);
    let mut malformed = signed(&key, "POST", PATH, &body);
    malformed[1].1 = "not-a-nonce".into();
    assert_eq!(
        send(&s, "POST", PATH, &malformed, &body).await,
        unauthorized
    );
    let elsewhere = signed(&key, "POST", "/api/internal/harness/gateway", &body);
    assert_eq!(
        send(&s, "POST", PATH, &elsewhere, &body).await,
        unauthorized
    );
    // The outbox route takes signed requests too (here: a valid signature,
    // the body's own validation answers).
    let push = json!({"message": "hi", "scope": "work"}).to_string();
    let outbound = "/api/internal/harness/outbound";
    let (st, out) = send(
        &s,
        "POST",
        outbound,
        &signed(&key, "POST", outbound, &push),
        &push,
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "taskId", "{out}");

    // No credential; an agent's token.
    let (st, _) = s.call("POST", PATH, None, Some(json!({}))).await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);
    let (_, agent) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let (st, out) = s
        .call("POST", PATH, Some(&agent), serde_json::from_str(&body).ok())
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{out}");

    // After a restart the first request is still a replay.
    s.shutdown().await;
    let s = common::start(dir.path()).await;
    let (st, out) = send(&s, "POST", PATH, &first, &body).await;
    assert_eq!(
        (st, out),
        (
            StatusCode::CONFLICT,
            json!({"error": "Replayed internal request"})
        )
    );
    s.shutdown().await;
}

async fn rpc(s: &common::Server, token: &str, body: Value) -> Value {
    let resp = s
        .client
        .post(s.url("/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (st, out) = common::decode(resp).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    out
}

async fn tool(s: &common::Server, token: &str, name: &str, args: Value) -> (bool, Value) {
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
        serde_json::from_str(text).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_token_sees_the_gateway_profile_and_rotates() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let token = secret(dir.path(), "gateway.token");
    let list = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "continue_bound_task",
            "get_report",
            "manage_gateway_channel_access",
            "relay_channel_reply",
            "reply_to_ask",
            "resolve_gateway_task_context",
            "route_gateway_message",
            "route_gateway_query"
        ]
    );
    let t = s.task("profile").await;
    let (is_error, out) = tool(
        &s,
        &token,
        "ask_human",
        json!({"taskId": t, "question": "q"}),
    )
    .await;
    assert!(is_error, "{out}");
    assert!(
        out["error"].as_str().unwrap().contains("not available"),
        "{out}"
    );
    // The same token on the REST route.
    let (st, out) = s
        .call(
            "POST",
            PATH,
            Some(&token),
            Some(json!({"gateway": "hermes", "platform": "telegram", "chatId": "1", "taskId": t})),
        )
        .await;
    assert_eq!((st, &out["bound"]), (StatusCode::OK, &json!(true)), "{out}");
    // Not an admin: the admin API is closed to it; nor an agent.
    let (st, _) = s.call("GET", "/api/tasks", Some(&token), None).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    for (path, body) in [
        (
            "/api/internal/harness/ask",
            json!({"taskId": t, "question": "q"}),
        ),
        (
            "/api/internal/harness/notify",
            json!({"taskId": t, "message": "m"}),
        ),
    ] {
        let (st, out) = s.call("POST", path, Some(&token), Some(body)).await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{path}: {out}");
    }

    // Rotation: the old token stops working at once.
    let (st, rotated) = s
        .admin("POST", "/api/settings/gateway-token/rotate", None)
        .await;
    assert_eq!(st, StatusCode::OK, "{rotated}");
    let new = rotated["token"].as_str().unwrap().to_string();
    assert_ne!(new, token);
    assert_eq!(secret(dir.path(), "gateway.token"), new);
    let resp = s
        .client
        .post(s.url("/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .bearer_auth(&token)
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let list = rpc(
        &s,
        &new,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 8);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolving_writes_nothing_and_bad_input_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let token = secret(dir.path(), "gateway.token");
    let t = s.task("resolve me").await;
    let before = row_counts(dir.path()).await;
    let upper = format!("see [[TOWER:TASK={}]]", t.to_uppercase());
    for body in [
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-1", "quotedText": upper}),
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-1", "replyToMessageId": "404"}),
    ] {
        let (st, out) = s.call("POST", PATH, Some(&token), Some(body)).await;
        assert_eq!(st, StatusCode::OK, "{out}");
        if out["bound"] == true {
            // The upper-case token is found (docs/decisions.md D11).
            assert_eq!(out["bindingSource"], "quoted_task_token", "{out}");
            assert_eq!(out["subjectTaskId"], t.as_str());
            assert_eq!(out["hasOpenAsk"], false);
            assert_eq!(out["taskTitle"], "resolve me");
        } else {
            assert_eq!(out["reason"], "not_found", "{out}");
        }
    }
    let (is_error, out) = tool(
        &s,
        &token,
        "resolve_gateway_task_context",
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-1", "taskId": t}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["bound"], true);

    // Bad input: 400 naming the field, on the route and the tool alike.
    let base = json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-1", "taskId": t});
    let mut cases = Vec::new();
    for (field, value) in [
        ("gateway", json!("slack")),
        ("gateway", Value::Null),
        ("platform", json!("")),
        ("chatId", Value::Null),
        ("chatId", json!(42)),
        ("taskId", json!("nope")),
        ("quotedText", json!("x".repeat(16_001))),
    ] {
        let mut body = base.clone();
        body[field] = value;
        cases.push((field, body));
    }
    let mut none = base.clone();
    none.as_object_mut().unwrap().remove("taskId");
    cases.push(("replyToMessageId", none));
    for (field, body) in cases {
        let (st, out) = s.call("POST", PATH, Some(&token), Some(body.clone())).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{field}: {out}");
        assert!(
            out["field"].as_str().is_some_and(|f| f.contains(field)),
            "{field}: {out}"
        );
        let (is_error, out) = tool(&s, &token, "resolve_gateway_task_context", body).await;
        assert!(is_error, "{field}: {out}");
        assert!(
            out["error"].as_str().is_some_and(|e| e.contains(field)),
            "the tool's error names {field}: {out}"
        );
    }
    let mut continuation = base.clone();
    continuation["platformMessageId"] = json!("m1");
    let (st, out) = s.call("PUT", PATH, Some(&token), Some(continuation)).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "content", "{out}");
    assert_eq!(row_counts(dir.path()).await, before, "nothing was written");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_is_the_owners_and_happens_once_per_platform_message() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let token = secret(dir.path(), "gateway.token");
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"accessPolicy": {"ownerIds": {"Telegram": [" 42 "]}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(
        out["openclaw"]["accessPolicy"]["ownerIds"]["telegram"],
        json!(["42"])
    );
    let t = s.task("continue me").await;
    let body = |sender: &str, pmid: &str| {
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
               "platformMessageId": pmid, "senderId": sender, "taskId": t,
               "content": "continue from the failure"})
    };
    // Not the OWNER: refused, nothing written.
    let before = row_counts(dir.path()).await;
    let (st, out) = s
        .call("PUT", PATH, Some(&token), Some(body("7", "m1")))
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{out}");
    assert_eq!(row_counts(dir.path()).await, before);

    let (st, first) = s
        .call("PUT", PATH, Some(&token), Some(body("telegram:42", "m1")))
        .await;
    assert_eq!(st, StatusCode::OK, "{first}");
    assert_eq!(first["mode"], "continued_task", "{first}");
    assert_eq!(first["taskId"], t.as_str());
    assert_eq!(first["deduped"], false);
    let delivery = first["deliveryId"].as_str().unwrap().to_string();
    // Again (and through the tool): the same result, nothing new.
    let (_, again) = s
        .call("PUT", PATH, Some(&token), Some(body("42", "m1")))
        .await;
    assert_eq!(again["mode"], "continued_task", "{again}");
    assert_eq!(
        (&again["deduped"], &again["noOp"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(again["deliveryId"], delivery.as_str());
    let (is_error, via_tool) = tool(&s, &token, "continue_bound_task", body("42", "m1")).await;
    assert!(!is_error, "{via_tool}");
    assert_eq!(via_tool["deliveryId"], delivery.as_str());
    let typed = s
        .running
        .harness
        .deliveries()
        .delivery(&delivery)
        .await
        .unwrap();
    assert!(
        typed.text.contains("continue from the failure"),
        "{typed:?}"
    );
    assert!(typed.text.contains(&format!("[[tower:task={t}]]")));

    // A task with an OPEN question is refused (reply_to_ask answers it).
    s.running
        .harness
        .asks()
        .ask(&t, Some("which branch?"))
        .await
        .unwrap();
    let (_, out) = s
        .call("PUT", PATH, Some(&token), Some(body("42", "m2")))
        .await;
    assert_eq!(out["mode"], "continue_open_ask", "{out}");
    assert_eq!(out["noOp"], true);
    s.shutdown().await;
}

async fn count(dir: &Path, sql: &str, bind: &str) -> i64 {
    let url = format!("sqlite://{}?mode=ro", dir.join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .bind(bind)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

/// The same platform message from 20 concurrent calls: one continuation,
/// one inbound row, one delivery row, one acknowledgement; every other call
/// is a no-op.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_repeats_of_one_message_continue_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = std::sync::Arc::new(common::start(dir.path()).await);
    let token = secret(dir.path(), "gateway.token");
    let (st, _) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"hermes": {"accessPolicy": {"ownerIds": {"telegram": ["42"]}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK);
    let t = s.task("raced").await;
    let body = json!({"gateway": "hermes", "platform": "telegram", "chatId": "9",
        "platformMessageId": "m-race", "senderId": "42", "taskId": t, "content": "go on"});
    let calls = (0..20).map(|_| {
        let (s, token, body) = (s.clone(), token.clone(), body.clone());
        tokio::spawn(async move { s.call("PUT", PATH, Some(&token), Some(body)).await })
    });
    let mut acted = 0;
    let mut deliveries = std::collections::HashSet::new();
    for call in calls {
        let (st, out) = call.await.unwrap();
        assert_eq!(st, StatusCode::OK, "{out}");
        if out["noOp"] == false {
            acted += 1;
            assert_eq!(out["mode"], "continued_task", "{out}");
        } else {
            assert!(
                out["mode"] == "continued_task" || out["mode"] == "continue_in_progress",
                "{out}"
            );
        }
        if let Some(id) = out["deliveryId"].as_str() {
            deliveries.insert(id.to_string());
        }
    }
    assert_eq!(acted, 1, "exactly one call acted");
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    let rows = |sql: &'static str| count(dir.path(), sql, "m-race");
    assert_eq!(
        rows("SELECT count(*) FROM gateway_inbound WHERE platform_message_id = ?").await,
        1
    );
    assert_eq!(
        count(
            dir.path(),
            "SELECT count(*) FROM deliveries WHERE task_id = ?",
            &t
        )
        .await,
        1
    );
    assert_eq!(
        rows(
            "SELECT count(*) FROM gateway_replies r JOIN gateway_inbound i ON i.id = r.inbound_id \
             WHERE i.platform_message_id = ?"
        )
        .await,
        1,
        "one acknowledgement"
    );
    if let Ok(s) = std::sync::Arc::try_unwrap(s) {
        s.shutdown().await;
    }
}

/// `relay_channel_reply` answers only an OPEN ask; an ordinary reply comes
/// back as context and types nothing. `reply_to_ask` works with the
/// gateway's credential (the OWNER it vouches for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_answers_only_an_open_ask_and_the_gateway_replies_as_the_owner() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let token = secret(dir.path(), "gateway.token");
    let t = s.task("relayed").await;
    let text = format!("looks good [[tower:task={t}]]");
    let (is_error, out) = tool(&s, &token, "relay_channel_reply", json!({"text": text})).await;
    assert!(!is_error, "{out}");
    assert_eq!(
        (&out["mode"], &out["resumed"], &out["continuationRequired"]),
        (&json!("task_context"), &json!(false), &json!(true)),
        "{out}"
    );
    let (_, out) = tool(
        &s,
        &token,
        "relay_channel_reply",
        json!({"text": "no token"}),
    )
    .await;
    assert_eq!(out["no_task_token"], true, "{out}");
    let (is_error, out) = tool(&s, &token, "relay_channel_reply", json!({"text": ""})).await;
    assert!(is_error, "{out}");

    // An OPEN ask: the relay answers it.
    s.running
        .harness
        .asks()
        .ask(&t, Some("merge?"))
        .await
        .unwrap();
    let (is_error, out) = tool(&s, &token, "relay_channel_reply", json!({"text": text})).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "ask_reply", "{out}");
    assert!(!s.running.harness.asks().pending(&t).await.unwrap().pending);

    // reply_to_ask with the gateway token.
    s.running
        .harness
        .asks()
        .ask(&t, Some("deploy?"))
        .await
        .unwrap();
    let (is_error, out) = tool(
        &s,
        &token,
        "reply_to_ask",
        json!({"taskId": t, "text": "yes"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["ok"], true, "{out}");
    assert!(!s.running.harness.asks().pending(&t).await.unwrap().pending);
    s.shutdown().await;
}

/// `harness gateway-token` prints the token; `--rotate` replaces it.
#[test]
fn the_cli_prints_and_rotates_the_gateway_token() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
            .arg("gateway-token")
            .arg("--data-dir")
            .arg(&data)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let first = run(&[]);
    assert!(first.starts_with("hxg_"), "{first}");
    assert_eq!(run(&[]), first, "printing does not change it");
    let rotated = run(&["--rotate"]);
    assert!(rotated.starts_with("hxg_") && rotated != first);
    assert_eq!(secret(&data, "gateway.token"), rotated);
    assert_eq!(run(&[]), rotated);
}
