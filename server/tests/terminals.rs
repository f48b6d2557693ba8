//! Agents in real PTYs, driven by the test-double agent CLI: park on ask,
//! reply injected exactly once into the live terminal, resume after a
//! restart, the escalation ladder end to end, and the terminal WebSocket.

use crate::common;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

async fn wait_for<F: Fn(&str) -> bool>(
    s: &common::Server,
    task: &str,
    what: &str,
    pred: F,
) -> String {
    let mut last = String::new();
    for _ in 0..200 {
        let (status, screen) = s
            .admin("GET", &format!("/api/tasks/{task}/screen"), None)
            .await;
        if status == StatusCode::OK {
            last = screen["text"].as_str().unwrap_or_default().to_string();
            if pred(&last) {
                return last;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; screen:\n{last}");
}

/// Types `marker` and waits until the agent echoed it: anything written to
/// the terminal before (a duplicate injection included) is on the screen by
/// then, in order. Returns that screen.
async fn screen_after_marker(s: &common::Server, task: &str, marker: &str) -> String {
    let (status, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{task}/input"),
            Some(json!({"text": marker, "submit": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let echoed = format!("GOT INPUT: {marker}");
    wait_for(s, task, "the marker", |text| text.contains(&echoed)).await
}

async fn wait_pending(s: &common::Server, task: &str) {
    for _ in 0..200 {
        let (_, p) = s
            .admin(
                "GET",
                &format!("/api/internal/harness/pending?taskId={task}"),
                None,
            )
            .await;
        if p["pending"] == true {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the agent never asked");
}

async fn agent_task(s: &common::Server, provider: &str, script: &str, extra: Value) -> String {
    let mut body = json!({"title": "double agent", "agent": {
        "provider": provider, "command": [common::double().display().to_string()], "cwd": std::env::temp_dir(),
        "env": {"HARNESS_DOUBLE_SCRIPT": script}}});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn ask_parks_the_live_terminal_and_the_reply_is_typed_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let t = agent_task(
        &s,
        "command",
        "say hello from the double\nask_human Which database?\nwait_reply\nsay carrying on",
        json!({}),
    )
    .await;
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert!(started["executionId"].is_string());
    wait_pending(&s, &t).await;
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "PAUSED", "parked, not killed");
    assert!(
        s.running.terminals.live(&t).is_some(),
        "the PTY is alive while parked"
    );
    wait_for(&s, &t, "the ask result", |text| text.contains("ASKED:")).await;

    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "SQLite please"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(
        (reply["mode"].as_str(), reply["injected"].as_bool()),
        (Some("continued"), Some(true)),
        "{reply}"
    );
    let screen = wait_for(&s, &t, "the reply", |text| text.contains("carrying on")).await;
    assert_eq!(
        screen.matches("GOT REPLY: SQLite please").count(),
        1,
        "{screen}"
    );
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "RUNNING");

    // Retrying the same reply never types it twice.
    let (status, again) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "SQLite please"})),
        )
        .await;
    assert_eq!(
        (status, again["deduped"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let screen = screen_after_marker(&s, &t, "marker-after-retry").await;
    assert_eq!(screen.matches("GOT REPLY").count(), 1, "{screen}");
    assert!(
        !screen.contains("GOT INPUT: SQLite please"),
        "typed a second time: {screen}"
    );
    let (_, size) = s
        .admin("GET", &format!("/api/tasks/{t}/screen"), None)
        .await;
    assert_eq!(size["cols"], 80);

    // Input with an idempotency key is written once.
    for _ in 0..3 {
        let (status, out) = s
            .admin(
                "POST",
                &format!("/api/tasks/{t}/input"),
                Some(json!({"text": "typed once", "submit": true, "idempotencyKey": "k-1"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{out}");
    }
    wait_for(&s, &t, "the input", |text| {
        text.contains("GOT INPUT: typed once")
    })
    .await;
    let screen = screen_after_marker(&s, &t, "marker-after-input").await;
    assert_eq!(
        screen.matches("GOT INPUT: typed once").count(),
        1,
        "{screen}"
    );

    // Stop: the execution is STOPPED; the terminal has exited but keeps its
    // last screen, and takes no input.
    let (status, stopped) = s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(
        (status, stopped["wasRunning"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "STOPPED");
    let (status, screen) = s
        .admin("GET", &format!("/api/tasks/{t}/screen"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{screen}");
    assert!(
        screen.to_string().contains("GOT INPUT: typed once"),
        "{screen}"
    );
    let (status, _) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    s.shutdown().await;
}

#[tokio::test]
async fn an_exited_agent_records_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let t = agent_task(&s, "command", "say bye\nexit 3", json!({})).await;
    s.admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    for _ in 0..100 {
        let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
        if task["execution"]["status"] == "FAILED" {
            assert_eq!(task["execution"]["exitCode"], 3);
            let (status, screen) = s
                .admin("GET", &format!("/api/tasks/{t}/screen"), None)
                .await;
            assert_eq!(status, StatusCode::OK);
            assert!(
                screen["text"].as_str().unwrap().contains("bye"),
                "output drained before the exit"
            );
            s.shutdown().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("exit not recorded");
}

#[tokio::test]
async fn unattended_agent_is_denied_native_questions_and_asks_through_harness() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    // Claude-shaped spawn: per-spawn --settings (our hooks) and --mcp-config.
    let (status, d) = s.admin("GET", "/api/settings/directive", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        d["directive"]
            .as_str()
            .unwrap()
            .contains("escalation ladder")
    );
    let (status, _) = s
        .admin(
            "PUT",
            "/api/settings/directive",
            Some(json!({"directive": "CUSTOM LADDER: use ask_human"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let t = agent_task(
        &s,
        "claude",
        "session_start\ntool AskUserQuestion\nask_human Pick A or B?\nwait_reply",
        json!({}),
    )
    .await;
    // Unattended mode needs a channel that reaches a human.
    let (status, _) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(
                json!({"targets": [{"gateway": "hermes", "scope": "unattended", "active": true}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, started) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": "Task: pick"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    wait_pending(&s, &t).await;
    let screen = wait_for(&s, &t, "the denial", |text| text.contains("TOOL DENIED")).await;
    assert!(
        screen.contains("SYSTEM PROMPT: CUSTOM LADDER"),
        "the overridden directive is applied: {screen}"
    );
    // The denied menu became an ask, superseded by the agent's ask_human.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, pending) = s
            .admin("GET", "/api/harness/messages?view=pending", None)
            .await;
        if pending["rows"][0]["content"] == "Pick A or B?" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{pending}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The session id reported by the SessionStart hook is on the execution.
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert!(task["execution"]["sessionId"].is_string(), "{task}");
    s.shutdown().await;
}

#[tokio::test]
async fn a_reply_after_a_server_restart_resumes_the_agent_with_the_question() {
    let dir = tempfile::tempdir().unwrap();
    // Holders off: the agent dies with its server, as after a reboot
    // (`holders.rs` covers agents that outlive it).
    let s = common::start_with(&dir.path().join("data"), |cfg| cfg.holders.enabled = false).await;
    let t = agent_task(
        &s,
        "claude",
        "session_start\nask_human Which port?\nwait_reply",
        json!({}),
    )
    .await;
    s.admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    wait_pending(&s, &t).await;
    for _ in 0..50 {
        if s.running
            .harness
            .tasks()
            .get_task(&t)
            .await
            .unwrap()
            .execution
            .and_then(|e| e.session_id)
            .is_some()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let session_id = s
        .running
        .harness
        .tasks()
        .get_task(&t)
        .await
        .unwrap()
        .execution
        .unwrap()
        .session_id
        .unwrap();
    s.shutdown().await; // the agent dies with the server

    let s = common::start(&dir.path().join("data")).await;
    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "8080"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(
        (reply["mode"].as_str(), reply["injected"].as_bool()),
        (Some("started"), Some(true)),
        "{reply}"
    );
    let screen = wait_for(&s, &t, "the resumed reply", |text| {
        text.contains("GOT REPLY")
    })
    .await;
    assert!(
        screen.contains(&format!("RESUMED {session_id}")),
        "{screen}"
    );
    assert!(
        screen.contains("针对你之前的提问"),
        "prefixed with the question: {screen}"
    );
    assert!(screen.contains("8080"));
    s.shutdown().await;
}

#[tokio::test]
async fn websocket_sends_a_snapshot_then_live_output_and_takes_input() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let t = agent_task(&s, "command", "say ready for input", json!({})).await;
    s.admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    wait_for(&s, &t, "the banner", |text| {
        text.contains("ready for input")
    })
    .await;

    let url = format!("ws://{}/ws/terminal/{t}", s.running.addr);
    // A foreign Origin is refused before the upgrade.
    let mut req = url.clone().into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", "http://evil.example".parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_err());

    let (mut ws, _) = tokio_tungstenite::connect_async(s.ws_request(&url))
        .await
        .unwrap();
    // The PTY's size first (the viewer draws at that size), then the snapshot.
    let size = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Message::Text(size) = size else {
        panic!("size first, got {size:?}")
    };
    assert_eq!(
        serde_json::from_str::<Value>(&size).unwrap()["type"],
        "size"
    );
    let first = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Message::Binary(snapshot) = first else {
        panic!("snapshot first, got {first:?}")
    };
    assert!(
        String::from_utf8_lossy(&snapshot).contains("ready for input"),
        "snapshot redraws the screen"
    );
    ws.send(Message::Text(
        json!({"type": "input", "data": "hi there\r"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let mut seen = Vec::new();
    let got = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(msg)) = ws.next().await {
            if let Message::Binary(b) = msg {
                seen.extend_from_slice(&b);
                ws.send(Message::Text(
                    json!({"type": "ack", "bytes": seen.len() + snapshot.len()})
                        .to_string()
                        .into(),
                ))
                .await
                .unwrap();
                if String::from_utf8_lossy(&seen).contains("GOT INPUT: hi there") {
                    return true;
                }
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(
        got,
        "live output after input: {}",
        String::from_utf8_lossy(&seen)
    );
    ws.send(Message::Text(
        json!({"type": "resize", "rows": 30, "cols": 100})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, screen) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        let size = (screen["rows"].as_u64(), screen["cols"].as_u64());
        if size == (Some(30), Some(100)) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never resized: {size:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A reconnecting viewer gets the current screen as its snapshot.
    let (mut ws2, _) = tokio_tungstenite::connect_async(s.ws_request(&url))
        .await
        .unwrap();
    let snap2 = loop {
        match ws2.next().await.unwrap().unwrap() {
            Message::Binary(b) => break b,
            Message::Text(_) => continue,
            other => panic!("{other:?}"),
        }
    };
    assert!(String::from_utf8_lossy(&snap2).contains("GOT INPUT: hi there"));

    // Exit closes with 4000 + code.
    ws.send(Message::Text(
        json!({"type": "input", "data": "/exit\r"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let close = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(msg)) = ws.next().await {
            if let Message::Close(frame) = msg {
                return frame.map(|f| u16::from(f.code));
            }
        }
        None
    })
    .await
    .unwrap();
    assert_eq!(close, Some(4000));
    s.shutdown().await;
}

#[tokio::test]
async fn a_parent_agent_types_its_decision_into_its_child_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let parent = s.task("parent").await;
    let (_, parent_token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&parent)
        .await
        .unwrap();
    let child = agent_task(
        &s,
        "command",
        "say child waiting",
        json!({"parentTaskId": parent}),
    )
    .await;
    let stranger = agent_task(&s, "command", "say stranger", json!({})).await;
    s.admin("POST", &format!("/api/tasks/{child}/start"), None)
        .await;
    s.admin("POST", &format!("/api/tasks/{stranger}/start"), None)
        .await;
    wait_for(&s, &child, "the child", |t| t.contains("child waiting")).await;
    let call = |task: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "send_task_terminal_input",
            "arguments": {"taskId": task, "text": "use option B", "idempotencyKey": "decision-1"}}})
    };
    for _ in 0..2 {
        let resp = s
            .client
            .post(s.url("/mcp"))
            .bearer_auth(&parent_token)
            .header("Accept", "application/json, text/event-stream")
            .json(&call(&child))
            .send()
            .await
            .unwrap();
        let (_, body) = common::decode(resp).await;
        assert_eq!(body["result"]["isError"], false, "{body}");
    }
    wait_for(&s, &child, "the decision", |t| {
        t.contains("GOT INPUT: use option B")
    })
    .await;
    let screen = screen_after_marker(&s, &child, "marker-after-decision").await;
    assert_eq!(
        screen.matches("GOT INPUT: use option B").count(),
        1,
        "idempotent: {screen}"
    );
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(&parent_token)
        .header("Accept", "application/json, text/event-stream")
        .json(&call(&stranger))
        .send()
        .await
        .unwrap();
    let (_, body) = common::decode(resp).await;
    assert_eq!(body["result"]["isError"], true, "not its child: {body}");
    s.shutdown().await;
}

/// Stopping a task cancels its OPEN ask (the reference's cleanup on stop):
/// it leaves the pending view and a late reply gets the 409, never a restart
/// of the agent the user just stopped.
#[tokio::test]
async fn stopping_a_parked_task_cancels_its_open_ask() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let t = agent_task(
        &s,
        "command",
        "ask_human Keep going?\nwait_reply",
        json!({}),
    )
    .await;
    s.admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    wait_pending(&s, &t).await;

    let (status, _) = s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, pending) = s
        .admin(
            "GET",
            &format!("/api/internal/harness/pending?taskId={t}"),
            None,
        )
        .await;
    assert_eq!(pending["pending"], false, "{pending}");
    let (_, rows) = s.admin("GET", "/api/harness/messages?view=all", None).await;
    let ask = rows["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["taskId"] == t.as_str())
        .cloned()
        .unwrap_or_default();
    assert_eq!(ask["state"], "CANCELLED", "{rows}");

    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "too late"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{reply}");
    assert!(s.running.terminals.live(&t).is_none(), "not restarted");
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "STOPPED");
    s.shutdown().await;
}
