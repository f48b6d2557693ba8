//! A person's reply reaches Harness through the REAL Hermes gateway (issue
//! 28 point 8): `hermes gateway run` (Hermes Agent 0.19.0 with its
//! `messaging` and `mcp` extras, `end2end/real-gateways/hermes`) with its
//! Telegram adapter on the platform stand-in (`platforms.telegram.extra.
//! base_url`), its model on the scripted stand-in (a named
//! `custom_providers` entry, `api_mode: codex_responses`), the Harness skill
//! in its `skills/` and Harness's `/mcp` as its MCP server `harness` (the
//! gateway token). An agent (the double, in a real PTY) pushes a question;
//! the person replies to that Telegram message; Hermes's own agent turn
//! loads the skill and its model makes the call the skill prescribes for an
//! answer — `reply_to_ask {taskId, text}` — through Hermes's MCP client.
//! The ask is answered once, the reply is typed into the agent once, and
//! Hermes's acknowledgement reaches the chat once.
//!
//! Two parts are not Hermes: the model (it does not read the skill, it
//! replays the calls a model following it makes: `skill_view` of
//! `harness`, then `mcp__harness__reply_to_ask`), and the CLI that sends
//! the question — `hermes send` 0.19.0 cannot reach the stand-in (its
//! one-shot Telegram sender, `tools/send_message_tool.py` `_send_telegram`,
//! builds `Bot(token=token)` on api.telegram.org and ignores `base_url`),
//! so the gateway double plays it, posting `sendMessage` to the stand-in as
//! `hermes send` posts it (the real `hermes send` is `real_gateways.rs`'s).
//!
//! Nothing is fetched at run time: lazy installs are off
//! (`security.allow_lazy_installs: false`, `HERMES_DISABLE_LAZY_INSTALLS`),
//! and so are the checks that would reach the internet (Tirith's download,
//! Telegram's DNS-over-HTTPS fallback discovery, model metadata: the context
//! length is configured).
//!
//! Without Hermes (or without its extras) the test prints "skipped: …" and
//! passes.

use crate::common::{self, gateway::secret, real_cli::screen};
use crate::real_gateways::{Platform, installed, put_ok};

