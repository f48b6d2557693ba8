//! Restart durability and the reply race over real HTTP, on SQLite and
//! (the `_on_postgres` variants, `common::pg`) on PostgreSQL.

use crate::common;

use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn an_ask_survives_a_server_restart_and_is_answerable() {
    ask_survives_a_restart(None).await;
}

#[tokio::test]
async fn an_ask_survives_a_server_restart_and_is_answerable_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        ask_survives_a_restart(Some(&db.url)).await;
    }
}

/// A server whose agents die with it (holders off): what a reboot does to
/// held agents too. `holders.rs` covers agents that outlive their server.
async fn start_rebooted(dir: &std::path::Path, db: Option<&str>) -> common::Server {
    common::start_with(dir, |cfg| {
        cfg.database_url = db.map(str::to_string);
        cfg.holders.enabled = false;
    })
    .await
}

async fn ask_survives_a_restart(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let s = start_rebooted(dir.path(), db).await;
    let (_, task) = s
        .admin("POST", "/api/tasks", Some(json!({"title": "durable", "agent": {"provider": "command", "command": ["cat"], "cwd": "/tmp"}})))
        .await;
    let t = task["id"].as_str().unwrap().to_string();
    let (status, _) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, ask) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "Still there?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let admin = s.admin.clone();
    s.shutdown().await;

    let s = start_rebooted(dir.path(), db).await;
    assert_eq!(s.admin, admin, "the admin token is kept across restarts");
    let (_, pending) = s
        .admin(
            "GET",
            &format!("/api/internal/harness/pending?taskId={t}"),
            None,
        )
        .await;
    assert_eq!(pending["pending"], true);
    assert_eq!(pending["requestId"], ask["requestId"]);
    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "yes"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    // The agent died with the previous server (holders off, as after a
    // reboot: its execution was marked interrupted at start-up): the reply's delivery starts it again and
    // types it. `cat` draws nothing, so the restart waits for its screen
    // longer than the reply waits: the reply may answer `queued` first.
    let id = reply["deliveryId"]
        .as_str()
        .expect("a delivery row")
        .to_string();
    assert!(
        reply["mode"] == "started" || reply["delivery"] == "queued",
        "{reply}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, d) = s.admin("GET", &format!("/api/deliveries/{id}"), None).await;
        if d["state"] == "DELIVERED" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never delivered: {d}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (_, task) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(task["execution"]["status"], "RUNNING");
    let (_, screen) = s
        .admin("GET", &format!("/api/tasks/{t}/screen"), None)
        .await;
    assert!(
        screen["text"].as_str().unwrap().contains("Still there?"),
        "prefixed with the question: {screen}"
    );
    let (_, answered) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=answered&taskId={t}"),
            None,
        )
        .await;
    assert_eq!(answered["rows"][0]["replyText"], "yes");
    s.shutdown().await;
}

#[tokio::test]
async fn fifty_concurrent_http_replies_one_winner_one_resume() {
    fifty_replies(None).await;
}

#[tokio::test]
async fn fifty_concurrent_http_replies_one_winner_one_resume_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        fifty_replies(Some(&db.url)).await;
    }
}

async fn fifty_replies(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(dir.path(), db.map(str::to_string)).await;
    let t = s.task("race").await;
    s.running.harness.tasks().begin_execution(&t).await.unwrap();
    s.admin(
        "POST",
        "/api/internal/harness/ask",
        Some(json!({"taskId": t, "question": "q"})),
    )
    .await;
    let mut joins = Vec::new();
    for i in 0..50 {
        let client = s.client.clone();
        let url = s.url("/api/internal/harness/reply");
        let admin = s.admin.clone();
        let body = json!({"taskId": t, "text": format!("answer {}", i % 5), "allowRetry": false});
        joins.push(tokio::spawn(async move {
            common::decode(
                client
                    .post(url)
                    .bearer_auth(admin)
                    .json(&body)
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }));
    }
    let (mut won, mut deduped, mut conflict) = (0, 0, 0);
    for j in joins {
        let (status, body) = j.await.unwrap();
        match status {
            StatusCode::OK if body["deduped"] == false => {
                won += 1;
                assert_eq!(body["mode"], "continued");
            }
            StatusCode::OK => deduped += 1,
            StatusCode::CONFLICT => conflict += 1,
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(deduped, 9, "the winner's 9 duplicates");
    assert_eq!(conflict, 40);
    s.shutdown().await;
}
