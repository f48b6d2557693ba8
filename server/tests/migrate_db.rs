//! `harness migrate-db`: a server on SQLite writes every kind of row, is
//! stopped, the CLI copies its database into a fresh PostgreSQL database,
//! and a server on that database with the same data directory reads it all
//! back and answers the open ask. A second run refuses the non-empty target.
//! Skipped without `HARNESS_TEST_POSTGRES_URL` (`common::pg`).

mod common;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

fn migrate(data: &std::path::Path, to: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["migrate-db", "--to", to, "--data-dir"])
        .arg(data)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The row count `migrate-db` printed for `table`.
fn rows(summary: &str, table: &str) -> i64 {
    summary
        .lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(table)).then(|| words.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no line for {table} in:\n{summary}"))
}

fn without_executions(tasks: &Value) -> Value {
    let mut tasks = tasks.clone();
    for t in tasks.as_array_mut().unwrap() {
        t.as_object_mut().unwrap().remove("execution");
    }
    tasks
}

async fn wait<F: Fn(&Value) -> bool>(s: &common::Server, path: &str, ok: F) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, v) = s.admin("GET", path, None).await;
        if ok(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "{path} never settled: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrate_db_copies_every_kind_of_row_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // The sender is off: outbound rows stay queued.
    let s = common::start_with(&data, |cfg| cfg.outbox.max_in_flight = 0).await;
    let (st, body) = s
        .admin("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let answered = s.task("answered").await;
    let open = s.task("open").await;
    for t in [&answered, &open] {
        s.running.harness.begin_execution(t).await.unwrap();
        let (st, body) = s
            .admin(
                "POST",
                "/api/internal/harness/ask",
                Some(json!({"taskId": t, "question": format!("q {t}"), "options": [{"label": "yes"}, {"label": "no"}]})),
            )
            .await;
        assert_eq!(st, StatusCode::OK, "{body}");
    }
    let (st, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": answered, "text": "yes"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{reply}");
    let delivery = reply["deliveryId"].as_str().unwrap().to_string();
    let (st, out) = s
        .admin(
            "POST",
            "/api/internal/harness/outbound",
            Some(json!({"taskId": open, "message": "queued notify", "scope": "work"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let outbound = out["outboundId"].as_str().unwrap().to_string();
    // A child's failure is a workbench event in its parent's inbox.
    let (_, c) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "child", "parentTaskId": answered,
            "agent": {"provider": "command", "command": ["sh", "-c", "exit 1"]}})),
        )
        .await;
    let child = c["id"].as_str().unwrap().to_string();
    let (st, _) = s
        .admin("POST", &format!("/api/tasks/{child}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK);
    let inbox_path = format!("/api/tasks/{answered}/inbox");
    let inbox = wait(&s, &inbox_path, |v| {
        v["events"].as_array().is_some_and(|e| !e.is_empty())
    })
    .await;
    let cookie = s.session().await;
    let (_, before_tasks) = s.admin("GET", "/api/tasks", None).await;
    s.shutdown().await;

    let (ok, summary) = migrate(&data, &db.url);
    assert!(ok, "{summary}");
    for table in [
        "tasks",
        "executions",
        "harness_messages",
        "ask_choices",
        "deliveries",
        "harness_outbound",
        "workbench_events",
        "settings",
        "harness_sessions",
    ] {
        assert!(rows(&summary, table) > 0, "{table} copied: {summary}");
    }
    assert_eq!(rows(&summary, "tasks"), 3, "{summary}");

    let s = common::start_on(&data, Some(db.url.clone())).await;
    let (_, tasks) = s.admin("GET", "/api/tasks", None).await;
    // The same tasks (their executions were marked ended by the start-up:
    // the agents died with the previous server).
    assert_eq!(
        without_executions(&tasks),
        without_executions(&before_tasks),
        "the task list reads the same"
    );
    let (_, d) = s
        .admin("GET", &format!("/api/deliveries/{delivery}"), None)
        .await;
    assert_eq!(d["id"], delivery.as_str(), "{d}");
    let (_, o) = s
        .admin("GET", &format!("/api/outbound/{outbound}"), None)
        .await;
    assert_eq!(o["id"], outbound.as_str(), "{o}");
    let (_, a) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=answered&taskId={answered}"),
            None,
        )
        .await;
    assert_eq!(a["rows"][0]["replyText"], "yes", "{a}");
    let (_, targets) = s.admin("GET", "/api/settings/notify-targets", None).await;
    assert!(targets.to_string().contains("-100777"), "{targets}");
    let (_, inbox_after) = s.admin("GET", &inbox_path, None).await;
    assert_eq!(inbox_after["events"], inbox["events"]);
    // The browser session made on SQLite still logs in.
    let resp = common::no_redirects()
        .get(s.url("/harness"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "the session was copied");
    // The open ask is still open, and answerable.
    let (_, pending) = s
        .admin(
            "GET",
            &format!("/api/internal/harness/pending?taskId={open}"),
            None,
        )
        .await;
    assert_eq!(pending["pending"], true, "{pending}");
    let (st, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": open, "text": "no"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{reply}");
    s.shutdown().await;

    // A second copy into the now non-empty database is refused.
    let (ok, text) = migrate(&data, &db.url);
    assert!(!ok && text.contains("not empty"), "{text}");
}
