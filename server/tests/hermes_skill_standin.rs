//! The Harness skill's steps beyond answering a question, with gateway
//! `hermes` and the gateway token on the real `/mcp` endpoint. The real Hermes gateway answering a question (`reply_to_ask`
//! from a Telegram reply) is `hermes_inbound_real.rs`; this test plays the
//! agent for what that one does not drive, following
//! `docs/gateway-skill/harness/SKILL.md` step by step:
//!
//! 1. the OWNER replies to Harness's message of a task with nothing
//!    waiting: `reply_to_ask` → `no_pending`, so an ordinary message;
//! 2. `route_gateway_message` → `task_context`; the person asked to
//!    continue, so `continue_bound_task` with the same fields → typed once
//!    (and not again when the message is delivered twice);
//! 3. another member of the chat asks about a project:
//!    `route_gateway_query` → `channel_access_denied`, their
//!    `route_gateway_message` refused, then answered once the OWNER
//!    authorises the chat.

use crate::common::{self, gateway::*};

use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hermes_stand_in_follows_the_skill_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "hermes", &["8001"]).await;
    let shop = project(&s, dir.path(), "shop").await;
    let token = secret(dir.path(), "gateway.token");
    let (st, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "checkout flow", "projectId": shop,
                "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    // The tools the skill names are the ones the token sees.
    let listed = rpc(
        &s,
        &token,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["name"].as_str())
        .collect();
    for name in [
        "reply_to_ask",
        "route_gateway_message",
        "continue_bound_task",
        "route_gateway_query",
    ] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }

    // The person's Telegram message, as Hermes collects it (the quoted
    // Harness message carries the task token).
    let quoted = format!("Harness: checkout flow stopped [[tower:task={t}]]");
    let fields = json!({"gateway": "hermes", "platform": "telegram", "chatId": "-4001",
        "platformMessageId": "301", "senderId": "8001", "replyToMessageId": "300",
        "quotedText": quoted});
    let text = "continue from the failure";

    // Step 1: it replies to a Harness message → reply_to_ask.
    let (is_error, out) = tool(
        &s,
        &token,
        "reply_to_ask",
        json!({"taskId": t, "text": text, "senderId": "8001"}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["no_pending"], true, "nothing is waiting: {out}");

    // Step 2: the OWNER → route_gateway_message.
    let (is_error, routed) = tool(
        &s,
        &token,
        "route_gateway_message",
        with(
            fields.clone(),
            json!({"intent": "PROJECT_WORK", "content": text}),
        ),
    )
    .await;
    assert!(!is_error, "{routed}");
    assert_eq!(routed["mode"], "task_context", "{routed}");
    assert_eq!(routed["taskId"], t.as_str());
    // task_context + "continue" → continue_bound_task, same fields.
    let (is_error, cont) = tool(
        &s,
        &token,
        "continue_bound_task",
        with(fields.clone(), json!({"content": text})),
    )
    .await;
    assert!(!is_error, "{cont}");
    assert_eq!(cont["mode"], "continued_task", "{cont}");
    assert_eq!(cont["inboundId"], routed["inboundId"]);
    let typed = s
        .running
        .harness
        .deliveries()
        .delivery(cont["deliveryId"].as_str().unwrap())
        .await
        .unwrap();
    assert!(typed.text.contains(text), "{}", typed.text);
    // Hermes delivering the same message again: nothing new.
    let (_, again) = tool(
        &s,
        &token,
        "continue_bound_task",
        with(fields.clone(), json!({"content": text})),
    )
    .await;
    assert_eq!(again["noOp"], true, "{again}");
    assert_eq!(again["deliveryId"], cont["deliveryId"]);

    // Step 3: a member (not the OWNER) asks about the project; the chat is
    // not authorised, so the answer is that it may not ask.
    let question = json!({"gateway": "hermes", "platform": "telegram", "chatId": "-4001",
        "senderId": "8002", "project": "shop", "question": "what is being built?"});
    let (is_error, out) = tool(&s, &token, "route_gateway_query", question.clone()).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "channel_access_denied", "{out}");
    // Never route_gateway_message for a member: refused, nothing recorded.
    let (is_error, out) = tool(
        &s,
        &token,
        "route_gateway_message",
        with(
            fields.clone(),
            json!({"senderId": "8002", "platformMessageId": "302", "intent": "TOWER",
                   "content": "status?"}),
        ),
    )
    .await;
    assert!(is_error, "{out}");
    // The OWNER authorises the chat (a message of its own, then the
    // channel tool with its inbound id); the member's question is answered.
    let (is_error, routed) = tool(
        &s,
        &token,
        "route_gateway_message",
        json!({"gateway": "hermes", "platform": "telegram", "chatId": "-4001",
               "platformMessageId": "303", "senderId": "8001", "intent": "TOWER",
               "content": "let this chat ask about projects"}),
    )
    .await;
    assert!(!is_error, "{routed}");
    assert_eq!(routed["mode"], "tower_mcp", "{routed}");
    let (is_error, out) = tool(
        &s,
        &token,
        "manage_gateway_channel_access",
        json!({"action": "authorize", "gatewayInboundId": routed["inboundId"]}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["ok"], true, "{out}");
    let (is_error, out) = tool(&s, &token, "route_gateway_query", question).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["mode"], "project_query", "{out}");
    assert_eq!(out["tasks"][0]["title"], "checkout flow", "{out}");
    s.shutdown().await;
}
