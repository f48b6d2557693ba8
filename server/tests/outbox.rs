//! The outbox end to end: a real server, real HTTP, the real gateway CLI
//! double (`harness-gateway-double`) recording every invocation, and every
//! outcome of a send: delivered, clean failure → retry, exit 0 without id,
//! error with id, log noise, other exit codes, a hang killed with its
//! process group, a missing binary, dedup, and the MCP tools.

use crate::common;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

async fn start(dir: &Path) -> common::Server {
    common::start_with(dir, |cfg| cfg.outbox.cli_timeout = Duration::from_secs(2)).await
}

fn records(path: &Path) -> Vec<Value> {
    common::json_lines(path)
}

/// Gateways → the double; an unattended Hermes channel and a work OpenClaw one.
async fn configure(s: &common::Server, record: &Path, cli: &str) {
    let settings = json!({"cliPath": cli, "env": {"GATEWAY_DOUBLE_RECORD": record}});
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"hermes": settings, "openclaw": settings})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"},
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
}

async fn push(s: &common::Server, task: &str, body: Value) -> (StatusCode, Value) {
    let mut body = body;
    body["taskId"] = json!(task);
    s.admin("POST", "/api/internal/harness/outbound", Some(body))
        .await
}

async fn wait_state(s: &common::Server, id: &str, want: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, row) = s.admin("GET", &format!("/api/outbound/{id}"), None).await;
        if row["state"] == want {
            return row;
        }
        assert!(Instant::now() < deadline, "never {want}: {row}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn delivered_through_both_gateways_parks_and_maps_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record, DOUBLE).await;
    let t = s.task("Nightly build").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();

    // Unattended (Hermes): an ask by default; answered within the wait.
    let started = Instant::now();
    let (st, out) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(&token),
            Some(json!({"message": "-Postgres or SQLite?", "scope": "unattended"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out["ok"], true);
    assert_eq!(out["state"], "DELIVERED", "{out}");
    assert_eq!(
        (
            out["sent"].as_bool(),
            out["parked"].as_bool(),
            out["deduped"].as_bool()
        ),
        (Some(true), Some(true), Some(false))
    );
    assert!(out["lastError"].is_null());
    let rec = records(&record);
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0]["gateway"], "hermes");
    let argv: Vec<&str> = rec[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        &argv[..5],
        ["send", "--to", "telegram:4242", "--json", "--"]
    );
    assert_eq!(
        argv[5],
        format!("Nightly build\n\n-Postgres or SQLite?\n\nTask ID: [[tower:task={t}]]")
    );
    assert_eq!(out["platformMessageId"], rec[0]["messageId"]);
    let pending = s.running.harness.asks().pending(&t).await.unwrap();
    assert!(pending.pending, "the ask is OPEN");
    let view = s.running.harness.tasks().get_task(&t).await.unwrap();
    assert_eq!(
        view.execution.unwrap().status,
        harness_core::model::ExecutionStatus::Paused
    );
    let pmid = out["platformMessageId"].as_str().unwrap();
    let map_of = |gateway: &str, chat: &str| {
        format!(
            "/api/internal/harness/delivery-map?gateway={gateway}&platform=telegram&chatId={chat}&messageId={pmid}"
        )
    };
    let (_, map) = s.admin("GET", &map_of("hermes", "4242"), None).await;
    assert_eq!(map["taskId"], t.as_str(), "{map}");
    // The chat is part of the key: the same id from another chat (or
    // gateway) is not this task's message.
    let (st, other) = s.admin("GET", &map_of("hermes", "4243"), None).await;
    assert_eq!((st, other), (StatusCode::OK, Value::Null));
    let (_, other) = s.admin("GET", &map_of("openclaw", "4242"), None).await;
    assert_eq!(other, Value::Null);
    let (st, err) = s
        .admin(
            "GET",
            &format!("/api/internal/harness/delivery-map?gateway=hermes&platform=telegram&messageId={pmid}"),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["field"], "chatId", "{err}");
    assert_eq!(
        map["harnessMessageId"],
        pending.request_id.unwrap().as_str()
    );

    // Work (OpenClaw): a notify, the configured destination, closed once sent.
    let (st, out) = push(
        &s,
        &t,
        json!({"message": "build is green", "scope": "work", "dedupKey": "green-1"}),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(
        (out["state"].as_str(), out["parked"].as_bool()),
        (Some("DELIVERED"), Some(false))
    );
    let rec = records(&record);
    let argv: Vec<&str> = rec[1]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        &argv[..6],
        [
            "message",
            "send",
            "--channel",
            "telegram",
            "--target",
            "telegram:-100777"
        ]
    );
    assert_eq!(argv.last(), Some(&"--json"));
    // The same key again: the same row, nothing sent.
    let (_, again) = push(
        &s,
        &t,
        json!({"message": "other text", "scope": "work", "dedupKey": "green-1"}),
    )
    .await;
    assert_eq!(
        (again["deduped"].as_bool(), again["outboundId"].clone()),
        (Some(true), out["outboundId"].clone())
    );
    assert_eq!(records(&record).len(), 2);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_outcome_of_a_send() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record, DOUBLE).await;
    let t = s.task("outcomes").await;
    let sent = |mode: &str| {
        records(&record)
            .iter()
            .filter(|r| r["mode"] == mode && r["sent"] == true)
            .count()
    };

    // A clean failure: FAILED, due again after 2 s; nothing was sent.
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "a [[double:fail]]", "scope": "work", "expectReply": false}),
    )
    .await;
    assert_eq!(out["state"], "FAILED", "{out}");
    assert!(
        out["lastError"].as_str().unwrap().contains("exited with 1"),
        "{out}"
    );
    let row = wait_state(&s, out["outboundId"].as_str().unwrap(), "FAILED").await;
    assert_eq!(row["attempts"], 1);
    assert!(row["nextAttemptAt"].is_string());
    // The backoff retry runs by itself (still failing: attempts 2).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, row) = s
            .admin(
                "GET",
                &format!("/api/outbound/{}", out["outboundId"].as_str().unwrap()),
                None,
            )
            .await;
        if row["attempts"] == 2 && row["state"] == "FAILED" {
            break;
        }
        assert!(Instant::now() < deadline, "no automatic retry: {row}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sent("fail"), 0);
    let (st, _) = s
        .admin(
            "POST",
            &format!(
                "/api/outbound/{}/mark-delivered",
                out["outboundId"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::CONFLICT);

    // Exit 0 without an id: SENT_UNVERIFIED, never sent again; a person marks it.
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "b [[double:no-id]]", "scope": "work", "expectReply": true}),
    )
    .await;
    assert_eq!(out["state"], "SENT_UNVERIFIED", "{out}");
    assert_eq!(
        (out["sent"].as_bool(), out["parked"].as_bool()),
        (Some(true), Some(true))
    );
    let id = out["outboundId"].as_str().unwrap().to_string();
    let (st, _) = s
        .admin("POST", &format!("/api/outbound/{id}/retry"), None)
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "SENT_UNVERIFIED is not retried");
    let (st, row) = s
        .admin("POST", &format!("/api/outbound/{id}/mark-delivered"), None)
        .await;
    assert_eq!(
        (st, row["state"].as_str()),
        (StatusCode::OK, Some("DELIVERED"))
    );
    assert_eq!(sent("no-id"), 1);

    // An error that still printed an id: SENT_UNVERIFIED with that id.
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "c [[double:error-id]]", "scope": "work", "expectReply": false}),
    )
    .await;
    assert_eq!(out["state"], "SENT_UNVERIFIED", "{out}");
    assert!(
        out["platformMessageId"]
            .as_str()
            .unwrap()
            .starts_with("om_")
    );
    // Log noise before the JSON: still DELIVERED with the id.
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "d [[double:noise]]", "scope": "work", "expectReply": false}),
    )
    .await;
    assert_eq!(out["state"], "DELIVERED", "{out}");
    // A usage-style exit code: FAILED with the code in the error.
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "e [[double:exit:2]]", "scope": "work", "expectReply": false}),
    )
    .await;
    assert_eq!(out["state"], "FAILED", "{out}");
    assert!(out["lastError"].as_str().unwrap().contains("exited with 2"));

    // A hang: killed with its whole process group after the timeout (2 s here).
    let started = Instant::now();
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "f [[double:hang]]", "scope": "work", "expectReply": false}),
    )
    .await;
    let id = out["outboundId"].as_str().unwrap().to_string();
    let row = wait_state(&s, &id, "FAILED").await;
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert!(
        row["lastError"].as_str().unwrap().contains("timed out"),
        "{row}"
    );
    let hang = records(&record)
        .into_iter()
        .find(|r| r["mode"] == "hang")
        .unwrap();
    let child = hang["childPid"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{child}")).exists()
        && !std::fs::read_to_string(format!("/proc/{child}/stat"))
            .unwrap_or_default()
            .contains(") Z")
    {
        assert!(
            Instant::now() < deadline,
            "the CLI's child outlived the timeout"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_missing_cli_fails_cleanly_and_retry_now_sends() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record, "/nonexistent/openclaw").await;
    let t = s.task("missing cli").await;
    let (_, out) = push(
        &s,
        &t,
        json!({"message": "hello", "scope": "work", "expectReply": false}),
    )
    .await;
    assert_eq!(out["state"], "FAILED", "{out}");
    assert!(
        out["lastError"].as_str().unwrap().contains("cannot start"),
        "{out}"
    );
    configure(&s, &record, DOUBLE).await;
    let id = out["outboundId"].as_str().unwrap();
    let (st, row) = s
        .admin("POST", &format!("/api/outbound/{id}/retry"), None)
        .await;
    assert_eq!(
        (st, row["state"].as_str()),
        (StatusCode::OK, Some("PENDING")),
        "{row}"
    );
    let row = wait_state(&s, id, "DELIVERED").await;
    assert_eq!(row["attempts"], 2);
    assert_eq!(records(&record).len(), 1);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mcp_list_notify_targets_and_push_to_human() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let t = s.task("mcp outbox").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let call = |name: &str, args: Value| {
        let req = s.client.post(s.url("/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(&token)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}));
        async move {
            let (_, v) = common::decode(req.send().await.unwrap()).await;
            let text = v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string();
            (
                v["result"]["isError"].as_bool().unwrap(),
                serde_json::from_str::<Value>(&text).unwrap(),
            )
        }
    };
    let (err, out) = call("list_notify_targets", json!({})).await;
    assert!(!err);
    assert_eq!(
        (out["scope"].as_str(), out["noChannelConfigured"].as_bool()),
        (Some("work"), Some(true))
    );
    let (err, out) = call("push_to_human", json!({"message": "hi"})).await;
    assert!(err);
    assert_eq!(out["error"], "No active work channel configured");

    let record = dir.path().join("sent.jsonl");
    configure(&s, &record, DOUBLE).await;
    let (err, out) = call("list_notify_targets", json!({"scope": "unattended"})).await;
    assert!(!err);
    assert_eq!(out["active"]["gateway"], "hermes");
    let instructions = out["instructions"].as_str().unwrap();
    assert!(
        instructions.contains(&format!("[[tower:task={t}]]")),
        "{instructions}"
    );
    assert!(instructions.contains("push_to_human"));
    let (err, out) = call(
        "push_to_human",
        json!({"message": "Which DB?", "scope": "unattended"}),
    )
    .await;
    assert!(!err, "{out}");
    assert_eq!(
        (
            out["state"].as_str(),
            out["parked"].as_bool(),
            out["expectReply"].as_bool()
        ),
        (Some("DELIVERED"), Some(true), Some(true))
    );
    // Another task's id is refused (task boundary).
    let other = s.task("other").await;
    let (err, out) = call("push_to_human", json!({"taskId": other, "message": "x"})).await;
    assert!(err, "{out}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn per_target_edits_do_not_lose_concurrent_edits_and_test_messages_go_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record, DOUBLE).await;
    // Two targets added concurrently, then both edited concurrently: all stand.
    let add = |label: &str| {
        s.admin("POST", "/api/settings/notify-targets/add", Some(json!(
        {"label": label, "gateway": "openclaw", "downstream": "slack", "dest": "C1", "scope": "work", "active": false})))
    };
    let ((sa, a), (sb, b)) = tokio::join!(add("a"), add("b"));
    assert_eq!((sa, sb), (StatusCode::OK, StatusCode::OK), "{a} {b}");
    let (ida, idb) = (
        a["id"].as_str().unwrap().to_string(),
        b["id"].as_str().unwrap().to_string(),
    );
    let sref = &s;
    let edit = |id: String, label: &str| {
        let body = json!({"label": label, "gateway": "openclaw", "downstream": "slack", "dest": "C2", "scope": "work", "active": false});
        let path = format!("/api/settings/notify-targets/{id}");
        async move { sref.admin("PUT", &path, Some(body)).await }
    };
    let ((s1, _), (s2, _)) = tokio::join!(edit(ida.clone(), "a2"), edit(idb.clone(), "b2"));
    assert_eq!((s1, s2), (StatusCode::OK, StatusCode::OK));
    let (_, list) = s.admin("GET", "/api/settings/notify-targets", None).await;
    let mut labels: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    labels.sort();
    assert_eq!(
        labels,
        ["a2", "b2", "phone", "team"],
        "both concurrent edits stand"
    );
    // Validation names the field.
    let (st, err) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{ida}"),
            Some(json!(
        {"label": "x", "gateway": "telegram", "scope": "work"})),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(err["field"], "gateway", "{err}");
    let (st, _) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets/cnosuchtargetxxxxxxxxxxxx",
            Some(json!(
        {"label": "x", "gateway": "hermes", "scope": "work", "dest": "x"})),
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _) = s
        .admin(
            "DELETE",
            &format!("/api/settings/notify-targets/{idb}"),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK);
    // Gateway settings: a bad env name is refused with the gateway named.
    let (st, err) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"hermes": {"env": {"1BAD": "x"}}})),
        )
        .await;
    assert_eq!(
        (st, err["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("hermes")),
        "{err}"
    );

    // The test message goes through the outbox and the CLI (no task, no ask).
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/settings/notify-targets/{ida}/test"),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["state"], "DELIVERED", "{out}");
    assert!(out["messageId"].is_null());
    let rec = records(&record);
    assert_eq!(rec.len(), 1);
    assert!(
        rec[0]["text"]
            .as_str()
            .unwrap()
            .contains("test message for \"a2\"")
    );
    assert_eq!(rec[0]["target"], "C2");
    // Positions address targets written without ids: "0" is "phone".
    let (st, out) = s
        .admin("POST", "/api/settings/notify-targets/0/test", None)
        .await;
    assert_eq!(
        (st, out["state"].as_str()),
        (StatusCode::OK, Some("DELIVERED")),
        "{out}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn harness_and_task_pages_show_the_outbound_state_with_its_action() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    configure(&s, &record, DOUBLE).await;
    let t = s.task("pages").await;
    let (_, failed) = push(
        &s,
        &t,
        json!({"message": "x [[double:fail]]", "scope": "work", "expectReply": false}),
    )
    .await;
    let (_, unverified) = push(
        &s,
        &t,
        json!({"message": "y [[double:no-id]]", "scope": "work", "expectReply": false}),
    )
    .await;
    let page = |path: String, lang: Option<&'static str>| {
        let mut req = s.client.get(s.url(&path)).bearer_auth(&s.admin);
        if let Some(l) = lang {
            req = req.header("cookie", format!("harness_lang={l}"));
        }
        async move {
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK, "{path}");
            resp.text().await.unwrap()
        }
    };
    for path in ["/harness?view=all".to_string(), format!("/tasks/{t}")] {
        let html = page(path.clone(), None).await;
        let f = format!(
            "data-outbound-id=\"{}\" data-outbound-state=\"FAILED\"",
            failed["outboundId"].as_str().unwrap()
        );
        let u = format!(
            "data-outbound-id=\"{}\" data-outbound-state=\"SENT_UNVERIFIED\"",
            unverified["outboundId"].as_str().unwrap()
        );
        assert!(html.contains(&f), "{path}: {html}");
        assert!(html.contains(&u), "{path}");
        assert!(
            html.contains("outbound-retry") && html.contains("retry now"),
            "{path}"
        );
        assert!(
            html.contains("outbound-mark") && html.contains("mark as delivered"),
            "{path}"
        );
        assert!(
            html.contains("exited with 1"),
            "the last error is shown: {path}"
        );
    }
    let zh = page("/harness?view=all".into(), Some("zh")).await;
    assert!(zh.contains("立即重试"), "Chinese labels");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn settings_page_gateway_forms_and_the_test_button() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    let sfn = |name: &str, form: Vec<(&'static str, String)>| {
        let req = s
            .client
            .post(s.url(&format!("/sfn/{name}")))
            .header("Origin", s.base.clone())
            .bearer_auth(&s.admin)
            .form(&form);
        async move {
            let resp = req.send().await.unwrap();
            (resp.status(), resp.text().await.unwrap())
        }
    };
    // Gateway CLI settings through the page's server function.
    let env = format!("GATEWAY_DOUBLE_RECORD={}\n", record.display());
    for g in ["hermes", "openclaw"] {
        let (st, body) = sfn(
            "save_gateway_settings",
            vec![
                ("gateway", g.into()),
                ("cli_path", DOUBLE.into()),
                ("profile", String::new()),
                ("env", env.clone()),
            ],
        )
        .await;
        assert!(st.is_success(), "{st} {body}");
    }
    let (st, body) = sfn(
        "save_gateway_settings",
        vec![
            ("gateway", "hermes".into()),
            ("cli_path", DOUBLE.into()),
            ("profile", String::new()),
            ("env", "not a pair".into()),
        ],
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("NAME=value"), "{body}");
    // A bad field of "add a target" is named, for the form to show it by
    // that input (the REST 400s: `outbox_destinations.rs`).
    let (st, body) = sfn(
        "add_notify_target",
        vec![
            ("label", "team".into()),
            ("gateway", "openclaw".into()),
            ("downstream", String::new()),
            ("dest", "-100".into()),
            ("scope", "work".into()),
        ],
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("downstream\u{1f}"), "{body:?}");
    // A target added from the page, then tested: the message goes out.
    let (st, body) = sfn(
        "add_notify_target",
        vec![
            ("label", "phone".into()),
            ("gateway", "hermes".into()),
            ("downstream", "telegram".into()),
            ("dest", "4242".into()),
            ("scope", "unattended".into()),
        ],
    )
    .await;
    assert!(st.is_success(), "{body}");
    let key: String = serde_json::from_str(&body).unwrap();
    let (st, body) = sfn("test_notify_target", vec![("key", key.clone())]).await;
    assert!(st.is_success(), "{body}");
    assert!(body.contains("DELIVERED"), "{body}");
    assert_eq!(records(&record).len(), 1);
    let html = s
        .client
        .get(s.url("/settings"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("id=\"gateway-hermes\"") && html.contains("id=\"gateway-openclaw\""),
        "{html}"
    );
    assert!(
        html.contains("test-target") && html.contains(DOUBLE),
        "{html}"
    );
    let (st, _) = sfn("remove_notify_target", vec![("key", key)]).await;
    assert!(st.is_success());
    let (_, list) = s.admin("GET", "/api/settings/notify-targets", None).await;
    assert_eq!(list.as_array().unwrap().len(), 0);
    s.shutdown().await;
}
