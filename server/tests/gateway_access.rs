//! `manage_gateway_channel_access` over real HTTP (docs/tower-messaging.md §4.4,
//! docs/tower-messaging.md §5.10, docs/tower-messaging.md §8.8): the OWNER authorises, binds, revokes a chat by one of its
//! routed messages; `route_gateway_query` follows at once; once per
//! message; the chat's records on `GET /api/gateway/channels`; bad input
//! names the field and changes nothing.

use crate::common;

use std::path::Path;

use chrono::Utc;
use harness_core::store::{InboundIntent, NewInbound};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ROUTE: &str = "/api/internal/harness/gateway";
const ACCESS: &str = "/api/internal/harness/gateway-access";
const QUERY: &str = "/api/internal/harness/gateway-query";
const KEY: &str = "tower-agent.channel-access.v1";

fn token(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("secrets").join("gateway.token"))
        .unwrap()
        .trim()
        .to_string()
}

async fn setup(s: &common::Server, dir: &Path) {
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"accessPolicy": {"ownerIds": {"telegram": ["42"]}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    for name in ["shop", "blog"] {
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        let (st, out) = s
            .admin(
                "POST",
                "/api/projects",
                Some(json!({"name": name, "path": path})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{out}");
    }
}

/// The OWNER's TOWER message in chat -100: its inbound id.
async fn owner_message(s: &common::Server, token: &str, pmid: &str) -> String {
    let (st, out) = s
        .call(
            "POST",
            ROUTE,
            Some(token),
            Some(
                json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
                "platformMessageId": pmid, "senderId": "42", "intent": "TOWER",
                "content": "let this group ask about the shop"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["mode"], "tower_mcp", "{out}");
    out["inboundId"].as_str().unwrap().to_string()
}

async fn member_asks(s: &common::Server, token: &str, project: &str) -> Value {
    let (st, out) = s
        .call(
            "POST",
            QUERY,
            Some(token),
            Some(
                json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
                "senderId": "7", "project": project, "question": "what is going on?"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    out
}

async fn tool(s: &common::Server, token: &str, args: Value) -> (bool, Value) {
    let resp = s
        .client
        .post(s.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "manage_gateway_channel_access", "arguments": args}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let out: Value = resp.json().await.unwrap();
    let text = out["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"));
    (
        out["result"]["isError"].as_bool().unwrap_or(false),
        serde_json::from_str(text).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_authorises_binds_and_revokes_a_chat_once_per_message() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    setup(&s, dir.path()).await;
    let token = token(dir.path());
    assert_eq!(
        member_asks(&s, &token, "shop").await["reason"],
        "CHANNEL_UNAUTHORIZED"
    );

    let m1 = owner_message(&s, &token, "a1").await;
    let (st, got) = s
        .call(
            "POST",
            ACCESS,
            Some(&token),
            Some(json!({"action": "get", "gatewayInboundId": m1})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{got}");
    assert!(got["record"].is_null(), "{got}");
    let (st, out) = s
        .call(
            "POST",
            ACCESS,
            Some(&token),
            Some(json!({"action": "bind_projects", "gatewayInboundId": m1,
                "projects": ["SHOP"], "chatName": "team"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["deduped"], false, "{out}");
    let record = &out["record"];
    assert_eq!(record["status"], "AUTHORIZED", "{out}");
    assert_eq!(record["scope"]["mode"], "PROJECTS", "{out}");
    assert_eq!(record["projects"][0]["name"], "shop", "{out}");
    assert_eq!(record["scopeValid"], true, "{out}");
    assert_eq!(record["chatName"], "team", "{out}");
    assert_eq!(record["authorizedBy"], "telegram:42", "{out}");
    assert_eq!(
        member_asks(&s, &token, "shop").await["mode"],
        "project_query"
    );
    let blog = member_asks(&s, &token, "blog").await;
    assert_eq!(blog["mode"], "needs_project_selection", "{blog}");

    // The same message again, another action: the first's answer.
    let (is_error, again) = tool(
        &s,
        &token,
        json!({"action": "revoke", "gatewayInboundId": m1}),
    )
    .await;
    assert!(!is_error, "{again}");
    assert_eq!(again["deduped"], true, "{again}");
    assert_eq!(again["record"]["status"], "AUTHORIZED", "{again}");

    // Another message: authorize (every project), then revoke.
    let m2 = owner_message(&s, &token, "a2").await;
    let (is_error, out) = tool(
        &s,
        &token,
        json!({"action": "authorize", "gatewayInboundId": m2}),
    )
    .await;
    assert!(!is_error, "{out}");
    assert_eq!(out["record"]["scope"]["mode"], "ALL", "{out}");
    assert_eq!(out["record"]["revision"], 2, "{out}");
    assert_eq!(
        member_asks(&s, &token, "blog").await["mode"],
        "project_query"
    );
    let m3 = owner_message(&s, &token, "a3").await;
    let (st, out) = s
        .call(
            "POST",
            ACCESS,
            Some(&token),
            Some(json!({"action": "revoke", "gatewayInboundId": m3})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["record"]["status"], "REVOKED", "{out}");
    assert_eq!(out["record"]["revokedBy"], "telegram:42", "{out}");
    assert_eq!(
        member_asks(&s, &token, "shop").await["reason"],
        "CHANNEL_REVOKED"
    );

    // The gateway page's list.
    let (st, list) = s.admin("GET", "/api/gateway/channels", None).await;
    assert_eq!(st, StatusCode::OK, "{list}");
    let channels = list["channels"].as_array().unwrap();
    assert_eq!(channels.len(), 1, "{list}");
    assert_eq!(channels[0]["status"], "REVOKED", "{list}");
    assert_eq!(channels[0]["chatId"], "-100", "{list}");
    assert_eq!(
        list["owners"]["openclaw"]["telegram"],
        json!(["42"]),
        "{list}"
    );
    assert_eq!(list["version"], 3, "{list}");
    // Not the gateway's to read.
    let (st, _) = s
        .call("GET", "/api/gateway/channels", Some(&token), None)
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_names_the_field_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    setup(&s, dir.path()).await;
    let token = token(dir.path());
    let m1 = owner_message(&s, &token, "b1").await;
    let base = json!({"action": "bind_projects", "gatewayInboundId": m1, "projects": ["shop"]});
    let mut cases: Vec<(&str, Value)> = Vec::new();
    for (field, value) in [
        ("action", json!("grant")),
        ("action", Value::Null),
        ("gatewayInboundId", Value::Null),
        ("gatewayInboundId", json!("not an id")),
        ("projects", json!([])),
        ("projects", json!(["nope"])),
        ("projects", json!([""])),
        ("projects", json!(vec!["shop"; 51])),
        ("chatName", json!("x".repeat(161))),
    ] {
        let mut body = base.clone();
        body[field] = value;
        cases.push((field, body));
    }
    cases.push((
        "workspace",
        json!({"action": "bind_workspace", "gatewayInboundId": m1}),
    ));
    cases.push((
        "workspace",
        json!({"action": "bind_workspace", "gatewayInboundId": m1, "workspace": "nowhere"}),
    ));
    for (field, body) in cases {
        let (st, out) = s
            .call("POST", ACCESS, Some(&token), Some(body.clone()))
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{field}: {out}");
        assert_eq!(out["field"], field, "{out}");
        let (is_error, out) = tool(&s, &token, body).await;
        assert!(is_error, "{field}: {out}");
        assert!(
            out["error"].as_str().is_some_and(|e| e.contains(field)),
            "the tool's error names {field}: {out}"
        );
    }
    // An unknown inbound message: 404; a message of someone not the OWNER: 403.
    let (st, out) = s
        .call(
            "POST",
            ACCESS,
            Some(&token),
            Some(json!({"action": "authorize", "gatewayInboundId": harness_core::ids::new_id()})),
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{out}");
    let (member, _) = s
        .running
        .harness
        .store()
        .create_inbound(NewInbound {
            id: harness_core::ids::new_id(),
            dedup_key: "gateway-inbound:openclaw:telegram:-100:m7".into(),
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: "-100".into(),
            sender_id: Some("7".into()),
            platform_message_id: "m7".into(),
            thread_id: None,
            root_message_id: None,
            reply_to_message_id: None,
            intent: InboundIntent::Tower,
            content: "let me in".into(),
            now: Utc::now(),
        })
        .await
        .unwrap();
    let (st, out) = s
        .call(
            "POST",
            ACCESS,
            Some(&token),
            Some(json!({"action": "authorize", "gatewayInboundId": member.id})),
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{out}");
    // An agent's credential is refused.
    let task = s.task("an agent").await;
    let (_, agent) = s
        .running
        .harness
        .tasks()
        .begin_execution(&task)
        .await
        .unwrap();
    let (st, _) = s
        .call(
            "POST",
            ACCESS,
            Some(&agent),
            Some(json!({"action": "authorize", "gatewayInboundId": m1})),
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let stored = s.running.harness.store().get_setting(KEY).await.unwrap();
    assert!(stored.is_none(), "nothing written: {stored:?}");
    assert_eq!(
        member_asks(&s, &token, "shop").await["reason"],
        "CHANNEL_UNAUTHORIZED"
    );
    s.shutdown().await;
}
