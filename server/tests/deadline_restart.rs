//! A default whose deadline passed while the server was down (SIGKILL) is
//! applied by the next start's first sweep — once — and typed into the
//! agent like any reply.

use crate::common;

use common::process::ServerProcess as Life;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn ask_row(life: &Life, task: &str) -> Value {
    let (status, page) = life
        .call(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={task}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["rows"][0].clone()
}

/// Set the deadline of ask `ask_id` to `from_now_ms` from now, in the
/// server's database under `data` (behind the server's back).
async fn move_deadline(data: &std::path::Path, ask_id: &str, from_now_ms: i64) {
    let url = format!("sqlite://{}", data.join("harness.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let at = chrono::Utc::now().timestamp_millis() + from_now_ms;
    let n = sqlx::query("UPDATE ask_choices SET deadline_at = ? WHERE message_id = ?")
        .bind(at)
        .bind(ask_id)
        .execute(&pool)
        .await
        .unwrap()
        .rows_affected();
    assert_eq!(n, 1);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overdue_default_is_applied_once_after_sigkill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let transcript = work.join("transcript.txt");
    let script = format!(
        "while IFS= read -r line; do printf '%s\\n' \"$line\" >> '{}'; done",
        transcript.display()
    );

    let life = Life::start(&data).await;
    let (status, task) = life
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "deadline across a kill", "agent": {
                "provider": "command", "command": ["sh", "-c", script], "cwd": work}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let task = task["id"].as_str().unwrap().to_string();
    let (status, body) = life
        .call("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert!(status.is_success(), "{body}");
    let (status, asked) = life
        .call(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": task, "question": "Retry or skip?",
                "options": [{"label": "Retry"}, {"label": "Skip"}],
                "default": "Skip", "deadline": 60})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    let ask_id = asked["requestId"].as_str().unwrap().to_string();
    assert_eq!(ask_row(&life, &task).await["state"], "OPEN");
    life.kill();

    // While the server is down, the deadline passes.
    move_deadline(&data, &ask_id, -5_000).await;

    let life = Life::start(&data).await;
    // The start-up pass, not the periodic one (30 s), applies it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let row = loop {
        let row = ask_row(&life, &task).await;
        if row["state"] == "ANSWERED" {
            break row;
        }
        assert!(Instant::now() < deadline, "default never applied: {row}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(row["replyText"], "Skip");
    assert_eq!(row["answeredBy"], "default_after_deadline");
    assert_eq!(row["default"], "Skip");
    // One delivery row, and the agent (restarted after the kill) gets it once.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, rows) = life
            .call("GET", &format!("/api/tasks/{task}/deliveries"), None)
            .await;
        let rows = rows.as_array().cloned().unwrap_or_default();
        assert_eq!(rows.len(), 1, "{rows:?}");
        if rows[0]["state"] == "DELIVERED" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never delivered: {rows:?}\n{}",
            std::fs::read_to_string(data.join("server.log")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let wait = Instant::now() + Duration::from_secs(5);
    let typed = loop {
        let text = std::fs::read_to_string(&transcript).unwrap_or_default();
        if text.contains("Skip") || Instant::now() > wait {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        typed.matches("Harness applied your default").count(),
        1,
        "{typed:?}"
    );

    // Another restart applies nothing again.
    life.kill();
    let life = Life::start(&data).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, rows) = life
        .call("GET", &format!("/api/tasks/{task}/deliveries"), None)
        .await;
    assert_eq!(rows.as_array().map(Vec::len), Some(1));
    life.kill();
}

/// A running server: a message change makes the sweeper read the next
/// deadline again, so an ask whose deadline became the nearest is answered
/// on time, not at the sweeper's next periodic pass (30 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_change_wakes_the_sweeper_for_a_nearer_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let life = Life::start(&data).await;
    let mut tasks = Vec::new();
    for title in ["asks with a default", "notifies"] {
        let (status, task) = life
            .call("POST", "/api/tasks", Some(json!({"title": title})))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{task}");
        tasks.push(task["id"].as_str().unwrap().to_string());
    }
    let (status, asked) = life
        .call(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": tasks[0], "question": "Retry or skip?",
                "options": [{"label": "Retry"}, {"label": "Skip"}],
                "default": "Skip", "deadline": 600})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    let ask_id = asked["requestId"].as_str().unwrap().to_string();
    // The sweeper has read the 600 s deadline (it sleeps its 30 s at most);
    // the deadline is moved to 1 s from now behind its back.
    tokio::time::sleep(Duration::from_millis(500)).await;
    move_deadline(&data, &ask_id, 1_000).await;
    // Another task's message changes: the sweeper looks again.
    let (status, body) = life
        .call(
            "POST",
            "/api/internal/harness/notify",
            Some(json!({"taskId": tasks[1], "message": "FYI"})),
        )
        .await;
    assert!(status.is_success(), "{body}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let row = loop {
        let row = ask_row(&life, &tasks[0]).await;
        if row["state"] == "ANSWERED" {
            break row;
        }
        assert!(
            Instant::now() < deadline,
            "default not applied on time: {row}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(row["answeredBy"], "default_after_deadline");
    life.kill();
}
