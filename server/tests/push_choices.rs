//! Structured questions on the push path and in replies:
//! a real server, real HTTP and the gateway CLI double. `POST
//! /api/internal/harness/outbound` with options, a default and a deadline
//! sends a chat text that lists the options numbered and states the default
//! and the deadline; `GET /api/internal/harness/pending` shows them; a REST
//! reply of `2.` records the option's label and which option it was; bad
//! structured fields are refused naming the field, writing nothing.

use crate::common;

use common::outbox::double_gateways;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn start(dir: &Path) -> common::Server {
    common::start_with(dir, |cfg| cfg.outbox.cli_timeout = Duration::from_secs(2)).await
}

fn records(path: &Path) -> Vec<Value> {
    common::json_lines(path)
}

async fn configure(s: &common::Server, record: &Path) {
    let env = json!({"env": {"GATEWAY_DOUBLE_RECORD": record}});
    double_gateways(s, &["hermes", "openclaw"], env).await;
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
}

async fn message_rows(s: &common::Server, task: &str) -> Vec<Value> {
    let (st, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={task}"),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{page}");
    page["rows"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pushed_question_lists_its_options_and_a_reply_of_2_picks_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record).await;
    let t = s.task("Nightly build").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let push = |body: Value| {
        let token = token.clone();
        let s = &s;
        async move {
            s.call(
                "POST",
                "/api/internal/harness/outbound",
                Some(&token),
                Some(body),
            )
            .await
        }
    };

    // Bad structured fields: 400 naming the field, nothing written.
    let nine: Vec<Value> = (0..9).map(|i| json!({"label": format!("o{i}")})).collect();
    for (bad, field) in [
        (json!({"options": nine}), "options"),
        (json!({"options": ["A", "a"]}), "options"),
        (
            json!({"options": ["A", "B"], "default": "C", "deadline": 600}),
            "default",
        ),
        (
            json!({"options": ["A", "B"], "default": "A", "deadline": 5}),
            "deadline",
        ),
        (
            json!({"options": ["A", "B"], "expectReply": false}),
            "expectReply",
        ),
    ] {
        let mut body = bad.clone();
        body["message"] = json!("Which DB?");
        body["scope"] = json!("unattended");
        let (st, out) = push(body).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad}: {out}");
        assert_eq!(out["field"], field, "{bad}: {out}");
    }
    assert!(message_rows(&s, &t).await.is_empty(), "nothing written");
    assert!(records(&record).is_empty(), "nothing sent");

    // The question, with options, a default and a deadline (no expectReply given).
    let body = json!({
        "message": "Postgres or SQLite?", "scope": "unattended",
        "options": [{"label": "Postgres", "description": "a server"}, {"label": "SQLite"}],
        "default": "SQLite", "deadline": 3600, "urgency": "high"
    });
    let (st, out) = push(body.clone()).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["state"], "DELIVERED", "{out}");
    assert_eq!(
        (out["expectReply"].as_bool(), out["parked"].as_bool()),
        (Some(true), Some(true)),
        "options make it a question: {out}"
    );
    let rec = records(&record);
    assert_eq!(rec.len(), 1);
    let text = rec[0]["argv"][5].as_str().unwrap();
    let pending = s.running.harness.asks().pending(&t).await.unwrap();
    let deadline = pending
        .choices
        .as_ref()
        .and_then(|c| c.deadline_at)
        .expect("a deadline");
    let when = deadline.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(
        text,
        format!(
            "Nightly build\n\n[urgent] Postgres or SQLite?\n\n1. Postgres — a server\n2. SQLite (default)\n\n\
             Reply with a number or an option's label, or write your own answer.\n\
             If nobody answers by {when}, \"SQLite\" will be taken.\n\nTask ID: [[tower:task={t}]]"
        )
    );
    // A retry of the same push (same relative deadline) is the same message.
    let (st, again) = push(body).await;
    assert_eq!(st, StatusCode::OK, "{again}");
    assert_eq!(again["deduped"], true, "{again}");
    assert_eq!(again["outboundId"], out["outboundId"]);
    assert_eq!(records(&record).len(), 1, "sent once");

    // The agent-facing pending view shows the options, default and deadline.
    let (st, p) = s
        .call(
            "GET",
            &format!("/api/internal/harness/pending?taskId={t}"),
            Some(&token),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{p}");
    assert_eq!(p["pending"], true);
    assert_eq!(p["requestId"], out["messageId"]);
    assert_eq!(
        p["options"],
        json!([{"label": "Postgres", "description": "a server"}, {"label": "SQLite"}])
    );
    assert_eq!(p["default"], "SQLite");
    assert_eq!(p["multiSelect"], false);
    assert_eq!(p["urgency"], "high");
    let at: chrono::DateTime<chrono::Utc> = p["deadlineAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(at.timestamp(), deadline.timestamp());

    // REST reply "2." answers with the option's label, and records which.
    let (st, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": " 2. "})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{r}");
    assert_eq!(r["requestId"], out["messageId"]);
    assert_eq!(r["deduped"], false);
    let rows = message_rows(&s, &t).await;
    let ask = rows
        .iter()
        .find(|m| m["id"] == out["messageId"])
        .expect("the ask");
    assert_eq!(ask["state"], "ANSWERED", "{ask}");
    assert_eq!(ask["replyText"], "SQLite", "{ask}");
    assert_eq!(ask["answeredOptions"], json!([1]), "{ask}");
    assert_eq!(ask["answeredBy"], "human");
    // "sqlite" repeats that answer (deduped); another option is a conflict.
    let (st, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "sqlite"})),
        )
        .await;
    assert_eq!((st, &r["deduped"]), (StatusCode::OK, &json!(true)), "{r}");
    let (st, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "1"})),
        )
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "{r}");
    s.shutdown().await;
}

