//! Several nodes on one PostgreSQL: at most one live
//! execution per task holds across nodes — the database decides (a partial
//! unique index on executions' live states) — and the terminal actions of an
//! agent on another node are that node's (forwarded over a node-to-node
//! call), never a second agent here. Skipped (passes) without
//! `HARNESS_TEST_POSTGRES_URL`.

use crate::common;
use crate::common::wait_until;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

/// An agent that records each start in `starts` and then echoes what it is
/// typed into `typed`.
pub fn recording_agent(work: &Path, name: &str) -> Value {
    let starts = work.join(format!("{name}.starts"));
    let typed = work.join(format!("{name}.typed"));
    let script = format!(
        "echo started >> '{}'; while IFS= read -r line; do printf '%s\\n' \"$line\" >> '{}'; done",
        starts.display(),
        typed.display()
    );
    json!({"provider": "command", "command": ["sh", "-c", script], "cwd": work})
}

/// Submit `text` from a browser's terminal socket and wait until the agent
/// (on whichever node) recorded it in `typed`.
async fn type_in_browser<S>(ws: &mut S, typed: &Path, text: &str)
where
    S: futures_util::Sink<tokio_tungstenite::tungstenite::Message> + Unpin,
    S::Error: std::fmt::Debug,
{
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    ws.send(Message::Text(
        json!({"type": "submit", "data": text}).to_string().into(),
    ))
    .await
    .unwrap();
    wait_until(
        "the browser's input in the agent",
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(typed)
                .unwrap_or_default()
                .contains(text)
        },
    )
    .await;
}

