//! docs/tower-messaging.md §10 cases of `route_gateway_message` not covered in
//! `gateway_routing.rs`, over real HTTP with the gateway token: a reply
//! binds the session of its own chat only (message ids are per chat, issue
//! 28 point 2); an explicit task id beats a thread session (#23); a task
//! reply's repeat is `already_processed` (#24); a chat with 50 QUEUED rows
//! is limited (#17); the OWNER is not held to a channel's scope while a
//! member is (#19), and a scope naming a project that is gone is
//! SCOPE_INVALID (#62/#69); an ambiguous identify (#21); NEW leaves the old
//! session ACTIVE (#41); the recovery re-creates a lost work / discussion
//! event (#47/#48).

use crate::common::{self, gateway::*};

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn route(s: &common::Server, token: &str, body: Value) -> Value {
    let (st, out) = s.call("POST", ROUTE, Some(token), Some(body)).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    out
}

/// Telegram message ids are unique only within a chat: a reply in chat B
/// to message id N is not bound to the project of chat A's session whose
/// delivered reply also had id N.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_binds_the_session_of_its_own_chat_only() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42", "43"]).await;
    let shop = project(&s, dir.path(), "shop").await;
    project(&s, dir.path(), "blog").await;
    let token = secret(dir.path(), "gateway.token");
    let out = route(
        &s,
        &token,
        with(
            message("a1", "PROJECT_DISCUSSION", "how is the cart?"),
            json!({"project": "shop"}),
        ),
    )
    .await;
    assert_eq!(out["resolution"], "explicit_project", "{out}");
    let inbound = out["inboundId"].as_str().unwrap().to_string();
    // Its acknowledgement went out as Telegram message 500 of chat -100.
    let n = exec(
        dir.path(),
        "UPDATE gateway_replies SET state = 'DELIVERED', platform_message_id = '500', \
         delivered_at = CAST(strftime('%s','now') AS INTEGER) * 1000, next_attempt_at = NULL \
         WHERE inbound_id = ?",
        &inbound,
    )
    .await;
    assert_eq!(n, 1);
    // Another OWNER (no recent project) replies to message 500 of chat -200.
    let other_chat = with(
        message("b1", "PROJECT_DISCUSSION", "and this?"),
        json!({"chatId": "-200", "senderId": "43", "replyToMessageId": "500"}),
    );
    let out = route(&s, &token, other_chat).await;
    assert_eq!(
        (&out["mode"], &out["reason"]),
        (&json!("needs_project_selection"), &json!("ambiguous")),
        "another chat's message 500 binds nothing: {out}"
    );
    // The same reply in chat -100 binds the session's project.
    let same_chat = with(
        message("a2", "PROJECT_DISCUSSION", "and this?"),
        json!({"senderId": "43", "replyToMessageId": "500"}),
    );
    let out = route(&s, &token, same_chat).await;
    assert_eq!(out["resolution"], "reply_message_binding", "{out}");
    assert_eq!(out["project"]["projectId"], shop.as_str());

    // relay_channel_reply: Telegram message 777 of chat -100 was task A's
    // push; in chat -200 the same id is not A's (the reply's own token is).
    let a = s.task("pushed in chat -100").await;
    let b = s.task("named in chat -200").await;
    let n = exec(
        dir.path(),
        "INSERT INTO harness_delivery_map (id, gateway, task_id, platform, chat_id, \
         platform_message_id, scope, expect_reply, created_at) \
         VALUES ('o-777', 'openclaw', ?, 'telegram', '-100', '777', 'work', 0, 0)",
        &a,
    )
    .await;
    assert_eq!(n, 1);
    for (chat, expected) in [("-200", &b), ("-100", &a)] {
        let (is_error, out) = tool(
            &s,
            &token,
            "relay_channel_reply",
            json!({"text": format!("ok go [[tower:task={b}]]"), "gateway": "openclaw",
                   "platform": "telegram", "chatId": chat, "platformMessageId": "777"}),
        )
        .await;
        assert!(!is_error, "{out}");
        assert_eq!(out["taskId"], expected.as_str(), "{chat}: {out}");
        assert_eq!(out["mode"], "task_context", "{out}");
    }
    s.shutdown().await;
}

