//! Approvals pushed to chat and answered from chat, end to
//! end: a real server, the real outbox worker and the gateway
//! CLI double. A held call is pushed once through the notify target with
//! the exact command, the task, the working directory, how to answer and
//! the task token; a reply "approve" (relay_channel_reply) or "2"
//! (route_gateway_message) decides it as `gateway:<sender>`; a second
//! answer (reply_to_ask, routing) is told "already decided"; a push not
//! sent yet when the approval is decided is dropped, never sent.

use crate::common;

use common::outbox::double_gateways;

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

fn token(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("secrets").join("gateway.token"))
        .unwrap()
        .trim()
        .to_string()
}

async fn configure(s: &common::Server, record: &Path, control: &Path) {
    let settings = json!({"env": {"GATEWAY_DOUBLE_RECORD": record,
        "GATEWAY_DOUBLE_CONTROL": control},
        "accessPolicy": {"ownerIds": {"telegram": ["42"]}}});
    double_gateways(s, &["hermes", "openclaw"], settings).await;
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242", "scope": "unattended"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
}

/// The texts the double posted, once `n` of them are there.
pub(crate) async fn posted(record: &Path, n: usize) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let posts: Vec<(String, String)> = common::json_lines(record)
            .iter()
            .filter(|r| r["sent"] == true)
            .filter_map(|r| {
                Some((
                    r["argv"].as_array()?.last()?.as_str()?.to_string(),
                    r["messageId"].as_str()?.to_string(),
                ))
            })
            .collect();
        if posts.len() >= n {
            return posts;
        }
        assert!(
            Instant::now() < deadline,
            "{n} posts expected, got {posts:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) async fn mapped(s: &common::Server, pmid: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    let path = format!(
        "/api/internal/harness/delivery-map?gateway=hermes&platform=telegram&chatId=4242&messageId={pmid}"
    );
    loop {
        let (_, map) = s.admin("GET", &path, None).await;
        if !map.is_null() {
            return;
        }
        assert!(Instant::now() < deadline, "the push was never mapped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) async fn tool(
    s: &common::Server,
    token: &str,
    name: &str,
    args: Value,
) -> (bool, Value) {
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
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

/// A held call of `task` (the hook stops waiting at once): its approval id.
pub(crate) async fn held(s: &common::Server, task: &str, cmd: &str) -> String {
    let (st, v) = s
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(
                json!({"taskId": task, "tool": "Bash", "input": {"command": cmd},
                "cwd": "/srv/repo", "waitSeconds": 0}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(
        (&v["decision"], &v["waiting"]),
        (&json!("deny"), &json!(true)),
        "{v}"
    );
    v["approvalId"].as_str().unwrap().to_string()
}

pub(crate) async fn approval(s: &common::Server, id: &str) -> Value {
    let (st, a) = s.admin("GET", &format!("/api/approvals/{id}"), None).await;
    assert_eq!(st, StatusCode::OK, "{a}");
    a
}

/// A server whose unattended channel is the double (sending while
/// `control` says "ok"), and a derived task "Release 2.0" whose risky
/// calls are held.
pub(crate) struct Chat {
    pub s: common::Server,
    pub record: PathBuf,
    pub control: PathBuf,
    /// The gateway's token (its MCP tools).
    pub gw: String,
    pub task: String,
}

pub(crate) async fn chat_task(dir: &Path) -> Chat {
    // The parent's step off: the push goes out at once.
    chat_task_with(dir, Duration::ZERO).await
}

/// [`chat_task`] with the parent's step before the person's push.
pub(crate) async fn chat_task_with(dir: &Path, step: Duration) -> Chat {
    let s = common::start_with(dir, |c| c.approval_parent_step = step).await;
    let record = dir.join("sent.jsonl");
    let control = dir.join("double-mode");
    std::fs::write(&control, "ok\n").unwrap();
    configure(&s, &record, &control).await;
    let gw = token(dir);
    let parent = s.task("approvals parent").await;
    let (st, body) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "Release 2.0", "parentTaskId": parent,
                "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    let task = body["id"].as_str().unwrap().to_string();
    Chat {
        s,
        record,
        control,
        gw,
        task,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_is_pushed_to_chat_and_the_first_chat_answer_decides_it() {
    let dir = tempfile::tempdir().unwrap();
    let Chat {
        s,
        record,
        control,
        gw,
        task,
    } = chat_task(dir.path()).await;

    // Pushed once, with everything the person needs to decide.
    let first = held(&s, &task, "git push --force origin main").await;
    let posts = posted(&record, 1).await;
    let (text, pmid) = posts[0].clone();
    for part in [
        "[Approval needed]",
        "$ git push --force origin main",
        "Task: Release 2.0",
        "Working directory: /srv/repo",
        "\"approve\" (or 1)",
        "\"deny\" (or 2)",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    assert!(
        text.ends_with(&format!("Task ID: [[tower:task={task}]]")),
        "{text}"
    );
    mapped(&s, &pmid).await;

    // "approve" relayed from the chat decides it, as the sender.
    let (is_error, out) = tool(
        &s,
        &gw,
        "relay_channel_reply",
        json!({"text": "approve", "gateway": "hermes", "platform": "telegram",
            "chatId": "4242", "platformMessageId": pmid, "senderId": "42"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "approval_decided", "{out}");
    assert_eq!(out["state"], "APPROVED", "{out}");
    let a = approval(&s, &first).await;
    assert_eq!(
        (&a["state"], &a["decidedBy"], &a["decidedVia"]),
        (&json!("APPROVED"), &json!("gateway:42"), &json!("chat")),
        "{a}"
    );
    // A second answer from chat changes nothing and says so.
    let (is_error, out) = tool(
        &s,
        &gw,
        "reply_to_ask",
        json!({"taskId": task, "text": "deny", "senderId": "42"}),
    )
    .await;
    assert!(!is_error, "{out}");
    let said = out["alreadyDecided"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        said.starts_with("already decided: APPROVED by gateway:42"),
        "{said}"
    );
    assert_eq!(approval(&s, &first).await["state"], "APPROVED");

    // "2" routed as a reply to the next push denies that one.
    let second = held(&s, &task, "rm -rf /srv/repo/build").await;
    let posts = posted(&record, 2).await;
    let (text, pmid) = posts[1].clone();
    assert!(text.contains("$ rm -rf /srv/repo/build"), "{text}");
    mapped(&s, &pmid).await;
    let route = |msg: &str, content: &str| {
        json!({"gateway": "hermes", "platform": "telegram", "chatId": "4242",
            "platformMessageId": msg, "senderId": "42", "replyToMessageId": pmid,
            "intent": "PROJECT_WORK", "content": content})
    };
    let (is_error, out) = tool(&s, &gw, "route_gateway_message", route("in-1", "2")).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "approval_decided", "{out}");
    let a = approval(&s, &second).await;
    assert_eq!(
        (&a["state"], &a["decidedBy"]),
        (&json!("DENIED"), &json!("gateway:42")),
        "{a}"
    );
    let (is_error, out) = tool(&s, &gw, "route_gateway_message", route("in-2", "approve")).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "approval_already_decided", "{out}");
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .starts_with("already decided: DENIED"),
        "{out}"
    );
    assert_eq!(approval(&s, &second).await["state"], "DENIED");

    // A push the gateway could not send yet dies with the decision.
    std::fs::write(&control, "fail\n").unwrap();
    let third = held(&s, &task, "git reset --hard HEAD~3").await;
    let push_of = |rows: &Value| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["dedupKey"] == format!("approval:{third}"))
            .cloned()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    let row = loop {
        let (_, rows) = s
            .admin("GET", &format!("/api/tasks/{task}/outbound"), None)
            .await;
        if let Some(r) = push_of(&rows).filter(|r| r["state"] == "FAILED") {
            break r;
        }
        assert!(Instant::now() < deadline, "the push never failed: {rows}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (st, d) = s
        .admin(
            "POST",
            &format!("/api/approvals/{third}/decide"),
            Some(json!({"decision": "deny"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{d}");
    std::fs::write(&control, "ok\n").unwrap();
    let (_, rows) = s
        .admin("GET", &format!("/api/tasks/{task}/outbound"), None)
        .await;
    let dead = push_of(&rows).unwrap();
    assert_eq!(
        (&dead["id"], &dead["state"]),
        (&row["id"], &json!("DEAD")),
        "{dead}"
    );
    assert!(
        common::json_lines(&record)
            .iter()
            .filter(|r| r["sent"] == true)
            .all(|r| !r.to_string().contains("git reset --hard")),
        "never sent"
    );
    s.shutdown().await;
}

/// Approval A replaced by B (a newer held call): an answer aimed at A —
/// a reply to A's push, a tap on A's row, a reply naming A's ask — is
/// refused as cancelled and never approves B; B's own push decides B.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_answer_to_a_replaced_approval_never_decides_the_newer_one() {
    let dir = tempfile::tempdir().unwrap();
    let Chat {
        s,
        record,
        gw,
        task,
        ..
    } = chat_task(dir.path()).await;
    let a = held(&s, &task, "git push --force origin main").await;
    let (_, pmid_a) = posted(&record, 1).await[0].clone();
    mapped(&s, &pmid_a).await;
    let b = held(&s, &task, "rm -rf /srv/repo").await;
    assert_eq!(approval(&s, &a).await["state"], "CANCELLED");
    let (_, pmid_b) = posted(&record, 2).await[1].clone();
    mapped(&s, &pmid_b).await;

    // "approve" relayed as a reply to A's push.
    let (is_error, out) = tool(
        &s,
        &gw,
        "relay_channel_reply",
        json!({"text": "approve", "gateway": "hermes", "platform": "telegram",
            "chatId": "4242", "platformMessageId": pmid_a, "senderId": "42"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "approval_already_decided", "{out}");
    assert!(
        out["error"].as_str().unwrap().starts_with("cancelled"),
        "{out}"
    );
    // Routed as a reply to A's push.
    let (is_error, out) = tool(
        &s,
        &gw,
        "route_gateway_message",
        json!({"gateway": "hermes", "platform": "telegram", "chatId": "4242",
            "platformMessageId": "in-a", "senderId": "42", "replyToMessageId": pmid_a,
            "intent": "PROJECT_WORK", "content": "yes"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "approval_already_decided", "{out}");
    // A tap on A's row in the UI, and a REST reply naming A's ask.
    let ask_a = approval(&s, &a).await["requestId"]
        .as_str()
        .unwrap()
        .to_string();
    let resp = s
        .client
        .post(s.url("/sfn/reply_ask"))
        .header("Origin", s.base.clone())
        .bearer_auth(&s.admin)
        .form(&[
            ("task_id", task.as_str()),
            ("text", "Approve"),
            ("request_id", ask_a.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CONFLICT);
    let (st, e) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "Approve", "requestId": ask_a})),
        )
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "{e}");
    assert!(e["error"].as_str().unwrap().starts_with("cancelled"), "{e}");
    assert_eq!(approval(&s, &b).await["state"], "PENDING", "B untouched");

    // B's own row, tapped in a browser session: decided, recorded as from
    // the UI by that session (a hash prefix, never the session id).
    let ask_b = approval(&s, &b).await["requestId"]
        .as_str()
        .unwrap()
        .to_string();
    let cookie = s.session().await;
    let resp = s
        .client
        .post(s.url("/sfn/reply_ask"))
        .header("Origin", s.base.clone())
        .header("Cookie", cookie.clone())
        .form(&[
            ("task_id", task.as_str()),
            ("text", "Deny"),
            ("request_id", ask_b.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let decided = approval(&s, &b).await;
    assert_eq!(
        (&decided["state"], &decided["decidedVia"]),
        (&json!("DENIED"), &json!("ui")),
        "{decided}"
    );
    let by = decided["decidedBy"].as_str().unwrap();
    let secret = cookie.split_once('=').unwrap().1;
    assert!(by.starts_with("browser:session:"), "{by}");
    assert!(!by.contains(secret), "{by}");
    s.shutdown().await;
}

/// A derived task asks its parent first: the parent's
/// inbox has the approval at once, the person's chat only after the
/// ladder's step — and a decision within the step never pushes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_derived_tasks_approval_reaches_the_parent_first_and_the_chat_after_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let step = Duration::from_secs(3);
    let Chat {
        s, record, task, ..
    } = chat_task_with(dir.path(), step).await;
    let asked_at = Instant::now();
    let first = held(&s, &task, "git push --force origin main").await;
    // The parent's inbox event exists at once.
    let (_, view) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
    let parent = view["parentTaskId"].as_str().unwrap().to_string();
    let (st, inbox) = s
        .admin("GET", &format!("/api/tasks/{parent}/inbox"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{inbox}");
    assert!(
        inbox.to_string().contains("git push --force origin main"),
        "{inbox}"
    );
    assert!(inbox.to_string().contains("\"approval\":true"), "{inbox}");
    // Nothing pushed before the step.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent = || {
        common::json_lines(&record)
            .iter()
            .filter(|r| r["sent"] == true)
            .count()
    };
    assert_eq!(sent(), 0, "pushed before the parent's step");
    // After it: pushed.
    let posts = posted(&record, 1).await;
    assert!(asked_at.elapsed() >= step, "{:?}", asked_at.elapsed());
    assert!(posts[0].0.contains("$ git push --force origin main"));
    // Decided within the step: never pushed.
    let second = held(&s, &task, "rm -rf /srv/repo/build").await;
    let (st, d) = s
        .admin(
            "POST",
            &format!("/api/approvals/{second}/decide"),
            Some(json!({"decision": "deny"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{d}");
    tokio::time::sleep(step + Duration::from_secs(2)).await;
    assert!(
        common::json_lines(&record)
            .iter()
            .all(|r| !r.to_string().contains("rm -rf /srv/repo/build")),
        "never sent"
    );
    let _ = first;
    s.shutdown().await;
}
