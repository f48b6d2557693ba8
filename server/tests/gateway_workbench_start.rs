//! Queued gateway requests reach a Workbench that was not running
//! (docs/tower-messaging.md §8.2 step 14, docs/tower-workbench.md §8.13), with a real server and the
//! double agent in a real PTY: the Workbench is started idle and types the
//! batch; a Workbench whose directory is gone is not started and the
//! request says why; the recovery (at start-up, and each pass) confirms a
//! linked task the Workbench never confirmed, fails a request resolved
//! without a link, and settles an expired continuation claim.

use crate::common::{self, workbench::wait_for};

use std::{path::Path, time::Duration};

use chrono::Utc;
use harness_core::store::{InboundClaim, InboundIntent, InboundState, NewInbound, NewTask};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ROUTE: &str = "/api/internal/harness/gateway";

fn gateway_token(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("secrets").join("gateway.token"))
        .unwrap()
        .trim()
        .to_string()
}

/// An OWNER (telegram 42), a project `shop` and its Workbench (the double
/// agent; `cwd` overrides the project's directory).
async fn setup(s: &common::Server, log: &Path, cwd: Option<&Path>) -> String {
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"accessPolicy": {"ownerIds": {"telegram": ["42"]}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    // Outside the data directory (agents cannot see it).
    let path = std::env::temp_dir().join(format!("harness-gw-{}", harness_core::ids::new_id()));
    std::fs::create_dir_all(&path).unwrap();
    let (st, project) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "shop", "path": path})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{project}");
    let pid = project["id"].as_str().unwrap().to_string();
    let mut agent = json!({"provider": "claude",
        "command": [common::double().display().to_string()],
        "env": {"HARNESS_DOUBLE_INPUT_LOG": log.display().to_string()}});
    if let Some(cwd) = cwd {
        agent["cwd"] = json!(cwd);
    }
    let (st, wb) = s
        .admin(
            "POST",
            &format!("/api/projects/{pid}/workbench"),
            Some(json!({ "agent": agent })),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{wb}");
    wb["id"].as_str().unwrap().to_string()
}

async fn route(s: &common::Server, token: &str, pmid: &str, intent: &str) -> Value {
    let (st, out) = s
        .call(
            "POST",
            ROUTE,
            Some(token),
            Some(
                json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
                "platformMessageId": pmid, "senderId": "42", "intent": intent,
                "project": "shop", "content": format!("please look at {pmid}")}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["queued"], true, "{out}");
    out
}

async fn inbound_row(s: &common::Server, id: &str) -> Value {
    let (st, rows) = s.admin("GET", "/api/gateway/inbound?limit=500", None).await;
    assert_eq!(st, StatusCode::OK, "{rows}");
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no inbound row {id}: {rows}"))
}

async fn wait_row<F: Fn(&Value) -> bool>(s: &common::Server, id: &str, what: &str, f: F) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = inbound_row(s, id).await;
        if f(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}: {last:#}");
}

