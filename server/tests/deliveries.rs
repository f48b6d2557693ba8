//! The durable delivery queue end to end, with real PTYs and the double
//! agent: a client that drops its reply request still gets the reply typed;
//! a deduped retry after the agent exited neither restarts it nor types
//! again; an agent that cannot be restarted leaves a FAILED row with the
//! reason, retried with backoff, and a person can queue it again. Each
//! also runs on PostgreSQL (`_on_postgres`, `common::pg`).

use crate::common;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

async fn screen(s: &common::Server, task: &str) -> String {
    let (_, screen) = s
        .admin("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    screen["text"].as_str().unwrap_or_default().to_string()
}

async fn wait_screen(
    s: &common::Server,
    task: &str,
    what: &str,
    pred: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = screen(s, task).await;
        if pred(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_pending(s: &common::Server, task: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, p) = s
            .admin(
                "GET",
                &format!("/api/internal/harness/pending?taskId={task}"),
                None,
            )
            .await;
        if p["pending"] == true {
            return;
        }
        assert!(Instant::now() < deadline, "the agent never asked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn delivery(s: &common::Server, id: &str) -> Value {
    let (status, d) = s.admin("GET", &format!("/api/deliveries/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{d}");
    d
}

async fn wait_delivery(
    s: &common::Server,
    id: &str,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let d = delivery(s, id).await;
        if pred(&d) {
            return d;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {d}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn double_task(s: &common::Server, script: &str, cwd: &std::path::Path) -> String {
    let body = json!({"title": "double agent", "agent": {
        "provider": "command", "command": [common::double().display().to_string()],
        "cwd": cwd, "env": {"HARNESS_DOUBLE_SCRIPT": script}}});
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

async fn start(s: &common::Server, t: &str) {
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
}

async fn reply(s: &common::Server, t: &str, text: &str) -> Value {
    let (status, out) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": text})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_drops_the_reply_request_still_gets_it_typed_once() {
    a_client_that_drops_the_reply_request_still_gets_it_typed_once_on(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_drops_the_reply_request_still_gets_it_typed_once_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        a_client_that_drops_the_reply_request_still_gets_it_typed_once_on(Some(&db.url)).await;
    }
}

async fn a_client_that_drops_the_reply_request_still_gets_it_typed_once_on(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(&dir.path().join("data"), db.map(str::to_string)).await;
    // The agent keeps printing for ~2.5 s after asking: no input boundary
    // until then, so the delivery is still waiting when the client gives up.
    let mut script = String::from("ask_human Which color?\n");
    for _ in 0..25 {
        script.push_str("say busy\nsleep 100\n");
    }
    script.push_str("wait_reply\nsay done");
    let t = double_task(&s, &script, &std::env::temp_dir()).await;
    start(&s, &t).await;
    wait_pending(&s, &t).await;

    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let dropped = client
        .post(s.url("/api/internal/harness/reply"))
        .bearer_auth(&s.admin)
        .json(&json!({"taskId": t, "text": "teal"}))
        .send()
        .await;
    assert!(
        dropped.is_err(),
        "the client was meant to give up: {dropped:?}"
    );

    // The answer is committed and its delivery visibly waits for the turn end.
    let (_, rows) = s
        .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
        .await;
    let id = rows[0]["id"].as_str().expect("a delivery row").to_string();
    assert_eq!(rows[0]["kind"], "reply");
    assert!(
        ["QUEUED", "WAITING_BOUNDARY"].contains(&rows[0]["state"].as_str().unwrap_or_default()),
        "{rows}"
    );
    let d = wait_delivery(&s, &id, "DELIVERED", |d| d["state"] == "DELIVERED").await;
    assert!(d["doneAt"].is_string(), "{d}");
    let text = wait_screen(&s, &t, "the reply", |t| t.contains("done")).await;
    assert_eq!(text.matches("GOT REPLY: teal").count(), 1, "{text}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deduped_retry_after_the_agent_exited_neither_restarts_nor_types_again() {
    a_deduped_retry_after_the_agent_exited_neither_restarts_nor_types_again_on(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deduped_retry_after_the_agent_exited_neither_restarts_nor_types_again_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        a_deduped_retry_after_the_agent_exited_neither_restarts_nor_types_again_on(Some(&db.url))
            .await;
    }
}

async fn a_deduped_retry_after_the_agent_exited_neither_restarts_nor_types_again_on(
    db: Option<&str>,
) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(&dir.path().join("data"), db.map(str::to_string)).await;
    let record = dir.path().join("starts.jsonl");
    let script = "ask_human Go on?\nwait_reply\nsay bye\nexit 0";
    let body = json!({"title": "exits", "agent": {
        "provider": "command", "command": [common::double().display().to_string()],
        "cwd": std::env::temp_dir(),
        "env": {"HARNESS_DOUBLE_SCRIPT": script, "HARNESS_DOUBLE_RECORD": record}}});
    let (_, task) = s.admin("POST", "/api/tasks", Some(body)).await;
    let t = task["id"].as_str().unwrap().to_string();
    start(&s, &t).await;
    wait_pending(&s, &t).await;
    let first = reply(&s, &t, "yes").await;
    assert_eq!(first["delivery"], "delivered", "{first}");
    // The agent finishes and exits: COMPLETED.
    let deadline = Instant::now() + Duration::from_secs(20);
    let execution = loop {
        let (_, view) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
        if view["execution"]["status"] == "COMPLETED" {
            break view["execution"]["id"].clone();
        }
        assert!(Instant::now() < deadline, "the agent never exited: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The same reply again (allowRetry defaults to true): deduped, nothing else.
    let again = reply(&s, &t, "yes").await;
    assert_eq!(again["deduped"], true, "{again}");
    assert_eq!(again["delivery"], "delivered");
    assert_eq!(again["deliveryId"], first["deliveryId"]);
    tokio::time::sleep(Duration::from_millis(500)).await; // give a wrong restart the chance
    let (_, view) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(
        view["execution"]["id"], execution,
        "no new execution: {view}"
    );
    assert_eq!(view["execution"]["status"], "COMPLETED");
    assert!(s.running.terminals.live(&t).is_none(), "not restarted");
    let starts = std::fs::read_to_string(&record).unwrap();
    assert_eq!(starts.lines().count(), 1, "started once: {starts}");
    let (_, rows) = s
        .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
        .await;
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_that_cannot_be_restarted_fails_visibly_with_backoff_and_can_be_retried() {
    an_agent_that_cannot_be_restarted_fails_visibly_with_backoff_and_can_be_retried_on(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_that_cannot_be_restarted_fails_visibly_with_backoff_and_can_be_retried_on_postgres()
 {
    if let Some(db) = common::pg::fresh().await {
        an_agent_that_cannot_be_restarted_fails_visibly_with_backoff_and_can_be_retried_on(Some(
            &db.url,
        ))
        .await;
    }
}

async fn an_agent_that_cannot_be_restarted_fails_visibly_with_backoff_and_can_be_retried_on(
    db: Option<&str>,
) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(&dir.path().join("data"), db.map(str::to_string)).await;
    let cwd = dir.path().join("workdir");
    std::fs::create_dir(&cwd).unwrap();
    // An agent that exits at once the first time and reads lines after.
    let first = dir.path().join("first-run");
    let script = format!(
        "test -f '{0}' || {{ touch '{0}'; exit 0; }}; while IFS= read -r l; do echo \"got $l\"; done",
        first.display()
    );
    let body = json!({"title": "unstartable", "agent": {
        "provider": "command", "command": ["sh", "-c", script], "cwd": cwd}});
    let (_, task) = s.admin("POST", "/api/tasks", Some(body)).await;
    let t = task["id"].as_str().unwrap().to_string();
    start(&s, &t).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, view) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
        if view["execution"]["status"] == "COMPLETED" {
            break;
        }
        assert!(Instant::now() < deadline, "the agent never exited: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, _) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "Which file?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    std::fs::remove_dir(&cwd).unwrap(); // now it cannot start again

    let out = reply(&s, &t, "main.rs").await;
    let id = out["deliveryId"].as_str().unwrap().to_string();
    let failed = wait_delivery(&s, &id, "FAILED", |d| d["state"] == "FAILED").await;
    assert_eq!(failed["attempts"], 1, "{failed}");
    let error = failed["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("working directory"),
        "the reason is kept: {failed}"
    );
    // Retried by itself after the backoff (2 s, then 4 s).
    let second = wait_delivery(&s, &id, "a second attempt", |d| d["attempts"] == 2).await;
    assert_eq!(second["state"], "FAILED");
    let first_wait = chrono_ms(&failed["nextAttemptAt"]) - chrono_ms(&failed["updatedAt"]);
    let second_wait = chrono_ms(&second["nextAttemptAt"]) - chrono_ms(&second["updatedAt"]);
    assert_eq!((first_wait, second_wait), (2000, 4000), "{failed} {second}");
    // The task page and the /harness row show it, with the retry action.
    let page = html(&s, &format!("/tasks/{t}"), None).await;
    assert!(page.contains(r#"data-delivery-state="FAILED""#), "{page}");
    assert!(page.contains("failed: cannot restart the agent"), "{page}");
    assert!(page.contains("delivery-retry"), "{page}");
    let page = html(&s, "/harness?view=answered", Some("zh")).await;
    assert!(page.contains("失败："), "{page}");
    let (_, rows) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=answered&taskId={t}"),
            None,
        )
        .await;
    assert_eq!(rows["rows"][0]["replyText"], "main.rs", "{rows}");

    // Fixed; a deduped reply with allowRetry queues the FAILED delivery once more.
    std::fs::create_dir(&cwd).unwrap();
    let (status, again) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "main.rs", "allowRetry": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["deduped"], true);
    let done = wait_delivery(&s, &id, "DELIVERED", |d| d["state"] == "DELIVERED").await;
    assert_eq!(done["attempts"], 2, "{done}");
    let text = wait_screen(&s, &t, "the resumed reply", |t| t.contains("got main.rs")).await;
    assert!(text.contains("针对你之前的提问"), "{text}");
    let page = html(&s, "/harness?view=answered", None).await;
    assert!(
        page.contains(r#"data-delivery-state="DELIVERED""#),
        "{page}"
    );
    assert!(page.contains("typed into the terminal"), "{page}");
    let page = html(&s, &format!("/tasks/{t}"), Some("zh")).await;
    assert!(page.contains("已输入终端"), "{page}");
    // A DELIVERED row cannot be queued again, an unknown one is a 404.
    let (status, _) = s
        .admin("POST", &format!("/api/deliveries/{id}/retry"), None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = s
        .admin(
            "POST",
            "/api/deliveries/cnotarealdeliveryid00000/mark-delivered",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    s.shutdown().await;
}

/// A server-rendered page (the delivery line is part of the SSR HTML).
async fn html(s: &common::Server, path: &str, lang: Option<&str>) -> String {
    let mut req = s.client.get(s.url(path)).bearer_auth(&s.admin);
    if let Some(l) = lang {
        req = req.header("cookie", format!("harness_lang={l}"));
    }
    let resp = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    resp.text().await.unwrap()
}

fn chrono_ms(v: &Value) -> i64 {
    let text = v.as_str().unwrap_or_default();
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .unwrap_or_else(|_| panic!("not a time: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_start_whose_caller_goes_away_still_ends_with_a_running_agent_in_its_terminal() {
    a_start_whose_caller_goes_away_still_ends_with_a_running_agent_in_its_terminal_on(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_start_whose_caller_goes_away_still_ends_with_a_running_agent_in_its_terminal_on_postgres()
 {
    if let Some(db) = common::pg::fresh().await {
        a_start_whose_caller_goes_away_still_ends_with_a_running_agent_in_its_terminal_on(Some(
            &db.url,
        ))
        .await;
    }
}

async fn a_start_whose_caller_goes_away_still_ends_with_a_running_agent_in_its_terminal_on(
    db: Option<&str>,
) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(&dir.path().join("data"), db.map(str::to_string)).await;
    let t = double_task(&s, "say up", &std::env::temp_dir()).await;
    // The caller gives up at its first await (a dropped request).
    let start = s.running.terminals.start(
        &t,
        harness_server::terminals::providers::StartMode::Fresh { prompt: None },
    );
    let gave_up = tokio::time::timeout(Duration::from_micros(1), start).await;
    assert!(
        gave_up.is_err(),
        "the start was meant to be dropped mid-way"
    );
    // Never a RUNNING execution without its terminal: the start completes.
    let deadline = Instant::now() + Duration::from_secs(20);
    while s.running.terminals.session(&t).is_none() {
        assert!(
            Instant::now() < deadline,
            "the dropped start never finished"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, view) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert!(view["execution"]["id"].is_string(), "{view}");
    wait_screen(&s, &t, "the agent's output", |text| text.contains("up")).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keyed_input_is_one_durable_delivery_typed_once_and_shown_on_the_task_page() {
    keyed_input_is_one_durable_delivery_typed_once_and_shown_on_the_task_page_on(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keyed_input_is_one_durable_delivery_typed_once_and_shown_on_the_task_page_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        keyed_input_is_one_durable_delivery_typed_once_and_shown_on_the_task_page_on(Some(&db.url))
            .await;
    }
}

async fn keyed_input_is_one_durable_delivery_typed_once_and_shown_on_the_task_page_on(
    db: Option<&str>,
) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(&dir.path().join("data"), db.map(str::to_string)).await;
    let t = double_task(&s, "say ready", &std::env::temp_dir()).await;
    start(&s, &t).await;
    wait_screen(&s, &t, "the prompt", |text| text.contains("ready")).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let (status, out) = s
            .admin(
                "POST",
                &format!("/api/tasks/{t}/input"),
                Some(json!({"text": "only once", "idempotencyKey": "key-1"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{out}");
        assert_eq!(out["deduped"], i > 0, "{out}");
        if i == 0 {
            assert_eq!(out["delivery"], "delivered", "{out}");
        }
        ids.push(out["deliveryId"].clone());
    }
    assert!(
        ids.iter().all(|id| id == &ids[0] && id.is_string()),
        "{ids:?}"
    );
    wait_screen(&s, &t, "the input", |text| {
        text.contains("GOT INPUT: only once")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await; // a second write would show by now
    let text = screen(&s, &t).await;
    assert_eq!(text.matches("GOT INPUT: only once").count(), 1, "{text}");
    let (_, rows) = s
        .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
        .await;
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(
        (rows[0]["kind"].as_str(), rows[0]["state"].as_str()),
        (Some("input"), Some("DELIVERED"))
    );
    let page = html(&s, &format!("/tasks/{t}"), None).await;
    assert!(
        page.contains("Terminal input") && page.contains("only once"),
        "{page}"
    );
    s.shutdown().await;
}
