//! One truthful state per live agent (`terminals::agent_watch`), through a
//! real server and real PTYs: fake agents draw the CLIs' own screens (the
//! bottom of a recorded fixture, `crates/core/tests/fixtures/agent_screens`,
//! cut to the 80×24 terminal an agent starts in), exit with a code, die by
//! a signal, stay silent, ask, or end their turn (the Stop hook). Each
//! state reaches the task JSON with its reason and lines, and `/metrics`;
//! an unattended task is pushed its alarms once per execution and state
//! (never an attended one, never again after a restart of the server), and
//! the replies `stop` / `restart` through the gateway's continuation act on
//! the agent.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use harness_core::agent_state::{Cli, Observation, Screen, observe};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::{self, Server, gateway};

/// A recorded screen (160×45) as an 80×24 terminal shows it: runs of
/// blank rows made one, the bottom 24 rows, each cut to 80 columns.
fn fixture_rows(cli: &str, case: &str) -> Vec<String> {
    let path = format!(
        "{}/../crates/core/tests/fixtures/agent_screens/{cli}/{case}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let body = text.split_once('\n').unwrap().1;
    let mut rows: Vec<String> = Vec::new();
    for row in body.trim_end_matches('\n').split('\n') {
        let row: String = row.chars().take(80).collect();
        let row = row.trim_end().to_string();
        if row.trim().is_empty() && rows.last().is_some_and(|r| r.trim().is_empty()) {
            continue;
        }
        rows.push(row);
    }
    rows.split_off(rows.len().saturating_sub(24))
}

/// A script that draws `rows` (cursor-positioned, as a TUI does), then
/// waits.
fn drawing(dir: &Path, name: &str, rows: &[String]) -> PathBuf {
    let mut bytes = b"\x1b[2J\x1b[H".to_vec();
    for (i, row) in rows.iter().enumerate() {
        bytes.extend_from_slice(format!("\x1b[{};1H{row}", i + 1).as_bytes());
    }
    let screen = dir.join(format!("{name}.screen"));
    std::fs::write(&screen, bytes).unwrap();
    let script = dir.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!("cat '{}'\nexec sleep 600\n", screen.display()),
    )
    .unwrap();
    script
}

