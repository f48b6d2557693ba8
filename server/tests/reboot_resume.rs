//! After a reboot (`harness_core::reboot`): the real `harness serve` is
//! SIGKILLed and its agents' process groups killed (what a reboot does to
//! both), then started again on the same data directory. An unattended
//! task's agent runs again with its provider session (`--resume <id>`),
//! its parked ask is still answered into it, one message lists what was
//! resumed, and the next restart does not resume it a second time. A
//! `command` agent is restarted only with `restartOnInterrupt`; an attended
//! task is not touched. (A reboot ends the agents' holders too: killed
//! here, the holder first.)

use crate::common;

use common::process::ServerProcess as Life;

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

/// The gateway double behind OpenClaw and one active unattended target.
async fn channel(life: &Life, sent: &Path) {
    common::outbox::unattended_channel(life, sent).await;
}

async fn create(life: &Life, body: Value) -> String {
    let (st, t) = life.call("POST", "/api/tasks", Some(body)).await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

/// A Claude-shaped double that reports its session at start.
async fn double_task(life: &Life, title: &str, dir: &Path) -> String {
    create(
        life,
        json!({"title": title, "agent": {"provider": "claude",
            "command": [common::double().display().to_string()], "cwd": std::env::temp_dir(),
            "env": {"HARNESS_DOUBLE_SCRIPT": "session_start",
                "HARNESS_DOUBLE_SESSION_ID": format!("sess-{title}"),
                "HARNESS_DOUBLE_RECORD": dir.join(format!("{title}.record")),
                "HARNESS_DOUBLE_INPUT_LOG": dir.join(format!("{title}.inputs"))}}}),
    )
    .await
}

async fn unattended(life: &Life, task: &str) {
    let (st, out) = life
        .call(
            "PUT",
            &format!("/api/tasks/{task}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

async fn start(life: &Life, task: &str) -> String {
    let (st, out) = life
        .call("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    out["executionId"].as_str().unwrap().to_string()
}

async fn task(life: &Life, task: &str) -> Value {
    let (st, t) = life.call("GET", &format!("/api/tasks/{task}"), None).await;
    assert_eq!(st, StatusCode::OK, "{t}");
    t
}

async fn until<F, Fut>(what: &str, check: F) -> Value
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<Value>>,
{
    common::until(what, Duration::from_secs(30), check).await
}

/// The JSON lines of a file (none yet: empty).
fn lines(path: &Path) -> Vec<Value> {
    common::json_lines(path)
}

/// The reports of the resumes after restarts (outbox rows), oldest first.
async fn reports(life: &Life) -> Vec<Value> {
    let (st, rows) = life.call("GET", "/api/outbound?limit=500", None).await;
    assert_eq!(st, StatusCode::OK, "{rows}");
    let mut found: Vec<Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["dedupKey"].as_str().unwrap_or("").starts_with("reboot:"))
        .cloned()
        .collect();
    found.reverse();
    found
}

/// Wait for the `n`-th report to be sent by the gateway double.
async fn sent_report(life: &Life, sent: &Path, n: usize) -> String {
    let rows = until("the report", || async {
        let rows = reports(life).await;
        (rows.len() >= n && rows.iter().all(|r| r["state"] == "DELIVERED")).then(|| json!(rows))
    })
    .await;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), n, "one report per start: {rows:#?}");
    let text = rows[n - 1]["message"].as_str().unwrap().to_string();
    let sends = lines(sent);
    assert!(
        sends
            .iter()
            .any(|s| s["text"].as_str().unwrap_or("").contains(&text)),
        "sent through the gateway: {sends:#?}"
    );
    text
}

/// The pids whose environment names the task: its holder, the launcher,
/// the agent (and any hook it runs).
pub(crate) fn agent_pids(task: &str) -> Vec<u32> {
    common::process::pids_with("environ", &format!("TOWER_TASK_ID={task}"))
}

/// What a reboot does to an agent: its holder and its process group gone at
/// once (SIGKILL, the holder first: it records nothing).
pub(crate) fn kill_now(task: &str) {
    let mut pids = agent_pids(task);
    let holder = |pid: &u32| {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmd).contains("\0hold\0")
    };
    pids.sort_by_key(|pid| !holder(pid));
    // `pid (comm) state ppid pgrp …`: the fields after the command.
    let pgrp_of = |pid: &str| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .unwrap_or_default()
            .to_string()
    };
    let ours = pgrp_of("self");
    for pid in pids {
        let pgrp = pgrp_of(&pid.to_string());
        let mut targets = vec![pid.to_string()];
        if !pgrp.is_empty() && pgrp != "0" && pgrp != ours {
            targets.push(format!("-{pgrp}"));
        }
        for target in targets {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &target])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

async fn kill_agents(task: &str) {
    until("the agent gone", || async {
        kill_now(task);
        agent_pids(task).is_empty().then_some(Value::Null)
    })
    .await;
}

/// Kills the tasks' agents when a test ends, passed or not (held agents
/// outlive their server).
pub(crate) struct Reaper(pub(crate) Vec<String>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for t in &self.0 {
            kill_now(t);
        }
    }
}

