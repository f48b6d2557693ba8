//! `ask` with an idempotency key: a client that retries after a
//! lost response gets the same question back, never a second one — over REST,
//! over MCP, and under concurrent retries.

use crate::common;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn asks(s: &common::Server, task: &str) -> Vec<Value> {
    let (status, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={task}&limit=100"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "ask")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_retried_ask_with_its_key_returns_the_first_ask_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("idempotent asks").await;
    s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let ask = |key: &str, q: &str| json!({"taskId": t, "question": q, "idempotencyKey": key});

    let (status, first) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(ask("k-1", "Which DB?")),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["deduped"], false);
    let a = first["requestId"].as_str().unwrap().to_string();

    // The response was "lost"; the client retries with the same key.
    let (status, again) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(ask("k-1", "Which DB?")),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (again["requestId"].as_str(), again["deduped"].as_bool()),
        (Some(a.as_str()), Some(true))
    );
    let rows = asks(&s, &t).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["state"], "OPEN");

    // Another key is another question (it supersedes the first, as always).
    let (_, second) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(ask("k-2", "Which port?")),
        )
        .await;
    let b = second["requestId"].as_str().unwrap().to_string();
    assert_ne!(a, b);
    // A late retry of the first one does not bring it back or ask again.
    let (_, late) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(ask("k-1", "Which DB?")),
        )
        .await;
    assert_eq!(
        (late["requestId"].as_str(), late["deduped"].as_bool()),
        (Some(a.as_str()), Some(true))
    );
    let rows = asks(&s, &t).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let open: Vec<_> = rows.iter().filter(|r| r["state"] == "OPEN").collect();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["id"], b.as_str());

    // Concurrent first tries with one key: one ask, every caller gets its id.
    let mut joins = Vec::new();
    for _ in 0..16 {
        let (client, url, admin, body) = (
            s.client.clone(),
            s.url("/api/internal/harness/ask"),
            s.admin.clone(),
            json!({"taskId": t, "question": "Ship it?", "idempotencyKey": "race",
                   "options": [{"label": "yes"}, {"label": "no"}]}),
        );
        joins.push(tokio::spawn(async move {
            let resp = client
                .post(url)
                .bearer_auth(admin)
                .json(&body)
                .send()
                .await
                .unwrap();
            common::decode(resp).await
        }));
    }
    let mut ids = std::collections::BTreeSet::new();
    let mut fresh = 0;
    for j in joins {
        let (status, body) = j.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        ids.insert(body["requestId"].as_str().unwrap().to_string());
        if body["deduped"] == false {
            fresh += 1;
        }
    }
    assert_eq!(
        ids.len(),
        1,
        "concurrent retries made several asks: {ids:?}"
    );
    assert_eq!(fresh, 1, "exactly one call recorded the ask");
    let race_id = ids.into_iter().next().unwrap();
    let rows = asks(&s, &t).await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    let open: Vec<_> = rows.iter().filter(|r| r["state"] == "OPEN").collect();
    assert_eq!(
        (open.len(), open[0]["id"].as_str()),
        (1, Some(race_id.as_str()))
    );

    // A bad key is a clear 400 naming the field, and writes nothing.
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(ask(&"x".repeat(201), "too long a key")),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["field"], "idempotencyKey");
    assert_eq!(asks(&s, &t).await.len(), 3);
    s.shutdown().await;
}

#[tokio::test]
async fn mcp_ask_human_accepts_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("mcp idempotent").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let call = || {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "ask_human",
            "arguments": {"question": "Proceed?", "idempotencyKey": "turn-3"}
        }})
    };
    let mut seen = Vec::new();
    for _ in 0..2 {
        let resp = s
            .client
            .post(s.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(&token)
            .json(&call())
            .send()
            .await
            .unwrap();
        let (status, body) = common::decode(resp).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let out = &body["result"]["structuredContent"];
        seen.push((
            out["requestId"].as_str().unwrap().to_string(),
            out["deduped"].as_bool().unwrap(),
        ));
    }
    assert_eq!(seen[0].0, seen[1].0);
    assert_eq!((seen[0].1, seen[1].1), (false, true));
    assert_eq!(asks(&s, &t).await.len(), 1);
    s.shutdown().await;
}