pub fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_racing_a_start_give_one_agent_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shared = dir.path().join("cluster-secrets");
    let a = reachable_node(dir.path(), "a", &db.url, &shared).await;
    let b = reachable_node(dir.path(), "b", &db.url, &shared).await;
    for round in 0..6 {
        let name = format!("race{round}");
        let (status, task) = a
            .admin(
                "POST",
                "/api/tasks",
                Some(json!({"title": name, "agent": recording_agent(&work, &name)})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{task}");
        let t = task["id"].as_str().unwrap().to_string();
        let path = format!("/api/tasks/{t}/start");
        let (on_a, on_b) = tokio::join!(a.admin("POST", &path, None), b.admin("POST", &path, None));
        let answers = [on_a, on_b];
        let started: Vec<&Value> = answers
            .iter()
            .filter(|(s, _)| *s == StatusCode::OK)
            .map(|(_, body)| body)
            .collect();
        for (status, body) in &answers {
            assert!(
                *status == StatusCode::OK || *status == StatusCode::CONFLICT,
                "round {round}: {status} {body}"
            );
            if *status == StatusCode::CONFLICT {
                assert!(
                    body["error"].as_str().unwrap().contains("already running"),
                    "round {round}: a clear 409: {body}"
                );
            }
        }
        assert!(
            !started.is_empty(),
            "round {round}: nobody started: {answers:?}"
        );
        // Two successes only if both are the same execution.
        if started.len() == 2 {
            assert_eq!(started[0]["executionId"], started[1]["executionId"]);
        }
        let starts = work.join(format!("{name}.starts"));
        wait_until("the agent's start", Duration::from_secs(10), || {
            lines(&starts) >= 1
        })
        .await;
        // A second agent would have written by now.
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(lines(&starts), 1, "round {round}: one agent");
        let (_, view) = b.admin("GET", &format!("/api/tasks/{t}"), None).await;
        assert_eq!(view["execution"]["status"], "RUNNING", "{view}");
        assert_eq!(
            view["execution"]["id"], started[0]["executionId"],
            "the live execution is the winner's: {view}"
        );
    }
    b.shutdown().await;
    a.shutdown().await;
}

/// A node of the cluster that registers its own URL, named `node <name>`.
pub async fn reachable_node(
    dir: &Path,
    name: &str,
    database: &str,
    shared: &Path,
) -> common::Server {
    common::start_with(&dir.join(name), |cfg| {
        cfg.database_url = Some(database.to_string());
        cfg.secrets.dir = Some(shared.to_path_buf());
        cfg.node_url = Some(format!("http://{}", cfg.bind));
        cfg.node_name = Some(format!("node {name}"));
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn terminal_actions_on_another_node_are_done_by_the_agents_node_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shared = dir.path().join("cluster-secrets");
    let a = reachable_node(dir.path(), "a", &db.url, &shared).await;
    let b = reachable_node(dir.path(), "b", &db.url, &shared).await;
    let (status, task) = a
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "lives on A", "agent": recording_agent(&work, "fwd")})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, body) = a
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let starts = work.join("fwd.starts");
    wait_until("A's agent", Duration::from_secs(10), || lines(&starts) == 1).await;

    // B's task page says which node runs the agent: A's name and URL, its
    // id in the tooltip; the API names it next to its id.
    let page = b
        .client
        .get(b.url(&format!("/tasks/{t}")))
        .header("cookie", b.session().await)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let node_a = a.running.harness.config().node_id.clone();
    assert!(
        page.contains(&format!("id=\"task-node\" title=\"Node id: {node_a}\""))
            && page.contains(&format!("node a ({})", a.base)),
        "the node on the task page: {page}"
    );
    let (status, view) = b.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(
        (&view["execution"]["nodeId"], &view["execution"]["nodeName"]),
        (&json!(node_a), &json!("node a")),
        "{view}"
    );
    let (status, nodes) = b.admin("GET", "/api/nodes", None).await;
    assert_eq!(status, StatusCode::OK, "{nodes}");
    assert_eq!(nodes["thisNodeName"], "node b", "{nodes}");
    assert!(
        nodes["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["id"] == json!(node_a) && n["name"] == "node a"),
        "{nodes}"
    );
    // Start on B: A answers (its agent runs), no second agent.
    let (status, body) = b
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("already running"),
        "{body}"
    );
    // Unkeyed input on B: typed by A into its terminal.
    let (status, body) = b
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "typed via B", "submit": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let typed = work.join("fwd.typed");
    wait_until("the forwarded input", Duration::from_secs(10), || {
        std::fs::read_to_string(&typed)
            .unwrap_or_default()
            .contains("typed via B")
    })
    .await;
    // The screen, as A's terminal shows it.
    let (status, screen) = b
        .admin("GET", &format!("/api/tasks/{t}/screen"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{screen}");
    assert!(screen["cols"].as_u64().unwrap() > 0, "{screen}");
    // The unattended switch flipped on B: A's signal file (its hook reads it there).
    let (status, body) = b
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(
                json!({"targets": [{"gateway": "hermes", "scope": "unattended", "active": true}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = b
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let signal = a.running.signal_dir.join(format!("unattended-{t}"));
    wait_until("A's signal file", Duration::from_secs(10), || {
        signal.exists()
    })
    .await;
    let (status, _) = b
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": false})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    wait_until("A's signal file removed", Duration::from_secs(10), || {
        !signal.exists()
    })
    .await;
    // Stop on B: A stops its agent.
    let (status, body) = b.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["wasRunning"], true, "A's agent was running: {body}");
    wait_until("A's terminal to end", Duration::from_secs(10), || {
        a.running.terminals.live(&t).is_none()
    })
    .await;
    let (_, view) = b.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(view["execution"]["status"], "STOPPED", "{view}");
    assert_eq!(lines(&starts), 1, "never a second agent");
    b.shutdown().await;
    a.shutdown().await;
}

/// A browser on node C (its session cookie, its Origin) opens the terminal
/// of an agent on node A: C proxies the socket to A over a node-to-node
/// call; the frames are A's (size, snapshot, live output), and what the
/// browser types and its resize reach A's real PTY.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_browser_on_node_c_types_into_an_agent_on_node_a_on_postgres() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shared = dir.path().join("cluster-secrets");
    let a = reachable_node(dir.path(), "a", &db.url, &shared).await;
    let _b = reachable_node(dir.path(), "b", &db.url, &shared).await;
    let c = reachable_node(dir.path(), "c", &db.url, &shared).await;
    let (status, task) = a
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "typed from C", "agent": recording_agent(&work, "ws")})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, body) = a
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        c.running.terminals.session(&t).is_none(),
        "no terminal on C"
    );

    let url = format!("ws://{}/ws/terminal/{t}", c.running.addr);
    let mut req = url.clone().into_client_request().unwrap();
    let h = req.headers_mut();
    h.insert("cookie", c.session().await.parse().unwrap());
    h.insert("origin", c.base.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let size = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Message::Text(size) = size else {
        panic!("A's size frame first, got {size:?}")
    };
    assert_eq!(
        serde_json::from_str::<Value>(&size).unwrap()["type"],
        "size"
    );
    let snapshot = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(snapshot, Message::Binary(_)),
        "then A's snapshot: {snapshot:?}"
    );
    type_in_browser(&mut ws, &work.join("ws.typed"), "hello from C").await;
    ws.send(Message::Text(
        json!({"type": "resize", "rows": 31, "cols": 101})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let session = a.running.terminals.session(&t).unwrap();
    wait_until(
        "A's PTY resized by C's browser",
        Duration::from_secs(10),
        || {
            let s = session.screen_text();
            (s.rows, s.cols) == (31, 101)
        },
    )
    .await;
    // A foreign page cannot open it through C.
    let mut foreign = url.into_client_request().unwrap();
    foreign
        .headers_mut()
        .insert("origin", "http://evil.example".parse().unwrap());
    assert!(tokio_tungstenite::connect_async(foreign).await.is_err());
    let _ = ws.close(None).await;
    assert_eq!(lines(&work.join("ws.starts")), 1);
    c.shutdown().await;
    a.shutdown().await;
}

/// A free loopback port (bound, then released for a child to bind).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The same with three real `harness serve` processes sharing one secrets
/// directory (`HARNESS_SECRETS_DIR`), each with its `--node-url`: a browser
/// on node C types into the agent (a real PTY) of node A, and a start sent
/// to node B for that task spawns no second agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_processes_a_browser_on_c_types_into_a_and_b_starts_nothing_on_postgres() {
    use common::process::ServerProcess;
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shared = dir.path().join("cluster-secrets");
    let mut nodes = Vec::new();
    for name in ["a", "b", "c"] {
        let port = free_port();
        let node = ServerProcess::start_with(&dir.path().join(name), |cmd| {
            cmd.args(["--bind", &format!("127.0.0.1:{port}")])
                .args(["--node-url", &format!("http://127.0.0.1:{port}")])
                .args(["--database-url", &db.url])
                .env("HARNESS_SECRETS_DIR", &shared);
        })
        .await;
        nodes.push(node);
    }
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);
    assert_eq!(
        a.admin, c.admin,
        "one admin token from the shared directory"
    );
    let (status, task) = a
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "on process A", "agent": recording_agent(&work, "proc")})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, body) = a.call("POST", &format!("/api/tasks/{t}/start"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let starts = work.join("proc.starts");
    wait_until("A's agent", Duration::from_secs(10), || lines(&starts) == 1).await;

    // B: a start of the task live on A is A's to refuse.
    let (status, body) = b.call("POST", &format!("/api/tasks/{t}/start"), None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // C: a browser (session cookie + Origin of C) on the terminal socket.
    let login = common::no_redirects()
        .get(format!("{}/login?token={}", c.base, c.admin))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
    let cookie = login.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let ws_url = format!("{}/ws/terminal/{t}", c.base.replacen("http", "ws", 1));
    let mut req = ws_url.into_client_request().unwrap();
    req.headers_mut().insert("cookie", cookie.parse().unwrap());
    req.headers_mut().insert("origin", c.base.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(first, Message::Text(_)),
        "A's size frame: {first:?}"
    );
    type_in_browser(&mut ws, &work.join("proc.typed"), "typed in a browser on C").await;
    let _ = ws.close(None).await;
    assert_eq!(lines(&starts), 1, "one agent in the cluster");
    for node in nodes {
        node.stop();
    }
}

/// A start sent to node B for a task whose agent ran on node A, killed
/// (SIGKILL: no clean-up) and no longer heart-beating: A's execution is
/// interrupted (as A's restart would mark it) and B starts the agent — one
/// live execution, B's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_start_for_an_agent_of_a_dead_node_runs_here_on_postgres() {
    use common::process::ServerProcess;
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shared = dir.path().join("cluster-secrets");
    let start = |name: &'static str| {
        let (data, url, shared) = (dir.path().join(name), db.url.clone(), shared.clone());
        async move {
            let port = free_port();
            ServerProcess::start_with(&data, |cmd| {
                cmd.args(["--bind", &format!("127.0.0.1:{port}")])
                    .args(["--node-url", &format!("http://127.0.0.1:{port}")])
                    .args(["--database-url", &url])
                    .args(super::cluster::HEARTBEAT_ARGS)
                    .env("HARNESS_SECRETS_DIR", &shared);
            })
            .await
        }
    };
    let a = start("a").await;
    let b = start("b").await;
    let (status, task) = a
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "A dies", "agent": recording_agent(&work, "dead")})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, first) = a.call("POST", &format!("/api/tasks/{t}/start"), None).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let starts = work.join("dead.starts");
    wait_until("A's agent", Duration::from_secs(10), || lines(&starts) == 1).await;
    a.kill();
    // While A is within its dead-after, B leaves its agent alone; after it,
    // B starts one.
    let deadline = Instant::now() + Duration::from_secs(30);
    let second = loop {
        let (status, body) = b.call("POST", &format!("/api/tasks/{t}/start"), None).await;
        if status == StatusCode::OK {
            break body;
        }
        assert!(
            status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::CONFLICT,
            "{status} {body}"
        );
        assert!(Instant::now() < deadline, "B never took over: {body}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_ne!(second["executionId"], first["executionId"]);
    wait_until("B's agent", Duration::from_secs(10), || lines(&starts) == 2).await;
    let (_, view) = b.call("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(view["execution"]["id"], second["executionId"], "{view}");
    assert_eq!(view["execution"]["status"], "RUNNING", "{view}");
    b.stop();
}
