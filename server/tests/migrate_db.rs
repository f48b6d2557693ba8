//! `harness migrate-db`: a server on SQLite writes every kind of row, is
//! stopped, the CLI copies its database into a fresh PostgreSQL database,
//! and a server on that database with the same data directory reads it all
//! back and answers the open ask. A second run refuses the non-empty target.
//! Skipped without `HARNESS_TEST_POSTGRES_URL` (`common::pg`).
//!
//! The server writes the realistic rows (asks with choices, an answer and
//! its delivery, an outbound row, a child's workbench event, a session,
//! settings); rows written straight into the SQLite file then complete the
//! states a short run does not reach (an expired ask, a delivery, outbound
//! row, workbench event and batch in every state). After the copy every
//! table is compared with its source row by row, and each state is counted.

use crate::common;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection, Row, SqliteConnection, TypeInfo, ValueRef};

/// Every state the schema allows, per table (the CHECK lists).
const DELIVERY_STATES: [&str; 7] = [
    "QUEUED",
    "WAITING_BOUNDARY",
    "RESUMING",
    "WRITING",
    "DELIVERED",
    "FAILED",
    "UNVERIFIED",
];
const OUTBOUND_STATES: [&str; 6] = [
    "PENDING",
    "SENDING",
    "DELIVERED",
    "SENT_UNVERIFIED",
    "FAILED",
    "DEAD",
];
const EVENT_STATES: [&str; 4] = ["PENDING", "PROCESSING", "DELIVERED", "CONSUMED"];
const BATCH_STATES: [&str; 5] = ["CLAIMED", "DISPATCHED", "ACKED", "RESOLVED", "FAILED"];

