//! Several real `harness serve` processes on one PostgreSQL database (issue
//! 30): each its own data directory, node id and port, the same secrets
//! (the first node's `secrets/` copied to the others). Two nodes starting at
//! once on an empty database migrate once; replies to an agent on node A
//! sent to nodes B and C are typed into A's terminal once; a node SIGKILLed
//! with 200 outbound and 200 inbound gateway messages in flight loses and
//! blindly repeats nothing, and the survivors recover its leases.
//! PostgreSQL only (`HARNESS_TEST_POSTGRES_URL`, `common::pg`).

use crate::common;

use common::process::ServerProcess as Life;

use std::{
    collections::{BTreeMap, HashSet},
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

/// The cluster tests' nodes heart-beat every second and are dead after
/// this many: a loaded CI machine stalls a node for seconds, and a tighter
/// dead-after fences a survivor (see `cluster_fence`).
pub(crate) const HEARTBEAT_ARGS: [&str; 4] =
    ["--node-heartbeat-secs", "1", "--node-dead-after-secs", "5"];

/// A node on `db` ([`HEARTBEAT_ARGS`]); the gateway double behind both
/// gateways, recording to `record` in `mode`.
pub(crate) async fn node(data: &Path, db: &str, record: &Path, mode: &str) -> Life {
    let mut life = Life::start_with(data, |cmd| {
        common::process::on_database(cmd, Some(db));
        cmd.args(HEARTBEAT_ARGS)
            .env("HARNESS_LOG", "warn,harness_core::nodes=info")
            .env("HARNESS_NODE_URL", "http://127.0.0.1:9/")
            .env("HARNESS_HERMES_BIN", DOUBLE)
            .env("HARNESS_OPENCLAW_BIN", DOUBLE)
            .env("GATEWAY_DOUBLE_RECORD", record)
            .env("GATEWAY_DOUBLE_MODE", mode);
    })
    .await;
    // Calls may meet a killed node: bounded.
    life.client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    life
}

/// The same secrets on every node: `from`'s `secrets/` copied into `to`.
pub(crate) fn share_secrets(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let dir = to.join("secrets");
    std::fs::create_dir_all(&dir).unwrap();
    for d in [to, dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    for entry in std::fs::read_dir(from.join("secrets")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
}

pub(crate) fn node_id(data: &Path) -> String {
    std::fs::read_to_string(data.join("node-id"))
        .unwrap()
        .trim()
        .to_string()
}

pub(crate) async fn pool(db: &str) -> sqlx::PgPool {
    sqlx::PgPool::connect(db).await.unwrap()
}

/// Live nodes by the database's clock.
async fn alive(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM harness_nodes WHERE heartbeat_at > \
         CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) - 2000",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_starting_at_once_on_an_empty_database_migrate_once_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sent.jsonl");
    let (da, db_) = (dir.path().join("a"), dir.path().join("b"));
    let (a, b) = tokio::join!(
        node(&da, &db.url, &record, "ok"),
        node(&db_, &db.url, &record, "ok")
    );
    // Both serve.
    for life in [&a, &b] {
        let (st, body) = life.call("GET", "/api/tasks", None).await;
        assert_eq!(st, StatusCode::OK, "{body}");
    }
    let p = pool(&db.url).await;
    let runs: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&p)
            .await
            .unwrap();
    let files = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../migrations/postgres"
    ))
    .unwrap()
    .count();
    assert_eq!(runs.len(), files, "each migration once: {runs:?}");
    let versions: HashSet<i64> = runs.iter().map(|(v, _)| *v).collect();
    assert_eq!(versions.len(), runs.len());
    assert!(runs.iter().all(|(_, ok)| *ok));
    // Each registered itself, with its URL.
    let nodes: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT id, url FROM harness_nodes ORDER BY id")
            .fetch_all(&p)
            .await
            .unwrap();
    let mut want = vec![
        node_id(&dir.path().join("a")),
        node_id(&dir.path().join("b")),
    ];
    want.sort();
    assert_eq!(
        nodes.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        want
    );
    assert!(
        nodes
            .iter()
            .all(|(_, url)| url.as_deref() == Some("http://127.0.0.1:9"))
    );
    p.close().await;
    a.stop();
    b.stop();
}