async fn create(s: &Server, body: Value) -> String {
    let (st, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    t["id"].as_str().unwrap().to_string()
}

/// A task whose agent is `provider` running `sh <script>`.
async fn screen_task(s: &Server, provider: &str, script: &Path) -> String {
    create(
        s,
        json!({"title": script.file_stem().unwrap().to_str().unwrap(),
            "agent": {"provider": provider, "command": ["sh", script], "cwd": std::env::temp_dir()}}),
    )
    .await
}

/// A `command` agent running one shell line.
async fn shell_task(s: &Server, title: &str, line: &str) -> String {
    create(
        s,
        json!({"title": title, "agent": {"provider": "command", "command": ["sh", "-c", line],
            "cwd": std::env::temp_dir()}}),
    )
    .await
}

async fn start(s: &Server, task: &str) -> String {
    let (st, out) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    out["executionId"].as_str().unwrap().to_string()
}

async fn task(s: &Server, task: &str) -> Value {
    let (st, t) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
    assert_eq!(st, StatusCode::OK, "{t}");
    t
}

/// Waits (≤ 20 s) for the task's agent state to be `state`; returns it.
async fn state_of(s: &Server, id: &str, state: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let t = task(s, id).await;
        if t["agentState"]["state"] == state {
            return t["agentState"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "{id}: never {state}: {}",
            t["agentState"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An unattended channel (its sends stay queued: the sender is off).
async fn channel(s: &Server, dir: &Path) {
    common::outbox::unattended_channel(s, &dir.join("sent.jsonl")).await;
}

async fn unattended(s: &Server, task: &str) {
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{task}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

async fn stall_after(s: &Server, secs: u64) {
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/agent-states",
            Some(json!({"stallAfterSecs": secs})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

#[track_caller]
fn recognised(cli: Cli, rows: &[String], want: fn(&Observation) -> bool) {
    let seen = observe(cli, &Screen::from_text(&rows.join("\n")));
    assert!(want(&seen), "the cut screen is still recognised: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screens_exits_hooks_and_questions_become_states() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(&dir.path().join("data"), |cfg| {
        cfg.holders.enabled = false;
    })
    .await;
    let d = dir.path();
    let draw = |cli: &str, case: &str| {
        let rows = fixture_rows(cli, case);
        (drawing(d, case, &rows), rows)
    };
    let (limit, rows) = draw("claude", "usage_limit_subscription");
    recognised(Cli::Claude, &rows, |o| {
        matches!(o, Observation::UsageLimited { reset: Some(_) })
    });
    let (retrying, rows) = draw("claude", "overloaded_529_retrying");
    recognised(Cli::Claude, &rows, |o| {
        matches!(o, Observation::Erroring { .. })
    });
    let (gave_up, rows) = draw("claude", "overloaded_529_gave_up");
    recognised(Cli::Claude, &rows, |o| {
        matches!(
            o,
            Observation::GaveUp {
                kind: harness_core::agent_state::ErrorKind::Overloaded
            }
        )
    });
    let (logged_out, rows) = draw("claude", "unauthorized_401_subscription");
    recognised(Cli::Claude, &rows, |o| *o == Observation::LoggedOut);
    let (dialog, rows) = draw("claude", "native_question");
    recognised(Cli::Claude, &rows, |o| {
        matches!(o, Observation::NativeDialog { .. })
    });
    let (quoted, rows) = draw("claude", "quoted_status_lines_long");
    assert!(
        rows.iter()
            .any(|r| r.contains("usage limit") || r.contains("retrying")),
        "the agent's own text quotes the lines: {rows:#?}"
    );
    recognised(Cli::Claude, &rows, |o| *o == Observation::None);

    let ids = [
        screen_task(&s, "claude", &limit).await,
        screen_task(&s, "claude", &retrying).await,
        screen_task(&s, "claude", &gave_up).await,
        screen_task(&s, "claude", &logged_out).await,
        screen_task(&s, "claude", &dialog).await,
        screen_task(&s, "claude", &quoted).await,
    ];
    let boom = shell_task(&s, "boom", "echo 'Error: boom'; sleep 1; exit 3").await;
    let killed = shell_task(&s, "killed", "echo dying; sleep 1; kill -9 $$").await;
    let asking = shell_task(&s, "asking", "exec sleep 600").await;
    let idle = shell_task(&s, "idle", "exec sleep 600").await;
    for t in ids.iter().chain([&boom, &killed, &asking, &idle]) {
        start(&s, t).await;
    }

    let st = state_of(&s, &ids[0], "usage_limited").await;
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .starts_with("usage limit reached; resets 12:26pm"),
        "{st}"
    );
    assert!(st["resetAt"].is_string(), "{st}");
    assert!(
        st["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("Usage limit reached")),
        "{st}"
    );
    let st = state_of(&s, &ids[1], "erroring").await;
    assert_eq!(st["errorKind"], "overloaded", "{st}");
    assert!(st["attempt"].is_number() && st["attemptOf"] == 10, "{st}");
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .starts_with("API overloaded (529), attempt "),
        "{st}"
    );
    let st = state_of(&s, &ids[2], "erroring").await;
    assert_eq!(st["gaveUp"], true, "{st}");
    state_of(&s, &ids[3], "logged_out").await;
    let st = state_of(&s, &ids[4], "waiting_for_person").await;
    assert_eq!(st["dialogTitle"], "Which colour?", "{st}");
    assert_eq!(st["dialogOptions"][0], "Red", "{st}");
    // The agent quoting the lines in its answer: working, never limited.
    let st = state_of(&s, &ids[5], "working").await;
    assert!(
        st["lines"].as_array().unwrap().is_empty(),
        "nothing of the agent's text is evidence: {st}"
    );

    let st = state_of(&s, &boom, "exited").await;
    assert_eq!(st["exitCode"], 3, "{st}");
    assert_eq!(st["reason"], "exited with code 3");
    assert!(
        st["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "Error: boom"),
        "the last lines of its screen: {st}"
    );
    let st = state_of(&s, &killed, "crashed").await;
    assert_eq!(st["signal"], 9, "{st}");

    // An open question: waiting for a person.
    let (st_code, out) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": asking, "question": "Postgres or SQLite?"})),
        )
        .await;
    assert_eq!(st_code, StatusCode::OK, "{out}");
    let st = state_of(&s, &asking, "waiting_for_person").await;
    assert!(st.get("dialogTitle").is_none(), "{st}");

    // The Stop hook: idle at its prompt.
    state_of(&s, &idle, "working").await;
    let (st_code, out) = s
        .admin(
            "POST",
            "/api/internal/hooks/stop",
            Some(json!({"taskId": idle})),
        )
        .await;
    assert_eq!(st_code, StatusCode::OK, "{out}");
    state_of(&s, &idle, "idle").await;

    // The same states in the list, in MCP `get_task`, and in /metrics.
    let (st_code, list) = s.admin("GET", "/api/tasks", None).await;
    assert_eq!(st_code, StatusCode::OK);
    let listed = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == ids[3])
        .unwrap();
    assert_eq!(listed["agentState"]["state"], "logged_out");
    let token = s.admin.clone();
    let (is_error, got) = gateway::tool(&s, &token, "get_task", json!({"taskId": ids[0]})).await;
    assert!(!is_error, "{got}");
    assert_eq!(got["agentState"]["state"], "usage_limited", "{got}");
    let resp = s
        .client
        .get(s.url("/metrics"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    let metrics = resp.text().await.unwrap();
    for name in harness_core::model::AgentStateName::ALL {
        assert!(
            metrics.contains(&format!("harness_agents{{state=\"{name}\"}}")),
            "{name} in {metrics}"
        );
    }
    assert!(
        metrics.contains("harness_agents{state=\"logged_out\"} 1"),
        "{metrics}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alarms_are_pushed_once_and_the_replies_act_on_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let reaper = crate::reboot_resume::Reaper(Vec::new());
    let mut reaper = reaper;
    let s = common::start_with(&data, |cfg| {
        cfg.outbox.max_in_flight = 0;
    })
    .await;
    channel(&s, dir.path()).await;
    stall_after(&s, 2).await;
    // Unattended: a silent agent stalls and is pushed once; one that ends
    // its turn is idle (a "finished" note, not an alarm) and stays idle.
    let silent = shell_task(&s, "silent", "echo started; exec sleep 600").await;
    let done = shell_task(&s, "done", "echo done; exec sleep 600").await;
    // Attended: stalls too, never pushed.
    let attended = shell_task(&s, "attended", "exec sleep 600").await;
    reaper.0 = vec![silent.clone(), done.clone(), attended.clone()];
    for t in [&silent, &done] {
        unattended(&s, t).await;
    }
    let silent_exec = start(&s, &silent).await;
    let done_exec = start(&s, &done).await;
    start(&s, &attended).await;
    let (st_code, out) = s
        .admin(
            "POST",
            "/api/internal/hooks/stop",
            Some(json!({"taskId": done})),
        )
        .await;
    assert_eq!(st_code, StatusCode::OK, "{out}");
    state_of(&s, &done, "idle").await;
    let st = state_of(&s, &silent, "stalled").await;
    assert!(st["lines"][0] == "started", "{st}");
    state_of(&s, &attended, "stalled").await;

    let key = format!("agent-state:{silent_exec}:stalled");
    let stalled = common::outbox::pushes(&s, &key).await;
    assert_eq!(stalled.len(), 1, "{stalled:#?}");
    let text = stalled[0]["message"].as_str().unwrap();
    assert!(text.contains(&format!("[[tower:task={silent}]]")), "{text}");
    assert!(text.contains("restart") && text.contains("stop"), "{text}");
    assert!(text.contains("> started"), "{text}");
    let finished = common::outbox::pushes(&s, &format!("agent-finished:{done}:{done_exec}")).await;
    assert_eq!(finished.len(), 1, "one finished note: {finished:#?}");
    assert!(
        common::outbox::pushes(&s, "agent-state:")
            .await
            .iter()
            .all(|r| r["taskId"] != attended.as_str()),
        "an attended task is never pushed"
    );

    // Back to work and stalled again: no second push of the same state.
    let (st_code, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{silent}/input"),
            Some(json!({"text": "x", "submit": false})),
        )
        .await;
    assert_eq!(st_code, StatusCode::OK, "{out}");
    state_of(&s, &silent, "working").await;
    state_of(&s, &silent, "stalled").await;
    assert_eq!(
        common::outbox::pushes(&s, &key).await.len(),
        1,
        "once per execution and state"
    );

    // A restart of the server (the agents held): nothing pushed again, and
    // the agent idle at its prompt is still idle, not stalled.
    s.shutdown().await;
    let s = common::start_with(&data, |cfg| {
        cfg.outbox.max_in_flight = 0;
    })
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(task(&s, &done).await["agentState"]["state"], "idle");
    assert_eq!(
        common::outbox::pushes(&s, &key).await.len(),
        1,
        "not pushed again"
    );
    assert_eq!(
        common::outbox::pushes(&s, &format!("agent-finished:{done}:"))
            .await
            .len(),
        1
    );

    // The replies, through the gateway's continuation (the OWNER's).
    gateway::owners(&s, "openclaw", &["42"]).await;
    let token = gateway::secret(&data, "gateway.token");
    let reply = |pmid: &str, t: &str, content: &str| {
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100777",
            "platformMessageId": pmid, "senderId": "42", "taskId": t, "content": content})
    };
    let (st_code, out) = s
        .call(
            "PUT",
            gateway::TASK,
            Some(&token),
            Some(reply("m1", &silent, "restart")),
        )
        .await;
    assert_eq!(st_code, StatusCode::OK, "{out}");
    assert_eq!(
        (&out["mode"], &out["action"]),
        (&json!("agent_action"), &json!("resume")),
        "{out}"
    );
    let restarted = out["executionId"].as_str().unwrap().to_string();
    assert_ne!(restarted, silent_exec, "a new execution of its agent");
    let t = task(&s, &silent).await;
    assert_eq!(t["execution"]["status"], "RUNNING", "{t}");
    let (st_code, out) = s
        .call(
            "PUT",
            gateway::TASK,
            Some(&token),
            Some(reply("m2", &silent, "stop")),
        )
        .await;
    assert_eq!(st_code, StatusCode::OK, "{out}");
    assert_eq!(out["action"], "stop", "{out}");
    let t = task(&s, &silent).await;
    assert_eq!(t["execution"]["status"], "STOPPED", "{t}");
    // A stopped agent is not a crash to tell.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        common::outbox::pushes(&s, &format!("agent-state:{restarted}:"))
            .await
            .is_empty(),
        "a person's stop is not pushed"
    );
    s.shutdown().await;
    drop(reaper);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unattended_failure_is_pushed_with_its_last_lines() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(&dir.path().join("data"), |cfg| {
        cfg.holders.enabled = false;
        cfg.outbox.max_in_flight = 0;
    })
    .await;
    channel(&s, dir.path()).await;
    let boom = shell_task(&s, "boom", "echo 'Error: boom'; sleep 1; exit 3").await;
    unattended(&s, &boom).await;
    let exec = start(&s, &boom).await;
    state_of(&s, &boom, "exited").await;
    let rows = common::outbox::pushes(&s, &format!("agent-state:{exec}:exited")).await;
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let text = rows[0]["message"].as_str().unwrap();
    assert!(text.contains("exited with code 3"), "{text}");
    assert!(text.contains("> Error: boom"), "{text}");
    assert!(text.contains(&format!("[[tower:task={boom}]]")), "{text}");
    s.shutdown().await;
}

/// Claude Code's Notification hook (`harness hook notification`, the real
/// hook command's function against the server): a permission prompt is
/// waiting for a person and stays so past the stall threshold (an agent
/// without it stalls meanwhile); `idle_prompt` is idle; any other
/// notification changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clis_notifications_are_waiting_not_stalled() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(&dir.path().join("data"), |cfg| {
        cfg.holders.enabled = false;
    })
    .await;
    stall_after(&s, 2).await;
    let asked = shell_task(&s, "asked", "exec sleep 600").await;
    let silent = shell_task(&s, "silent", "exec sleep 600").await;
    for t in [&asked, &silent] {
        start(&s, t).await;
        state_of(&s, t, "working").await;
    }
    let notify = |task: &str, event: Value| {
        let env = harness_server::hooks::HookEnv {
            task_id: Some(task.to_string()),
            has_parent: false,
            signal_dir: None,
            api_url: Some(s.url("")),
            api_token: Some(s.admin.clone()),
            execution_id: None,
            approval_snapshot: None,
        };
        tokio::task::spawn_blocking(move || {
            let out = harness_server::hooks::notification(Some(&event.to_string()), &env);
            assert_eq!(out.exit_code, 0, "the hook never blocks the agent");
            assert!(out.stdout.is_empty(), "{}", out.stdout);
        })
    };
    notify(
        &asked,
        json!({"hook_event_name": "Notification", "notification_type": "permission_prompt",
            "message": "Claude needs your permission to use Bash"}),
    )
    .await
    .unwrap();
    let st = state_of(&s, &asked, "waiting_for_person").await;
    assert!(st.get("dialogTitle").is_none(), "{st}");
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .contains("the CLI's own prompt"),
        "{st}"
    );
    // Past the stall threshold: the silent one stalls, the asked one waits.
    state_of(&s, &silent, "stalled").await;
    assert_eq!(
        task(&s, &asked).await["agentState"]["state"],
        "waiting_for_person"
    );

    // Another kind of notification says nothing of the turn.
    let (code, out) = s
        .admin(
            "POST",
            "/api/internal/hooks/notification",
            Some(json!({"taskId": asked, "notificationType": "auth_success"})),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{out}");
    assert_eq!(out["noted"], false, "{out}");
    assert_eq!(
        task(&s, &asked).await["agentState"]["state"],
        "waiting_for_person"
    );

    // Waiting at its prompt for a while: idle (never stalled).
    notify(
        &asked,
        json!({"notification_type": "idle_prompt", "message": "Claude is waiting for your input"}),
    )
    .await
    .unwrap();
    state_of(&s, &asked, "idle").await;

    // A bad body: a clear error naming the field.
    let (code, out) = s
        .admin(
            "POST",
            "/api/internal/hooks/notification",
            Some(json!({"taskId": asked, "notificationType": 7})),
        )
        .await;
    assert!(code.is_client_error(), "{code} {out}");
    assert!(out.to_string().contains("notificationType"), "{out}");
    s.shutdown().await;
}
