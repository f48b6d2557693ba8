//! The official MCP TypeScript SDK client (`@modelcontextprotocol/sdk`
//! 1.32.2, installed by `scripts/setup.sh test` into `end2end/mcp-sdk`)
//! against a real server's `/mcp`: connect, list tools (each with an
//! `outputSchema`), call tools (the SDK validates `structuredContent`
//! against it), and a refused call. Skipped without node or the SDK.

use crate::common;

use std::path::Path;

use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_works_against_mcp() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end/mcp-sdk");
    if common::real_cli::real_tool(
        "the MCP TypeScript SDK",
        dir.join("node_modules/@modelcontextprotocol/sdk/package.json"),
    )
    .is_none()
    {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let t = s.task("sdk task").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let out = tokio::process::Command::new("node")
        .arg("client.mjs")
        .arg(s.url("/mcp"))
        .arg(&token)
        .current_dir(&dir)
        .output()
        .await
        .expect("node runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK client failed: {stderr}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(seen["server"]["name"], "harness");
    let tools = seen["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 15, "{seen}");
    assert!(tools.iter().all(|t| t["outputSchema"] == true), "{seen}");
    assert_eq!(seen["notify"]["structuredContent"]["ok"], true, "{seen}");
    assert_eq!(seen["ask"]["structuredContent"]["parked"], true, "{seen}");
    assert_eq!(
        seen["task"]["structuredContent"]["id"],
        t.as_str(),
        "{seen}"
    );
    assert_eq!(seen["task"]["structuredContent"]["openAsk"], true, "{seen}");
    assert_eq!(seen["refused"]["isError"], true, "{seen}");
    assert_eq!(seen["unknownTool"]["isError"], true, "{seen}");
    s.shutdown().await;
}
