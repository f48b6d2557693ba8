//! A chat message being continued into a task when the node holding its
//! claim is SIGKILLed: the claim is leased to the process (`lease_owner`
//! `<node>:<boot>`), and a survivor takes it over as soon as that node is
//! dead by the database's clock — not after the claim's 60 s lease — and the
//! message reaches the task once. Two real `harness serve` processes on
//! PostgreSQL (`gateway_continue` covers the rule in one process).

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::cluster::{HEARTBEAT_ARGS, node, node_id, pool, share_secrets};
use crate::common::{self, gateway::*, process::ServerProcess as Life};

/// The gateway's retry of `pmid` as a continuation of `task`, on `life`.
async fn retry(life: &Life, token: &str, task: &str, pmid: &str) -> Value {
    let body = json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
        "platformMessageId": pmid, "senderId": "42", "taskId": task, "content": "go on"});
    let resp = life
        .client
        .put(format!("{}{TASK}", life.base))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let out: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::OK, "{out}");
    assert!(
        out.get("claimedBy").is_none(),
        "the claimant is not shown: {out}"
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_continuation_claimed_by_a_killed_node_is_taken_over_by_a_survivor_once_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sent.jsonl");
    let (da, db_) = (dir.path().join("a"), dir.path().join("b"));
    let a = node(&da, &db.url, &record, "ok").await;
    share_secrets(&da, &db_);
    let b = node(&db_, &db.url, &record, "ok").await;
    let p = pool(&db.url).await;
    let token = secret(&da, "gateway.token");
    a.set_owners("openclaw", &["42"]).await;
    let (st, t) = a
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "continued",
                "agent": {"provider": "command", "command": ["sh", "-c", "cat > /dev/null"]}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();

    // Node A is mid-way through continuing "m1": its row is PROCESSING under
    // a claim naming A's process, made just now (the lease has 60 s to run).
    let resp = a
        .client
        .post(format!("{}{ROUTE}", a.base))
        .bearer_auth(&token)
        .json(&with(
            message("m1", "PROJECT_WORK", "go on"),
            json!({"taskId": t}),
        ))
        .send()
        .await
        .unwrap();
    let routed: Value = resp.json().await.unwrap();
    let inbound = routed["inboundId"]
        .as_str()
        .expect("an inbound id")
        .to_string();
    let claimant: String =
        sqlx::query_scalar("SELECT id || ':' || boot FROM harness_nodes WHERE id = $1")
            .bind(node_id(&da))
            .fetch_one(&p)
            .await
            .unwrap();
    let claim = json!({"mode": "continue_in_progress", "inboundId": inbound, "taskId": t});
    let claimed = sqlx::query(
        "UPDATE gateway_inbound SET state = 'PROCESSING', response = $1, lease_owner = $3, \
         updated_at = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT), \
         lease_expires_at = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 60000 \
         WHERE id = $2",
    )
    .bind(claim.to_string())
    .bind(&inbound)
    .bind(&claimant)
    .execute(&p)
    .await
    .unwrap();
    assert_eq!(claimed.rows_affected(), 1);

    // While A lives, B waits for it (no second continuation).
    let out = retry(&b, &token, &t, "m1").await;
    assert_eq!(
        (&out["mode"], &out["inboundId"], &out["noOp"]),
        (
            &json!("continue_in_progress"),
            &json!(inbound),
            &json!(true)
        ),
        "a live node's claim is waited for: {out}"
    );

    // A dies. B takes the claim over once A is dead by the database's clock
    // (the dead-after of HEARTBEAT_ARGS), long before the lease ends.
    a.kill();
    let killed = Instant::now();
    let dead_after: u64 = HEARTBEAT_ARGS[3].parse().unwrap();
    let out = loop {
        let out = retry(&b, &token, &t, "m1").await;
        if out["mode"] != "continue_in_progress" {
            break out;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(dead_after + 15),
            "the dead node's claim still blocks {:?} after the kill: {out}",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let took = killed.elapsed();
    assert_eq!(
        (&out["mode"], &out["inboundId"], &out["noOp"]),
        (&json!("continued_task"), &json!(inbound), &json!(false)),
        "the survivor continued the message: {out}"
    );
    assert!(
        took >= Duration::from_secs(dead_after.saturating_sub(2)),
        "taken over {took:?} after the kill, before A could be dead by the database's clock"
    );
    // A retry after that is the finished result; the task got the message once.
    let again = retry(&b, &token, &t, "m1").await;
    assert_eq!(
        (&again["mode"], &again["inboundId"], &again["noOp"]),
        (&json!("continued_task"), &json!(inbound), &json!(true)),
        "{again}"
    );
    let deliveries: i64 = sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE task_id = $1")
        .bind(&t)
        .fetch_one(&p)
        .await
        .unwrap();
    assert_eq!(deliveries, 1, "the message reached the task once");
    b.stop();
}
