//! Draining a node for maintenance (`harness_core::drain`): a
//! drained node takes no new work — a start sent to it runs on another node,
//! its queued gateway messages are sent by another node — while its agent
//! keeps running and is still typed into; `harness node drain --wait`
//! returns once that agent ended; a restart keeps the drain; an undrained
//! node takes work again. Real `harness serve` processes on PostgreSQL
//! (skipped without `HARNESS_TEST_POSTGRES_URL`), and one SQLite node alone.

use crate::cluster_routing::{free_port, lines, recording_agent};
use crate::common::{self, process::ServerProcess, wait_until};

use std::{
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use reqwest::StatusCode;
use serde_json::json;

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

/// A node on `db` with its own URL and the shared secrets; its gateway
/// sends recorded in `<dir>/sent-<name>.jsonl` (so a send says which node
/// did it). The heartbeat is slow (30 s): a drain reaches the node through
/// the event bus, not its heartbeat.
async fn node(dir: &Path, name: &str, db: &str, port: u16) -> ServerProcess {
    let record = dir.join(format!("sent-{name}.jsonl"));
    ServerProcess::start_with(&dir.join(name), |cmd| {
        cmd.args(["--bind", &format!("127.0.0.1:{port}")])
            .args(["--node-url", &format!("http://127.0.0.1:{port}")])
            .args(["--database-url", db])
            .args([
                "--node-heartbeat-secs",
                "30",
                "--node-dead-after-secs",
                "60",
            ])
            .env("HARNESS_SECRETS_DIR", dir.join("secrets"))
            .env("HARNESS_OPENCLAW_BIN", DOUBLE)
            .env("GATEWAY_DOUBLE_RECORD", record)
            .env("GATEWAY_DOUBLE_MODE", "ok");
    })
    .await
}

fn node_id(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name).join("node-id"))
        .unwrap()
        .trim()
        .to_string()
}

