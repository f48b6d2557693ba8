//! Recovered on its own (`harness_core::agent_actions`): a real server with
//! the agent double in real PTYs; each test reports the agent's state as
//! the watcher would (`Agents::plan_recovery` with a `StateChange`) and
//! watches what Harness then does in the terminal — "continue" typed once
//! at a usage limit's reset, a crash restarted once with its session and
//! then escalated at the cap, an overload loop continued after a doubling
//! backoff and then escalated, a Codex-shaped dialog answered with the key
//! of its option that keeps the model, a person's reply or Stop before the
//! due time cancelling it.

use crate::{common, reboot_resume::Reaper};

use common::until;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use chrono::Utc;
use harness_core::{
    agent_actions::{ActionKind, ActionReason, ActionState, RecoveryPlan, Tell},
    agent_state::{AgentState, ErrorKind, StateChange},
};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The gateway double behind OpenClaw and one active unattended target
/// (unattended mode needs a channel).
pub(crate) async fn channel(s: &common::Server, sent: &Path) {
    common::outbox::unattended_channel(s, sent).await;
}

async fn set_policy(s: &common::Server, policy: Value) {
    let (st, out) = s.admin("PUT", "/api/settings/recovery", Some(policy)).await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

/// An unattended task of the Claude-shaped double, its script read from
/// `<dir>/<title>.script` at each start, its inputs logged.
pub(crate) async fn double_task(
    s: &common::Server,
    dir: &Path,
    title: &str,
    agent: Value,
) -> String {
    double_task_under(s, dir, title, agent, None).await
}

/// [`double_task`], derived from `parent` when given.
pub(crate) async fn double_task_under(
    s: &common::Server,
    dir: &Path,
    title: &str,
    agent: Value,
    parent: Option<&str>,
) -> String {
    let mut body = json!({"title": title, "agent": {"provider": "claude",
        "command": [common::double().display().to_string()], "cwd": std::env::temp_dir(),
        "env": {"HARNESS_DOUBLE_SCRIPT_FILE": dir.join(format!("{title}.script")),
            "HARNESS_DOUBLE_SESSION_ID": format!("sess-{title}"),
            "HARNESS_DOUBLE_RECORD": dir.join(format!("{title}.record")),
            "HARNESS_DOUBLE_INPUT_LOG": dir.join(format!("{title}.inputs"))}}});
    if let Value::Object(extra) = agent {
        for (k, v) in extra {
            body["agent"][k] = v;
        }
    }
    if let Some(parent) = parent {
        body["parentTaskId"] = json!(parent);
    }
    let (st, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let id = t["id"].as_str().unwrap().to_string();
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{id}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    id
}

pub(crate) fn script(dir: &Path, title: &str, text: &str) {
    std::fs::write(dir.join(format!("{title}.script")), text).unwrap();
}

/// Start the task; answers its execution once the double reported its
/// session (it is at its prompt then) and the server's watcher recorded
/// its state: a change the test reports after that is not overtaken by the
/// watcher's first look (which would cancel what it planned, as a newer
/// state of the agent does).
pub(crate) async fn start(s: &common::Server, task: &str, session: &str) -> String {
    let (st, out) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let exec = out["executionId"].as_str().unwrap().to_string();
    until(
        "the session reported and the state recorded",
        Duration::from_secs(30),
        || async {
            let v = task_json(s, task).await;
            // (Or already past it: a crash restarted at once.)
            (v["execution"]["sessionId"] == session
                && (v["execution"]["id"] != exec.as_str() || v["agentState"]["state"].is_string()))
            .then_some(())
        },
    )
    .await;
    exec
}

pub(crate) async fn task_json(s: &common::Server, task: &str) -> Value {
    let (st, t) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
    assert_eq!(st, StatusCode::OK, "{t}");
    t
}

/// What reached the agent: each submitted input, in order.
fn inputs(dir: &Path, title: &str) -> Vec<String> {
    common::json_lines(&dir.join(format!("{title}.inputs")))
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

pub(crate) fn continues(dir: &Path, title: &str) -> usize {
    inputs(dir, title)
        .iter()
        .filter(|i| i.as_str() == "continue")
        .count()
}

/// `t` at the millisecond precision the database keeps.
fn ms(t: chrono::DateTime<Utc>) -> chrono::DateTime<Utc> {
    chrono::DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap()
}

fn change(task: &str, exec: &str, state: AgentState) -> StateChange {
    StateChange {
        task_id: task.into(),
        execution_id: exec.into(),
        previous: Some(AgentState::Working),
        state,
        lines: Vec::new(),
        reset_at: None,
        at: ms(Utc::now()),
    }
}

fn gave_up() -> AgentState {
    AgentState::Erroring {
        kind: ErrorKind::Overloaded,
        attempt: None,
        of: None,
        gave_up: true,
    }
}

/// The task's actions as REST shows them, newest first.
async fn actions(s: &common::Server, task: &str) -> Vec<Value> {
    let (st, out) = s
        .admin("GET", &format!("/api/tasks/{task}/recovery"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    out["actions"].as_array().unwrap().clone()
}

async fn action_state(s: &common::Server, id: &str) -> ActionState {
    s.running
        .harness
        .agents()
        .agent_action(id)
        .await
        .unwrap()
        .state
}

async fn stop(s: &common::Server, task: &str) {
    let (st, out) = s
        .admin("POST", &format!("/api/tasks/{task}/stop"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_usage_limit_is_woken_with_one_continue_at_its_reset() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    channel(&s, &dir.path().join("sent.jsonl")).await;
    // The printed reset is the time: no margin after it.
    set_policy(&s, json!({"usageLimitMarginSecs": 0})).await;
    script(
        dir.path(),
        "limited",
        "session_start\nsay Claude usage limit reached.",
    );
    let t = double_task(&s, dir.path(), "limited", json!({})).await;
    let _reaper = Reaper(vec![t.clone()]);
    let exec = start(&s, &t, "sess-limited").await;

    let mut c = change(&t, &exec, AgentState::UsageLimited { reset: None });
    // Far enough ahead that the repeat below finds the action still open on
    // a loaded machine (a done action is a closed episode: a new one).
    let reset = ms(Utc::now() + chrono::Duration::seconds(8));
    c.reset_at = Some(reset);
    c.lines = vec!["  ⎿  You've hit your 5-hour limit · resets 12:26pm (UTC)".into()];
    let plan = s.running.harness.agents().plan_recovery(&c).await.unwrap();
    let action = plan.action.clone().expect("a wake-up is planned");
    assert!(plan.created);
    assert_eq!(plan.tell, Tell::WillResumeAt(reset), "told when it resumes");
    assert_eq!(
        (action.action, action.reason, action.due_at),
        (ActionKind::Continue, ActionReason::UsageLimit, reset)
    );
    // The watcher again after a restart of the server: the same plan.
    let again = s
        .running
        .harness
        .agents()
        .plan_recovery(&StateChange {
            previous: None,
            at: Utc::now(),
            ..c.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        again,
        RecoveryPlan {
            created: false,
            ..plan.clone()
        },
        "idempotent: one action per episode (repeated {} after the reset)",
        Utc::now() - reset
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    let typed_at = loop {
        if continues(dir.path(), "limited") > 0 {
            break Utc::now();
        }
        if Instant::now() > deadline {
            let shown = actions(&s, &t).await;
            let screen = s
                .admin("GET", &format!("/api/tasks/{t}/screen"), None)
                .await
                .1;
            panic!("continue never typed: {shown:#?}\n{screen}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        typed_at >= reset,
        "typed at {typed_at}, before the reset {reset}"
    );
    until("the action done", Duration::from_secs(10), || async {
        (action_state(&s, &action.id).await == ActionState::Done).then_some(())
    })
    .await;
    let done = s
        .running
        .harness
        .agents()
        .agent_action(&action.id)
        .await
        .unwrap();
    let delivery = done.delivery_id.clone().expect("typed through a delivery");
    until(
        "the delivery delivered",
        Duration::from_secs(10),
        || async {
            let (_, d) = s
                .admin("GET", &format!("/api/deliveries/{delivery}"), None)
                .await;
            (d["state"] == "DELIVERED").then_some(())
        },
    )
    .await;
    assert_eq!(continues(dir.path(), "limited"), 1, "typed once");
    // Shown on the task's timeline.
    let shown = actions(&s, &t).await;
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert_eq!(shown[0]["state"], "DONE");
    assert_eq!(shown[0]["reason"], "usage_limit");
    stop(&s, &t).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crash_mid_turn_is_restarted_once_with_its_session_then_escalated_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    channel(&s, &dir.path().join("sent.jsonl")).await;
    // A second after the exit (a restart at once: `agent_actions_exit.rs`).
    set_policy(&s, json!({"crashRestartDelaySecs": 1})).await;
    // Mid-turn: it reports its session, works, and dies.
    script(
        dir.path(),
        "crasher",
        "session_start\nsay working on it\nsleep 300\nexit 3",
    );
    let t = double_task(
        &s,
        dir.path(),
        "crasher",
        json!({"recovery": {"crashMaxPerHour": 1}}),
    )
    .await;
    let _reaper = Reaper(vec![t.clone()]);
    let first = start(&s, &t, "sess-crasher").await;
    // Its resumed run stays up (the double read its script when it started;
    // the restart comes at once after the crash).
    script(dir.path(), "crasher", "session_start");
    until("the exit recorded", Duration::from_secs(20), || async {
        let v = task_json(&s, &t).await;
        (v["execution"]["status"] == "FAILED" || v["execution"]["id"] != first.as_str())
            .then_some(())
    })
    .await;
    // The exit's own record plans the restart (nothing here plays the
    // watcher), and tells nobody: recovered, not an alarm yet.
    let action = until("the restart planned", Duration::from_secs(20), || async {
        s.running
            .harness
            .agents()
            .agent_actions(&t)
            .await
            .ok()?
            .into_iter()
            .find(|a| a.action == ActionKind::Restart)
    })
    .await;
    assert_eq!(action.execution_id, first);
    assert!(
        common::outbox::pushes(&s, &format!("agent-state:{first}:"))
            .await
            .is_empty(),
        "no alarm for a crash the recovery restarts"
    );
    let record = dir.path().join("crasher.record");
    let runs = until("restarted", Duration::from_secs(30), || async {
        let runs = common::json_lines(&record);
        (runs.len() >= 2).then_some(runs)
    })
    .await;
    assert_eq!(
        runs[1]["resume"], "sess-crasher",
        "with its session: {:#}",
        runs[1]
    );
    until(
        "continue typed into the resumed agent",
        Duration::from_secs(20),
        || async { (continues(dir.path(), "crasher") == 1).then_some(()) },
    )
    .await;
    let done = s
        .running
        .harness
        .agents()
        .agent_action(&action.id)
        .await
        .unwrap();
    assert_eq!(done.state, ActionState::Done);
    let second = done
        .started_execution_id
        .clone()
        .expect("the new execution");
    assert_ne!(second, first);
    // The same crash reported again (a restarted watcher): nothing new.
    let again = s
        .running
        .harness
        .agents()
        .plan_recovery(&change(&t, &first, AgentState::Exited { code: 3 }))
        .await
        .unwrap();
    assert_eq!(again.tell, Tell::NotMine, "no longer the latest execution");
    assert!(again.action.is_none());

    // It crashes again within the hour: past its cap (1), told, not restarted.
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "!exit 3", "submit": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    until(
        "the second exit recorded",
        Duration::from_secs(20),
        || async {
            let v = task_json(&s, &t).await;
            (v["execution"]["id"] == second.as_str() && v["execution"]["status"] == "FAILED")
                .then_some(())
        },
    )
    .await;
    let capped = s
        .running
        .harness
        .agents()
        .plan_recovery(&change(&t, &second, AgentState::Crashed { signal: 9 }))
        .await
        .unwrap();
    assert_eq!(capped.tell, Tell::Alarm { escalated: true });
    assert!(capped.action.is_none());
    // The exit's own record told the person so, once.
    let told = until("the escalation pushed", Duration::from_secs(20), || async {
        let rows = common::outbox::pushes(&s, &format!("agent-state:{second}:")).await;
        (!rows.is_empty()).then_some(rows)
    })
    .await;
    assert_eq!(told.len(), 1, "{told:#?}");
    let text = told[0]["message"].as_str().unwrap_or("");
    assert!(text.contains("does not try again"), "{text}");
    assert_eq!(common::json_lines(&record).len(), 2, "never a third start");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_overload_loop_gets_continue_after_a_doubling_backoff_then_is_escalated() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    channel(&s, &dir.path().join("sent.jsonl")).await;
    set_policy(
        &s,
        json!({"apiErrorBackoffSecs": 1, "apiErrorMaxPerHour": 2}),
    )
    .await;
    script(dir.path(), "overloaded", "session_start");
    let t = double_task(&s, dir.path(), "overloaded", json!({})).await;
    let _reaper = Reaper(vec![t.clone()]);
    let exec = start(&s, &t, "sess-overloaded").await;
    let h = &s.running.harness;
    // Still retrying by itself: nothing yet.
    let retrying = AgentState::Erroring {
        kind: ErrorKind::Overloaded,
        attempt: Some(3),
        of: Some(10),
        gave_up: false,
    };
    let plan = h
        .agents()
        .plan_recovery(&change(&t, &exec, retrying))
        .await
        .unwrap();
    assert_eq!((plan.tell, plan.action), (Tell::Nothing, None));
    for (n, backoff) in [(1, 1), (2, 2)] {
        let c = change(&t, &exec, gave_up());
        let plan = h.agents().plan_recovery(&c).await.unwrap();
        assert_eq!(plan.tell, Tell::Nothing);
        let action = plan.action.expect("a continue");
        assert_eq!(
            (action.due_at - c.at).num_seconds(),
            backoff,
            "the backoff doubles"
        );
        until("continue typed", Duration::from_secs(20), || async {
            (continues(dir.path(), "overloaded") == n).then_some(())
        })
        .await;
        until("the action done", Duration::from_secs(10), || async {
            (action_state(&s, &action.id).await == ActionState::Done).then_some(())
        })
        .await;
    }
    // The third loop within the hour: the cap (2) is reached — told.
    let plan = h
        .agents()
        .plan_recovery(&change(&t, &exec, gave_up()))
        .await
        .unwrap();
    assert_eq!(plan.tell, Tell::Alarm { escalated: true });
    assert!(plan.action.is_none());
    assert_eq!(continues(dir.path(), "overloaded"), 2);
    stop(&s, &t).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_persons_reply_or_stop_before_the_due_time_cancels_the_action() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    channel(&s, &dir.path().join("sent.jsonl")).await;
    set_policy(&s, json!({"usageLimitMarginSecs": 0})).await;
    script(
        dir.path(),
        "asker",
        "session_start\nask_human Which database?\nwait_reply",
    );
    let t = double_task(&s, dir.path(), "asker", json!({})).await;
    let _reaper = Reaper(vec![t.clone()]);
    let exec = start(&s, &t, "sess-asker").await;
    until("the ask open", Duration::from_secs(20), || async {
        (task_json(&s, &t).await["openAsk"] == true).then_some(())
    })
    .await;
    let h = &s.running.harness;
    let mut c = change(&t, &exec, AgentState::UsageLimited { reset: None });
    c.reset_at = Some(Utc::now() + chrono::Duration::seconds(4));
    let action = h.agents().plan_recovery(&c).await.unwrap().action.unwrap();
    assert_eq!(action_state(&s, &action.id).await, ActionState::Pending);
    // The person answers first.
    let (st, out) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "postgres"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let cancelled = h.agents().agent_action(&action.id).await.unwrap();
    assert_eq!(cancelled.state, ActionState::Cancelled);
    assert_eq!(cancelled.last_error.as_deref(), Some("a person replied"));
    until("the reply typed", Duration::from_secs(20), || async {
        inputs(dir.path(), "asker")
            .iter()
            .any(|i| i.contains("postgres"))
            .then_some(())
    })
    .await;
    // A later plan of the same kind, then Stop: cancelled as well.
    let mut c = change(&t, &exec, AgentState::UsageLimited { reset: None });
    c.reset_at = Some(Utc::now() + chrono::Duration::seconds(4));
    let next = h.agents().plan_recovery(&c).await.unwrap().action.unwrap();
    assert_ne!(next.id, action.id, "a new episode");
    stop(&s, &t).await;
    assert_eq!(action_state(&s, &next.id).await, ActionState::Cancelled);
    // Past both due times nothing was typed by Harness.
    until("past the due times", Duration::from_secs(10), || async {
        (Utc::now() > c.reset_at? + chrono::Duration::seconds(2)).then_some(())
    })
    .await;
    assert_eq!(
        continues(dir.path(), "asker"),
        0,
        "{:?}",
        inputs(dir.path(), "asker")
    );
    let shown = actions(&s, &t).await;
    assert!(
        shown.iter().all(|a| a["state"] == "CANCELLED"),
        "{shown:#?}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_clis_dialog_is_answered_with_the_key_of_the_option_that_keeps_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    channel(&s, &dir.path().join("sent.jsonl")).await;
    // Codex's rate-limit dialog as it draws it; then one key is read raw
    // (a pasted "2" would arrive wrapped in bracketed-paste marks).
    let picked = dir.path().join("picked");
    let dialog = "printf '\\nApproaching rate limits\\nSwitch to gpt-6-luna for lower credit usage?\\n\\n\
        › 1. Switch to gpt-6-luna\\n  2. Keep current model\\n\\n  enter select · esc back\\n'";
    let line = format!(
        "{dialog}; stty raw -echo; head -c 1 > '{}'; sleep 600",
        picked.display()
    );
    let (st, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "dialog", "agent": {"provider": "codex",
                "command": ["sh", "-c", line], "cwd": std::env::temp_dir()}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let _reaper = Reaper(vec![t.clone()]);
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, out) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let exec = out["executionId"].as_str().unwrap().to_string();
    until("the dialog drawn", Duration::from_secs(20), || async {
        let (_, v) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        v["text"]
            .as_str()
            .unwrap_or_default()
            .contains("esc back")
            .then_some(())
    })
    .await;
    let state = AgentState::WaitingForPerson {
        dialog: Some((
            "Approaching rate limits — Switch to gpt-6-luna for lower credit usage?".into(),
            vec!["Switch to gpt-6-luna".into(), "Keep current model".into()],
        )),
    };
    let plan = s
        .running
        .harness
        .agents()
        .plan_recovery(&change(&t, &exec, state))
        .await
        .unwrap();
    assert_eq!(plan.tell, Tell::Nothing, "answered, not asked");
    let action = plan.action.expect("the dialog answered");
    assert_eq!(
        (action.action, action.text.as_deref()),
        (ActionKind::AnswerDialog, Some("2"))
    );
    let key = until(
        "the key read by the CLI",
        Duration::from_secs(20),
        || async { std::fs::read(&picked).ok().filter(|k| !k.is_empty()) },
    )
    .await;
    assert_eq!(key, b"2", "one key, the option that keeps the model");
    let done = until("the action done", Duration::from_secs(10), || async {
        let a = s
            .running
            .harness
            .agents()
            .agent_action(&action.id)
            .await
            .unwrap();
        (a.state == ActionState::Done).then_some(a)
    })
    .await;
    assert!(
        done.result
            .as_deref()
            .is_some_and(|r| r.contains("Keep current model")),
        "{done:?}"
    );
    // A dialog with no option that keeps the task as configured: told.
    let question = AgentState::WaitingForPerson {
        dialog: Some(("Pick one".into(), vec!["Red".into(), "Blue".into()])),
    };
    let plan = s
        .running
        .harness
        .agents()
        .plan_recovery(&change(&t, &exec, question))
        .await
        .unwrap();
    assert_eq!((plan.tell, plan.action), (Tell::Question, None));
    stop(&s, &t).await;
    s.shutdown().await;
}