/// Rows in the states the server run did not reach, written into the
/// stopped server's SQLite file (`task`: an existing task, `child`: its child).
async fn add_every_state(db: &std::path::Path, task: &str, child: &str) {
    let url = format!("sqlite://{}", db.display());
    let mut c = SqliteConnection::connect(&url).await.unwrap();
    let at = 1_700_000_000_000_i64;
    let exec = |sql: String| sqlx::query(sqlx::AssertSqlSafe(sql));
    // An expired ask with choices (the task's OPEN ask stays the only open one).
    exec(format!(
        "INSERT INTO harness_messages (id, task_id, kind, state, content, created_at) \
         VALUES ('mig-expired', '{task}', 'ask', 'EXPIRED', 'too late?', {at})"
    ))
    .execute(&mut c)
    .await
    .unwrap();
    exec(format!(
        "INSERT INTO ask_choices (message_id, options, multi_select, default_label, \
           deadline_at, urgency) \
         VALUES ('mig-expired', '[{{\"label\":\"a\"}},{{\"label\":\"b\"}}]', 1, 'a', {at}, 'high')"
    ))
    .execute(&mut c)
    .await
    .unwrap();
    for (i, state) in DELIVERY_STATES.iter().enumerate() {
        exec(format!(
            "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
               attempts, next_attempt_at, lease_owner, lease_expires_at, last_error, created_at, \
               updated_at, done_at, resume) \
             VALUES ('mig-d-{state}', '{task}', 'input', 'node-{i}', 'text {state} é ✓', {s}, \
               'mig-{state}', '{state}', {i}, {next}, 'node:boot', {lease}, 'err {state}', {at}, \
               {up}, NULL, {r})",
            s = i % 2,
            next = at + i as i64,
            lease = at + 1000,
            up = at + 7,
            r = (i + 1) % 2,
        ))
        .execute(&mut c)
        .await
        .unwrap();
    }
    for (i, state) in OUTBOUND_STATES.iter().enumerate() {
        exec(format!(
            "INSERT INTO harness_outbound (id, dedup_key, dedup_base, task_id, gateway, downstream, \
               dest, scope, expect_reply, message, presentation, state, attempts, next_attempt_at, \
               platform, platform_chat_id, platform_message_id, last_error, delivered_at, \
               created_at, updated_at) \
             VALUES ('mig-o-{state}', 'harness:{task}:mig-{state}', NULL, '{task}', 'hermes', \
               'feishu', 'oc_{i}', 'unattended', {e}, 'message {state}', '{{\"k\":{i}}}', \
               '{state}', {i}, {next}, 'feishu', 'chat-{i}', 'pm-{i}', 'err {state}', {at}, {at}, {at})",
            e = i % 2,
            next = at + i as i64,
        ))
        .execute(&mut c)
        .await
        .unwrap();
    }
    exec(format!(
        "INSERT INTO harness_delivery_map (id, harness_message_id, task_id, outbound_id, platform, \
           chat_id, platform_message_id, scope, expect_reply, created_at) \
         VALUES ('feishu:pm-2', NULL, '{task}', 'mig-o-DELIVERED', 'feishu', 'chat-2', 'pm-2', \
           'unattended', 0, {at})"
    ))
    .execute(&mut c)
    .await
    .unwrap();
    for (i, state) in EVENT_STATES.iter().enumerate() {
        exec(format!(
            "INSERT INTO workbench_events (id, parent_task_id, source_task_id, execution_id, kind, \
               priority, dedup_key, payload, state, attempts, batch_id, created_at, updated_at) \
             VALUES ('mig-e-{state}', '{task}', '{child}', NULL, 'CHILD_REVIEW_REQUIRED', \
               '{p}', 'mig-e-{state}', '{{\"n\":{i}}}', '{state}', {i}, {b}, {at}, {at})",
            p = if i % 2 == 0 { "HIGH" } else { "NORMAL" },
            b = if i == 0 {
                "NULL".to_string()
            } else {
                format!("'mig-b-{}'", BATCH_STATES[i])
            },
        ))
        .execute(&mut c)
        .await
        .unwrap();
    }
    for (i, state) in BATCH_STATES.iter().enumerate() {
        exec(format!(
            "INSERT INTO workbench_batches (id, parent_task_id, execution_id, event_ids, prompt, \
               state, lease_token, lease_expires_at, dispatch_attempts, created_at, updated_at) \
             VALUES ('mig-b-{state}', '{task}', NULL, '[\"mig-e-{i}\"]', 'prompt {state}', \
               '{state}', 'lease-{i}', {at}, {i}, {at}, {at})"
        ))
        .execute(&mut c)
        .await
        .unwrap();
        exec(format!(
            "INSERT INTO task_messages (id, task_id, role, content, metadata, created_at) \
             VALUES ('mig-b-{state}', '{task}', 'SYSTEM', 'prompt {state}', '{{\"batch\":{i}}}', {at})"
        ))
        .execute(&mut c)
        .await
        .unwrap();
    }
    c.close().await.unwrap();
}

/// The tables of the SQLite database (not sqlx's nor SQLite's own).
async fn sqlite_tables(c: &mut SqliteConnection) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx%' ORDER BY name",
    )
    .fetch_all(c)
    .await
    .unwrap()
}

/// One cell as text (`NULL`, an integer, a float or the text itself).
fn cell<R: Row>(row: &R, i: usize) -> String
where
    usize: sqlx::ColumnIndex<R>,
    i64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    f64: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    String: for<'r> sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let raw = row.try_get_raw(i).unwrap();
    if raw.is_null() {
        return "NULL".into();
    }
    let ty = raw.type_info().name().to_ascii_uppercase();
    if ty.contains("INT") {
        row.try_get::<i64, _>(i).unwrap().to_string()
    } else if ty.contains("REAL") || ty.contains("FLOAT") || ty.contains("DOUBLE") {
        row.try_get::<f64, _>(i).unwrap().to_string()
    } else {
        row.try_get::<String, _>(i).unwrap()
    }
}

