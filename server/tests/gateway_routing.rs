//! `route_gateway_message` and `route_gateway_query` over real HTTP (issue
//! 28): one action and one acknowledgement for a platform message however
//! often and concurrently it is delivered; the resolution order (task
//! binding, thread / chat-and-sender session, explicit project, identify,
//! recent project, channel default, candidates); sessions NEW / CLOSE and
//! their 7-day expiry; the query writes nothing; bad input → 400 naming the
//! field on every route and tool, nothing written.

use crate::common;

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::gateway::{
    QUERY, ROUTE, message, pool, project, row_counts, secret, tool, with,
};

/// OWNER 42 of OpenClaw on Telegram.
async fn owner(s: &common::Server) {
    common::gateway::owners(s, "openclaw", &["42"]).await;
}

/// A `SELECT count(*)` with one text bind.
async fn count(dir: &Path, sql: &str, bind: &str) -> i64 {
    common::gateway::exec(dir, sql, bind).await
}

/// The same platform message delivered 100 times at once: one inbound
/// row, one Workbench event, one acknowledgement; exactly one call acted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_deliveries_of_one_message_act_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = std::sync::Arc::new(common::start(dir.path()).await);
    owner(&s).await;
    project(&s, dir.path(), "shop").await;
    let token = secret(dir.path(), "gateway.token");
    let body = with(
        message("m-race", "PROJECT_WORK", "add a checkout page"),
        json!({"project": "shop"}),
    );
    let calls = (0..100).map(|_| {
        let (s, token, body) = (s.clone(), token.clone(), body.clone());
        tokio::spawn(async move { s.call("POST", ROUTE, Some(&token), Some(body)).await })
    });
    let mut acted = 0;
    let mut inbound = std::collections::HashSet::new();
    for call in calls {
        let (st, out) = call.await.unwrap();
        assert_eq!(st, StatusCode::OK, "{out}");
        inbound.insert(out["inboundId"].as_str().unwrap().to_string());
        if out["noOp"] == true {
            assert_eq!(out["deduped"], true, "{out}");
            assert!(
                out["mode"] == "in_progress" || out["mode"] == "already_processed",
                "{out}"
            );
        } else {
            acted += 1;
            assert_eq!(out["mode"], "project_work", "{out}");
            assert_eq!(out["queued"], true);
            assert!(out["sessionId"].is_string(), "{out}");
        }
    }
    assert_eq!(acted, 1, "exactly one delivery acted");
    assert_eq!(inbound.len(), 1, "{inbound:?}");
    let id = inbound.into_iter().next().unwrap();
    let q = |sql: &'static str| count(dir.path(), sql, &id);
    assert_eq!(
        q("SELECT count(*) FROM gateway_inbound WHERE id = ?").await,
        1
    );
    assert_eq!(
        q("SELECT count(*) FROM gateway_inbound WHERE state = 'QUEUED' AND id = ?").await,
        1
    );
    assert_eq!(
        q("SELECT count(*) FROM workbench_events WHERE dedup_key = 'gateway-work:' || ?").await,
        1,
        "one Workbench event"
    );
    assert_eq!(
        q("SELECT count(*) FROM gateway_replies WHERE inbound_id = ? AND kind = 'QUEUED_ACK'")
            .await,
        1,
        "one acknowledgement"
    );
    assert_eq!(
        count(
            dir.path(),
            "SELECT count(*) FROM gateway_inbound WHERE ? <> ''",
            "x"
        )
        .await,
        1
    );
    // A later repeat answers in_progress, QUEUED, with the original mode.
    let (_, again) = s.call("POST", ROUTE, Some(&token), Some(body)).await;
    assert_eq!(
        (&again["mode"], &again["state"], &again["originalMode"]),
        (
            &json!("in_progress"),
            &json!("QUEUED"),
            &json!("project_work")
        ),
        "{again}"
    );
    if let Ok(s) = std::sync::Arc::try_unwrap(s) {
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolution_order_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owner(&s).await;
    let shop = project(&s, dir.path(), "shop").await;
    let blog = project(&s, dir.path(), "blog engine").await;
    let token = secret(dir.path(), "gateway.token");
    let route = |body: Value| {
        let s = &s;
        let token = token.clone();
        async move {
            let (st, out) = s.call("POST", ROUTE, Some(&token), Some(body)).await;
            assert_eq!(st, StatusCode::OK, "{out}");
            out
        }
    };

    // DIRECT: answered, no row, repeatable.
    let before = row_counts(dir.path()).await;
    for _ in 0..2 {
        let out = route(message("d1", "DIRECT", "what is 2+2?")).await;
        assert_eq!(out["mode"], "direct_not_supported", "{out}");
        assert_eq!(out["inboundId"], Value::Null);
    }
    assert_eq!(
        row_counts(dir.path()).await,
        before,
        "DIRECT writes nothing"
    );
    // A non-OWNER: 403, nothing written.
    let mut stranger = message("x1", "TOWER", "hi");
    stranger["senderId"] = json!("7");
    let (st, out) = s.call("POST", ROUTE, Some(&token), Some(stranger)).await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{out}");
    assert_eq!(row_counts(dir.path()).await, before);

    // TOWER → tower_mcp; its repeat → already_processed without instructions.
    let out = route(message("t1", "TOWER", "status?")).await;
    assert_eq!(out["mode"], "tower_mcp", "{out}");
    let again = route(message("t1", "TOWER", "status?")).await;
    assert_eq!(again["mode"], "already_processed", "{again}");
    assert_eq!(again["inboundId"], out["inboundId"]);
    assert!(again.get("instructions").is_none());

    // No project, no session: candidates (two projects → ambiguous).
    let out = route(message("p0", "PROJECT_DISCUSSION", "how is it going?")).await;
    assert_eq!(out["mode"], "needs_project_selection", "{out}");
    assert_eq!(out["reason"], "ambiguous");
    assert_eq!(out["candidates"].as_array().unwrap().len(), 2);
    // Identified by words (one match), in a thread.
    let out = route(with(
        message("p1", "PROJECT_DISCUSSION", "how do posts render?"),
        json!({"project": "the blog", "threadId": "th-1"}),
    ))
    .await;
    assert_eq!(out["mode"], "project_discussion", "{out}");
    assert_eq!(out["resolution"], "identify_project");
    assert_eq!(out["project"]["projectId"], blog.as_str());
    let blog_session = out["sessionId"].as_str().unwrap().to_string();
    // The thread's session beats an explicit project.
    let out = route(with(
        message("p2", "PROJECT_WORK", "fix the typo"),
        json!({"project": "shop", "threadId": "th-1"}),
    ))
    .await;
    assert_eq!(out["resolution"], "thread_session_binding", "{out}");
    assert_eq!(out["project"]["projectId"], blog.as_str());
    assert_eq!(out["sessionId"], blog_session.as_str());
    // Explicit project without a thread; then the chat + sender session.
    let out = route(with(
        message("p3", "PROJECT_WORK", "add a cart"),
        json!({"project": "shop"}),
    ))
    .await;
    assert_eq!(out["resolution"], "explicit_project", "{out}");
    let shop_session = out["sessionId"].as_str().unwrap().to_string();
    let out = route(message("p4", "PROJECT_DISCUSSION", "and the prices?")).await;
    assert_eq!(out["resolution"], "thread_session_binding", "{out}");
    assert_eq!(out["project"]["projectId"], shop.as_str());
    assert_eq!(out["sessionId"], shop_session.as_str());
    // The same sender in another chat: the recent project.
    let out = route(with(
        message("p5", "PROJECT_DISCUSSION", "one more thing"),
        json!({"chatId": "-200"}),
    ))
    .await;
    assert_eq!(out["resolution"], "recent_user_project", "{out}");
    assert_eq!(out["project"]["projectId"], shop.as_str());
    // A task named by its token → task_context, never queued.
    let t = s.task("bound").await;
    let out = route(message(
        "p6",
        "PROJECT_WORK",
        &format!("continue [[tower:task={t}]]"),
    ))
    .await;
    assert_eq!(out["mode"], "task_context", "{out}");
    assert_eq!(out["taskId"], t.as_str());
    // …unless it explicitly asks for new work.
    let out = route(with(
        message(
            "p7",
            "PROJECT_WORK",
            &format!("create a new task like [[tower:task={t}]]"),
        ),
        json!({"project": "shop"}),
    ))
    .await;
    assert_eq!(out["mode"], "project_work", "{out}");

    // CLOSE ends the chat + sender session; then nothing binds.
    let out = route(with(
        message("c1", "TOWER", "done"),
        json!({"sessionAction": "CLOSE"}),
    ))
    .await;
    assert_eq!(out["mode"], "discussion_closed", "{out}");
    assert!(
        out["closedSessionIds"]
            .as_array()
            .unwrap()
            .contains(&json!(shop_session)),
        "{out}"
    );
    // (the other chat's session still gives the recent project: expire it)
    let pool = pool(dir.path()).await;
    sqlx::query("UPDATE gateway_sessions SET last_activity_at = last_activity_at - 8 * 86400000")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let out = route(message("c2", "PROJECT_DISCUSSION", "anything new?")).await;
    assert_eq!(
        out["mode"], "needs_project_selection",
        "older than 7 days: {out}"
    );
    // The chat's default project (docs/decisions.md D11), from harness.channelBindings.
    s.running
        .harness
        .store()
        .put_setting(
            "harness.channelBindings",
            &json!([{"platform": "telegram", "chatId": "-300", "defaultProjectId": blog}]),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let mut other = message("d9", "PROJECT_DISCUSSION", "hello");
    other["chatId"] = json!("telegram:-300");
    other["senderId"] = json!("telegram:42");
    let out = route(other).await;
    assert_eq!(out["resolution"], "channel_default_project", "{out}");
    assert_eq!(out["project"]["projectId"], blog.as_str());
    // NEW ignores the thread's session.
    let out = route(with(
        message("n1", "PROJECT_WORK", "start over"),
        json!({"project": "shop", "threadId": "th-1", "sessionAction": "NEW"}),
    ))
    .await;
    assert_eq!(out["resolution"], "explicit_project", "{out}");
    assert_ne!(out["sessionId"], blog_session.as_str());

    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_writes_nothing_and_needs_an_authorised_channel() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owner(&s).await;
    let shop = project(&s, dir.path(), "shop").await;
    project(&s, dir.path(), "blog").await;
    let token = secret(dir.path(), "gateway.token");
    let (st, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "checkout", "projectId": shop,
                "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{task}");
    let ask = |sender: &str| {
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
            "senderId": sender, "project": "shop", "question": "what is being built?"})
    };
    let before = row_counts(dir.path()).await;
    // A member of an unauthorised chat.
    let (st, out) = s.call("POST", QUERY, Some(&token), Some(ask("7"))).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(
        (&out["mode"], &out["reason"]),
        (
            &json!("channel_access_denied"),
            &json!("CHANNEL_UNAUTHORIZED")
        ),
        "{out}"
    );
    // The OWNER: every project.
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(ask("42"))).await;
    assert_eq!(out["mode"], "project_query", "{out}");
    assert_eq!(out["tasks"][0]["title"], "checkout");
    // The chat authorised for the blog only: the shop is not allowed.
    let store = s.running.harness.store();
    let key = json!(["openclaw", "telegram", "-100"]).to_string();
    let blog_only = |status: &str, ids: Value| {
        json!({"version": 1, "channels": {key.clone(): {"status": status,
            "scope": {"mode": "PROJECTS", "projectIds": ids}}}})
    };
    let blog = s.admin("GET", "/api/projects", None).await.1;
    let blog = blog
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "blog")
        .unwrap()["id"]
        .clone();
    store
        .put_setting(
            "tower-agent.channel-access.v1",
            &blog_only("AUTHORIZED", json!([blog])),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let before_member = row_counts(dir.path()).await;
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(ask("7"))).await;
    assert_eq!(
        (&out["mode"], &out["reason"]),
        (&json!("needs_project_selection"), &json!("not_allowed")),
        "{out}"
    );
    let mut any = ask("7");
    any.as_object_mut().unwrap().remove("project");
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(any)).await;
    // One project in scope is offered, not chosen (the reference's rule).
    assert_eq!(out["mode"], "needs_project_selection", "{out}");
    assert_eq!(out["candidates"][0]["name"], "blog", "{out}");
    assert_eq!(out["candidates"].as_array().unwrap().len(), 1, "{out}");
    let mut named = ask("7");
    named["project"] = json!("blog");
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(named)).await;
    assert_eq!(out["mode"], "project_query", "{out}");
    // Revoked: re-read on every call.
    store
        .put_setting(
            "tower-agent.channel-access.v1",
            &blog_only("REVOKED", json!([blog])),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let (is_error, out) = tool(&s, &token, "route_gateway_query", ask("7")).await;
    assert!(!is_error, "{out}");
    assert_eq!(out["reason"], "CHANNEL_REVOKED", "{out}");
    assert_eq!(
        row_counts(dir.path()).await,
        before_member,
        "queries write nothing"
    );
    let settings = |rows: &[(String, i64)]| {
        rows.iter()
            .filter(|(t, _)| t != "settings")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(settings(&row_counts(dir.path()).await), settings(&before));
    s.shutdown().await;
}

/// Bad input on both routes and both tools: 400 / a tool error naming the
/// field, and no row written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_names_the_field_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owner(&s).await;
    project(&s, dir.path(), "shop").await;
    let token = secret(dir.path(), "gateway.token");
    let before = row_counts(dir.path()).await;
    let base = message("b1", "PROJECT_WORK", "build");
    let mut cases: Vec<(&str, &str, Value)> = Vec::new();
    for (field, value) in [
        ("gateway", json!("slack")),
        ("gateway", Value::Null),
        ("platform", json!("")),
        ("chatId", Value::Null),
        ("platformMessageId", json!("   ")),
        ("senderId", json!("x".repeat(513))),
        ("chatName", json!("x".repeat(161))),
        ("threadId", json!("x".repeat(513))),
        ("quotedText", json!("x".repeat(16_001))),
        ("taskId", json!("nope")),
        ("project", json!("x".repeat(513))),
        ("intent", json!("CHAT")),
        ("intent", Value::Null),
        ("content", json!("")),
        ("content", json!("é".repeat(16_001))),
        ("sessionAction", json!("RESTART")),
    ] {
        let mut body = base.clone();
        body[field] = value;
        cases.push((ROUTE, field, body));
    }
    let q = json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
        "senderId": "42", "question": "what?"});
    for (field, value) in [
        ("gateway", json!("x")),
        ("platform", Value::Null),
        ("chatId", json!("")),
        ("project", json!("x".repeat(513))),
        ("question", json!("")),
        ("question", json!("x".repeat(8_001))),
    ] {
        let mut body = q.clone();
        body[field] = value;
        cases.push((QUERY, field, body));
    }
    for (path, field, body) in cases {
        let (st, out) = s.call("POST", path, Some(&token), Some(body.clone())).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{path} {field}: {out}");
        assert_eq!(out["field"], field, "{path}: {out}");
        assert!(out["error"].is_string(), "{out}");
        let name = if path == ROUTE {
            "route_gateway_message"
        } else {
            "route_gateway_query"
        };
        let (is_error, out) = tool(&s, &token, name, body).await;
        assert!(is_error, "{name} {field}: {out}");
        assert!(
            out["error"].as_str().is_some_and(|e| e.contains(field)),
            "the tool's error names {field}: {out}"
        );
    }
    // DIRECT through the tool: answered by the core, no row.
    let (is_error, _) = tool(
        &s,
        &token,
        "route_gateway_message",
        message("b2", "DIRECT", "hi"),
    )
    .await;
    assert!(
        !is_error,
        "the core answers direct_not_supported without a row"
    );
    assert_eq!(row_counts(dir.path()).await, before, "nothing was written");
    s.shutdown().await;
}

