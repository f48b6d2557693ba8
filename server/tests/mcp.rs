//! MCP over real HTTP: initialize → tools/list → tools/call.

use crate::common;

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn rpc(s: &common::Server, token: Option<&str>, body: Value) -> (StatusCode, Value) {
    let mut req = s
        .client
        .post(s.url("/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    common::decode(req.send().await.unwrap()).await
}

fn tool_payload(result: &Value) -> (bool, Value) {
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    (
        result["result"]["isError"].as_bool().unwrap(),
        serde_json::from_str(text).unwrap(),
    )
}

#[tokio::test]
async fn initialize_list_and_call_ask_human_as_an_agent() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("mcp task").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();

    let (status, init) = rpc(&s, Some(&token), json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})).await;
    assert_eq!(status, StatusCode::OK, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "harness");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    let (status, _) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert!(status.is_success());

    let (_, list) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ack_workbench_batch",
            "ask_human",
            "complete_gateway_discussion",
            "complete_gateway_work",
            "confirm_gateway_task_created",
            "create_task",
            "get_report",
            "get_task",
            "heartbeat_workbench_batch",
            "list_notify_targets",
            "notify_human",
            "push_to_human",
            "resolve_workbench_batch",
            "send_task_terminal_input",
            "set_goal_mode"
        ]
    );
    let (_, admin_list) = rpc(
        &s,
        Some(&s.admin.clone()),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    // The agent's 15 (get_report among them), reply_to_ask, the gateway's
    // six and the four approval tools (the admin's only).
    assert_eq!(admin_list["result"]["tools"].as_array().unwrap().len(), 26);
    let (_, call) = rpc(
        &s,
        Some(&s.admin.clone()),
        json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
        "params": {"name": "get_approval_policy", "arguments": {}}}),
    )
    .await;
    let (is_error, payload) = tool_payload(&call);
    assert!(!is_error, "{payload}");
    assert_eq!(payload["builtin"], true, "{payload}");
    // The report in the language asked for; another language is refused.
    for (lang, starts) in [
        ("zh", Some("Harness 报告，")),
        ("en", Some("Harness report, ")),
        ("fr", None),
    ] {
        let (_, call) = rpc(
            &s,
            Some(&s.admin.clone()),
            json!({"jsonrpc": "2.0", "id": 22, "method": "tools/call",
            "params": {"name": "get_report", "arguments": {"lang": lang}}}),
        )
        .await;
        let (is_error, payload) = tool_payload(&call);
        match starts {
            Some(starts) => {
                assert!(!is_error, "{lang}: {payload}");
                let text = payload["text"].as_str().unwrap_or_default();
                assert!(text.starts_with(starts), "{lang}: {text}");
            }
            None => {
                assert!(is_error, "{lang}: {payload}");
                assert!(payload.to_string().contains("lang"), "{lang}: {payload}");
            }
        }
    }
    // An agent is never a person: it may not decide (nor read or change
    // the policy), not even for its own task.
    for (name, args) in [
        (
            "decide_approval",
            json!({"id": "cxxxxxxxxxxxxxxxxxxxxxxxx", "decision": "approve"}),
        ),
        ("set_approval_policy", json!({"reset": true})),
        ("list_approvals", json!({})),
        ("get_approval_policy", json!({})),
    ] {
        let (_, call) = rpc(
            &s,
            Some(&token),
            json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
            "params": {"name": name, "arguments": args}}),
        )
        .await;
        let (is_error, payload) = tool_payload(&call);
        assert!(is_error, "{name}: {payload}");
        assert!(
            payload["error"]
                .as_str()
                .unwrap()
                .contains("not available to this credential"),
            "{name}: {payload}"
        );
    }

    let (status, call) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "ask_human", "arguments": {"question": "Ship it?"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (is_error, payload) = tool_payload(&call);
    assert!(!is_error, "{payload}");
    assert_eq!(payload["parked"], true);
    assert_eq!(payload["noChannelConfigured"], true);
    let pending = s.running.harness.asks().pending(&t).await.unwrap();
    assert_eq!(pending.request_id.as_deref(), payload["requestId"].as_str());
    let view = s.running.harness.tasks().get_task(&t).await.unwrap();
    assert_eq!(
        view.execution.unwrap().status,
        harness_core::model::ExecutionStatus::Paused
    );

    // Errors are tool results with isError, not transport errors.
    let other = s.task("other").await;
    let (status, call) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "ask_human", "arguments": {"taskId": other, "question": "q"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (is_error, payload) = tool_payload(&call);
    assert!(is_error);
    assert!(
        payload["error"]
            .as_str()
            .unwrap()
            .starts_with("Task boundary mismatch")
    );
    let (_, call) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "reply_to_ask", "arguments": {"text": "x"}}}),
    )
    .await;
    assert!(tool_payload(&call).0, "agents cannot use gateway tools");
    let (_, call) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "ask_human", "arguments": {"question": 42}}}),
    )
    .await;
    let (is_error, payload) = tool_payload(&call);
    assert!(is_error);
    assert!(
        payload["error"].as_str().unwrap().contains("question"),
        "{payload}"
    );

    // The admin answers through reply_to_ask; then there is nothing pending.
    let (_, call) = rpc(
        &s,
        Some(&s.admin.clone()),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "reply_to_ask", "arguments": {"taskId": t, "text": "yes"}}}),
    )
    .await;
    let (is_error, payload) = tool_payload(&call);
    assert!(!is_error, "{payload}");
    assert_eq!(
        (payload["mode"].as_str(), payload["deduped"].as_bool()),
        (Some("continued"), Some(false))
    );
    let (_, call) = rpc(&s, Some(&s.admin.clone()), json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "reply_to_ask", "arguments": {"taskId": t, "text": "again, differently"}}})).await;
    let (is_error, payload) = tool_payload(&call);
    assert!(!is_error);
    assert_eq!(payload, json!({"no_pending": true, "taskId": t}));

    // A child created by the agent is derived from its task.
    let (_, call) = rpc(&s, Some(&token), json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "create_task", "arguments": {"title": "child", "agent": {"provider": "claude"}}}})).await;
    let (is_error, child) = tool_payload(&call);
    assert!(!is_error, "{child}");
    assert_eq!(child["parentTaskId"], t.as_str());
    let (_, call) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "get_task", "arguments": {"taskId": child["id"]}}}),
    )
    .await;
    assert!(!tool_payload(&call).0, "an agent may read its children");
    let (_, call) = rpc(
        &s,
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "get_task", "arguments": {"taskId": other}}}),
    )
    .await;
    assert!(tool_payload(&call).0, "but not unrelated tasks");
    s.shutdown().await;
}