fn reply_kinds(row: &Value) -> Vec<String> {
    row["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_request_starts_the_idle_workbench_which_gets_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wb-inputs.log");
    let s = common::start(dir.path()).await;
    let wb = setup(&s, &log, None).await;
    let token = gateway_token(dir.path());
    // Nothing runs the Workbench before the request.
    assert!(
        s.running
            .harness
            .tasks()
            .live_execution(&wb)
            .await
            .unwrap()
            .is_none()
    );
    let out = route(&s, &token, "m1", "PROJECT_WORK").await;
    assert_eq!(out["workbenchTaskId"], wb.as_str(), "{out}");
    // Started idle, and the batch with the request typed into it.
    let screen = wait_for(&s, &wb, "the gateway batch", |t| {
        t.contains("GOT INPUT: [Gateway project work request]")
    })
    .await;
    assert!(screen.contains("please look at m1"), "{screen}");
    assert!(screen.contains("[Tower durable batch:"), "{screen}");
    let execution = s.running.harness.tasks().live_execution(&wb).await.unwrap();
    assert!(execution.is_some(), "the Workbench runs");
    // The batch is typed into the terminal this start made: one execution.
    let (_, task) = s.admin("GET", &format!("/api/tasks/{wb}"), None).await;
    assert_eq!(
        task["execution"]["id"],
        execution.unwrap().id.as_str(),
        "{task:#}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workbench_whose_directory_is_gone_is_not_started_and_the_request_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wb-inputs.log");
    let s = common::start(dir.path()).await;
    let gone = dir.path().join("gone");
    let wb = setup(&s, &log, Some(&gone)).await;
    let token = gateway_token(dir.path());
    let out = route(&s, &token, "m1", "PROJECT_WORK").await;
    let id = out["inboundId"].as_str().unwrap();
    let row = wait_row(&s, id, "the start failure on the request", |r| {
        r["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("does not exist"))
    })
    .await;
    assert_eq!(row["state"], "QUEUED", "{row:#}");
    assert!(
        row["lastError"]
            .as_str()
            .unwrap()
            .contains(&gone.display().to_string()),
        "{row:#}"
    );
    assert!(
        s.running
            .harness
            .tasks()
            .live_execution(&wb)
            .await
            .unwrap()
            .is_none()
    );
    let (_, task) = s.admin("GET", &format!("/api/tasks/{wb}"), None).await;
    assert!(task["execution"].is_null(), "never started: {task:#}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_task_never_confirmed_is_confirmed_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wb-inputs.log");
    // The Workbench cannot start here: only the recovery acts.
    let gone = dir.path().join("gone");
    let s = common::start(dir.path()).await;
    let wb = setup(&s, &log, Some(&gone)).await;
    let token = gateway_token(dir.path());
    let out = route(&s, &token, "w1", "PROJECT_WORK").await;
    let inbound = out["inboundId"].as_str().unwrap().to_string();
    let project = s
        .running
        .harness
        .tasks()
        .get_task(&wb)
        .await
        .unwrap()
        .task
        .project_id;
    // The Workbench created the task (linked in its transaction) and died
    // before confirm_gateway_task_created.
    let (child, created) = s
        .running
        .harness
        .store()
        .create_linked_task(
            NewTask {
                id: harness_core::ids::new_id(),
                title: "speed up the cart".into(),
                description: None,
                project_id: project,
                parent_task_id: Some(wb.clone()),
                agent: harness_core::model::AgentConfig {
                    provider: harness_core::model::Provider::Command,
                    command: Some(vec!["true".into()]),
                    cwd: None,
                    env: Default::default(),
                    restart_on_interrupt: false,
                    recovery: None,
                },
                now: Utc::now(),
            },
            &inbound,
        )
        .await
        .unwrap();
    assert!(created);
    let row = inbound_row(&s, &inbound).await;
    assert_eq!(row["state"], "QUEUED", "{row:#}");
    s.shutdown().await;

    // The start-up recovery confirms it, as the callback would have.
    let s = common::start(dir.path()).await;
    let row = wait_row(&s, &inbound, "the confirmation", |r| {
        r["state"] == "PROCESSING"
    })
    .await;
    assert_eq!(row["createdTaskId"], child.as_str(), "{row:#}");
    let kinds = reply_kinds(&row);
    assert_eq!(
        kinds.iter().filter(|k| *k == "TASK_CREATED").count(),
        1,
        "{kinds:?}"
    );
    let (_, inbox) = s
        .admin("GET", &format!("/api/tasks/{wb}/inbox"), None)
        .await;
    let event = inbox["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["dedupKey"] == format!("gateway-work:{inbound}"))
        .cloned()
        .unwrap();
    assert_eq!(event["state"], "CONSUMED", "{event:#}");
    // Another pass writes nothing more.
    let again = s
        .running
        .harness
        .gateway()
        .recover_gateway_inbound(Utc::now())
        .await
        .unwrap();
    assert_eq!(again.advanced, 0, "{again:?}");
    let row = inbound_row(&s, &inbound).await;
    assert_eq!(reply_kinds(&row).len(), kinds.len(), "{row:#}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_resolved_without_a_link_fails_and_a_waiting_one_stays_queued() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wb-inputs.log");
    let gone = dir.path().join("gone");
    let s = common::start(dir.path()).await;
    setup(&s, &log, Some(&gone)).await;
    let token = gateway_token(dir.path());
    let resolved = route(&s, &token, "w1", "PROJECT_WORK").await["inboundId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = route(&s, &token, "w2", "PROJECT_DISCUSSION").await["inboundId"]
        .as_str()
        .unwrap()
        .to_string();
    // The Workbench resolved the first request's batch without linking a task.
    let url = format!("sqlite://{}", dir.path().join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let n = sqlx::query("UPDATE workbench_events SET state = 'CONSUMED' WHERE dedup_key = ?1")
        .bind(format!("gateway-work:{resolved}"))
        .execute(&pool)
        .await
        .unwrap()
        .rows_affected();
    assert_eq!(n, 1);
    pool.close().await;
    let pass = s
        .running
        .harness
        .gateway()
        .recover_gateway_inbound(Utc::now())
        .await
        .unwrap();
    // The server's own upkeep runs the same pass at its start and every
    // 30 s: on a busy machine it can reach the row first. Either pass fails
    // it, once; the rows below say it was done.
    assert!(pass.failed <= 1, "{pass:?}");
    assert_eq!(
        pass.workbenches.len(),
        1,
        "the waiting one's Workbench: {pass:?}"
    );
    let row = inbound_row(&s, &resolved).await;
    assert_eq!(row["state"], "FAILED", "{row:#}");
    assert!(
        row["lastError"]
            .as_str()
            .unwrap()
            .contains("without a durable task link"),
        "{row:#}"
    );
    let row = inbound_row(&s, &waiting).await;
    assert_eq!(row["state"], "QUEUED", "{row:#}");
    assert_eq!(reply_kinds(&row), ["QUEUED_ACK"], "{row:#}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_continuation_claim_is_settled_by_what_was_queued() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let h = &s.running.harness;
    let task = s.task("the bound task").await;
    let old = Utc::now() - chrono::Duration::minutes(5);
    // Two continue_bound_task claims a crash left PROCESSING 5 minutes ago;
    // the first had queued its input (the delivery keyed by the inbound id).
    let mut ids = Vec::new();
    for pmid in ["c1", "c2"] {
        let (row, _) = h
            .store()
            .create_inbound(NewInbound {
                id: harness_core::ids::new_id(),
                dedup_key: format!("gateway-inbound:openclaw:telegram:-100:{pmid}"),
                gateway: "openclaw".into(),
                platform: "telegram".into(),
                chat_id: "-100".into(),
                sender_id: Some("42".into()),
                platform_message_id: pmid.into(),
                thread_id: None,
                root_message_id: None,
                reply_to_message_id: None,
                intent: InboundIntent::ProjectWork,
                content: "continue".into(),
                now: old,
            })
            .await
            .unwrap();
        let claimed = h
            .store()
            .claim_inbound(InboundClaim {
                id: row.id.clone(),
                seen_state: row.state,
                seen_response: row.response.clone(),
                seen_updated_at: row.updated_at,
                response: json!({"mode": "continue_in_progress", "inboundId": row.id,
                    "taskId": task})
                .to_string(),
                owner: "node-gone:boot-1".into(),
                lease_until: old + chrono::Duration::seconds(60),
                now: old,
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.state, InboundState::Processing);
        ids.push(row.id);
    }
    h.deliveries()
        .enqueue_child_input(&task, "continue", true, &ids[0])
        .await
        .unwrap();
    let pass = h
        .gateway()
        .recover_gateway_inbound(Utc::now())
        .await
        .unwrap();
    assert_eq!((pass.advanced, pass.failed), (1, 1), "{pass:?}");
    let done = inbound_row(&s, &ids[0]).await;
    assert_eq!(done["state"], "PROCESSED", "{done:#}");
    assert_eq!(done["result"]["mode"], "continued_task", "{done:#}");
    assert_eq!(reply_kinds(&done), ["QUEUED_ACK"], "{done:#}");
    let failed = inbound_row(&s, &ids[1]).await;
    assert_eq!(failed["state"], "FAILED", "{failed:#}");
    assert_eq!(failed["result"]["mode"], "continue_failed", "{failed:#}");
    assert!(reply_kinds(&failed).is_empty(), "{failed:#}");
    // A fresh claim (inside its lease) is left alone.
    let again = h
        .gateway()
        .recover_gateway_inbound(Utc::now())
        .await
        .unwrap();
    assert_eq!((again.advanced, again.failed), (0, 0), "{again:?}");
    s.shutdown().await;
}