/// The node whose execution of `task` is live (or latest).
async fn runs_on(pool: &sqlx::PgPool, task: &str) -> Option<String> {
    sqlx::query_scalar(
        "SELECT node_id FROM executions WHERE task_id = $1 ORDER BY created_at DESC LIMIT 1",
    )
    .bind(task)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn task(on: &ServerProcess, work: &Path, name: &str) -> String {
    let (st, t) = on
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": name, "agent": recording_agent(work, name)})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

/// Whether `on` acts as draining now (its own flag, not the registry's).
async fn acts_draining(on: &ServerProcess) -> bool {
    let (st, list) = on.call("GET", "/api/nodes", None).await;
    assert_eq!(st, StatusCode::OK, "{list}");
    list["thisNodeDraining"] == true
}

/// Wait until `on`'s own flag is `draining` (it follows the registry).
async fn wait_acts(on: &ServerProcess, draining: bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while acts_draining(on).await != draining {
        assert!(
            std::time::Instant::now() < deadline,
            "the node never followed draining = {draining}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn sent_texts(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `harness node <args>` against `server` (the shared secrets' admin token).
fn node_cli(dir: &Path, server: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.arg("node")
        .args(args)
        .args(["--server", server])
        .arg("--secrets-dir")
        .arg(dir.join("secrets"))
        .arg("--data-dir")
        .arg(dir.join("cli"))
        .env_remove("HARNESS_ADMIN_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_drained_node_hands_its_work_to_the_others_and_keeps_its_agent_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = d.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let (pa, pb) = (free_port(), free_port());
    let a = node(d, "a", &db.url, pa).await;
    let mut b = node(d, "b", &db.url, pb).await;
    let (ida, idb) = (node_id(d, "a"), node_id(d, "b"));
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let (st, _) = a
        .call("PUT", "/api/settings/notify-targets", Some(json!({"targets": [
            {"label": "team", "gateway": "openclaw", "downstream": "telegram", "dest": "-100777", "scope": "work"}
        ]})))
        .await;
    assert_eq!(st, StatusCode::OK);

    // B runs an agent.
    let kept = task(&a, &work, "kept").await;
    let (st, body) = b
        .call("POST", &format!("/api/tasks/{kept}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(runs_on(&pool, &kept).await.as_deref(), Some(idb.as_str()));
    wait_until("B's agent", Duration::from_secs(10), || {
        lines(&work.join("kept.starts")) == 1
    })
    .await;

    // B ran an agent that ended (it exits at once the first time, then
    // records what it is typed).
    let first = work.join("asks.first");
    let script = format!(
        "test -f '{0}' || {{ touch '{0}'; exit 0; }}; while IFS= read -r l; do printf '%s\\n' \"$l\" >> '{1}'; done",
        first.display(),
        work.join("asks.typed").display()
    );
    let (st, t) = a
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "asks", "agent": {"provider": "command", "command": ["sh", "-c", script], "cwd": work}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let asks = t["id"].as_str().unwrap().to_string();
    let (st, body) = b
        .call("POST", &format!("/api/tasks/{asks}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    wait_until("the first run ended", Duration::from_secs(10), || {
        first.exists()
    })
    .await;

    // Drained from A (the CLI, waiting): B follows through the bus.
    let mut drain = node_cli(d, &a.base, &["drain", &idb, "--wait", "--timeout", "120"])
        .spawn()
        .unwrap();
    wait_acts(&b, true).await;
    let (st, listed) = a.call("GET", "/api/nodes", None).await;
    assert_eq!(st, StatusCode::OK, "{listed}");
    let nb = listed["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == idb.as_str())
        .unwrap()
        .clone();
    assert_eq!(nb["draining"], true, "{nb}");
    assert_eq!(nb["liveRuns"][0]["taskId"], kept.as_str(), "{nb}");

    // A start sent to B runs on A.
    let fresh = task(&a, &work, "fresh").await;
    let (st, body) = b
        .call("POST", &format!("/api/tasks/{fresh}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(runs_on(&pool, &fresh).await.as_deref(), Some(ida.as_str()));
    wait_until("the fresh agent on A", Duration::from_secs(10), || {
        lines(&work.join("fresh.starts")) == 1
    })
    .await;

    // Messages queued on B are sent by A.
    for i in 0..5 {
        let (st, out) = b
            .call(
                "POST",
                "/api/internal/harness/outbound",
                Some(json!({"taskId": fresh, "message": format!("queued on B {i}"), "scope": "work"})),
            )
            .await;
        assert_eq!(st, StatusCode::OK, "{out}");
    }
    wait_until("A sent B's messages", Duration::from_secs(20), || {
        let sent = sent_texts(&d.join("sent-a.jsonl"));
        (0..5).all(|i| sent.contains(&format!("queued on B {i}")))
    })
    .await;
    assert!(
        !sent_texts(&d.join("sent-b.jsonl")).contains("queued on B"),
        "the drained node sent nothing"
    );

    // A reply answered on B that must start that agent again: on A.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, view) = a.call("GET", &format!("/api/tasks/{asks}"), None).await;
        if view["execution"]["status"] == "COMPLETED" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never exited: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (st, out) = a
        .call(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": asks, "question": "Which file?"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, out) = b
        .call(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": asks, "text": "answer from B"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    wait_until(
        "the reply typed into the agent started again",
        Duration::from_secs(30),
        || {
            std::fs::read_to_string(work.join("asks.typed"))
                .unwrap_or_default()
                .contains("answer from B")
        },
    )
    .await;
    assert_eq!(runs_on(&pool, &asks).await.as_deref(), Some(ida.as_str()));

    // B's agent keeps running and is still typed into: a person on A, and
    // a keyed input (B's delivery row, typed by B's worker).
    let (st, body) = a
        .call(
            "POST",
            &format!("/api/tasks/{kept}/input"),
            Some(json!({"text": "typed from A", "submit": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, body) = a
        .call(
            "POST",
            &format!("/api/tasks/{kept}/input"),
            Some(json!({"text": "keyed from A", "submit": true, "idempotencyKey": "k1"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    wait_until("both inputs in B's agent", Duration::from_secs(15), || {
        let typed = std::fs::read_to_string(work.join("kept.typed")).unwrap_or_default();
        typed.contains("typed from A") && typed.contains("keyed from A")
    })
    .await;
    assert_eq!(runs_on(&pool, &kept).await.as_deref(), Some(idb.as_str()));
    assert!(
        drain.try_wait().unwrap().is_none(),
        "--wait returned while B's agent runs"
    );

    // The agent ends: --wait returns, successfully.
    let (st, body) = a
        .call("POST", &format!("/api/tasks/{kept}/stop"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let out = tokio::task::spawn_blocking(move || drain.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("waiting for 1 agent(s)"), "{stdout}");
    assert!(stdout.contains("is drained"), "{stdout}");

    // Restarted (its machine rebooted), B is still drained.
    b.stop();
    b = node(d, "b", &db.url, pb).await;
    assert!(acts_draining(&b).await, "a restart keeps the drain");
    let again = task(&a, &work, "again").await;
    let (st, body) = b
        .call("POST", &format!("/api/tasks/{again}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(runs_on(&pool, &again).await.as_deref(), Some(ida.as_str()));

    // Undrained (the CLI on B, naming no node: B itself): B takes work again.
    let out = node_cli(d, &b.base, &["undrain"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!acts_draining(&b).await);
    let back = task(&a, &work, "back").await;
    let (st, body) = b
        .call("POST", &format!("/api/tasks/{back}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(runs_on(&pool, &back).await.as_deref(), Some(idb.as_str()));
    pool.close().await;
    b.stop();
    a.stop();
}

/// Every node draining: a start is refused (409, saying why), never done.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_every_node_drained_a_start_is_refused_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let work = d.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let a = node(d, "a", &db.url, free_port()).await;
    let b = node(d, "b", &db.url, free_port()).await;
    let (ida, idb) = (node_id(d, "a"), node_id(d, "b"));
    let (st, out) = a
        .call(
            "PATCH",
            &format!("/api/nodes/{idb}"),
            Some(json!({"draining": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert!(out.get("note").is_none(), "A takes the work: {out}");
    let (st, out) = b
        .call(
            "PATCH",
            &format!("/api/nodes/{ida}"),
            Some(json!({"draining": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert!(
        out["note"].as_str().unwrap().contains("no other live node"),
        "{out}"
    );
    wait_acts(&a, true).await;
    wait_acts(&b, true).await;
    let t = task(&a, &work, "nowhere").await;
    for on in [&a, &b] {
        let (st, body) = on
            .call("POST", &format!("/api/tasks/{t}/start"), None)
            .await;
        assert_eq!(st, StatusCode::CONFLICT, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("draining"),
            "{body}"
        );
    }
    assert_eq!(lines(&work.join("nowhere.starts")), 0);
    b.stop();
    a.stop();
}

/// One SQLite node: it may be drained (the answer says nobody takes its
/// work), then refuses starts; the API is the admin's, names bad fields
/// and unknown nodes.
#[tokio::test]
async fn a_lone_sqlite_node_can_be_drained_and_the_api_is_the_admins() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let (st, list) = s.admin("GET", "/api/nodes", None).await;
    assert_eq!(st, StatusCode::OK, "{list}");
    let me = list["thisNode"].as_str().unwrap().to_string();
    assert_eq!(list["nodes"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["thisNodeDraining"], false);
    // Without --node-name a node is named by its hostname.
    let host = harness_server::node::default_name().expect("this machine's hostname");
    assert_eq!(list["thisNodeName"], host.as_str(), "{list}");
    assert_eq!(list["nodes"][0]["name"], host.as_str(), "{list}");

    // An agent's token is refused; no token is 401.
    let t = s.task("agent").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    for (token, want) in [
        (Some(token.as_str()), StatusCode::FORBIDDEN),
        (None, StatusCode::UNAUTHORIZED),
    ] {
        let (st, body) = s
            .call(
                "PATCH",
                &format!("/api/nodes/{me}"),
                token,
                Some(json!({"draining": true})),
            )
            .await;
        assert_eq!(st, want, "{body}");
        let (st, _) = s.call("GET", "/api/nodes", token, None).await;
        assert_eq!(st, want);
    }
    // Errors name the field; an unknown node is a 404.
    for (body, field) in [
        (json!({}), "draining"),
        (json!({"draining": "yes"}), "draining"),
    ] {
        let (st, out) = s
            .admin("PATCH", &format!("/api/nodes/{me}"), Some(body))
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
        assert_eq!(out["field"], field, "{out}");
    }
    let (st, out) = s
        .admin(
            "PATCH",
            "/api/nodes/no-such-node",
            Some(json!({"draining": true})),
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND, "{out}");
    let (st, _) = s.admin("GET", "/api/nodes/no-such-node", None).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, out) = s.admin("GET", "/api/nodes/not%20an%20id", None).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "nodeId", "{out}");

    // Drained: allowed, and the answer says nobody takes its work.
    let (st, out) = s
        .admin(
            "PATCH",
            &format!("/api/nodes/{me}"),
            Some(json!({"draining": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["node"]["draining"], true);
    assert!(
        out["note"].as_str().unwrap().contains("no other live node"),
        "{out}"
    );
    // The task page says the agent's node is draining.
    let page = s
        .client
        .get(s.url(&format!("/tasks/{t}")))
        .header("cookie", s.session().await)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("(draining: takes no new work)"), "{page}");
    let other = s.task("refused").await;
    let (st, body) = s
        .admin("POST", &format!("/api/tasks/{other}/start"), None)
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("draining"),
        "{body}"
    );

    // Undrained: it starts agents again.
    let (st, out) = s
        .admin(
            "PATCH",
            &format!("/api/nodes/{me}"),
            Some(json!({"draining": false})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert!(out.get("note").is_none());
    let page = s
        .client
        .get(s.url(&format!("/tasks/{t}")))
        .header("cookie", s.session().await)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("id=\"task-node\"") && !page.contains("(draining"),
        "{page}"
    );
    let (st, body) = s
        .admin("POST", &format!("/api/tasks/{other}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    s.shutdown().await;
}

/// The node's flag follows the registry at every heartbeat and every
/// `NodeChanged`: a re-read that began before a drain or an undrain made
/// here never puts the old value back after it (the undrained node then
/// refused starts until its next heartbeat). Raced for real: re-reads in a
/// loop on other threads while the flag is flipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_heartbeats_re_read_never_undoes_a_newer_drain_or_undrain() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let h = s.running.harness.clone();
    let me = h.config().node_id.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (h, stop) = (h.clone(), stop.clone());
        readers.push(tokio::spawn(async move {
            let mut reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                h.cluster().follow_drain().await;
                reads += 1;
            }
            reads
        }));
    }
    let mut wrong = Vec::new();
    for i in 0..300 {
        let on = i % 2 == 0;
        h.cluster().set_node_draining(&me, on).await.unwrap();
        if h.cluster().draining() != on {
            wrong.push(i);
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut reads = 0;
    for r in readers {
        reads += r.await.unwrap();
    }
    assert!(reads > 300, "the re-reads did not race: {reads}");
    assert!(
        wrong.is_empty(),
        "right after these drains/undrains the node acted on the old flag: {wrong:?} \
         (of 300, {reads} re-reads)"
    );
    s.shutdown().await;
}
