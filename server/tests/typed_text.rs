//! What Harness types into an agent is text, never a command or a key — the
//! agent attacked as an adversary of its own gate, with the agent double
//! (a terminal program that runs a `!<action>` line, exits at `/exit`, and
//! submits at every newline when bracketed paste is off). The same with the
//! real CLIs: `typed_text_real.rs`.
//!
//! - An agent types into its own terminal (its CLI runs a `!` line as a
//!   shell command, past every hook): refused on MCP and REST, nothing typed.
//! - A parent types a command or a key into its child: refused, clearly.
//! - A reply holding escape sequences, a carriage return and `!`/`/` lines:
//!   typed as text into a program that submits at every newline.
//! - An agent files its child under another project: refused.

use crate::common;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn agent_task(s: &common::Server, script: &str, extra: Value) -> String {
    let mut body = json!({"title": "double agent", "agent": {
        "provider": "command", "command": [common::double().display().to_string()],
        "cwd": std::env::temp_dir(), "env": {"HARNESS_DOUBLE_SCRIPT": script}}});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let id = t["id"].as_str().unwrap().to_string();
    let (status, out) = s
        .admin("POST", &format!("/api/tasks/{id}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    id
}

async fn screen(s: &common::Server, task: &str) -> String {
    let (_, v) = s
        .admin("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    v["text"].as_str().unwrap_or_default().to_string()
}

async fn wait_for(s: &common::Server, task: &str, what: &str, pred: impl Fn(&str) -> bool) {
    let mut last = String::new();
    for _ in 0..200 {
        last = screen(s, task).await;
        if pred(&last) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; screen:\n{last}");
}

/// Types `marker` as the admin and waits for its echo: whatever was typed
/// before is on the screen by then.
async fn after_marker(s: &common::Server, task: &str, marker: &str) -> String {
    let (status, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{task}/input"),
            Some(json!({"text": marker})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let echoed = format!("GOT INPUT: {marker}");
    wait_for(s, task, "the marker", |t| t.contains(&echoed)).await;
    screen(s, task).await
}

/// `tools/call` as `token`: `(isError, text)`.
async fn tool(s: &common::Server, token: &str, name: &str, arguments: Value) -> (bool, String) {
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
        .send()
        .await
        .unwrap();
    let (status, body) = common::decode(resp).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (
        body["result"]["isError"].as_bool().unwrap_or(true),
        body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn ran(screen: &str, word: &str) -> bool {
    screen.lines().any(|l| l.trim() == word)
}

#[tokio::test]
async fn an_agent_cannot_type_into_its_own_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    // The agent reads its own token, as any agent can.
    let t = agent_task(&s, "print_env TOWER_API_TOKEN", json!({})).await;
    wait_for(&s, &t, "the token", |t| t.contains("ENV TOWER_API_TOKEN=")).await;
    let token = screen(&s, &t)
        .await
        .lines()
        .find_map(|l| l.trim().strip_prefix("ENV TOWER_API_TOKEN="))
        .unwrap()
        .trim()
        .to_string();

    // Through MCP: `!say …` is what a Claude Code `!git push` is to the double.
    let (error, text) = tool(
        &s,
        &token,
        "send_task_terminal_input",
        json!({"taskId": t, "text": "!say PWNED-MCP"}),
    )
    .await;
    assert!(error, "refused: {text}");
    assert!(text.contains("cannot type into its own terminal"), "{text}");
    let (error, text) = tool(
        &s,
        &token,
        "send_task_terminal_input",
        json!({"taskId": t, "text": "!say PWNED-KEYED", "idempotencyKey": "k1"}),
    )
    .await;
    assert!(error, "refused with a key too: {text}");
    // Through REST.
    let (status, body) = s
        .call(
            "POST",
            &format!("/api/internal/terminal/{t}/input"),
            Some(&token),
            Some(json!({"text": "!say PWNED-REST"})),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body.to_string()
            .contains("cannot type into its own terminal"),
        "{body}"
    );
    // Nothing was typed (nor queued) into the terminal.
    let seen = after_marker(&s, &t, "marker-after-the-attack").await;
    assert!(!seen.contains("PWNED"), "typed: {seen}");
    let (_, deliveries) = s
        .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
        .await;
    assert!(!deliveries.to_string().contains("PWNED"), "{deliveries}");
    s.shutdown().await;
}

#[tokio::test]
async fn a_parent_is_refused_a_command_or_a_key_for_its_child() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let parent = s.task("parent").await;
    let (_, token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&parent)
        .await
        .unwrap();
    let child = agent_task(&s, "say child waiting", json!({"parentTaskId": parent})).await;
    wait_for(&s, &child, "the child", |t| t.contains("child waiting")).await;

    for (text, says) in [
        ("!say PWNED-BANG", "starts with '!'"),
        ("  /exit", "starts with '/'"),
        ("ok\x1b[201~\r!say PWNED-PASTE", "U+001B"),
        ("ok\x03", "U+0003"),
    ] {
        let (error, got) = tool(
            &s,
            &token,
            "send_task_terminal_input",
            json!({"taskId": child, "text": text}),
        )
        .await;
        assert!(error && got.contains(says), "{text:?}: {got}");
        let (status, body) = s
            .call(
                "POST",
                &format!("/api/internal/terminal/{child}/input"),
                Some(&token),
                Some(json!({"text": text, "idempotencyKey": format!("k-{says}")})),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{text:?}: {body}");
        assert!(body.to_string().contains(says), "{body}");
    }
    // A decision in words is typed.
    let (error, got) = tool(
        &s,
        &token,
        "send_task_terminal_input",
        json!({"taskId": child, "text": "use option B"}),
    )
    .await;
    assert!(!error, "{got}");
    let seen = after_marker(&s, &child, "marker-after-the-decisions").await;
    assert!(seen.contains("GOT INPUT: use option B"), "{seen}");
    assert!(!seen.contains("PWNED"), "a command ran: {seen}");
    assert!(s.running.terminals.live(&child).is_some(), "not /exit'ed");
    s.shutdown().await;
}

#[tokio::test]
async fn a_reply_is_typed_as_text_into_a_program_that_submits_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    // Bracketed paste off: every newline (and CR) submits a line, as in any
    // terminal program that did not ask for pastes.
    let t = agent_task(
        &s,
        "bracketed_paste off\nask_human Which one?\nwait_reply",
        json!({}),
    )
    .await;
    for _ in 0..200 {
        let (_, p) = s
            .admin(
                "GET",
                &format!("/api/internal/harness/pending?taskId={t}"),
                None,
            )
            .await;
        if p["pending"] == true {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Shift+Tab, an end-of-paste marker, a carriage return (Enter), then a
    // `!` line and a `/exit` line.
    let reply = "fine\x1b[Z\x1b[201~\r!say PWNED-REPLY\n/exit";
    let (status, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": reply})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    wait_for(&s, &t, "the reply's lines", |t| {
        t.contains("GOT INPUT: \\/exit")
    })
    .await;
    let seen = screen(&s, &t).await;
    assert!(seen.contains("GOT REPLY: fine[Z[201~"), "{seen}");
    assert!(seen.contains("GOT INPUT: \\!say PWNED-REPLY"), "{seen}");
    assert!(!ran(&seen, "PWNED-REPLY"), "the ! line ran: {seen}");
    assert!(s.running.terminals.live(&t).is_some(), "/exit ran");
    s.shutdown().await;
}

#[tokio::test]
async fn an_agents_child_is_filed_under_its_own_project() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let mut projects = Vec::new();
    for name in ["mine", "other"] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        let (status, p) = s
            .admin(
                "POST",
                "/api/projects",
                Some(json!({"name": name, "path": path})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{p}");
        projects.push(p["id"].as_str().unwrap().to_string());
    }
    let (mine, other) = (&projects[0], &projects[1]);
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "agent", "projectId": mine,
                "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let (_, token) = s
        .running
        .harness
        .tasks()
        .begin_execution(t["id"].as_str().unwrap())
        .await
        .unwrap();

    let (error, text) = tool(
        &s,
        &token,
        "create_task",
        json!({"title": "escape", "projectId": other}),
    )
    .await;
    assert!(error, "another project is refused: {text}");
    assert!(
        text.contains("projectId") && text.contains(mine.as_str()),
        "{text}"
    );
    for args in [
        json!({"title": "defaulted"}),
        json!({"title": "same", "projectId": mine}),
    ] {
        let (error, text) = tool(&s, &token, "create_task", args).await;
        assert!(!error, "{text}");
        let child: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(child["projectId"], json!(mine), "{child}");
    }
    let (_, list) = s.admin("GET", "/api/tasks", None).await;
    assert!(!list.to_string().contains("escape"), "{list}");
    s.shutdown().await;
}