async fn screen(life: &Life, task: &str) -> String {
    let (_, s) = life
        .call("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    s["text"].as_str().unwrap_or_default().to_string()
}

async fn wait_screen(life: &Life, task: &str, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = screen(life, task).await;
        if text.contains(what) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "never on A's screen: {what}\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_pending(life: &Life, task: &str, question: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, p) = life
            .call(
                "GET",
                &format!("/api/internal/harness/pending?taskId={task}"),
                None,
            )
            .await;
        if p["pending"] == true && p.to_string().contains(question) {
            return;
        }
        assert!(Instant::now() < deadline, "never asked {question}: {p}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn reply(life: &Life, task: &str, text: &str) -> (StatusCode, Value) {
    life.call(
        "POST",
        "/api/internal/harness/reply",
        Some(json!({"taskId": task, "text": text})),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replies_to_an_agent_on_node_a_sent_to_nodes_b_and_c_are_typed_once_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sent.jsonl");
    let (da, db_, dc) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let a = node(&da, &db.url, &record, "ok").await;
    share_secrets(&da, &db_);
    share_secrets(&da, &dc);
    let (b, c) = tokio::join!(
        node(&db_, &db.url, &record, "ok"),
        node(&dc, &db.url, &record, "ok")
    );
    let p = pool(&db.url).await;
    assert_eq!(alive(&p).await, 3, "three live nodes");
    // The same admin token answers on every node.
    assert_eq!(a.admin, b.admin);
    assert_eq!(a.admin, c.admin);

    let script = "ask_human First?\nwait_reply\nask_human Second?\nwait_reply\n\
                  ask_human Third?\nwait_reply\nsay all answered\nsleep 600000";
    let (st, t) = a
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "on node A", "agent": {
                "provider": "command", "command": [common::double().display().to_string()],
                "cwd": std::env::temp_dir(), "env": {"HARNESS_DOUBLE_SCRIPT": script}}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let (st, body) = a.call("POST", &format!("/api/tasks/{t}/start"), None).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let owner: Option<String> =
        sqlx::query_scalar("SELECT node_id FROM executions WHERE task_id = $1")
            .bind(&t)
            .fetch_one(&p)
            .await
            .unwrap();
    assert_eq!(owner, Some(node_id(&da)), "the agent runs on node A");

    // First: answered on node B.
    wait_pending(&a, &t, "First?").await;
    let (st, out) = reply(&b, &t, "one from B").await;
    assert_eq!(st, StatusCode::OK, "{out}");
    wait_screen(&a, &t, "GOT REPLY: one from B").await;
    // Second: B and C answer at once; one wins.
    wait_pending(&a, &t, "Second?").await;
    let ((sb, ob), (sc, oc)) =
        tokio::join!(reply(&b, &t, "two from B"), reply(&c, &t, "two from C"));
    let winners = [(sb, &ob), (sc, &oc)]
        .iter()
        .filter(|(s, o)| *s == StatusCode::OK && o["delivery"].is_string() && o["deduped"] != true)
        .count();
    assert_eq!(winners, 1, "one answer wins: {ob} / {oc}");
    let won = if sb == StatusCode::OK && ob["delivery"].is_string() {
        "two from B"
    } else {
        "two from C"
    };
    wait_screen(&a, &t, &format!("GOT REPLY: {won}")).await;
    // Third: answered on node C.
    wait_pending(&a, &t, "Third?").await;
    let (st, out) = reply(&c, &t, "three from C").await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let text = wait_screen(&a, &t, "all answered").await;
    // Each typed exactly once, into A's terminal.
    for line in [
        "GOT REPLY: one from B".to_string(),
        format!("GOT REPLY: {won}"),
        "GOT REPLY: three from C".to_string(),
    ] {
        assert_eq!(text.matches(&line).count(), 1, "{line}:\n{text}");
    }
    assert_eq!(text.matches("GOT REPLY:").count(), 3, "{text}");
    let rows: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT state, node_id FROM deliveries WHERE task_id = $1")
            .bind(&t)
            .fetch_all(&p)
            .await
            .unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        rows.iter()
            .all(|(s, n)| s == "DELIVERED" && n.as_deref() == Some(node_id(&da).as_str())),
        "{rows:?}"
    );
    p.close().await;
    c.stop();
    b.stop();
    a.stop();
}

fn marker(i: usize) -> String {
    format!("<msg-{i}>")
}

fn pmid(i: usize) -> String {
    format!("in-{i}")
}

/// What a request needs of a node (cloned into spawned calls).
#[derive(Clone)]
struct Api {
    base: String,
    admin: String,
    client: reqwest::Client,
}

fn api(life: &Life) -> Api {
    Api {
        base: life.base.clone(),
        admin: life.admin.clone(),
        client: life.client.clone(),
    }
}

/// A push of outbound message `i` (idempotent by its key).
async fn push(life: &Api, tasks: &[String], i: usize) -> Result<(), String> {
    let body = json!({"taskId": tasks[i % tasks.len()], "message": format!("message {}", marker(i)),
        "scope": "work", "dedupKey": format!("k{i}")});
    let sent = life
        .client
        .post(format!("{}/api/internal/harness/outbound", life.base))
        .bearer_auth(&life.admin)
        .json(&body)
        .send()
        .await;
    outcome(sent).await
}

/// What a call to a node came to: `Err` names the status and body, or
/// the transport error (a killed node, a timeout).
async fn outcome(sent: reqwest::Result<reqwest::Response>) -> Result<(), String> {
    match sent {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!(
            "{}: {}",
            r.status(),
            r.text().await.unwrap_or_default()
        )),
        Err(e) => Err(format!("{e:?}")),
    }
}

/// The last lines of a node's log (`<data>/server.log`), for a failure.
fn log_tail(data: &Path) -> String {
    let log = std::fs::read_to_string(data.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    let from = lines.len().saturating_sub(12);
    format!(
        "{} log, last lines:\n{}",
        data.display(),
        lines[from..].join("\n")
    )
}

/// Inbound message `i`: a continuation of one of `tasks` from the chat
/// (idempotent by its platform message id); answered with a queued ack.
async fn inbound(life: &Api, token: &str, tasks: &[String], i: usize) -> Result<(), String> {
    let body = json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100777",
        "platformMessageId": pmid(i), "senderId": "42", "taskId": tasks[i % tasks.len()],
        "content": format!("go on {i}")});
    let sent = life
        .client
        .put(format!("{}/api/internal/harness/gateway-task", life.base))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await;
    outcome(sent).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_of_a_node_with_400_messages_in_flight_loses_and_repeats_nothing_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let total = 200;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sent.jsonl");
    let datas: Vec<_> = ["a", "b", "c"].iter().map(|n| dir.path().join(n)).collect();
    // Each send takes 150 ms: many are in flight when the node dies.
    let mode = "slow:150";
    let a = node(&datas[0], &db.url, &record, mode).await;
    a.set_owners("openclaw", &["42"]).await;
    let (st, _) = a
        .call("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK);
    let mut pushes = Vec::new();
    for k in 0..20 {
        let (st, t) = a
            .call(
                "POST",
                "/api/tasks",
                Some(json!({"title": format!("push {k}"),
                    "agent": {"provider": "command", "command": ["true"]}})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{t}");
        pushes.push(t["id"].as_str().unwrap().to_string());
    }
    let mut chats = Vec::new();
    for k in 0..4 {
        let (st, t) = a
            .call(
                "POST",
                "/api/tasks",
                Some(json!({"title": format!("chat {k}"),
                    "agent": {"provider": "command", "command": ["sh", "-c", "cat > /dev/null"]}})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{t}");
        chats.push(t["id"].as_str().unwrap().to_string());
    }
    for d in &datas[1..] {
        share_secrets(&datas[0], d);
    }
    let (b, c) = tokio::join!(
        node(&datas[1], &db.url, &record, mode),
        node(&datas[2], &db.url, &record, mode)
    );
    let p = pool(&db.url).await;
    assert_eq!(alive(&p).await, 3);
    let token = std::fs::read_to_string(datas[0].join("secrets/gateway.token")).unwrap();
    let token = token.trim().to_string();
    let victim = node_id(&datas[1]);
    let lives = [a, b, c];

    // Every message to a node of its own, all at once.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..total {
        let (to, tasks) = (api(&lives[i % 3]), pushes.clone());
        set.spawn(async move { ("out", i, push(&to, &tasks, i).await) });
        let (to, tasks, token) = (api(&lives[(i + 1) % 3]), chats.clone(), token.clone());
        set.spawn(async move { ("in", i, inbound(&to, &token, &tasks, i).await) });
    }
    // Kill the victim while it has sends started (their started mark
    // committed) and rows leased ahead of a free slot, never started.
    let deadline = Instant::now() + Duration::from_secs(60);
    let leased_at_kill = loop {
        let (started, ahead): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE started_attempt = attempts), \
                    count(*) FILTER (WHERE started_attempt IS DISTINCT FROM attempts) \
             FROM harness_outbound WHERE state = 'SENDING' AND lease_owner LIKE $1 || ':%'",
        )
        .bind(&victim)
        .fetch_one(&p)
        .await
        .unwrap();
        if started >= 2 && ahead >= 2 {
            break (started, ahead);
        }
        assert!(Instant::now() < deadline, "the victim never sent");
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    let [a, b, c] = lives;
    b.kill();
    let (mut out_ok, mut in_ok) = (HashSet::new(), HashSet::new());
    while let Some(done) = set.join_next().await {
        let (kind, i, ok) = done.unwrap();
        if ok.is_ok() {
            if kind == "out" {
                out_ok.insert(i);
            } else {
                in_ok.insert(i);
            }
        }
    }
    // What the dead node did not acknowledge is sent again to a survivor
    // (idempotent: the same key, the same platform message id).
    for i in 0..total {
        if !out_ok.contains(&i)
            && let Err(e) = push(&api(&a), &pushes, i).await
        {
            panic!("push {i} on a survivor: {e}\n{}", log_tail(&datas[0]));
        }
        if !in_ok.contains(&i)
            && let Err(e) = inbound(&api(&c), &token, &chats, i).await
        {
            panic!("inbound {i} on a survivor: {e}\n{}", log_tail(&datas[2]));
        }
    }

    // Everything settles on the survivors. An inbound request the dead node
    // had claimed answers "in progress" until its claim is stale (the
    // gateway retries, as it does when a request fails): sent again every
    // few seconds while not processed.
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut resent = Instant::now();
    loop {
        let open: i64 = sqlx::query_scalar(
            "SELECT (SELECT count(*) FROM harness_outbound \
               WHERE state NOT IN ('DELIVERED', 'SENT_UNVERIFIED')) \
             + (SELECT count(*) FROM gateway_inbound WHERE state <> 'PROCESSED') \
             + (SELECT count(*) FROM gateway_replies WHERE state NOT IN ('DELIVERED', 'SENT_UNVERIFIED'))",
        )
        .fetch_one(&p)
        .await
        .unwrap();
        let rows: i64 = sqlx::query_scalar(
            "SELECT (SELECT count(*) FROM harness_outbound) + (SELECT count(*) FROM gateway_replies)",
        )
        .fetch_one(&p)
        .await
        .unwrap();
        if open == 0 && rows == 2 * total as i64 {
            break;
        }
        if resent.elapsed() > Duration::from_secs(3) {
            let done: Vec<String> = sqlx::query_scalar(
                "SELECT platform_message_id FROM gateway_inbound WHERE state = 'PROCESSED'",
            )
            .fetch_all(&p)
            .await
            .unwrap();
            for i in 0..total {
                if !done.contains(&pmid(i)) {
                    let _ = inbound(&api(&c), &token, &chats, i).await;
                }
            }
            resent = Instant::now();
        }
        if Instant::now() >= deadline {
            let states: Vec<(String, String, i64)> = sqlx::query_as(
                "SELECT 'out', state, count(*) FROM harness_outbound GROUP BY state \
                 UNION ALL SELECT 'in', state, count(*) FROM gateway_inbound GROUP BY state \
                 UNION ALL SELECT 'reply', state, count(*) FROM gateway_replies GROUP BY state",
            )
            .fetch_all(&p)
            .await
            .unwrap();
            let errors: Vec<(String, String, i64)> = sqlx::query_as(
                "SELECT state, coalesce(last_error, ''), count(*) FROM gateway_inbound \
                 WHERE state <> 'PROCESSED' GROUP BY 1, 2",
            )
            .fetch_all(&p)
            .await
            .unwrap();
            panic!("not settled: {open} open, {rows} rows: {states:?}; inbound left: {errors:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Doubles the dead node spawned may still be finishing their send.
    tokio::time::sleep(Duration::from_millis(800)).await;

    let sends: Vec<Value> = common::json_lines(&record)
        .into_iter()
        .filter(|r| r["sent"] == true)
        .collect();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    // Outbound: one row each; DELIVERED = sent once, SENT_UNVERIFIED = at
    // most once; unverified without a send only for a send killed between
    // its started mark and its spawn (at most the victim's concurrency).
    let rows: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT message, state, attempts FROM harness_outbound")
            .fetch_all(&p)
            .await
            .unwrap();
    assert_eq!(rows.len(), total);
    for i in 0..total {
        let m = marker(i);
        let mine: Vec<_> = rows.iter().filter(|r| r.0.contains(&m)).collect();
        assert_eq!(mine.len(), 1, "message {i}: one row");
        let real = sends
            .iter()
            .filter(|s| s["text"].as_str().is_some_and(|t| t.contains(&m)))
            .count();
        let state = mine[0].1.as_str();
        match state {
            "DELIVERED" => assert_eq!(real, 1, "message {i} delivered exactly once"),
            "SENT_UNVERIFIED" => assert!(real <= 1, "message {i}: sent {real} times"),
            other => panic!("message {i} ended {other}"),
        }
        *tally.entry(format!("out {state} sent {real}")).or_default() += 1;
    }
    // Inbound: each message once, processed, with one reply; the reply sent
    // once (DELIVERED) or at most once (SENT_UNVERIFIED).
    let replies: Vec<(String, String)> = sqlx::query_as(
        "SELECT i.platform_message_id, r.state FROM gateway_replies r \
         JOIN gateway_inbound i ON i.id = r.inbound_id",
    )
    .fetch_all(&p)
    .await
    .unwrap();
    assert_eq!(replies.len(), total);
    for i in 0..total {
        let id = pmid(i);
        let mine: Vec<_> = replies.iter().filter(|r| r.0 == id).collect();
        assert_eq!(mine.len(), 1, "inbound {i}: one reply");
        let real = sends
            .iter()
            .filter(|s| {
                let argv: Vec<&str> = s["argv"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                argv.windows(2).any(|w| w == ["--reply-to", id.as_str()])
            })
            .count();
        let state = mine[0].1.as_str();
        match state {
            "DELIVERED" => assert_eq!(real, 1, "reply {i} sent exactly once"),
            "SENT_UNVERIFIED" => assert!(real <= 1, "reply {i}: sent {real} times"),
            other => panic!("reply {i} ended {other}"),
        }
        *tally
            .entry(format!("reply {state} sent {real}"))
            .or_default() += 1;
    }
    let blind_out = tally
        .get("out SENT_UNVERIFIED sent 0")
        .copied()
        .unwrap_or(0);
    assert!(
        blind_out <= 4,
        "{blind_out} outbound rows SENT_UNVERIFIED without a send: {tally:?}"
    );
    // The survivors recovered the dead node: no lease of it is left, its
    // boot is recorded as recovered, its row stays.
    let left: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM harness_outbound WHERE lease_owner LIKE $1 || ':%') \
         + (SELECT count(*) FROM gateway_replies WHERE lease_owner LIKE $1 || ':%') \
         + (SELECT count(*) FROM deliveries WHERE lease_owner LIKE $1 || ':%')",
    )
    .bind(&victim)
    .fetch_one(&p)
    .await
    .unwrap();
    assert_eq!(left, 0, "leases of the dead node left");
    let (boot, recovered): (String, Option<String>) =
        sqlx::query_as("SELECT boot, recovered_boot FROM harness_nodes WHERE id = $1")
            .bind(&victim)
            .fetch_one(&p)
            .await
            .unwrap();
    assert_eq!(recovered.as_deref(), Some(boot.as_str()));
    eprintln!(
        "the victim's sends at the kill (started, leased ahead): {leased_at_kill:?}; {tally:?}"
    );
    p.close().await;
    a.stop();
    c.stop();
}
