//! Agents outlive the server: each agent's PTY is owned by a holder
//! process (`terminals::held`). A SIGKILLed, SIGTERMed or upgraded server
//! leaves its agents running; the next start re-attaches them with the
//! output written in the gap, parked asks stay answerable and a reply is
//! typed once. Runs the real `harness serve` binary as a child process.

use crate::common;

use common::process::{ServerProcess as Life, pids_with};

use std::{
    collections::BTreeSet,
    path::Path,
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// An agent that prints (and writes to `file`) a numbered tick every 200 ms.
fn ticker(file: &Path) -> String {
    format!(
        "i=0; while :; do echo tick-$i; echo $i > '{}'; i=$((i+1)); sleep 0.2; done",
        file.display()
    )
}

/// An agent that appends every line it reads to `file`.
fn reader(file: &Path) -> String {
    format!(
        "echo ready; while IFS= read -r l; do printf '%s\\n' \"$l\" >> '{}'; done",
        file.display()
    )
}

async fn task(life: &Life, title: &str, script: &str, cwd: &Path) -> String {
    let (status, t) = life
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"title": title, "agent": {
                "provider": "command", "command": ["sh", "-c", script], "cwd": cwd}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let id = t["id"].as_str().unwrap().to_string();
    let (status, out) = life
        .call(Method::POST, &format!("/api/tasks/{id}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    id
}

async fn view(life: &Life, task: &str) -> Value {
    life.call(Method::GET, &format!("/api/tasks/{task}"), None)
        .await
        .1
}

async fn screen(life: &Life, task: &str) -> String {
    let (_, s) = life
        .call(Method::GET, &format!("/api/tasks/{task}/screen"), None)
        .await;
    s["text"].as_str().unwrap_or_default().to_string()
}

async fn until<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    common::until(what, Duration::from_secs(30), || {
        let done = check();
        async move { done.await.then_some(()) }
    })
    .await
}

/// The agent's long-lived processes: the holder, the launcher and the
/// agent carry the task's id in their environment (two readings apart, so
/// a short-lived child such as a `sleep 0.1` is left out).
fn agent_pids(task: &str) -> BTreeSet<u32> {
    let read = || -> BTreeSet<u32> {
        pids_with("environ", &format!("TOWER_TASK_ID={task}"))
            .into_iter()
            .collect()
    };
    let first = read();
    std::thread::sleep(Duration::from_millis(250));
    first.intersection(&read()).copied().collect()
}

/// Processes other than holders whose command line holds `marker`.
fn agent_running(marker: &str) -> bool {
    pids_with("cmdline", marker).into_iter().any(|pid| {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        !String::from_utf8_lossy(&cmd).contains("\0hold\0")
    })
}

fn tick(file: &Path) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

fn count(file: &Path, marker: &str) -> usize {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .matches(marker)
        .count()
}

/// The browser's view: the snapshot a WebSocket viewer gets first.
async fn browser_snapshot(life: &Life, task: &str) -> String {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let url = format!(
        "{}/ws/terminal/{task}",
        life.base.replace("http://", "ws://")
    );
    let mut req = url.into_client_request().unwrap();
    req.headers_mut().insert(
        "Authorization",
        format!("Bearer {}", life.admin).parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let msg = tokio::time::timeout_at(deadline.into(), ws.next())
            .await
            .expect("a snapshot")
            .unwrap()
            .unwrap();
        if let Message::Binary(b) = msg {
            return String::from_utf8_lossy(&b).into_owned();
        }
    }
}

async fn stop_all(life: &Life, tasks: &[String]) {
    for t in tasks {
        life.call(Method::POST, &format!("/api/tasks/{t}/stop"), None)
            .await;
    }
    for t in tasks {
        until("the stopped agent's processes to end", || async {
            agent_pids(t).is_empty()
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_leaves_agents_running_and_the_restart_takes_them_over() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = Life::start(&data).await;
    let mut running = Vec::new();
    for k in 0..10 {
        let work = dir.path().join(format!("run{k}"));
        std::fs::create_dir_all(&work).unwrap();
        let file = work.join("tick");
        let t = task(&life, &format!("ticker {k}"), &ticker(&file), &work).await;
        running.push((t, file));
    }
    let mut parked = Vec::new();
    for k in 0..10 {
        let work = dir.path().join(format!("park{k}"));
        std::fs::create_dir_all(&work).unwrap();
        let file = work.join("transcript");
        let t = task(&life, &format!("parked {k}"), &reader(&file), &work).await;
        until("the reader's banner", || async {
            screen(&life, &t).await.contains("ready")
        })
        .await;
        let (status, out) = life
            .call(
                Method::POST,
                "/api/internal/harness/ask",
                Some(json!({"taskId": t, "question": format!("Go on {k}?")})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{out}");
        parked.push((t, file));
    }
    for (t, file) in &running {
        until("ticks", || async { tick(file) > 3 }).await;
        assert!(screen(&life, t).await.contains("tick-"));
    }
    let before: Vec<BTreeSet<u32>> = running
        .iter()
        .chain(&parked)
        .map(|(t, _)| agent_pids(t))
        .collect();
    assert!(
        before.iter().all(|p| p.len() >= 2),
        "holder and agent: {before:?}"
    );

    life.kill();
    // The gap: the agents go on writing while no server runs.
    let at_kill: Vec<u64> = running.iter().map(|(_, f)| tick(f)).collect();
    for ((_, file), at) in running.iter().zip(&at_kill) {
        let at = *at;
        until("ticks during the gap", || async { tick(file) > at + 5 }).await;
    }
    let in_gap: Vec<u64> = running.iter().map(|(_, f)| tick(f)).collect();

    let life = Life::start(&data).await;
    let after: Vec<BTreeSet<u32>> = running
        .iter()
        .chain(&parked)
        .map(|(t, _)| agent_pids(t))
        .collect();
    assert_eq!(before, after, "the same processes");
    for ((t, _), gap) in running.iter().zip(&in_gap) {
        let v = view(&life, t).await;
        assert_eq!(v["execution"]["status"], "RUNNING", "{v}");
        // Output written while no server ran reached the screen and browsers.
        let marker = format!("tick-{gap}");
        let text = screen(&life, t).await;
        let seen_later = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("tick-"))
            .filter_map(|n| n.parse::<u64>().ok())
            .any(|n| n >= *gap);
        assert!(seen_later, "the screen goes on from {marker}:\n{text}");
        let snap = browser_snapshot(&life, t).await;
        assert!(snap.contains("tick-"), "{snap}");
    }
    for (k, (t, file)) in parked.iter().enumerate() {
        let v = view(&life, t).await;
        assert_eq!(v["execution"]["status"], "PAUSED", "still parked: {v}");
        let marker = format!("answer-{k}-held");
        let (status, out) = life
            .call(
                Method::POST,
                "/api/internal/harness/reply",
                Some(json!({"taskId": t, "text": marker})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{out}");
        until("the reply in the held agent", || async {
            count(file, &marker) >= 1
        })
        .await;
    }
    // Typed once: nothing more arrives.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (k, (_, file)) in parked.iter().enumerate() {
        assert_eq!(count(file, &format!("answer-{k}-held")), 1);
    }

    // SIGTERM (an upgrade's stop): quick, and the agents stay.
    let started = Instant::now();
    life.stop();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "SIGTERM took {took:?}");
    for (t, _) in running.iter().chain(&parked) {
        assert!(!agent_pids(t).is_empty(), "{t} survived the SIGTERM");
    }
    let life = Life::start(&data).await;
    for (t, _) in &running {
        assert_eq!(view(&life, t).await["execution"]["status"], "RUNNING");
    }
    let all: Vec<String> = running
        .iter()
        .chain(&parked)
        .map(|(t, _)| t.clone())
        .collect();
    stop_all(&life, &all).await;
    life.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_build_takes_the_holders_over() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Two builds: the same program with different bytes (a different hash,
    // so a different private copy; the holder runs from the old one).
    let old = dir.path().join("harness-old");
    let new = dir.path().join("harness-new");
    std::fs::copy(env!("CARGO_BIN_EXE_harness"), &old).unwrap();
    let mut bytes = std::fs::read(env!("CARGO_BIN_EXE_harness")).unwrap();
    bytes.extend_from_slice(b"\0another build\0");
    std::fs::write(&new, bytes).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755)).unwrap();

    let life = Life::start_from(&old, &data, |_| {}).await;
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let file = work.join("transcript");
    let t = task(&life, "upgraded", &reader(&file), &work).await;
    until("the banner", || async {
        screen(&life, &t).await.contains("ready")
    })
    .await;
    let pids = agent_pids(&t);
    life.stop();

    let life = Life::start_from(&new, &data, |_| {}).await;
    assert_eq!(agent_pids(&t), pids, "the same agent");
    assert_eq!(view(&life, &t).await["execution"]["status"], "RUNNING");
    let (status, out) = life
        .call(
            Method::POST,
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "after-upgrade", "submit": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    until("input through the new build", || async {
        count(&file, "after-upgrade") == 1
    })
    .await;
    stop_all(&life, std::slice::from_ref(&t)).await;
    life.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_exit_while_the_server_is_down_is_recorded_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = Life::start(&data).await;
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let gate = work.join("go");
    let script = format!(
        "echo waiting; while [ ! -e '{}' ]; do sleep 0.05; done; echo bye; exit 7",
        gate.display()
    );
    let t = task(&life, "exits in the gap", &script, &work).await;
    until("the banner", || async {
        screen(&life, &t).await.contains("waiting")
    })
    .await;
    life.kill();
    std::fs::write(&gate, "").unwrap();
    // The agent ends; its holder keeps the exit for the next server.
    until("the agent's exit", || async {
        !agent_running(&gate.display().to_string())
    })
    .await;
    let life = Life::start(&data).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let v = loop {
        let v = view(&life, &t).await;
        if v["execution"]["status"] != "RUNNING" || Instant::now() > deadline {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(v["execution"]["status"], "FAILED", "{v}");
    assert_eq!(
        v["execution"]["exitCode"], 7,
        "the real exit, not 'interrupted': {v}"
    );
    assert!(screen(&life, &t).await.contains("bye"));
    until("the holder to leave", || async {
        agent_pids(&t).is_empty()
    })
    .await;
    life.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_holder_without_its_server_ends_its_agent_after_the_orphan_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = Life::start_with(&data, |cmd| {
        cmd.env("HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS", "2");
    })
    .await;
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let t = task(&life, "orphaned", &ticker(&work.join("tick")), &work).await;
    until("the agent", || async { !agent_pids(&t).is_empty() }).await;
    life.kill();
    // Nothing is orphaned forever: the holder ends its agent and leaves.
    until("the orphaned agent to end", || async {
        agent_pids(&t).is_empty()
    })
    .await;
    let life = Life::start(&data).await;
    let v = view(&life, &t).await;
    assert_eq!(v["execution"]["status"], "FAILED", "{v}");
    // The holder's SIGHUP: the sandbox launcher answers 128 + 1, a shell 129 too.
    assert!(
        v["execution"]["exitCode"].as_i64().is_some(),
        "recorded from exit.json, not 'interrupted': {v}"
    );
    life.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_holder_socket_is_out_of_reach_of_other_users_and_of_the_agent() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = Life::start(&data).await;
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let holders = data.join("holders");
    // The agent tries its holder's directory and connects to every socket.
    let probe = format!(
        "ls '{h}' >/dev/null 2>&1 && echo SEEN-DIR || echo NO-DIR; \
         for s in '{h}'/*/holder.sock; do python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.settimeout(3); print(\"GOT\", c.recv(64))' \"$s\" 2>&1 | tail -1; done; \
         echo probe-done; sleep 60",
        h = holders.display()
    );
    let t = task(&life, "prober", &probe, &work).await;
    until("the probe", || async {
        screen(&life, &t).await.contains("probe-done")
    })
    .await;
    let text = screen(&life, &t).await;
    let isolated = text.contains("NO-DIR");
    if isolated {
        assert!(!text.contains("GOT"), "the agent reached a holder:\n{text}");
    } else {
        // Without isolation the agent sees the directory; the holder still
        // refuses a peer outside its namespaces only when there is one:
        // here it is the agent's own user, which the file modes decide.
        eprintln!("agent isolation is off on this machine: the namespace check is not exercised");
    }
    // Another local user cannot connect (0700 directory, 0600 socket).
    let sockets: Vec<_> = std::fs::read_dir(&holders)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("holder.sock"))
        .filter(|p| p.exists())
        .collect();
    assert!(!sockets.is_empty());
    if nix_is_root() {
        for s in &sockets {
            let out = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print('CONNECTED')",
                ])
                .arg(s)
                .uid(65534)
                .gid(65534)
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!all.contains("CONNECTED"), "another user connected: {all}");
            assert!(all.contains("Permission denied"), "{all}");
        }
    } else {
        eprintln!("not root: another user cannot be simulated here");
    }
    stop_all(&life, std::slice::from_ref(&t)).await;
    life.stop();
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_taken_by_another_node_while_the_agents_node_is_down_is_typed_once_on_postgres() {
    let Some(db) = common::pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("cluster-secrets");
    let data_a = dir.path().join("a");
    let node_a = |cmd: &mut std::process::Command| {
        common::process::on_database(cmd, Some(&db.url));
        cmd.env("HARNESS_SECRETS_DIR", &shared);
    };
    let a = Life::start_with(&data_a, node_a).await;
    let b = common::start_with(&dir.path().join("b"), |cfg| {
        cfg.database_url = Some(db.url.clone());
        cfg.secrets.dir = Some(shared.clone());
    })
    .await;
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let file = work.join("transcript");
    let t = task(&a, "parked on node a", &reader(&file), &work).await;
    until("the banner", || async {
        screen(&a, &t).await.contains("ready")
    })
    .await;
    let (status, out) = a
        .call(
            Method::POST,
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "Ship it?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let pids = agent_pids(&t);
    a.kill();
    // Node a is down: node b takes the answer; the row waits for node a.
    let (status, out) = b
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "answer-while-down"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(count(&file, "answer-while-down"), 0);
    let a = Life::start_with(&data_a, node_a).await;
    until("the reply typed by node a", || async {
        count(&file, "answer-while-down") >= 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&file, "answer-while-down"), 1, "typed once");
    assert_eq!(agent_pids(&t), pids, "into the same agent");
    let (_, rows) = a
        .call(Method::GET, &format!("/api/tasks/{t}/deliveries"), None)
        .await;
    assert_eq!(rows[0]["state"], "DELIVERED", "{rows}");
    stop_all(&a, std::slice::from_ref(&t)).await;
    a.stop();
    b.shutdown().await;
}

/// A holder of another build whose protocol this one cannot read: it says
/// `HHLD` and a version out of range, and holds an agent (`sleep`) in a
/// session of its own, as a holder does. Its command line names its socket
/// and an orphan timeout, as a holder's does.
const OTHER_PROTOCOL_HOLDER: &str = r#"
import os, socket, subprocess, sys
path = sys.argv[1]
agent = subprocess.Popen(["sleep", "100000"], start_new_session=True)
s = socket.socket(socket.AF_UNIX)
old = os.umask(0o177)
s.bind(path)
os.umask(old)
s.listen(8)
while True:
    c, _ = s.accept()
    try:
        c.sendall(b"HHLD\x00\x63")
        c.settimeout(2)
        c.recv(4096)
    except Exception:
        pass
    c.close()
"#;

/// Kills a test double's process group when the test ends (or fails).
struct Group(std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            // SAFETY: killpg has no memory preconditions; the group is the
            // double's own (`process_group(0)`).
            unsafe { libc::killpg(pid, libc::SIGKILL) };
        }
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_holder_this_build_cannot_read_is_left_running_said_and_stopped() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = Life::start(&data).await;
    let work = dir.path().join("w");
    std::fs::create_dir_all(&work).unwrap();
    let t = task(
        &life,
        "held by another build",
        "echo ready; sleep 100000",
        &work,
    )
    .await;
    until("the banner", || async {
        screen(&life, &t).await.contains("ready")
    })
    .await;
    let execution = view(&life, &t).await["execution"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let ours = agent_pids(&t);
    life.stop();
    // The holder becomes one of another protocol: ours and its agent go,
    // the double takes the run directory's socket.
    for pid in &ours {
        if let Ok(pid) = i32::try_from(*pid) {
            // SAFETY: kill has no memory preconditions; the pids are this
            // test's agent's (they carry its task id).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    until("our holder to go", || async { agent_pids(&t).is_empty() }).await;
    let run_dir = data.join("holders").join(&execution);
    let socket = run_dir.join("holder.sock");
    let _ = std::fs::remove_file(&socket);
    let double = Group(
        std::process::Command::new("python3")
            .args(["-c", OTHER_PROTOCOL_HOLDER])
            .arg(&socket)
            .args(["--orphan-timeout-ms", "7200000"])
            .env("TOWER_TASK_ID", &t)
            .process_group(0)
            .spawn()
            .unwrap(),
    );
    until("the other holder's socket", || async { socket.exists() }).await;
    until("the other holder's agent", || async {
        agent_pids(&t).len() >= 2
    })
    .await;
    let held = agent_pids(&t);

    let life = Life::start(&data).await;
    // The task says it: still live, in a holder this build cannot read,
    // what Harness does and what to do.
    let v = view(&life, &t).await;
    assert_eq!(v["execution"]["status"], "RUNNING", "{v}");
    let u = &v["execution"]["unreadableHolder"];
    assert_eq!(u["protocol"], 99, "{v}");
    assert_eq!(u["readsMax"], harness_holder::protocol::VERSION, "{v}");
    assert_eq!(u["holderPid"], double.0.id(), "{v}");
    let note = u["note"].as_str().unwrap_or_default();
    for part in [
        "cannot read",
        "leaves it running",
        "after 2 h",
        "Stop ends it",
    ] {
        assert!(note.contains(part), "{part:?} in {note}");
    }
    // The task page too.
    let cookie = {
        let resp = common::no_redirects()
            .get(format!("{}/login?token={}", life.base, life.admin))
            .send()
            .await
            .unwrap();
        let c = resp.headers()["set-cookie"].to_str().unwrap();
        c.split(';').next().unwrap().to_string()
    };
    let page = life
        .client
        .get(format!("{}/tasks/{t}", life.base))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("task-unreadable-holder"), "{page}");
    assert!(page.contains("holder protocol 99"), "{page}");
    // The start's log and `harness doctor` say it.
    let log = std::fs::read_to_string(data.join("server.log")).unwrap();
    assert!(
        log.contains("agents run in holders whose protocol this build cannot read"),
        "{log}"
    );
    let doctor = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["doctor", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        said.contains(&format!("task {t}")) && said.contains("holder protocol 99"),
        "{said}"
    );
    // Left running.
    assert_eq!(agent_pids(&t), held, "untouched");

    // Stop ends the holder and its agent without its protocol.
    let (status, out) = life
        .call(Method::POST, &format!("/api/tasks/{t}/stop"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    until("the other holder and its agent to end", || async {
        agent_pids(&t).is_empty()
    })
    .await;
    let v = view(&life, &t).await;
    assert_eq!(v["execution"]["status"], "STOPPED", "{v}");
    assert!(v["execution"]["unreadableHolder"].is_null(), "{v}");
    assert!(!run_dir.exists(), "its run directory is removed");
    drop(double);
    life.stop();
}
