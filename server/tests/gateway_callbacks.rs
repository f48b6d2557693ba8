//! The Workbench's callbacks for routed gateway requests over real HTTP:
//! only the bound Workbench's own credential; a task
//! created for a work request is linked with it (a retried create returns
//! the same task); each callback writes its reply once however often it is
//! repeated; bad input names the field and writes nothing.

use crate::common;

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};

const ROUTE: &str = "/api/internal/harness/gateway";

fn secret(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join("secrets").join(name))
        .unwrap()
        .trim()
        .to_string()
}

async fn tool(s: &common::Server, token: &str, name: &str, args: Value) -> (bool, Value) {
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": name, "arguments": args}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let out: Value = resp.json().await.unwrap();
    let text = out["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    (
        out["result"]["isError"].as_bool().unwrap_or(false),
        serde_json::from_str(text).unwrap(),
    )
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

async fn one(dir: &Path, sql: &str, bind: &str) -> String {
    let url = format!("sqlite://{}?mode=ro", dir.join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let v: String = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .bind(bind)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    v
}

struct Setup {
    s: common::Server,
    gateway: String,
}

async fn setup(dir: &Path) -> Setup {
    let s = common::start(dir).await;
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"accessPolicy": {"ownerIds": {"telegram": ["42"]}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let path = dir.join("shop");
    std::fs::create_dir_all(&path).unwrap();
    let (st, out) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "shop", "path": path})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{out}");
    // The Workbench's agent is the test (begin_execution): a directory that
    // does not exist keeps Harness from starting one for the requests.
    let pid = out["id"].as_str().unwrap();
    let (st, wb) = s
        .admin(
            "POST",
            &format!("/api/projects/{pid}/workbench"),
            Some(json!({"agent": {"provider": "command", "command": ["true"],
                "cwd": dir.join("no-such-dir")}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{wb}");
    Setup {
        gateway: secret(dir, "gateway.token"),
        s,
    }
}

async fn routed(x: &Setup, pmid: &str, intent: &str) -> (String, String) {
    let (st, out) =
        x.s.call(
            "POST",
            ROUTE,
            Some(&x.gateway),
            Some(
                json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
                "platformMessageId": pmid, "senderId": "42", "intent": intent,
                "project": "shop", "content": "make the cart faster"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["queued"], true, "{out}");
    (
        out["inboundId"].as_str().unwrap().to_string(),
        out["workbenchTaskId"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bound_workbench_links_confirms_and_completes_work_once() {
    let dir = tempfile::tempdir().unwrap();
    let x = setup(dir.path()).await;
    let s = &x.s;
    let (inbound, workbench) = routed(&x, "w1", "PROJECT_WORK").await;
    let (_, wb_token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&workbench)
        .await
        .unwrap();
    let other = s.task("someone else").await;
    let (_, other_token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&other)
        .await
        .unwrap();

    // create_task with gatewayInboundId: linked; a retry is the same task.
    let create = json!({"title": "speed up the cart", "gatewayInboundId": inbound,
        "agent": {"provider": "command", "command": ["true"]}});
    let (is_error, first) = tool(s, &wb_token, "create_task", create.clone()).await;
    assert!(!is_error, "{first}");
    let child = first["id"].as_str().unwrap().to_string();
    assert_eq!(first["parentTaskId"], workbench.as_str(), "{first}");
    let (_, again) = tool(s, &wb_token, "create_task", create.clone()).await;
    assert_eq!(
        again["id"],
        child.as_str(),
        "a retried create returns the same task"
    );
    assert_eq!(
        count(
            dir.path(),
            "SELECT count(*) FROM tasks WHERE parent_task_id = ?",
            &workbench
        )
        .await,
        1
    );
    assert_eq!(
        one(
            dir.path(),
            "SELECT task_id FROM gateway_task_links WHERE inbound_id = ?",
            &inbound
        )
        .await,
        child,
        "linked in the transaction that created it"
    );
    // Another agent cannot link to it.
    let (is_error, out) = tool(s, &other_token, "create_task", create).await;
    assert!(is_error, "{out}");

    // Only the bound Workbench confirms: another agent, the gateway and the
    // admin are refused (403) and nothing is written.
    let body = json!({"action": "task_created", "inboundId": inbound, "taskId": child});
    for token in [&other_token, &x.gateway, &s.admin] {
        let (st, out) = s.call("PUT", ROUTE, Some(token), Some(body.clone())).await;
        assert_eq!(st, StatusCode::FORBIDDEN, "{out}");
    }
    let replies = |kind: &'static str| {
        let inbound = inbound.clone();
        let dir = dir.path().to_path_buf();
        async move {
            count(
                &dir,
                &format!(
                    "SELECT count(*) FROM gateway_replies WHERE inbound_id = ? AND kind = '{kind}'"
                ),
                &inbound,
            )
            .await
        }
    };
    assert_eq!(replies("TASK_CREATED").await, 0);
    // The final result needs the confirmation first.
    let (is_error, out) = tool(
        s,
        &wb_token,
        "complete_gateway_work",
        json!({"inboundId": inbound, "taskId": child}),
    )
    .await;
    assert!(is_error, "{out}");

    let mut with_reviewer = body.clone();
    with_reviewer["reviewerTaskId"] = json!(workbench);
    let (st, out) = s
        .call("PUT", ROUTE, Some(&wb_token), Some(with_reviewer.clone()))
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(
        (&out["deduped"], &out["kind"]),
        (&json!(false), &json!("TASK_CREATED"))
    );
    let (_, out) = s
        .call("PUT", ROUTE, Some(&wb_token), Some(with_reviewer))
        .await;
    assert_eq!(out["deduped"], true, "{out}");
    let (is_error, out) = tool(
        s,
        &wb_token,
        "confirm_gateway_task_created",
        json!({"inboundId": inbound, "taskId": child}),
    )
    .await;
    assert!(!is_error && out["deduped"] == true, "{out}");
    assert_eq!(replies("TASK_CREATED").await, 1);
    assert_eq!(
        one(
            dir.path(),
            "SELECT state FROM gateway_inbound WHERE id = ?",
            &inbound
        )
        .await,
        "PROCESSING"
    );
    assert_eq!(
        one(
            dir.path(),
            "SELECT created_task_id FROM gateway_inbound WHERE id = ?",
            &inbound
        )
        .await,
        child
    );
    assert_eq!(
        one(
            dir.path(),
            "SELECT state FROM workbench_events WHERE dedup_key = 'gateway-work:' || ?",
            &inbound
        )
        .await,
        "CONSUMED"
    );
    // A reply to the delivered confirmation, in this chat, names the task
    // (the reference's gateway_delivery step); from another chat it does not.
    let url = format!("sqlite://{}", dir.path().join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query(
        "UPDATE gateway_replies SET state = 'DELIVERED', platform_message_id = 'pm-created' \
         WHERE inbound_id = ? AND kind = 'TASK_CREATED'",
    )
    .bind(&inbound)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let resolve = |chat: &str| {
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": chat,
            "replyToMessageId": "pm-created"})
    };
    let (st, ctx) = s
        .call(
            "POST",
            "/api/internal/harness/gateway-task",
            Some(&x.gateway),
            Some(resolve("telegram:-100")),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{ctx}");
    assert_eq!(
        (
            &ctx["bindingSource"],
            &ctx["subjectTaskId"],
            &ctx["producerTaskId"]
        ),
        (&json!("gateway_delivery"), &json!(child), &json!(workbench)),
        "{ctx}"
    );
    let (_, ctx) = s
        .call(
            "POST",
            "/api/internal/harness/gateway-task",
            Some(&x.gateway),
            Some(resolve("-999")),
        )
        .await;
    assert_eq!(ctx["bound"], false, "{ctx}");

    // Another task of the project cannot be confirmed for it.
    let (st, out) = s
        .call(
            "PUT",
            ROUTE,
            Some(&wb_token),
            Some(json!({"action": "task_created", "inboundId": inbound, "taskId": other})),
        )
        .await;
    assert!(st.is_client_error(), "{out}");

    // The result: once, the request PROCESSED; a repeat is deduped.
    let done = json!({"inboundId": inbound, "taskId": child, "resultSummary": "2x faster"});
    let (is_error, out) = tool(s, &wb_token, "complete_gateway_work", done.clone()).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["deduped"], false, "{out}");
    let (_, out) = tool(s, &wb_token, "complete_gateway_work", done).await;
    assert_eq!(out["deduped"], true, "{out}");
    assert_eq!(replies("FINAL_RESULT").await, 1);
    assert!(
        one(
            dir.path(),
            "SELECT content FROM gateway_replies WHERE inbound_id = ? AND kind = 'FINAL_RESULT'",
            &inbound
        )
        .await
        .contains("2x faster")
    );
    assert_eq!(
        one(
            dir.path(),
            "SELECT state FROM gateway_inbound WHERE id = ?",
            &inbound
        )
        .await,
        "PROCESSED"
    );
    // The gateway's repeat of the original message: already processed.
    let (_, out) = s
        .call(
            "POST",
            ROUTE,
            Some(&x.gateway),
            Some(
                json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
                "platformMessageId": "w1", "senderId": "42", "intent": "PROJECT_WORK",
                "project": "shop", "content": "make the cart faster"}),
            ),
        )
        .await;
    assert_eq!(out["mode"], "already_processed", "{out}");

    // What a person sees: the row by state, its result and its replies.
    let (st, rows) = s
        .admin("GET", "/api/gateway/inbound?state=processed", None)
        .await;
    assert_eq!(st, StatusCode::OK, "{rows}");
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == inbound.as_str())
        .unwrap_or_else(|| panic!("{rows}"));
    assert_eq!(row["result"]["mode"], "project_work", "{row}");
    let kinds: Vec<&str> = row["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["QUEUED_ACK", "TASK_CREATED", "FINAL_RESULT"],
        "{row}"
    );
    let (st, out) = s
        .admin("GET", "/api/gateway/inbound?state=nope", None)
        .await;
    assert_eq!(
        (st, &out["field"]),
        (StatusCode::BAD_REQUEST, &json!("state"))
    );
    let (st, _) = s
        .call("GET", "/api/gateway/inbound", Some(&x.gateway), None)
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, sessions) = s.admin("GET", "/api/gateway/sessions", None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(
        sessions[0]["workbenchTaskId"],
        workbench.as_str(),
        "{sessions}"
    );
    x.s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discussion_is_answered_once_and_bad_input_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let x = setup(dir.path()).await;
    let s = &x.s;
    let (inbound, workbench) = routed(&x, "d1", "PROJECT_DISCUSSION").await;
    let (_, wb_token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&workbench)
        .await
        .unwrap();

    // Bad input: 400 naming the field, nothing written.
    for (body, field) in [
        (json!({"inboundId": inbound, "response": "x"}), "action"),
        (json!({"action": "talk", "inboundId": inbound}), "action"),
        (
            json!({"action": "discussion", "response": "x"}),
            "inboundId",
        ),
        (
            json!({"action": "discussion", "inboundId": "nope", "response": "x"}),
            "inboundId",
        ),
        (
            json!({"action": "discussion", "inboundId": inbound}),
            "response",
        ),
        (
            json!({"action": "discussion", "inboundId": inbound,
            "response": "x".repeat(16_001)}),
            "response",
        ),
        (
            json!({"action": "task_created", "inboundId": inbound}),
            "taskId",
        ),
        (
            json!({"action": "final", "inboundId": inbound, "taskId": workbench,
            "resultSummary": "x".repeat(8_001)}),
            "resultSummary",
        ),
    ] {
        let (st, out) = s.call("PUT", ROUTE, Some(&wb_token), Some(body)).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{field}: {out}");
        assert_eq!(out["field"], field, "{out}");
    }
    let (is_error, out) = tool(
        s,
        &wb_token,
        "complete_gateway_discussion",
        json!({"inboundId": inbound}),
    )
    .await;
    assert!(
        is_error && out["error"].as_str().unwrap().contains("response"),
        "{out}"
    );
    assert_eq!(
        count(
            dir.path(),
            "SELECT count(*) FROM gateway_replies WHERE inbound_id = ? AND kind <> 'QUEUED_ACK'",
            &inbound
        )
        .await,
        0
    );
    // Work callbacks do not apply to a discussion.
    let (st, _) = s
        .call(
            "PUT",
            ROUTE,
            Some(&wb_token),
            Some(json!({"action": "task_created", "inboundId": inbound, "taskId": workbench})),
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND);

    let (is_error, out) = tool(
        s,
        &wb_token,
        "complete_gateway_discussion",
        json!({"inboundId": inbound, "response": "Use an index on cart_items."}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["deduped"], false);
    // Repeated with other text: the first answer stands, sent once.
    let (_, out) = tool(
        s,
        &wb_token,
        "complete_gateway_discussion",
        json!({"inboundId": inbound, "response": "something else"}),
    )
    .await;
    assert_eq!(out["deduped"], true, "{out}");
    assert_eq!(
        one(
            dir.path(),
            "SELECT content FROM gateway_replies WHERE inbound_id = ? AND kind = 'DISCUSSION_REPLY'",
            &inbound
        )
        .await,
        "Use an index on cart_items."
    );
    assert_eq!(
        one(
            dir.path(),
            "SELECT state FROM gateway_inbound WHERE id = ?",
            &inbound
        )
        .await,
        "PROCESSED"
    );
    assert_eq!(
        one(
            dir.path(),
            "SELECT state FROM workbench_events WHERE dedup_key = 'gateway-discussion:' || ?",
            &inbound
        )
        .await,
        "CONSUMED"
    );
    x.s.shutdown().await;
}

/// Over REST (the admin's `POST /api/tasks`) a gateway link is refused
/// with a 400 naming it, and no task is written: only the bound
/// Workbench's own `create_task` links (schemathesis found a 500 here).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gateway_link_over_rest_is_a_400_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (_, before) = s.admin("GET", "/api/tasks", None).await;
    for inbound in ["", "cmx6jpqab0004nm7n1kpru9p6", "not an id"] {
        let (st, body) = s
            .admin(
                "POST",
                "/api/tasks",
                Some(json!({"title": "0", "gatewayInboundId": inbound})),
            )
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{inbound:?} → {body}");
        assert_eq!(body["field"], "gatewayInboundId", "{body}");
    }
    let (_, after) = s.admin("GET", "/api/tasks", None).await;
    assert_eq!(before, after, "no task written");
}