/// Every row of `table`, its columns in `columns` order, sorted.
async fn dump_sqlite(c: &mut SqliteConnection, table: &str, columns: &[String]) -> Vec<String> {
    let sql = format!("SELECT {} FROM {table}", columns.join(", "));
    let mut rows: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(c)
        .await
        .unwrap()
        .iter()
        .map(|r| {
            (0..columns.len())
                .map(|i| cell(r, i))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect();
    rows.sort();
    rows
}

async fn dump_pg(c: &mut PgConnection, table: &str, columns: &[String]) -> Vec<String> {
    let sql = format!("SELECT {} FROM {table}", columns.join(", "));
    let mut rows: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(c)
        .await
        .unwrap()
        .iter()
        .map(|r| {
            (0..columns.len())
                .map(|i| cell(r, i))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect();
    rows.sort();
    rows
}

/// Every table of the SQLite source is in PostgreSQL with the same rows
/// (cell by cell); returns the row count per table.
async fn compare_every_table(sqlite: &std::path::Path, pg: &str) -> Vec<(String, usize)> {
    let mut src = SqliteConnection::connect(&format!("sqlite://{}", sqlite.display()))
        .await
        .unwrap();
    let mut dst = PgConnection::connect(pg).await.unwrap();
    let mut counts = Vec::new();
    for table in sqlite_tables(&mut src).await {
        let columns: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
        )))
        .fetch_all(&mut src)
        .await
        .unwrap();
        let before = dump_sqlite(&mut src, &table, &columns).await;
        let after = dump_pg(&mut dst, &table, &columns).await;
        assert_eq!(before.len(), after.len(), "{table}: row count");
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(b, a, "{table}: a row differs after the copy");
        }
        counts.push((table, before.len()));
    }
    src.close().await.unwrap();
    dst.close().await.unwrap();
    counts
}

/// `state → rows` of `table` on PostgreSQL.
async fn states(pg: &str, table: &str) -> std::collections::BTreeMap<String, i64> {
    let mut c = PgConnection::connect(pg).await.unwrap();
    let rows: Vec<(String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT state, COUNT(*) FROM {table} GROUP BY state"
    )))
    .fetch_all(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();
    rows.into_iter().collect()
}

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
        s.running.harness.tasks().begin_execution(t).await.unwrap();
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
    add_every_state(&data.join("harness.db"), &answered, &child).await;

    let (ok, summary) = migrate(&data, &db.url);
    assert!(ok, "{summary}");
    // Every table, row by row and cell by cell, and the counts migrate-db printed.
    let counts = compare_every_table(&data.join("harness.db"), &db.url).await;
    assert!(counts.len() >= 15, "{counts:?}");
    for (table, n) in &counts {
        assert_eq!(rows(&summary, table), *n as i64, "{table}: {summary}");
    }
    for (table, all) in [
        ("deliveries", &DELIVERY_STATES[..]),
        ("harness_outbound", &OUTBOUND_STATES[..]),
        ("workbench_events", &EVENT_STATES[..]),
        ("workbench_batches", &BATCH_STATES[..]),
    ] {
        let by_state = states(&db.url, table).await;
        for state in all {
            assert!(
                by_state.get(*state).is_some_and(|n| *n > 0),
                "{table}: no {state} row: {by_state:?}"
            );
        }
    }
    let asks = states(&db.url, "harness_messages").await;
    for state in ["OPEN", "ANSWERED", "EXPIRED"] {
        assert!(asks.contains_key(state), "no {state} ask: {asks:?}");
    }
    for table in [
        "tasks",
        "executions",
        "harness_messages",
        "ask_choices",
        "deliveries",
        "harness_outbound",
        "workbench_events",
        "workbench_batches",
        "task_messages",
        "harness_delivery_map",
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
    // The server's event reads the same; the rows added to the file are there too.
    let after = inbox_after["events"].as_array().unwrap();
    for event in inbox["events"].as_array().unwrap() {
        assert!(
            after.contains(event),
            "{event} after the copy: {inbox_after}"
        );
    }
    assert_eq!(
        after.len(),
        inbox["events"].as_array().unwrap().len() + EVENT_STATES.len(),
        "{inbox_after}"
    );
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
