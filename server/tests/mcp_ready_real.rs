//! The REAL Claude Code 2.1.332 (`end2end/real-cli`, against the model
//! stand-in) with a slow Harness MCP endpoint: every connection to it waits
//! [`DELAY`] (a busy machine; CI once saw the first request go out without
//! `ask_human`, and the model's call of it fail with "No such tool
//! available"). Claude Code does not wait for its MCP servers before its
//! first model request, but it waits for its SessionStart hooks — and
//! Harness's hook holds the start until the agent has listed its tools
//! (`terminals::mcp_ready`). So the first request offers `ask_human` and
//! the first turn's question is asked.
//!
//! Without the CLI the test prints "skipped: …" and passes.

use crate::common;

use std::time::{Duration, Instant};

use harness_model_standin::{StandIn, Turn};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

use common::real_cli::{claude_env, installed, screen, start_claude_task};

/// How long each connection to the MCP endpoint waits before it reaches
/// Harness.
const DELAY: Duration = Duration::from_secs(4);

/// A TCP proxy to `target` that holds each new connection for [`DELAY`].
async fn slow_proxy(listener: TcpListener, target: std::net::SocketAddr) {
    while let Ok((mut inbound, _)) = listener.accept().await {
        tokio::spawn(async move {
            tokio::time::sleep(DELAY).await;
            if let Ok(mut outbound) = TcpStream::connect(target).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_codes_first_request_has_the_harness_tools_with_a_slow_mcp() {
    let Some(bin) = installed("claude") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let proxy = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = proxy.local_addr().unwrap();
    let s = common::start_with(&dir.path().join("data"), |c| {
        c.allowed_hosts.push(proxy_addr.to_string());
    })
    .await;
    let server_addr: std::net::SocketAddr = s.base.trim_start_matches("http://").parse().unwrap();
    tokio::spawn(slow_proxy(proxy, server_addr));

    // The CLI, started through a wrapper that points its MCP config at the
    // slow proxy (the hooks keep the direct address).
    let mcp_copy = dir.path().join("mcp-slow.json");
    let wrapper = dir.path().join("claude-slow-mcp");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprev=\nfor a do\n  shift\n  if [ \"$prev\" = --mcp-config ]; then\n    \
             sed 's#{from}/mcp#http://{proxy_addr}/mcp#' \"$a\" > '{copy}'\n    prev=$a\n    a='{copy}'\n  \
             else\n    prev=$a\n  fi\n  set -- \"$@\" \"$a\"\ndone\nexec '{bin}' \"$@\"\n",
            from = s.base,
            copy = mcp_copy.display(),
            bin = bin.display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();

    let standin = StandIn::start(vec![
        Turn::call("ask_human", json!({"question": "Slow tools?"})),
        Turn::say("Waiting for the human."),
    ])
    .await
    .unwrap();
    let env = claude_env(&home, &work, &standin.base_url(), json!({}), json!({}));
    let started = Instant::now();
    let task = start_claude_task(&s, "slow tools", &wrapper, &work, env).await;

    let on_screen = || async { format!("screen:\n{}", screen(&s, &task).await) };
    let first = common::until_with(
        "the first model request",
        Duration::from_secs(90),
        || std::future::ready(standin.main_requests().first().cloned()),
        on_screen,
    )
    .await;
    let waited = started.elapsed();
    let tools = tool_names(&first);
    assert!(
        tools.iter().any(|t| t.ends_with("__ask_human")),
        "the first request after {waited:?} offers no Harness tool: {tools:?}\nscreen:\n{}",
        screen(&s, &task).await
    );
    // It really went through the slow endpoint (else this proves nothing).
    assert!(
        std::fs::read_to_string(&mcp_copy)
            .unwrap()
            .contains(&proxy_addr.to_string())
    );
    assert!(waited >= DELAY, "the first request came after {waited:?}");

    // And the first turn's question is asked.
    let asked = || async {
        let (_, rows) = s
            .admin(
                "GET",
                &format!("/api/harness/messages?view=pending&taskId={task}"),
                None,
            )
            .await;
        (rows["rows"][0]["content"] == "Slow tools?").then_some(())
    };
    common::until_with("the question", Duration::from_secs(60), asked, on_screen).await;
    s.shutdown().await;
}