/// Log lines of this test binary (a global subscriber writing to memory).
fn captured_logs() -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    use std::sync::{Arc, Mutex, OnceLock};
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        buf
    })
    .clone()
}

struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn mcp_refuses_missing_tokens_and_foreign_origins() {
    let logs = captured_logs();
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let (status, body) = rpc(&s, None, init.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["error"].is_string());
    let (status, _) = rpc(&s, Some("hxa_forged"), init.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(&s.admin)
        .header("Origin", "http://attacker.example")
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(
        text.lines()
            .any(|l| l.contains("refused request") && l.contains("path=\"/mcp\"")),
        "the refusal is logged with its real path: {text}"
    );
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(&s.admin)
        .header("Host", "rebound.example:80")
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::FORBIDDEN,
        "DNS rebinding: foreign Host refused"
    );
    s.shutdown().await;
}

/// Every transport-level rejection has a JSON body; malformed JSON is -32700;
/// a tools/call without a name or with non-object arguments is -32602; tool
/// results carry structuredContent and every tool an outputSchema.
#[tokio::test]
async fn transport_rejections_are_json_and_params_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let admin = s.admin.clone();
    let post = |body: &'static str, content_type: &'static str, accept: &'static str| {
        s.client
            .post(s.url("/mcp"))
            .bearer_auth(&admin)
            .header("Content-Type", content_type)
            .header("Accept", accept)
            .body(body)
            .send()
    };
    let both = "application/json, text/event-stream";
    // Malformed JSON → 400, JSON-RPC parse error.
    let (status, body) =
        common::decode(post("{not json", "application/json", both).await.unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(body["jsonrpc"], "2.0");
    // Wrong media type → 415 with a JSON body.
    let (status, body) = common::decode(post("{}", "text/plain", both).await.unwrap()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    // Not accepting JSON + SSE → 406 with a JSON body.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let (status, body) =
        common::decode(post(init, "application/json", "text/html").await.unwrap()).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    // GET (no server-initiated stream in stateless mode) → 405 with a JSON body.
    let resp = s
        .client
        .get(s.url("/mcp"))
        .bearer_auth(&admin)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let (status, body) = common::decode(resp).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    // tools/call params.
    for (id, params) in [
        (1, json!({"arguments": {}})),
        (2, json!({"name": "ask_human", "arguments": "question"})),
        (3, json!({"name": "ask_human", "arguments": [1]})),
    ] {
        let (status, body) = rpc(
            &s,
            Some(&admin),
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["error"]["code"], -32602, "{body}");
        assert_eq!(body["id"], id, "{body}");
    }
    // Results carry structuredContent; tools declare an outputSchema.
    let (_, list) = rpc(
        &s,
        Some(&admin),
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    )
    .await;
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
    }
    let t = s.task("structured").await;
    let (_, call) = rpc(
        &s,
        Some(&admin),
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "get_task", "arguments": {"taskId": t}}}),
    )
    .await;
    assert_eq!(
        call["result"]["structuredContent"]["id"],
        t.as_str(),
        "{call}"
    );
    let (_, text) = tool_payload(&call);
    assert_eq!(text, call["result"]["structuredContent"]);
    s.shutdown().await;
}
