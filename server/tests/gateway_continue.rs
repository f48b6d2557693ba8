//! `continue_bound_task` after a routed message (docs/tower-messaging.md §10
//! #29–#31): the routed `task_context` row is upgraded (same inbound id,
//! the injection id), different content is a conflict, a failed
//! continuation is retried once; the gateway's own `PATCH /gateway`
//! (`completeGatewayInbound`, docs/tower-messaging.md §5.7); bad input on the continuation, on
//! `reply_to_ask` with the gateway token and on `relay_channel_reply`
//! names the field and writes nothing.

use crate::common::{self, gateway::*};

use reqwest::StatusCode;
use serde_json::{Value, json};

fn continuation(t: &str, pmid: &str, content: &str) -> Value {
    json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
           "platformMessageId": pmid, "senderId": "42", "taskId": t, "content": content})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_routed_task_context_is_continued_once_with_its_inbound_id() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    let token = secret(dir.path(), "gateway.token");
    let t = s.task("continue me").await;
    let routed = |pmid: &str, content: &str| {
        with(message(pmid, "PROJECT_WORK", content), json!({"taskId": t}))
    };
    // #30: routed as task_context, then continued with the same content.
    let (st, out) = s
        .call("POST", ROUTE, Some(&token), Some(routed("m1", "go on")))
        .await;
    assert_eq!(
        (st, &out["mode"]),
        (StatusCode::OK, &json!("task_context")),
        "{out}"
    );
    let inbound = out["inboundId"].as_str().unwrap().to_string();
    let rows = "SELECT count(*) FROM gateway_inbound WHERE ? <> ''";
    let before = exec(dir.path(), rows, "x").await;
    let (is_error, up) = tool(
        &s,
        &token,
        "continue_bound_task",
        continuation(&t, "m1", "go on"),
    )
    .await;
    assert!(!is_error, "{up}");
    assert_eq!(up["mode"], "continued_task", "{up}");
    assert_eq!(
        up["inboundId"],
        inbound.as_str(),
        "the routed row is upgraded"
    );
    assert_eq!((&up["deduped"], &up["noOp"]), (&json!(true), &json!(false)));
    assert_eq!(
        exec(dir.path(), rows, "x").await,
        before,
        "no second inbound row"
    );
    // The injection id is the inbound id.
    let delivery = s
        .running
        .harness
        .deliveries()
        .delivery(up["deliveryId"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(delivery.dedup_key.as_deref(), Some(inbound.as_str()));
    assert!(
        delivery.text.contains(&format!("Inbound: {inbound}")),
        "{}",
        delivery.text
    );
    // Its repeat: the same result, nothing new.
    let (_, again) = s
        .call(
            "PUT",
            TASK,
            Some(&token),
            Some(continuation(&t, "m1", "go on")),
        )
        .await;
    assert_eq!(
        (&again["mode"], &again["noOp"]),
        (&json!("continued_task"), &json!(true))
    );
    assert_eq!(again["deliveryId"], up["deliveryId"]);

    // #29: routed as task_context, continued with other content → conflict.
    let (_, out) = s
        .call("POST", ROUTE, Some(&token), Some(routed("m2", "go on")))
        .await;
    assert_eq!(out["mode"], "task_context", "{out}");
    let (_, conflict) = s
        .call(
            "PUT",
            TASK,
            Some(&token),
            Some(continuation(&t, "m2", "something else")),
        )
        .await;
    assert_eq!(
        (&conflict["mode"], &conflict["deduped"], &conflict["noOp"]),
        (&json!("continue_conflict"), &json!(true), &json!(true)),
        "{conflict}"
    );
    let deliveries = "SELECT count(*) FROM deliveries WHERE task_id = ?";
    assert_eq!(exec(dir.path(), deliveries, &t).await, 1, "nothing typed");

    // #31: a failed continuation is retried → continued_task (deduped), the
    // same inbound id; a third call is a no-op.
    let (_, out) = s
        .call("POST", ROUTE, Some(&token), Some(routed("m3", "retry me")))
        .await;
    let failed = out["inboundId"].as_str().unwrap().to_string();
    let n = exec(
        dir.path(),
        &format!(
            "UPDATE gateway_inbound SET state = 'FAILED', last_error = 'typing failed', \
             response = '{}' WHERE id = ?",
            json!({"mode": "continue_failed", "inboundId": failed, "taskId": t, "noOp": false})
        ),
        &failed,
    )
    .await;
    assert_eq!(n, 1);
    let (_, retried) = s
        .call(
            "PUT",
            TASK,
            Some(&token),
            Some(continuation(&t, "m3", "retry me")),
        )
        .await;
    assert_eq!(
        (&retried["mode"], &retried["deduped"], &retried["noOp"]),
        (&json!("continued_task"), &json!(true), &json!(false)),
        "{retried}"
    );
    assert_eq!(retried["inboundId"], failed.as_str());
    let (_, third) = s
        .call(
            "PUT",
            TASK,
            Some(&token),
            Some(continuation(&t, "m3", "retry me")),
        )
        .await;
    assert_eq!(
        (&third["mode"], &third["noOp"]),
        (&json!("continued_task"), &json!(true))
    );
    assert_eq!(exec(dir.path(), deliveries, &t).await, 2);
    let typed = s
        .running
        .harness
        .deliveries()
        .delivery(retried["deliveryId"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(typed.dedup_key.as_deref(), Some(failed.as_str()));
    s.shutdown().await;
}

/// A routed message for `t`, then claimed as if `by` were continuing it now.
async fn claimed(
    s: &common::Server,
    dir: &std::path::Path,
    token: &str,
    t: &str,
    pmid: &str,
    by: &str,
) -> String {
    let body = with(message(pmid, "PROJECT_WORK", "go on"), json!({"taskId": t}));
    let (_, out) = s.call("POST", ROUTE, Some(token), Some(body)).await;
    let id = out["inboundId"].as_str().unwrap().to_string();
    let claim = json!({"mode": "continue_in_progress", "inboundId": id, "taskId": t});
    let sql = format!(
        "UPDATE gateway_inbound SET state = 'PROCESSING', response = '{claim}', \
         lease_owner = '{by}', lease_expires_at = updated_at + 60000 WHERE id = ?"
    );
    assert_eq!(exec(dir, &sql, &id).await, 1);
    id
}

/// The gateway's retry of `pmid` as a continuation of `t`.
async fn retried(s: &common::Server, token: &str, t: &str, pmid: &str) -> Value {
    let (is_error, out) = tool(
        s,
        token,
        "continue_bound_task",
        continuation(t, pmid, "go on"),
    )
    .await;
    assert!(!is_error, "{out}");
    assert!(
        out.get("claimedBy").is_none(),
        "the claimant is not shown: {out}"
    );
    out
}

/// A continuation's claim names the process holding it: a retry takes it
/// over at once when that process is gone (its node restarted, or is dead
/// by the database's clock), and waits while it lives (a dead
/// node's claim no longer blocks the message for the 60 s lease).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_process_is_gone_is_taken_over_at_once_and_a_live_ones_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    let token = secret(dir.path(), "gateway.token");
    let t = s.task("claimed").await;
    // Two other nodes: one dead (no heartbeat since 1970), one alive.
    let db = pool(dir.path()).await;
    // The peer's heartbeat: an hour ahead, so it stays alive for the test.
    let ahead = chrono::Utc::now().timestamp_millis() + 3_600_000;
    sqlx::query(
        "INSERT INTO harness_nodes (id, boot, started_at, heartbeat_at) \
         VALUES ('gone', 'b1', 0, 0), ('peer', 'b2', ?1, ?1)",
    )
    .bind(ahead)
    .execute(&db)
    .await
    .unwrap();
    let me: String = sqlx::query_scalar(
        "SELECT id || ':' || boot FROM harness_nodes WHERE id NOT IN ('gone', 'peer')",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    db.close().await;
    let dead = claimed(&s, dir.path(), &token, &t, "m1", "gone:b1").await;
    let live = claimed(&s, dir.path(), &token, &t, "m2", "peer:b2").await;
    let mine = claimed(&s, dir.path(), &token, &t, "m3", &me).await;
    let out = retried(&s, &token, &t, "m1").await;
    assert_eq!(
        (&out["mode"], &out["inboundId"], &out["noOp"]),
        (&json!("continued_task"), &json!(dead), &json!(false)),
        "a dead node's claim is taken over: {out}"
    );
    for (pmid, id) in [("m2", &live), ("m3", &mine)] {
        let out = retried(&s, &token, &t, pmid).await;
        assert_eq!(
            (&out["mode"], &out["inboundId"], &out["noOp"]),
            (&json!("continue_in_progress"), &json!(id), &json!(true)),
            "a live process's claim is waited for: {out}"
        );
    }
    // This process dies mid-continuation: after the restart (a new boot)
    // its claim is taken over at once; the live peer's still is not.
    s.shutdown().await;
    s = common::start(dir.path()).await;
    let out = retried(&s, &token, &t, "m3").await;
    assert_eq!(
        (&out["mode"], &out["inboundId"], &out["noOp"]),
        (&json!("continued_task"), &json!(mine), &json!(false)),
        "the earlier boot's claim is taken over: {out}"
    );
    let out = retried(&s, &token, &t, "m2").await;
    assert_eq!(out["mode"], "continue_in_progress", "{out}");
    let deliveries = "SELECT count(*) FROM deliveries WHERE task_id = ?";
    assert_eq!(
        exec(dir.path(), deliveries, &t).await,
        2,
        "m1 and m3, once each"
    );
    s.shutdown().await;
}

/// `PATCH /api/internal/harness/gateway`: the gateway closes a row itself
/// (any state → PROCESSED with its response); bad input → 400 naming the
/// field, nothing changed; an agent's credential → 403.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_completes_an_inbound_row_itself() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    project(&s, dir.path(), "shop").await;
    let token = secret(dir.path(), "gateway.token");
    let (_, out) = s
        .call(
            "POST",
            ROUTE,
            Some(&token),
            Some(with(
                message("p1", "PROJECT_DISCUSSION", "how is it?"),
                json!({"project": "shop"}),
            )),
        )
        .await;
    assert_eq!(out["mode"], "project_discussion", "{out}");
    let id = out["inboundId"].as_str().unwrap().to_string();
    let state = "SELECT count(*) FROM gateway_inbound WHERE id = ? AND state = 'QUEUED'";
    assert_eq!(exec(dir.path(), state, &id).await, 1);
    let agent_task = s.task("agent").await;
    let (_exec, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&agent_task)
        .await
        .unwrap();
    let before = row_counts(dir.path()).await;
    for (body, field) in [
        (json!({"response": {"a": 1}}), "inboundId"),
        (json!({"inboundId": "nope", "response": 1}), "inboundId"),
        (
            json!({"inboundId": id, "response": "x".repeat(64_001)}),
            "response",
        ),
    ] {
        let (st, out) = s.call("PATCH", ROUTE, Some(&token), Some(body)).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{field}: {out}");
        assert_eq!(out["field"], field, "{out}");
    }
    // A row that does not exist is not found, like every other id.
    let (st, out) = s
        .call(
            "PATCH",
            ROUTE,
            Some(&token),
            Some(json!({"inboundId": "cmissing000000000000000", "response": 1})),
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{out}");
    let (st, out) = s
        .call(
            "PATCH",
            ROUTE,
            Some(&token),
            Some(json!({"inboundId": id, "extra": 1})),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "an unknown field: {out}");
    let (st, out) = s
        .call("PATCH", ROUTE, Some(&agent), Some(json!({"inboundId": id})))
        .await;
    assert!(
        matches!(st, StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED),
        "{st} {out}"
    );
    assert_eq!(exec(dir.path(), state, &id).await, 1, "still QUEUED");
    assert_eq!(row_counts(dir.path()).await, before, "nothing was written");

    let (st, out) = s
        .call(
            "PATCH",
            ROUTE,
            Some(&token),
            Some(json!({"inboundId": id, "response": {"mode": "answered_by_gateway"}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(
        (&out["ok"], &out["state"]),
        (&json!(true), &json!("PROCESSED"))
    );
    let (_, rows) = s
        .admin("GET", "/api/gateway/inbound?state=PROCESSED", None)
        .await;
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{rows}"));
    assert_eq!(row["result"]["mode"], "answered_by_gateway", "{row}");
    assert!(
        row["processedAt"].is_string() || row["processedAt"].is_number(),
        "{row}"
    );
    // The repeat (or a second result) overwrites; still 200.
    let (st, _) = s
        .call("PATCH", ROUTE, Some(&token), Some(json!({"inboundId": id})))
        .await;
    assert_eq!(st, StatusCode::OK);
    s.shutdown().await;
}

/// Bad input on the continuation (route and tool, fields beyond
/// `content`), on `reply_to_ask` with the gateway token and on
/// `relay_channel_reply` (fields other than `text`): an error naming the
/// field, no row written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_continuation_reply_and_relay_input_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    let token = secret(dir.path(), "gateway.token");
    let t = s.task("bad input").await;
    s.running
        .harness
        .asks()
        .ask(&t, Some("which one?"))
        .await
        .unwrap();
    let before = row_counts(dir.path()).await;
    let base = continuation(&t, "b1", "go on");
    for (field, value) in [
        ("gateway", json!("slack")),
        ("platform", Value::Null),
        ("chatId", json!("x".repeat(513))),
        ("platformMessageId", Value::Null),
        ("platformMessageId", json!("x".repeat(513))),
        ("senderId", json!("x".repeat(513))),
        ("replyToMessageId", json!("x".repeat(513))),
        ("quotedText", json!("x".repeat(16_001))),
        ("taskId", json!("nope")),
        ("content", json!("x".repeat(10_001))),
    ] {
        let mut body = base.clone();
        body[field] = value;
        let (st, out) = s.call("PUT", TASK, Some(&token), Some(body.clone())).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{field}: {out}");
        assert!(
            out["field"].as_str().is_some_and(|f| f.contains(field)),
            "{field}: {out}"
        );
        let (is_error, out) = tool(&s, &token, "continue_bound_task", body).await;
        assert!(is_error, "{field}: {out}");
        assert!(
            out.to_string().contains(field),
            "the tool's error names {field}: {out}"
        );
    }
    for (field, args) in [
        ("taskId", json!({"taskId": "nope", "text": "yes"})),
        ("text", json!({"taskId": t, "text": ""})),
        ("text", json!({"taskId": t, "text": "x".repeat(20_001)})),
    ] {
        let (is_error, out) = tool(&s, &token, "reply_to_ask", args).await;
        assert!(is_error, "reply_to_ask {field}: {out}");
        assert!(
            out.to_string().contains(field),
            "reply_to_ask names {field}: {out}"
        );
    }
    let text = format!("yes [[tower:task={t}]]");
    for (field, value) in [
        ("gateway", json!("slack")),
        ("platform", json!("x".repeat(65))),
        ("chatId", json!("x".repeat(513))),
        ("platformMessageId", json!("x".repeat(513))),
        ("quotedText", json!("x".repeat(16_001))),
        ("taskId", json!("nope")),
        ("senderId", json!("x".repeat(513))),
    ] {
        let mut args = json!({"text": text, "gateway": "openclaw", "platform": "telegram",
            "chatId": "-100", "platformMessageId": "9"});
        args[field] = value;
        let (is_error, out) = tool(&s, &token, "relay_channel_reply", args).await;
        assert!(is_error, "relay_channel_reply {field}: {out}");
        assert!(
            out.to_string().contains(field),
            "relay names {field}: {out}"
        );
    }
    assert!(
        s.running.harness.asks().pending(&t).await.unwrap().pending,
        "the ask is still OPEN"
    );
    assert_eq!(row_counts(dir.path()).await, before, "nothing was written");
    s.shutdown().await;
}