async fn screen(s: &common::Server, task: &str) -> String {
    let (_, screen) = s
        .admin("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    screen["text"].as_str().unwrap_or_default().to_string()
}

async fn wait_screen(s: &common::Server, task: &str, what: &str, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = screen(s, task).await;
        if text.contains(needle) {
            return;
        }
        assert!(Instant::now() < deadline, "never {what}; screen:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn inbox(s: &common::Server, task: &str) -> Value {
    let (st, body) = s
        .admin("GET", &format!("/api/tasks/{task}/inbox"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    body
}

async fn double_task(
    s: &common::Server,
    title: &str,
    script: &str,
    parent: Option<&str>,
) -> String {
    let log = std::env::temp_dir().join(format!(
        "harness-pc-{}-{}.log",
        std::process::id(),
        title.replace(' ', "-")
    ));
    let mut body = json!({"title": title, "agent": {
        "provider": "claude", "command": [common::double().display().to_string()],
        "cwd": std::env::temp_dir(), "env": {"HARNESS_DOUBLE_SCRIPT": script,
            "HARNESS_DOUBLE_INPUT_LOG": log.display().to_string()}}});
    if let Some(p) = parent {
        body["parentTaskId"] = json!(p);
    }
    let (st, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

async fn start_task(s: &common::Server, task: &str) {
    let (st, body) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_derived_childs_native_question_reaches_the_parents_inbox_with_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let parent = double_task(&s, "parent", "say parent ready", None).await;
    start_task(&s, &parent).await;
    wait_screen(&s, &parent, "the parent", "parent ready").await;
    // The child (double agent, real hooks) opens Claude's AskUserQuestion
    // menu — the double's payload: "Which option?" with A / B — then ends
    // its turn as told.
    let child = double_task(
        &s,
        "asking child",
        "tool AskUserQuestion\nstop_hook asked natively",
        Some(&parent),
    )
    .await;
    start_task(&s, &child).await;
    wait_screen(&s, &child, "the denial", "TOOL DENIED").await;
    let text = screen(&s, &child).await;
    assert!(text.contains("ALREADY recorded"), "{text}");
    wait_screen(&s, &child, "the child's turn end", "STOP OK").await;

    // One ask with the menu's options…
    let pending = s.running.harness.asks().pending(&child).await.unwrap();
    assert!(pending.pending, "the question is an OPEN ask");
    let request_id = pending.request_id.clone().unwrap();
    let labels: Vec<String> = pending
        .choices
        .as_ref()
        .map(|c| c.options.iter().map(|o| o.label.clone()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["A", "B"]);
    // …and exactly one decision event in the parent's inbox, under the
    // ask's stable key (the child's turn end added none).
    let events = inbox(&s, &parent).await["events"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e["kind"], "CHILD_DECISION_REQUIRED");
    assert_eq!(e["priority"], "HIGH");
    assert_eq!(e["state"], "PENDING");
    assert_eq!(
        e["dedupKey"],
        format!("child-question:CHILD_DECISION_REQUIRED:{child}:{request_id}")
    );
    assert_eq!(e["sourceTaskId"], json!(child));
    assert_eq!(e["payload"]["requestId"], json!(request_id));
    assert_eq!(e["payload"]["nativeTool"], "AskUserQuestion");
    assert_eq!(e["payload"]["options"][1]["label"], "B");
    assert!(e["executionId"].is_string(), "the ask's execution: {e}");

    // The parent's turn end: the batch typed into it shows the options.
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{parent}/input"),
            Some(json!({"text": "!stop_hook", "submit": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let prompt = loop {
        let i = inbox(&s, &parent).await;
        if let Some(p) = i["batches"][0]["prompt"].as_str() {
            break p.to_string();
        }
        assert!(Instant::now() < deadline, "no batch: {i:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(prompt.contains("[DECISION REQUIRED]"), "{prompt}");
    assert!(prompt.contains("Which option?"), "{prompt}");
    assert!(prompt.contains("1. A — first"), "{prompt}");
    assert!(prompt.contains("2. B — second"), "{prompt}");
    s.shutdown().await;
}

async fn mcp(s: &common::Server, token: &str, tool: &str, arguments: Value) -> (bool, Value) {
    let (status, body) = common::decode(
        s.client
            .post(s.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(token)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    (
        body["result"]["isError"].as_bool().unwrap(),
        serde_json::from_str(text).unwrap_or(Value::String(text.to_string())),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mcp_push_to_human_takes_choices_and_reply_to_ask_maps_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record).await;
    let t = s.task("Nightly build").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let (is_error, out) = mcp(
        &s,
        &token,
        "push_to_human",
        json!({"message": "Retry or skip?", "scope": "unattended",
               "options": [{"label": "Retry"}, {"label": "Skip"}], "default": "Nope", "deadline": 120}),
    )
    .await;
    assert!(is_error, "{out}");
    assert!(out.to_string().contains("default"), "{out}");
    let (is_error, out) = mcp(
        &s,
        &token,
        "push_to_human",
        json!({"message": "Retry or skip?", "scope": "unattended", "multiSelect": false,
               "options": [{"label": "Retry"}, {"label": "Skip"}], "default": "Skip", "deadline": 120}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(
        (&out["state"], &out["parked"]),
        (&json!("DELIVERED"), &json!(true)),
        "{out}"
    );
    let text = records(&record)[0]["argv"][5].as_str().unwrap().to_string();
    assert!(text.contains("1. Retry\n2. Skip (default)\n"), "{text}");
    // The admin answers over MCP with a number: the label is the answer.
    let (is_error, r) = mcp(
        &s,
        &s.admin.clone(),
        "reply_to_ask",
        json!({"taskId": t, "text": "1"}),
    )
    .await;
    assert!(!is_error, "{r}");
    let id = out["messageId"].as_str().unwrap().to_string();
    let m = s
        .running
        .harness
        .store()
        .get_message(&id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(m.reply_text.as_deref(), Some("Retry"));
    let c = &s
        .running
        .harness
        .asks()
        .choices_for(std::slice::from_ref(&id))
        .await
        .unwrap()[&id];
    assert_eq!(c.answered_options, Some(vec![0]));
    s.shutdown().await;
}