/// 30 messages a minute from one sender in one chat; the 31st is limited —
/// counted on normalised ids, so another spelling of the chat or the
/// platform does not escape it (docs/decisions.md D11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sender_is_rate_limited_whatever_the_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owner(&s).await;
    let token = secret(dir.path(), "gateway.token");
    for i in 0..30 {
        let mut m = message(&format!("r{i}"), "TOWER", "status?");
        m["chatId"] = json!(if i % 2 == 0 { "-500" } else { "telegram:-500" });
        if i % 3 == 0 {
            m["platform"] = json!("Telegram");
        }
        let (st, out) = s.call("POST", ROUTE, Some(&token), Some(m)).await;
        assert_eq!(st, StatusCode::OK, "{out}");
        assert_eq!(out["mode"], "tower_mcp", "{i}: {out}");
    }
    let mut m = message("r30", "TOWER", "status?");
    m["chatId"] = json!("TELEGRAM:-500");
    let (_, out) = s.call("POST", ROUTE, Some(&token), Some(m.clone())).await;
    assert_eq!(
        (&out["mode"], &out["scope"], &out["retryAfterSeconds"]),
        (&json!("rate_limited"), &json!("sender"), &json!(60)),
        "{out}"
    );
    // Recorded (PROCESSED): its repeat is a no-op, not a second count.
    let (_, again) = s.call("POST", ROUTE, Some(&token), Some(m)).await;
    assert_eq!(again["mode"], "already_processed", "{again}");
    // Another chat of the same sender is not limited.
    let mut other = message("r31", "TOWER", "status?");
    other["chatId"] = json!("-501");
    let (_, out) = s.call("POST", ROUTE, Some(&token), Some(other)).await;
    assert_eq!(out["mode"], "tower_mcp", "{out}");
    s.shutdown().await;
}
