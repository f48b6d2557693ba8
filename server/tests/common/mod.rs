//! A real server on a free port with a temp data dir, in-process.
#![allow(dead_code)]

pub mod gateway;
pub mod outbox;
pub mod pg;
pub mod process;
pub mod real_cli;
pub mod watchdog;
pub mod workbench;

use std::path::Path;

use harness_server::{Running, ServeConfig, launch};
use reqwest::{Client, Response, StatusCode};
use serde_json::{Value, json};

pub struct Server {
    pub running: Running,
    pub client: Client,
    pub base: String,
    pub admin: String,
}

pub async fn start(data_dir: &Path) -> Server {
    start_on(data_dir, None).await
}

/// A server with its own data directory on another server's database (two
/// nodes on one database; one data directory holds one server).
pub async fn start_on(data_dir: &Path, database_url: Option<String>) -> Server {
    start_with(data_dir, |cfg| cfg.database_url = database_url).await
}

/// A server whose configuration `configure` adjusts before launch.
pub async fn start_with(data_dir: &Path, configure: impl FnOnce(&mut ServeConfig)) -> Server {
    watchdog::watch();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut cfg = ServeConfig::new(listener.local_addr().unwrap(), data_dir.to_path_buf());
    // Agents' hooks must call the real binary, not this test executable.
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    // Agents outlive a dropped test server in their holders: not for long.
    cfg.holders.orphan_timeout = std::time::Duration::from_secs(120);
    configure(&mut cfg);
    let running = launch(cfg, listener).await.unwrap();
    let base = running.base_url();
    let admin = running.admin_token.clone();
    Server {
        running,
        // Bounded: a request the server never answers fails its test by name
        // (one full run hung here once with every thread parked).
        client: Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .unwrap(),
        base,
        admin,
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let verb = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.client.request(verb, self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        decode(resp).await
    }

    pub async fn admin(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call(method, path, Some(&self.admin.clone()), body)
            .await
    }

    pub async fn task(&self, title: &str) -> String {
        let (status, body) = self
            .admin(
                "POST",
                "/api/tasks",
                Some(
                    json!({"title": title, "agent": {"provider": "command", "command": ["true"]}}),
                ),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// A browser session: logs in with the admin token (`GET /login?token=`)
    /// and returns the `Cookie` header value (`harness_session=…`).
    pub async fn session(&self) -> String {
        let resp = no_redirects()
            .get(self.url(&format!("/login?token={}", self.admin)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let cookie = resp.headers()["set-cookie"].to_str().unwrap();
        cookie.split(';').next().unwrap().to_string()
    }

    /// A WebSocket handshake for `url` authenticated like a script (admin bearer).
    pub fn ws_request(
        &self,
        url: &str,
    ) -> tokio_tungstenite::tungstenite::handshake::client::Request {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert(
            "Authorization",
            format!("Bearer {}", self.admin).parse().unwrap(),
        );
        req
    }

    /// Bounded: a shutdown that hangs fails its test by name instead of
    /// holding the whole run until CI's limit.
    pub async fn shutdown(self) {
        match tokio::time::timeout(std::time::Duration::from_secs(90), self.running.shutdown())
            .await
        {
            Ok(done) => done.unwrap(),
            Err(_) => panic!("the server's shutdown did not end within 90 s"),
        }
    }
}

/// A client that does not follow redirects (login tests look at `Location`).
pub fn no_redirects() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .unwrap()
}

pub async fn decode(resp: Response) -> (StatusCode, Value) {
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, value)
}

/// The double agent binary, built by `cargo test --workspace` (or here, on demand).
pub fn double() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("harness-agent-double");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", "harness-agent-double"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    bin
}

/// A file of JSON lines (a gateway double's record of its invocations);
/// missing: none yet.
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Poll `check` (every 100 ms) until it gives a value; after `within`,
/// fail the test naming `what`. The one polling wait of the tests (a
/// condition, never a sleep); [`until_with`] adds what the failure shows.
pub async fn until<T, F, Fut>(what: &str, within: std::time::Duration, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    until_with(what, within, check, || async { String::new() }).await
}

/// [`until`], and on a timeout the panic also shows what `context` reads
/// then (the agent's screen, the model stand-in's requests, …).
pub async fn until_with<T, F, Fut, C, CFut>(
    what: &str,
    within: std::time::Duration,
    mut check: F,
    context: C,
) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
    C: FnOnce() -> CFut,
    CFut: std::future::Future<Output = String>,
{
    let deadline = std::time::Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        if std::time::Instant::now() > deadline {
            panic!(
                "timed out waiting for {what} ({within:?})\n{}",
                context().await
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Poll `done` (every 20 ms) until it holds; fail the test naming `what`
/// after `within`.
pub async fn wait_until(what: &str, within: std::time::Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + within;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what} ({within:?})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
