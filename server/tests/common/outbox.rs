//! Outbox fixtures: a server whose own sender is off, with a queue of
//! notifies behind the gateway double.

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{Server, start_with};

pub const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

/// A server a test talks to as the admin: in this process or a child one.
// Only these two, in tests: no `Send` bound is needed on the futures.
#[allow(async_fn_in_trait)]
pub trait Admin {
    async fn admin_call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value);
}

impl Admin for Server {
    async fn admin_call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.admin(method, path, body).await
    }
}

impl Admin for super::process::ServerProcess {
    async fn admin_call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call(method, path, body).await
    }
}

/// The gateway double behind each of `gateways` (`hermes`, `openclaw`),
/// with `settings` (its `env`: where it records, how it behaves; an
/// `accessPolicy`, …) and `cliPath` set to it.
pub async fn double_gateways(s: &impl Admin, gateways: &[&str], settings: Value) {
    let mut one = settings;
    one["cliPath"] = json!(DOUBLE);
    let all: serde_json::Map<String, Value> = gateways
        .iter()
        .map(|g| (g.to_string(), one.clone()))
        .collect();
    let (st, out) = s
        .admin_call("PUT", "/api/settings/gateways", Some(Value::Object(all)))
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

/// The gateway double behind OpenClaw (recording what it is given to send
/// into `record`) and one active unattended notify target: the channel an
/// unattended task needs. Its sends go out when the server's sender is on.
pub async fn unattended_channel(s: &impl Admin, record: &Path) {
    double_gateways(
        s,
        &["openclaw"],
        json!({"env": {"GATEWAY_DOUBLE_RECORD": record}}),
    )
    .await;
    let targets = json!({"targets": [{"label": "me", "gateway": "openclaw",
        "downstream": "telegram", "dest": "-100777", "scope": "unattended"}]});
    let (st, out) = s
        .admin_call("PUT", "/api/settings/notify-targets", Some(targets))
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

/// A server whose own sender is off, the double behind OpenClaw in `mode`
/// (recording to `<dir>/sent.jsonl`), one work target, and `n` queued
/// notifies `"<text> <i>"` of one task; their outbound ids.
pub async fn queued(dir: &Path, mode: &str, text: &str, n: usize) -> (Server, Vec<String>) {
    let s = start_with(dir, |cfg| {
        cfg.outbox.max_in_flight = 0;
        cfg.outbox_wait = Duration::ZERO;
        // One task queues them all at once: past the default per-task push
        // limit (`harness_core::rate_limit`), which these tests do not test.
        cfg.rate_limits.push.burst = u32::try_from(n).unwrap_or(u32::MAX).max(1);
    })
    .await;
    let settings = json!({"cliPath": DOUBLE, "env": {"GATEWAY_DOUBLE_RECORD": dir.join("sent.jsonl"),
        "GATEWAY_DOUBLE_MODE": mode}});
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": settings})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let task = s.task(text).await;
    let mut ids = Vec::new();
    for i in 0..n {
        let (st, out) = s
            .admin(
                "POST",
                "/api/internal/harness/outbound",
                Some(json!({"taskId": task, "message": format!("{text} {i}"), "scope": "work"})),
            )
            .await;
        assert_eq!(st, StatusCode::OK, "{out}");
        ids.push(out["outboundId"].as_str().unwrap().to_string());
    }
    (s, ids)
}

/// How many times the double sent the message of row `i` (`"<text> <i>"`).
pub fn sends_of(sends: &[serde_json::Value], text: &str, i: usize) -> usize {
    let line = format!("{text} {i}\n");
    sends
        .iter()
        .filter(|r| r["text"].as_str().unwrap_or("").contains(&line))
        .count()
}

/// The outbox rows (`GET /api/outbound`) whose dedup key starts with `prefix`.
pub async fn pushes(s: &Server, prefix: &str) -> Vec<Value> {
    let (st, rows) = s.admin("GET", "/api/outbound?limit=500", None).await;
    assert_eq!(st, StatusCode::OK, "{rows}");
    rows.as_array()
        .map(|a| {
            a.iter()
                .filter(|r| r["dedupKey"].as_str().unwrap_or("").starts_with(prefix))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}
