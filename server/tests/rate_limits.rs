//! an agent in a loop is bounded — asks, notifies and
//! pushes per task are rate-limited by one rule in the core, answered alike
//! over REST (429 with `Retry-After` and a JSON body) and MCP (a tool error
//! with the same text). Real server, real HTTP, real agent tokens.

use crate::common;

use std::time::Duration;

use harness_core::rate_limit::{Rate, RateLimits};
use reqwest::StatusCode;
use serde_json::{Value, json};

const EVERY: Duration = Duration::from_secs(60);

async fn server(dir: &std::path::Path) -> common::Server {
    common::start_with(dir, |cfg| {
        let rate = |burst| Rate {
            burst,
            every: EVERY,
        };
        cfg.rate_limits = RateLimits {
            ask: rate(2),
            notify: rate(3),
            push: rate(2),
        };
        cfg.outbox_wait = Duration::ZERO;
    })
    .await
}

/// A raw REST call with a bearer token: status, `Retry-After`, JSON body.
async fn post(
    s: &common::Server,
    token: &str,
    path: &str,
    body: Value,
) -> (StatusCode, Option<String>, Value) {
    let resp = s
        .client
        .post(s.url(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let status = resp.status();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, retry, body)
}

async fn mcp_call(s: &common::Server, token: &str, tool: &str, args: Value) -> (bool, Value) {
    let (status, out) = common::decode(
        s.client
            .post(s.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(token)
            .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let text = out["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    (
        out["result"]["isError"].as_bool().unwrap_or(false),
        serde_json::from_str(text).unwrap_or(Value::String(text.into())),
    )
}

fn assert_limited(status: StatusCode, retry: Option<String>, body: &Value, what: &str) {
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{what}: {body}");
    let wait: u64 = retry
        .unwrap_or_else(|| panic!("{what}: no Retry-After"))
        .parse()
        .unwrap();
    assert!((1..=EVERY.as_secs()).contains(&wait), "{what}: {wait}");
    let error = body["error"].as_str().unwrap_or_default();
    assert!(error.contains("retry after"), "{what}: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_notifies_and_pushes_per_task_are_rate_limited_on_rest_and_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path()).await;
    let t = s.task("loop").await;
    let other = s.task("calm").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();

    // Asks: two, then 429 on REST and the same refusal on MCP.
    for i in 0..2 {
        let (status, _, body) = post(
            &s,
            &token,
            "/api/internal/harness/ask",
            json!({"taskId": t, "question": format!("q{i}?")}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, retry, body) = post(
        &s,
        &token,
        "/api/internal/harness/ask",
        json!({"taskId": t, "question": "q3?"}),
    )
    .await;
    assert_limited(status, retry, &body, "ask over REST");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("too many questions"),
        "{body}"
    );
    let (is_error, out) = mcp_call(&s, &token, "ask_human", json!({"question": "q4?"})).await;
    assert!(is_error, "{out}");
    assert_eq!(out["error"], body["error"], "the same rule, the same text");
    // Nothing was recorded by the refused asks.
    let (_, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={t}"),
            None,
        )
        .await;
    let asks = page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "ask")
        .count();
    assert_eq!(asks, 2, "{page}");
    // Another task has its own budget (the admin asks for it).
    let (status, _, body) = post(
        &s,
        &s.admin,
        "/api/internal/harness/ask",
        json!({"taskId": other, "question": "fine?"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Notifies: three (REST and MCP count together), then refused on both.
    for i in 0..2 {
        let (status, _, body) = post(
            &s,
            &token,
            "/api/internal/harness/notify",
            json!({"taskId": t, "message": format!("fyi {i}")}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (is_error, out) = mcp_call(&s, &token, "notify_human", json!({"message": "fyi 2"})).await;
    assert!(!is_error, "{out}");
    let (is_error, out) = mcp_call(&s, &token, "notify_human", json!({"message": "fyi 3"})).await;
    assert!(is_error, "{out}");
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("too many notifications"),
        "{out}"
    );
    let (status, retry, body) = post(
        &s,
        &token,
        "/api/internal/harness/notify",
        json!({"taskId": t, "message": "fyi 4"}),
    )
    .await;
    assert_limited(status, retry, &body, "notify over REST");

    // Pushes to people: two, then refused.
    let push = |i: usize| {
        json!({"taskId": t, "message": format!("push {i}"), "scope": "work",
            "gateway": "hermes", "downstream": "telegram", "dest": "4242"})
    };
    for i in 0..2 {
        let (status, _, body) = post(&s, &token, "/api/internal/harness/outbound", push(i)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, retry, body) = post(&s, &token, "/api/internal/harness/outbound", push(2)).await;
    assert_limited(status, retry, &body, "push over REST");
    // Over MCP (through the configured work channel): refused alike.
    let (status, body) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [{"label": "team", "gateway": "openclaw",
                "downstream": "telegram", "dest": "telegram:-1001", "scope": "work",
                "active": true}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (is_error, out) = mcp_call(
        &s,
        &token,
        "push_to_human",
        json!({"message": "push 3", "scope": "work"}),
    )
    .await;
    assert!(is_error, "{out}");
    assert!(
        out["error"].as_str().unwrap().contains("too many messages"),
        "{out}"
    );
    s.shutdown().await;
}
