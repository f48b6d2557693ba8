//! The one "waits for you" count (`Reports::waiting`): open questions +
//! approvals + agents that need a person. Through a real server and a
//! real PTY: an unattended agent that exits 3 is counted by
//! `GET /api/waiting`, by the UI's own count (the badge, the tab title and
//! the phone menu: `/sfn/waiting_count`, and the server-rendered page) and
//! listed by `/harness`' "needs you"; a person taking the task over (no
//! longer unattended) takes it out of them all.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{self, Server};

async fn waiting(s: &Server) -> Value {
    let (st, w) = s.admin("GET", "/api/waiting", None).await;
    assert_eq!(st, StatusCode::OK, "{w}");
    w
}

/// Waits (≤ 20 s) until the task's agent state is `exited`.
async fn exited(s: &Server, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (st, t) = s.admin("GET", &format!("/api/tasks/{id}"), None).await;
        assert_eq!(st, StatusCode::OK, "{t}");
        if t["agentState"]["state"] == "exited" {
            assert_eq!(t["agentState"]["exitCode"], 3, "{t}");
            return;
        }
        assert!(Instant::now() < deadline, "{id} never exited: {t}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An unattended channel (unattended mode needs one; its sends stay
/// queued: nothing is pushed here anyway).
async fn channel(s: &Server, dir: &Path) {
    common::outbox::unattended_channel(s, &dir.join("sent.jsonl")).await;
}

async fn unattended(s: &Server, id: &str, on: bool) {
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{id}/unattended"),
            Some(json!({"on": on})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

/// A server function called as the page calls it (a browser session).
async fn sfn(s: &Server, cookie: &str, name: &str) -> Value {
    let resp = s
        .client
        .post(s.url(&format!("/sfn/{name}")))
        .header("Origin", s.base.clone())
        .header("Cookie", cookie)
        .form(&Vec::<(String, String)>::new())
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert!(status.is_success(), "{name}: {status} {text}");
    serde_json::from_str(&text).unwrap()
}

/// The server-rendered `/harness` page.
async fn harness_page(s: &Server, cookie: &str) -> String {
    let resp = s
        .client
        .get(s.url("/harness"))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_waiting_count_includes_an_agent_that_needs_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(&dir.path().join("data"), |cfg| {
        cfg.holders.enabled = false;
    })
    .await;
    let cookie = s.session().await;
    assert_eq!(
        waiting(&s).await,
        json!({"total": 0, "questions": 0, "approvals": 0, "agents": 0})
    );

    // Two agents that fail; one of their tasks is unattended once its
    // state is recorded (set before, the automatic recovery would restart
    // it).
    channel(&s, dir.path()).await;
    let mut ids = Vec::new();
    for title in ["boom", "watched"] {
        let (st, t) = s
            .admin(
                "POST",
                "/api/tasks",
                Some(json!({"title": title, "agent": {"provider": "command",
                    "command": ["sh", "-c", "echo 'Error: boom'; sleep 1; exit 3"],
                    "cwd": std::env::temp_dir()}})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{t}");
        let id = t["id"].as_str().unwrap().to_string();
        let (st, out) = s
            .admin("POST", &format!("/api/tasks/{id}/start"), None)
            .await;
        assert_eq!(st, StatusCode::OK, "{out}");
        ids.push(id);
    }
    let (boom, watched) = (&ids[0], &ids[1]);
    for id in [boom, watched] {
        exited(&s, id).await;
    }
    assert_eq!(
        waiting(&s).await["agents"],
        0,
        "attended failures wait for nobody"
    );
    unattended(&s, boom, true).await;
    // A question of a third task.
    let asking = s.task("asking").await;
    let (st, out) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": asking, "question": "Postgres or SQLite?"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");

    // Only the unattended failure counts, with the question.
    assert_eq!(
        waiting(&s).await,
        json!({"total": 2, "questions": 1, "approvals": 0, "agents": 1})
    );

    // The UI's count is the same number, and its list names the agent.
    assert_eq!(sfn(&s, &cookie, "waiting_count").await, json!(2));
    let listed = sfn(&s, &cookie, "agents_needing_you").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["task_id"], boom.as_str());
    assert_eq!(listed[0]["state"], "exited");
    assert_eq!(listed[0]["label"], "exited 3");
    assert_eq!(listed[0]["severity"], "bad");
    // The task list marks it, and only it.
    let rows = sfn(&s, &cookie, "tasks").await;
    for row in rows.as_array().unwrap() {
        let marked = row["agent_state"]["needs_you"] == true;
        assert_eq!(marked, row["id"] == boom.as_str(), "{row}");
    }
    // The server-rendered page: the badge, the title and the section.
    let html = harness_page(&s, &cookie).await;
    assert!(
        html.contains("<title>(2) Inbox — Harness</title>"),
        "{html}"
    );
    assert!(
        html.contains(r#"id="nav-pending" data-count="2""#),
        "the badge: {html}"
    );
    assert!(
        html.contains(&format!(r#"<li data-task-id="{boom}">"#)),
        "needs you lists the agent: {html}"
    );

    // A person takes the task over: the agent no longer needs one.
    unattended(&s, boom, false).await;
    assert_eq!(
        waiting(&s).await,
        json!({"total": 1, "questions": 1, "approvals": 0, "agents": 0})
    );
    assert_eq!(sfn(&s, &cookie, "waiting_count").await, json!(1));
    assert_eq!(sfn(&s, &cookie, "agents_needing_you").await, json!([]));
    s.shutdown().await;
}