/// A reboot: the server SIGKILLed, the agents' process groups killed.
async fn reboot(life: Life, tasks: &[&str]) {
    life.kill();
    for t in tasks {
        kill_agents(t).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unattended_agent_resumes_its_session_once_after_a_reboot() {
    resumes_once_after_a_reboot(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unattended_agent_resumes_its_session_once_after_a_reboot_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        resumes_once_after_a_reboot(Some(&db.url)).await;
    }
}

async fn resumes_once_after_a_reboot(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let (data, sent) = (dir.path().join("data"), dir.path().join("sent.jsonl"));
    let life = Life::start_on(&data, db).await;
    channel(&life, &sent).await;
    let t = double_task(&life, "resumer", dir.path()).await;
    let _reaper = Reaper(vec![t.clone()]);
    unattended(&life, &t).await;
    let first = start(&life, &t).await;
    let record = dir.path().join("resumer.record");
    until("the session reported", || async {
        let v = task(&life, &t).await;
        (v["execution"]["sessionId"] == "sess-resumer").then_some(v)
    })
    .await;
    // It asks and is parked: the ask must stay answerable across the reboot.
    let (st, out) = life
        .call(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "!ask_human Which database?", "submit": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    until("the ask parked", || async {
        let v = task(&life, &t).await;
        (v["openAsk"] == true && v["execution"]["status"] == "PAUSED").then_some(v)
    })
    .await;

    reboot(life, &[&t]).await;
    let life = Life::start_on(&data, db).await;
    // Its agent runs again, with its session: `--resume <id>` on a new execution.
    let runs = until("the agent resumed", || async {
        let runs = lines(&record);
        (runs.len() >= 2).then(|| json!(runs))
    })
    .await;
    let resumed = &runs[1];
    assert_eq!(resumed["resume"], "sess-resumer", "{resumed:#}");
    let argv: Vec<&str> = resumed["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        argv.windows(2).any(|w| w == ["--resume", "sess-resumer"]),
        "{argv:?}"
    );
    let second = resumed["env"]["TOWER_EXECUTION_ID"].as_str().unwrap();
    assert_ne!(second, first);
    let v = until("the new execution running", || async {
        let v = task(&life, &t).await;
        (v["execution"]["id"] == second && v["execution"]["status"] == "RUNNING").then_some(v)
    })
    .await;
    assert_eq!(v["openAsk"], true, "the parked ask stays open: {v:#}");
    // One message lists it.
    let text = sent_report(&life, &sent, 1).await;
    assert!(text.contains("Resumed (1)"), "{text}");
    assert!(
        text.contains(&format!(
            "resumer [{t}]: its Claude Code session sess-resumer"
        )),
        "{text}"
    );
    // The parked ask's answer reaches the resumed agent (the delivery path).
    let (st, out) = life
        .call(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "postgres please"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let inputs = dir.path().join("resumer.inputs");
    until("the answer typed into the resumed agent", || async {
        std::fs::read_to_string(&inputs)
            .unwrap_or_default()
            .contains("postgres please")
            .then_some(Value::Null)
    })
    .await;

    // The next restart does not resume it again (it was resumed automatically
    // once already): no third start, one more report saying so.
    reboot(life, &[&t]).await;
    let life = Life::start_on(&data, db).await;
    let text = sent_report(&life, &sent, 2).await;
    assert!(text.contains("Not resumed (1)"), "{text}");
    assert!(text.contains("not twice in a row"), "{text}");
    assert_eq!(lines(&record).len(), 2, "never started a third time");
    let v = task(&life, &t).await;
    assert_eq!(v["execution"]["status"], "FAILED", "{v:#}");
    assert_eq!(v["execution"]["id"], second);
    life.stop();
}

/// A command agent that appends a line to `log` at each start, then waits.
async fn command_task(life: &Life, title: &str, log: &Path, restart: Option<bool>) -> String {
    let mut agent = json!({"provider": "command", "cwd": std::env::temp_dir(),
        "command": ["sh", "-c", format!("echo started >> '{}'; exec sleep 600", log.display())]});
    if let Some(on) = restart {
        agent["restartOnInterrupt"] = json!(on);
    }
    create(life, json!({"title": title, "agent": agent})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn command_agents_restart_only_with_restart_on_interrupt_and_attended_tasks_wait() {
    let dir = tempfile::tempdir().unwrap();
    let (data, sent) = (dir.path().join("data"), dir.path().join("sent.jsonl"));
    let life = Life::start(&data).await;
    channel(&life, &sent).await;
    // The flag is for command agents only, and shown on the task.
    let (st, out) = life
        .call(
            "POST",
            "/api/tasks",
            Some(
                json!({"title": "x", "agent": {"provider": "claude", "restartOnInterrupt": true}}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "agent.restartOnInterrupt", "{out}");
    let (on_log, off_log) = (dir.path().join("on.log"), dir.path().join("off.log"));
    let on = command_task(&life, "restarts", &on_log, Some(true)).await;
    let off = command_task(&life, "stays", &off_log, None).await;
    assert_eq!(task(&life, &on).await["agent"]["restartOnInterrupt"], true);
    assert!(task(&life, &off).await["agent"]["restartOnInterrupt"].is_null());
    let attended = double_task(&life, "attended", dir.path()).await;
    let _reaper = Reaper(vec![on.clone(), off.clone(), attended.clone()]);
    for t in [&on, &off] {
        unattended(&life, t).await;
    }
    let mut firsts = Vec::new();
    for t in [&on, &off, &attended] {
        firsts.push(start(&life, t).await);
    }
    let count = |p: &Path| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .count()
    };
    until("both commands started", || async {
        (count(&on_log) == 1 && count(&off_log) == 1).then_some(Value::Null)
    })
    .await;
    until("the attended session reported", || async {
        let v = task(&life, &attended).await;
        (v["execution"]["sessionId"] == "sess-attended").then_some(v)
    })
    .await;

    reboot(life, &[&on, &off, &attended]).await;
    let life = Life::start(&data).await;
    let text = sent_report(&life, &sent, 1).await;
    assert!(
        text.contains(&format!("restarts [{on}]: restarted from its start")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "stays [{off}]: command agent without restartOnInterrupt"
        )),
        "{text}"
    );
    assert!(
        !text.contains(&attended),
        "an attended task is not listed: {text}"
    );
    until("the flagged command restarted", || async {
        (count(&on_log) == 2).then_some(Value::Null)
    })
    .await;
    let v = task(&life, &on).await;
    assert_eq!(v["execution"]["status"], "RUNNING", "{v:#}");
    assert_ne!(v["execution"]["id"], firsts[0]);
    assert_eq!(count(&off_log), 1, "not restarted without the flag");
    for (t, first) in [(&off, &firsts[1]), (&attended, &firsts[2])] {
        let v = task(&life, t).await;
        assert_eq!(v["execution"]["id"], **first, "{v:#}");
        assert_eq!(v["execution"]["status"], "FAILED", "{v:#}");
    }
    assert_eq!(
        lines(&dir.path().join("attended.record")).len(),
        1,
        "the attended agent is not started again"
    );
    life.stop();
    kill_agents(&on).await;
}