/// #21 an ambiguous identify, #23 an explicit task id beats a thread
/// session, #24 a task reply's repeat, #41 NEW leaves the old session
/// ACTIVE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_ids_identify_and_new_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    project(&s, dir.path(), "blog engine").await;
    let site = project(&s, dir.path(), "blog site").await;
    let shop = project(&s, dir.path(), "shop").await;
    let token = secret(dir.path(), "gateway.token");
    let events = "SELECT count(*) FROM workbench_events WHERE ? <> ''";
    // #21: "blog" matches two projects → both offered, no Workbench event.
    let out = route(
        &s,
        &token,
        with(
            message("i1", "PROJECT_WORK", "fix the feed"),
            json!({"project": "blog"}),
        ),
    )
    .await;
    assert_eq!(
        (&out["mode"], &out["reason"]),
        (&json!("needs_project_selection"), &json!("ambiguous")),
        "{out}"
    );
    let names: Vec<&str> = out["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names.len(), 2, "{out}");
    assert!(names.contains(&"blog engine") && names.contains(&"blog site"));
    assert_eq!(exec(dir.path(), events, "x").await, 0);

    // A thread bound to "blog site".
    let out = route(
        &s,
        &token,
        with(
            message("i2", "PROJECT_DISCUSSION", "how is it?"),
            json!({"project": "blog site", "threadId": "th-7"}),
        ),
    )
    .await;
    assert_eq!(out["project"]["projectId"], site.as_str(), "{out}");
    let site_session = out["sessionId"].as_str().unwrap().to_string();
    // #23: an explicit task id in that thread → task_context, not the thread.
    let t = s.task("explicit").await;
    let out = route(
        &s,
        &token,
        with(
            message("i3", "PROJECT_WORK", "go on"),
            json!({"threadId": "th-7", "taskId": t}),
        ),
    )
    .await;
    assert_eq!(out["mode"], "task_context", "{out}");
    assert_eq!(out["taskId"], t.as_str());
    // #24: its repeat is already_processed, PROCESSED, no instructions.
    let again = route(
        &s,
        &token,
        with(
            message("i3", "PROJECT_WORK", "go on"),
            json!({"threadId": "th-7", "taskId": t}),
        ),
    )
    .await;
    assert_eq!(again["mode"], "already_processed", "{again}");
    assert_eq!(again["inboundId"], out["inboundId"]);
    assert_eq!(again["noOp"], true);
    assert!(again.get("instructions").is_none(), "{again}");
    let inbound = out["inboundId"].as_str().unwrap();
    assert_eq!(
        exec(
            dir.path(),
            "SELECT count(*) FROM gateway_inbound WHERE id = ? AND state = 'PROCESSED'",
            inbound
        )
        .await,
        1
    );
    // #41: NEW with another explicit project → a new session; the old one
    // stays ACTIVE (and still binds its thread).
    let out = route(
        &s,
        &token,
        with(
            message("i4", "PROJECT_WORK", "start the shop"),
            json!({"project": "shop", "threadId": "th-7", "sessionAction": "NEW"}),
        ),
    )
    .await;
    assert_eq!(out["resolution"], "explicit_project", "{out}");
    assert_eq!(out["project"]["projectId"], shop.as_str());
    assert_ne!(out["sessionId"], site_session.as_str());
    let (st, sessions) = s.admin("GET", "/api/gateway/sessions", None).await;
    assert_eq!(st, StatusCode::OK);
    let old = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == site_session.as_str())
        .unwrap_or_else(|| panic!("{sessions}"));
    assert_eq!(old["status"], "ACTIVE", "{old}");
    s.shutdown().await;
}

