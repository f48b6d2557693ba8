//! REST status codes and bodies over real HTTP.

use crate::common;

use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn health_and_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    assert_eq!(
        s.call("GET", "/healthz", None, None).await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
    let (status, body) = s.call("GET", "/api/tasks", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["error"].is_string());
    let (status, _) = s.call("GET", "/api/tasks", Some("wrong"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = s.admin("GET", "/api/nope", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "no such API endpoint");
    s.shutdown().await;
}

#[tokio::test]
async fn projects_and_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let web_dir = tempfile::tempdir().unwrap();
    let web = web_dir.path().display().to_string();
    let (status, p) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "web", "path": web, "workspace": "acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{p}");
    assert_eq!(
        (p["name"].as_str(), p["workspace"].as_str()),
        (Some("web"), Some("acme"))
    );
    let (status, _) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "web", "path": web, "workspace": "acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, body) = s
        .admin("POST", "/api/projects", Some(json!({"path": web})))
        .await;
    assert_eq!(
        (status, body["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("name"))
    );
    // a path that does not exist, or with a NUL, is a
    // field error.
    for path in ["/no/such/harness/project", "/tmp\u{0}/x"] {
        let (status, body) = s
            .admin(
                "POST",
                "/api/projects",
                Some(json!({"name": "ghost", "path": path})),
            )
            .await;
        assert_eq!(
            (status, body["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("path")),
            "{path:?}: {body}"
        );
    }
    let (_, list) = s.admin("GET", "/api/projects", None).await;
    assert_eq!(list.as_array().unwrap().len(), 1);

    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(
                json!({"title": "Build it", "projectId": p["id"], "agent": {"provider": "codex"}}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    assert_eq!(t["status"], "TODO");
    assert_eq!(t["unattended"], false);
    assert_eq!(t["execution"], serde_json::Value::Null);
    assert_eq!(t["agent"]["provider"], "codex");
    let id = t["id"].as_str().unwrap();
    assert!(id.starts_with('c') && id.len() == 25);
    let (status, got) = s.admin("GET", &format!("/api/tasks/{id}"), None).await;
    assert_eq!(
        (status, got["title"].as_str()),
        (StatusCode::OK, Some("Build it"))
    );
    let (status, body) = s.admin("GET", "/api/tasks/not-a-cuid", None).await;
    assert_eq!(
        (status, body["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("taskId"))
    );
    let missing = harness_core::ids::new_id();
    let (status, _) = s.admin("GET", &format!("/api/tasks/{missing}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    for (body, field) in [
        (json!({}), "title"),
        (json!({"title": ""}), "title"),
        (json!({"title": 5}), "title"),
        (
            json!({"title": "x", "agent": {"provider": "gpt"}}),
            "agent.provider",
        ),
        (
            json!({"title": "x", "agent": {"provider": "command"}}),
            "agent.command",
        ),
        (json!({"title": "x", "projectId": missing}), "projectId"),
        (json!({"title": "x", "parentTaskId": "bad"}), "parentTaskId"),
    ] {
        let (status, resp) = s.admin("POST", "/api/tasks", Some(body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} → {resp}");
        assert_eq!(resp["field"].as_str(), Some(field), "{body} → {resp}");
    }
    // The project's directory was removed after registration: a clear
    // error, nothing started.
    std::fs::remove_dir(web_dir.path()).unwrap();
    let (status, body) = s
        .admin("POST", &format!("/api/tasks/{id}/start"), None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["field"].as_str(), Some("agent.cwd"), "{body}");
    let (_, task) = s.admin("GET", &format!("/api/tasks/{id}"), None).await;
    assert!(
        task["execution"].is_null(),
        "no execution row for a refused start"
    );
    let (_, list) = s.admin("GET", "/api/tasks", None).await;
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "rejected bodies wrote nothing"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn internal_harness_api_matches_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("Ask me").await;
    let (exec, agent_token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();

    // ask
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "Which DB?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["noChannelConfigured"], true);
    let request_id = body["requestId"].as_str().unwrap().to_string();
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "PAUSED");
    assert_eq!(task["execution"]["id"], exec.id.as_str());
    assert_eq!(task["openAsk"], true);
    for (body, status, error) in [
        (json!({"question": "q"}), 400, "taskId required"),
        (
            json!({"taskId": "nope", "question": "q"}),
            400,
            "Invalid taskId format — expected CUID",
        ),
        (json!({"taskId": t}), 400, "question required"),
        (
            json!({"taskId": harness_core::ids::new_id(), "question": "q"}),
            404,
            "Task not found",
        ),
        (
            json!({"taskId": t, "question": "x".repeat(4001)}),
            400,
            "question too long: 4001 characters, at most 4000",
        ),
    ] {
        let (got, resp) = s
            .admin("POST", "/api/internal/harness/ask", Some(body))
            .await;
        assert_eq!(
            (got.as_u16(), resp["error"].as_str()),
            (status, Some(error))
        );
    }
    let resp = s
        .client
        .post(s.url("/api/internal/harness/ask"))
        .bearer_auth(&s.admin)
        .body("{not json")
        .send()
        .await
        .unwrap();
    let (status, body) = common::decode(resp).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().starts_with("Invalid JSON"));

    // pending (agent token, own task by default)
    let (status, body) = s
        .call(
            "GET",
            "/api/internal/harness/pending",
            Some(&agent_token),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"taskId": t, "pending": true, "requestId": request_id, "question": "Which DB?"})
    );
    let (status, _) = s
        .admin("GET", "/api/internal/harness/pending?taskId=bad", None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // reply
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t})),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("text required"))
    );
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "sqlite"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["mode"].as_str(), body["deduped"].as_bool()),
        (Some("continued"), Some(false))
    );
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "RUNNING");
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "sqlite"})),
        )
        .await;
    assert_eq!(
        (status, body["deduped"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "other"})),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            StatusCode::CONFLICT,
            json!({"error": "No open ask for this task"})
        )
    );

    // notify
    let (status, body) = s
        .call(
            "POST",
            "/api/internal/harness/notify",
            Some(&agent_token),
            Some(json!({"message": "halfway"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["messageId"].is_string());
    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/notify",
            Some(json!({"taskId": t})),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("message required"))
    );

    // messages list
    let (status, page) = s
        .admin("GET", "/api/harness/messages?view=all&limit=1", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["rows"].as_array().unwrap().len(), 1);
    assert_eq!(page["rows"][0]["kind"], "notify");
    let cursor = page["nextCursor"].as_str().unwrap();
    let (_, page2) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&limit=10&cursor={cursor}"),
            None,
        )
        .await;
    assert_eq!(page2["rows"][0]["id"], request_id.as_str());
    assert_eq!(page2["rows"][0]["replyText"], "sqlite");
    assert!(page2["nextCursor"].is_null());
    for q in [
        "view=bogus",
        "limit=0",
        "limit=501",
        "limit=x",
        "cursor=zzz",
        "taskId=bad",
    ] {
        let (status, body) = s
            .admin("GET", &format!("/api/harness/messages?{q}"), None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{q}: {body}");
        assert!(body["field"].is_string(), "{q}: {body}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn agent_tokens_act_only_on_their_own_task() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let mine = s.task("mine").await;
    let other = s.task("other").await;
    let (_, token) = s
        .running
        .harness
        .tasks()
        .begin_execution(&mine)
        .await
        .unwrap();
    let (status, body) = s
        .call(
            "POST",
            "/api/internal/harness/ask",
            Some(&token),
            Some(json!({"question": "own task by default"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = s
        .call(
            "POST",
            "/api/internal/harness/ask",
            Some(&token),
            Some(json!({"taskId": other, "question": "q"})),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("Task boundary mismatch"),
        "{body}"
    );
    let (status, _) = s.call("GET", "/api/tasks", Some(&token), None).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "agent tokens are not admin tokens"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn ignore_and_dismiss_through_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("t").await;
    let (_, ask) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "q"})),
        )
        .await;
    let (_, note) = s
        .admin(
            "POST",
            "/api/internal/harness/notify",
            Some(json!({"taskId": t, "message": "m"})),
        )
        .await;
    let ask_id = ask["requestId"].as_str().unwrap();
    let note_id = note["messageId"].as_str().unwrap();
    let (status, _) = s
        .admin("DELETE", &format!("/api/harness/messages/{ask_id}"), None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, body) = s
        .admin(
            "POST",
            &format!("/api/harness/messages/{ask_id}/ignore"),
            None,
        )
        .await;
    assert_eq!(
        (status, body["state"].as_str()),
        (StatusCode::OK, Some("IGNORED"))
    );
    let (status, _) = s
        .admin("DELETE", &format!("/api/harness/messages/{note_id}"), None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = s
        .admin("DELETE", &format!("/api/harness/messages/{note_id}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    s.shutdown().await;
}

#[tokio::test]
async fn notify_targets_settings_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (status, body) = s.admin("GET", "/api/settings/notify-targets", None).await;
    assert_eq!((status, body), (StatusCode::OK, json!([])));
    let target = json!({"label": "me", "gateway": "openclaw", "downstream": "feishu", "dest": "chat:oc_1", "scope": "unattended", "active": true});
    let (status, body) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [target]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [{"gateway": "smtp"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let t = s.task("t").await;
    let (_, ask) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "q"})),
        )
        .await;
    assert_eq!(ask["noChannelConfigured"], false);
    s.shutdown().await;
}

#[tokio::test]
async fn server_functions_refuse_cross_origin_calls() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let resp = s
        .client
        .post(s.url("/sfn/reply_ask"))
        .header("Origin", "http://evil.example")
        .form(&[
            ("task_id", harness_core::ids::new_id()),
            ("text", "x".into()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = s
        .client
        .post(s.url("/sfn/overview"))
        .header("Origin", s.base.clone())
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test]
async fn a_network_bind_requires_a_browser_login() {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut cfg =
        harness_server::ServeConfig::new(listener.local_addr().unwrap(), dir.path().to_path_buf());
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    let running = harness_server::launch(cfg, listener).await.unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = client.get(format!("{base}/harness")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/login?next=%2Fharness");
    let resp = client
        .post(format!("{base}/sfn/overview"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let resp = client
        .post(format!("{base}/login"))
        .header("Origin", &base)
        .form(&[("token", "wrong")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let resp = client
        .post(format!("{base}/login"))
        .header("Origin", &base)
        .form(&[("token", running.admin_token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let session = cookie.split(';').next().unwrap().to_string();
    let resp = client
        .get(format!("{base}/harness"))
        .header("Cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // The API keeps its own credentials; health stays public.
    assert_eq!(
        client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        client
            .get(format!("{base}/api/tasks"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::UNAUTHORIZED
    );
    running.shutdown().await.unwrap();
}

/// The schema's invariants (one live execution, one OPEN ask per task) hold
/// whoever writes: two servers (two processes' worth of writers and
/// in-process locks) on one database race to start the same tasks and to
/// ask on them. Every answer is 200 or 409, never a 5xx, and the database
/// ends with at most one live execution and exactly one OPEN ask per task.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn schema_invariants_hold_under_concurrent_requests_from_two_servers() {
    let dir = tempfile::tempdir().unwrap();
    let a = common::start(&dir.path().join("a")).await;
    let shared = format!("sqlite://{}", dir.path().join("a/harness.db").display());
    let b = common::start_on(&dir.path().join("b"), Some(shared)).await;
    // One data directory holds one server: a second one there is refused.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cfg =
        harness_server::ServeConfig::new(listener.local_addr().unwrap(), dir.path().join("a"));
    let refused = harness_server::launch(cfg, listener).await.err().unwrap();
    assert!(refused.to_string().contains("stop it first"), "{refused}");
    let mut tasks = Vec::new();
    for i in 0..6 {
        let (status, t) = a
            .admin(
                "POST",
                "/api/tasks",
                Some(
                    json!({"title": format!("race {i}"), "agent": {"provider": "command",
                    "command": ["sh", "-c", "sleep 60"], "cwd": std::env::temp_dir()}}),
                ),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{t}");
        tasks.push(t["id"].as_str().unwrap().to_string());
    }
    let servers = [&a, &b];
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(tasks.len() * 4 + tasks.len() * 8));
    let mut starts = Vec::new();
    let mut asks = Vec::new();
    for t in &tasks {
        for i in 0..4 {
            let s = servers[i % 2];
            let (client, url, admin) = (
                s.client.clone(),
                s.url(&format!("/api/tasks/{t}/start")),
                s.admin.clone(),
            );
            let barrier = barrier.clone();
            starts.push(tokio::spawn(async move {
                barrier.wait().await;
                let resp = client.post(url).bearer_auth(admin).send().await.unwrap();
                common::decode(resp).await
            }));
        }
        for i in 0..8 {
            let s = servers[i % 2];
            let (client, url, admin) = (
                s.client.clone(),
                s.url("/api/internal/harness/ask"),
                s.admin.clone(),
            );
            let body = json!({"taskId": t, "question": format!("q{i}?")});
            let barrier = barrier.clone();
            asks.push(tokio::spawn(async move {
                barrier.wait().await;
                let resp = client
                    .post(url)
                    .bearer_auth(admin)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                common::decode(resp).await
            }));
        }
    }
    let mut started = 0;
    for j in starts {
        let (status, body) = j.await.unwrap();
        assert!(
            status == StatusCode::OK || status == StatusCode::CONFLICT,
            "start: {status} {body}"
        );
        if status == StatusCode::CONFLICT {
            assert!(body["error"].is_string(), "{body}");
        } else {
            started += 1;
        }
    }
    assert!(started >= tasks.len(), "every task started at least once");
    for j in asks {
        let (status, body) = j.await.unwrap();
        assert_eq!(status, StatusCode::OK, "ask: {body}");
    }
    let url = format!(
        "sqlite://{}?mode=ro",
        dir.path().join("a/harness.db").display()
    );
    let db = sqlx::SqlitePool::connect(&url).await.unwrap();
    for t in &tasks {
        let live: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM executions WHERE task_id = ? AND status IN ('RUNNING', 'PAUSED')",
        )
        .bind(t)
        .fetch_one(&db)
        .await
        .unwrap();
        assert!(live <= 1, "task {t} has {live} live executions");
        let open: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM harness_messages WHERE task_id = ? AND kind = 'ask' AND state = 'OPEN'",
        )
        .bind(t)
        .fetch_one(&db)
        .await
        .unwrap();
        assert_eq!(open, 1, "task {t}");
    }
    db.close().await;
    b.shutdown().await;
    a.shutdown().await;
}