use std::{
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use harness_core::{model::MessageState, store::DeliveryState};
use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

const GATEWAY_DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");
/// The person: a Telegram user writing to the bot in a private chat (its
/// chat id is the user's id), allowed by `TELEGRAM_ALLOWED_USERS`.
const PERSON: &str = "555";
const BOT_TOKEN: &str = "123456:TEST";
const REPLY_TOOL: &str = "mcp__harness__reply_to_ask";
/// No punctuation: Hermes sends MarkdownV2, where `.` arrives as `\.`.
const ACK: &str = "Harness has your answer";

/// A running `hermes gateway run` (its own process group, killed on drop).
struct HermesGateway {
    child: Child,
    home: PathBuf,
    out: PathBuf,
}

impl HermesGateway {
    async fn start(hermes: &Path, home: &Path, out: PathBuf, config: &Value) -> Self {
        use std::os::unix::process::CommandExt;
        std::fs::create_dir_all(home.join("skills/harness")).unwrap();
        // JSON is YAML.
        std::fs::write(home.join("config.yaml"), config.to_string()).unwrap();
        let skill =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/gateway-skill/harness/SKILL.md");
        std::fs::copy(skill, home.join("skills/harness/SKILL.md")).unwrap();
        let log = std::fs::File::create(&out).unwrap();
        let child = Command::new(hermes)
            .args(["gateway", "run"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("HERMES_HOME", home)
            .env("LANG", "C.UTF-8")
            .env("TELEGRAM_ALLOWED_USERS", PERSON)
            // The adapter's fallback-IP transport (and with it the
            // DNS-over-HTTPS discovery) is for api.telegram.org only.
            .env("HERMES_TELEGRAM_DISABLE_FALLBACK_IPS", "1")
            .env("HERMES_DISABLE_LAZY_INSTALLS", "1")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("hermes gateway starts");
        let gateway = Self {
            child,
            home: home.to_path_buf(),
            out,
        };
        // MCP discovery comes before the platforms: "Gateway running" means
        // both are done.
        let deadline = Instant::now() + Duration::from_secs(120);
        while !gateway.log().contains("Gateway running") {
            assert!(
                Instant::now() < deadline,
                "the Hermes gateway did not get ready:\n{}",
                gateway.logs()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        gateway
    }

    /// Its own log (`$HERMES_HOME/logs/gateway.log`).
    fn log(&self) -> String {
        std::fs::read_to_string(self.home.join("logs/gateway.log")).unwrap_or_default()
    }

    /// Everything it wrote, for a failure message.
    fn logs(&self) -> String {
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        format!(
            "--- output\n{}\n--- gateway.log\n{}\n--- agent.log\n{}",
            read(self.out.clone()),
            self.log(),
            read(self.home.join("logs/agent.log"))
        )
    }
}

impl Drop for HermesGateway {
    fn drop(&mut self) {
        crate::common::process::stop_group(&mut self.child);
    }
}

/// Hermes's configuration: Telegram on the stand-in, the model on the
/// scripted stand-in, Harness as MCP server `harness`, nothing fetched.
fn config(platform: &str, model: &str, mcp: &str, gateway_token: &str) -> Value {
    json!({
        "model": {"provider": "custom:standin", "default": "scripted", "context_length": 128000},
        "custom_providers": [{"name": "standin", "base_url": format!("{model}/v1"),
            "api_key": "standin-local", "api_mode": "codex_responses", "model": "scripted",
            "models": {"scripted": {"context_length": 128000}}}],
        "platforms": {"telegram": {"enabled": true, "token": BOT_TOKEN, "extra": {
            "base_url": format!("{platform}/bot"),
            // Configured (and disabled by the environment) so that the
            // adapter does not discover Telegram's addresses over DoH.
            "fallback_ips": ["149.154.167.220"]}}},
        "mcp_servers": {"harness": {"url": mcp, "timeout": 60,
            "headers": {"Authorization": format!("Bearer {gateway_token}")}}},
        "security": {"allow_lazy_installs": false, "tirith_enabled": false},
    })
}

/// The bot's messages in the person's chat (text, message id).
fn sent_to_person(platform: &Platform) -> Vec<(String, Value)> {
    platform
        .seen()
        .iter()
        .filter(|r| r["method"] == "sendMessage" && r["message_id"].is_number())
        .filter(|r| r["params"]["chat_id"].to_string().trim_matches('"') == PERSON)
        .map(|r| {
            (
                r["params"]["text"].as_str().unwrap_or("").to_string(),
                r["message_id"].clone(),
            )
        })
        .collect()
}

/// The output Hermes handed back to the model for its call of `tool`.
fn tool_output(body: &Value, tool: &str) -> String {
    let items = body["input"].as_array().cloned().unwrap_or_default();
    let Some(call_id) = items
        .iter()
        .find(|i| i["type"] == "function_call" && i["name"] == tool)
        .map(|i| i["call_id"].clone())
    else {
        return String::new();
    };
    items
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
        .map(|i| match &i["output"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

async fn wait_for(
    what: &str,
    secs: u64,
    mut done: impl AsyncFnMut() -> bool,
    context: impl Fn() -> String,
) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done().await {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n{}",
            context()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_telegram_reply_answers_the_ask_through_the_real_hermes_agent_once() {
    // The `mcp` extra's console script, beside `hermes`: a venv installed
    // before the extras has `hermes` alone.
    let Some(mcp) = installed(
        "Hermes Agent with its messaging and mcp extras",
        "hermes/.venv/bin/mcp",
    ) else {
        return;
    };
    let hermes = mcp.with_file_name("hermes");
    let dir = tempfile::tempdir().unwrap();
    let platform = Platform::start(dir.path());
    let s = crate::real_gateways::start(dir.path()).await;
    let gateway_token = secret(dir.path(), "gateway.token");
    let model = StandIn::start_marked(Vec::new(), &[REPLY_TOOL])
        .await
        .unwrap();
    let gateway = HermesGateway::start(
        &hermes,
        &dir.path().join("hermes-home"),
        dir.path().join("hermes-gateway.out"),
        &config(
            &platform.url,
            &model.base_url(),
            &s.url("/mcp"),
            &gateway_token,
        ),
    )
    .await;

    // Harness pushes through gateway `hermes` to the person's chat.
    let record = dir.path().join("sent.jsonl");
    put_ok(
        &s,
        "/api/settings/gateways",
        json!({"hermes": {"cliPath": GATEWAY_DOUBLE, "env": {
            "GATEWAY_DOUBLE_RECORD": record,
            "GATEWAY_DOUBLE_TELEGRAM_API": platform.url,
            "TELEGRAM_BOT_TOKEN": BOT_TOKEN}}}),
    )
    .await;
    put_ok(
        &s,
        "/api/settings/notify-targets",
        json!({"targets": [{"label": "phone", "gateway": "hermes", "downstream": "telegram",
            "dest": PERSON, "scope": "unattended"}]}),
    )
    .await;

    // The agent asks and waits for the answer to be typed.
    let push =
        json!({"message": "Postgres or SQLite?", "scope": "unattended", "expectReply": true});
    let script = format!("mcp push_to_human {push}\nwait_reply\nsay done");
    let work = tempfile::tempdir().unwrap();
    let (st, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(
                json!({"title": "Nightly build", "agent": {"provider": "command",
                "command": [common::double().display().to_string()], "cwd": work.path(),
                "env": {"HARNESS_DOUBLE_SCRIPT": script}}}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{task}");
    let task = task["id"].as_str().unwrap().to_string();
    let (st, out) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");

    // The question reaches the person's chat, and the ask is open.
    wait_for(
        "the question in the chat",
        60,
        async || !sent_to_person(&platform).is_empty(),
        || format!("{:?}\n{:?}", platform.seen(), common::json_lines(&record)),
    )
    .await;
    let asked = sent_to_person(&platform);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (question, question_id) = asked[0].clone();
    assert!(
        question.contains(&format!("[[tower:task={task}]]")),
        "{question}"
    );
    let pending = s.running.harness.asks().pending(&task).await.unwrap();
    assert!(pending.pending, "the ask is OPEN");
    let ask_id = pending.request_id.unwrap();
    let (_, map) = s
        .admin(
            "GET",
            &format!(
                "/api/internal/harness/delivery-map?gateway=hermes&platform=telegram&chatId={PERSON}&messageId={question_id}"
            ),
            None,
        )
        .await;
    assert_eq!(map["taskId"], task.as_str(), "{map}");

    // The model follows the skill for a reply to a waiting question: it
    // loads the skill, answers the ask, then acknowledges.
    model.push([
        Turn::call("skill_view", json!({"name": "harness"})),
        Turn::call(REPLY_TOOL, json!({"taskId": task, "text": "SQLite"})),
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
    let acks = || {
        sent_to_person(&platform)
            .into_iter()
            .filter(|(text, _)| text.contains(ACK))
            .count()
    };
    wait_for(
        "the acknowledgement in the chat",
        180,
        async || acks() > 0,
        || {
            format!(
                "model requests: {:?}\nplatform: {:?}\n{}",
                model
                    .requests()
                    .iter()
                    .map(|r| (&r.path, r.main, r.turn))
                    .collect::<Vec<_>>(),
                platform.seen(),
                gateway.logs()
            )
        },
    )
    .await;

    // Hermes gave its model the skill, the reply and what it replies to.
    let main = model.main_requests();
    assert!(main.len() >= 3, "{} main requests", main.len());
    let instructions = main[0]["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("harness: Relay what the chat's people write to Harness"),
        "the skill is offered: {instructions}"
    );
    let first = main[0]["input"].to_string();
    assert!(
        first.contains("SQLite"),
        "the reply is in the turn: {first}"
    );
    assert!(
        first.contains(&format!("[[tower:task={task}]]")),
        "the message it replies to is in the turn: {first}"
    );
    let skill = tool_output(&main[1], "skill_view");
    assert!(
        skill.contains("reply_to_ask {taskId, text}"),
        "skill_view gave the model the skill: {skill}"
    );
    // The call went through Hermes's MCP client to Harness and back.
    let answered = tool_output(&main[2], REPLY_TOOL);
    assert!(
        answered.contains(r#""ok": true"#) && answered.contains(&format!(r#""taskId": "{task}""#)),
        "Harness's answer reached the model: {answered}"
    );

    // The ask is answered once, with the person's text, and the reply is
    // typed into the agent once.
    assert!(
        !s.running
            .harness
            .asks()
            .pending(&task)
            .await
            .unwrap()
            .pending
    );
    let message = s.running.harness.asks().message_row(&ask_id).await.unwrap();
    assert_eq!(message.message.state, MessageState::Answered, "{message:?}");
    assert_eq!(message.message.reply_text.as_deref(), Some("SQLite"));
    wait_for(
        "the reply typed into the agent",
        30,
        async || screen(&s, &task).await.contains("GOT REPLY: SQLite"),
        String::new,
    )
    .await;
    let deliveries = s
        .running
        .harness
        .deliveries()
        .task_deliveries(&task)
        .await
        .unwrap();
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0].state, DeliveryState::Delivered);
    assert_eq!(deliveries[0].message_id.as_deref(), Some(ask_id.as_str()));
    assert!(
        answered.contains(&format!(r#""deliveryId": "{}""#, deliveries[0].id)),
        "{answered}"
    );

    // Nothing more: one acknowledgement, no further model turn, no repeat.
    let settled = Instant::now() + Duration::from_secs(3);
    while Instant::now() < settled {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(acks(), 1, "{:?}", sent_to_person(&platform));
    assert_eq!(model.turns_served(), 3, "three scripted turns, no more");
    assert_eq!(
        screen(&s, &task).await.matches("GOT REPLY").count(),
        1,
        "typed once"
    );
    // Hermes missed no package: it neither installed one nor was refused.
    let logs = gateway.logs();
    assert!(
        !logs.contains("Lazy-installing") && !logs.contains("lazy installs disabled"),
        "{logs}"
    );
    s.shutdown().await;
    drop(gateway);
}