/// #17 a chat with 50 QUEUED rows is limited (`queue`, 120 s); #19 the
/// OWNER is not held to the channel's project scope, a member is; #62/#69
/// a scope naming a project that is gone is SCOPE_INVALID for members.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_limits_and_channel_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    let shop = project(&s, dir.path(), "shop").await;
    let blog = project(&s, dir.path(), "blog").await;
    let token = secret(dir.path(), "gateway.token");

    // #17: 50 QUEUED rows in chat -900 (from other senders; TOWER rows, which
    // the recovery leaves alone).
    let pool = pool(dir.path()).await;
    for i in 0..50 {
        sqlx::query(
            "INSERT INTO gateway_inbound (id, dedup_key, gateway, platform, chat_id, sender_id, \
             platform_message_id, intent, content, state, created_at, updated_at) \
             VALUES (?1, ?2, 'openclaw', 'telegram', '-900', ?3, ?4, 'TOWER', 'x', \
             'QUEUED', CAST(strftime('%s','now') AS INTEGER) * 1000 - 3600000, \
             CAST(strftime('%s','now') AS INTEGER) * 1000 - 3600000)",
        )
        .bind(format!("cq{i:022}"))
        .bind(format!("gateway-inbound:openclaw:telegram:-900:q{i}"))
        .bind(format!("s{i}"))
        .bind(format!("q{i}"))
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
    let out = route(
        &s,
        &token,
        with(
            message("q-new", "PROJECT_WORK", "one more"),
            json!({"chatId": "-900", "project": "shop"}),
        ),
    )
    .await;
    assert_eq!(
        (&out["mode"], &out["scope"], &out["retryAfterSeconds"]),
        (&json!("rate_limited"), &json!("queue"), &json!(120)),
        "{out}"
    );

    // #19: chat -100 authorised for the blog only.
    let key = json!(["openclaw", "telegram", "-100"]).to_string();
    let scoped = |ids: Value| {
        json!({"version": 1, "channels": {key.clone(): {"status": "AUTHORIZED",
            "scope": {"mode": "PROJECTS", "projectIds": ids}}}})
    };
    let store = s.running.harness.store();
    store
        .put_setting(
            "tower-agent.channel-access.v1",
            &scoped(json!([blog])),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let out = route(
        &s,
        &token,
        with(
            message("o1", "PROJECT_DISCUSSION", "the cart?"),
            json!({"project": "shop"}),
        ),
    )
    .await;
    assert_eq!(out["resolution"], "explicit_project", "OWNER: {out}");
    assert_eq!(out["project"]["projectId"], shop.as_str());
    let ask = |sender: &str| {
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
            "senderId": sender, "project": "shop", "question": "the cart?"})
    };
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(ask("7"))).await;
    assert_eq!(
        (&out["mode"], &out["reason"]),
        (&json!("needs_project_selection"), &json!("not_allowed")),
        "member: {out}"
    );
    // #62/#69: the scope names a project that is gone → SCOPE_INVALID for
    // members; the OWNER is still answered.
    store
        .put_setting(
            "tower-agent.channel-access.v1",
            &scoped(json!([blog, "cgone0000000000000000000"])),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(ask("7"))).await;
    assert_eq!(
        (&out["mode"], &out["reason"]),
        (&json!("channel_access_denied"), &json!("SCOPE_INVALID")),
        "{out}"
    );
    let (_, out) = s.call("POST", QUERY, Some(&token), Some(ask("42"))).await;
    assert_eq!(out["mode"], "project_query", "{out}");
    s.shutdown().await;
}

/// #47/#48: the recovery re-creates the Workbench event of a queued
/// request that went missing — the work request's work event, the
/// discussion's discussion event (and no work event for it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recovery_recreates_a_lost_workbench_event() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    owners(&s, "openclaw", &["42"]).await;
    project(&s, dir.path(), "shop").await;
    let token = secret(dir.path(), "gateway.token");
    let mut ids = Vec::new();
    for (pmid, intent, kind) in [
        ("w1", "PROJECT_WORK", "GATEWAY_WORK_REQUEST"),
        ("d1", "PROJECT_DISCUSSION", "GATEWAY_DISCUSSION_REQUEST"),
    ] {
        let out = route(
            &s,
            &token,
            with(
                message(pmid, intent, "the cart is slow"),
                json!({"project": "shop", "threadId": format!("th-{pmid}")}),
            ),
        )
        .await;
        assert_eq!(out["queued"], true, "{out}");
        ids.push((out["inboundId"].as_str().unwrap().to_string(), kind));
    }
    let of = |id: &str| {
        format!("SELECT count(*) FROM workbench_events WHERE dedup_key LIKE '%:{id}' AND ? = ''")
    };
    for (id, _) in &ids {
        assert_eq!(exec(dir.path(), &of(id), "").await, 1);
        let n = exec(
            dir.path(),
            &format!("DELETE FROM workbench_events WHERE dedup_key LIKE '%:{id}' AND ? = ''"),
            "",
        )
        .await;
        assert_eq!(n, 1);
    }
    s.running
        .harness
        .gateway()
        .recover_gateway_inbound(chrono::Utc::now())
        .await
        .unwrap();
    for (id, kind) in &ids {
        let sql = format!(
            "SELECT count(*) FROM workbench_events WHERE dedup_key LIKE '%:{id}' AND kind = ?"
        );
        assert_eq!(exec(dir.path(), &sql, kind).await, 1, "{kind} of {id}");
        assert_eq!(
            exec(dir.path(), &of(id), "").await,
            1,
            "only that event for {id}"
        );
    }
    s.shutdown().await;
}
