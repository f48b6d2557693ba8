//! A timed resume survives a SIGKILL of the server: the real `harness
//! serve` runs an unattended agent (the double, in its holder: it outlives
//! the server), the agent's usage limit is planned (`plan_recovery`, in
//! this test process on the same database, as the watcher would) with its
//! reset a few seconds ahead, the server is SIGKILLed before then and
//! started again: at the reset "continue" is typed into the agent once. On
//! SQLite and on PostgreSQL.

use crate::{common, reboot_resume::Reaper};

use common::until;

use common::process::ServerProcess as Life;

use std::{path::Path, time::Duration};

use chrono::Utc;
use harness_core::{
    Harness, HarnessConfig,
    agent_actions::{ActionState, Tell},
    agent_state::{AgentState, StateChange},
};
use harness_store::AnyStore;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn ok(life: &Life, method: &str, path: &str, body: Option<Value>) -> Value {
    let (st, out) = life.call(method, path, body).await;
    assert!(st.is_success(), "{method} {path}: {st} {out}");
    out
}

fn continues(inputs: &Path) -> usize {
    common::json_lines(inputs)
        .iter()
        .filter(|v| v.as_str() == Some("continue"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_timed_resume_pending_at_a_sigkill_is_done_once_after_the_restart() {
    resume_across_a_kill(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_timed_resume_pending_at_a_sigkill_is_done_once_after_the_restart_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        resume_across_a_kill(Some(&db.url)).await;
    }
}

async fn resume_across_a_kill(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let life = Life::start_on(&data, db).await;
    common::outbox::unattended_channel(&life, &dir.path().join("sent.jsonl")).await;
    ok(
        &life,
        "PUT",
        "/api/settings/recovery",
        Some(json!({"usageLimitMarginSecs": 0})),
    )
    .await;
    let inputs = dir.path().join("parked.inputs");
    let task = ok(
        &life,
        "POST",
        "/api/tasks",
        Some(json!({"title": "parked", "agent": {"provider": "claude",
            "command": [common::double().display().to_string()], "cwd": std::env::temp_dir(),
            "env": {"HARNESS_DOUBLE_SCRIPT": "session_start",
                "HARNESS_DOUBLE_SESSION_ID": "sess-parked",
                "HARNESS_DOUBLE_INPUT_LOG": &inputs}}})),
    )
    .await;
    let t = task["id"].as_str().unwrap().to_string();
    let _reaper = Reaper(vec![t.clone()]);
    ok(
        &life,
        "PUT",
        &format!("/api/tasks/{t}/unattended"),
        Some(json!({"on": true})),
    )
    .await;
    let exec = ok(&life, "POST", &format!("/api/tasks/{t}/start"), None).await["executionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Its session reported and its state recorded by the server's watcher
    // (a later first look would be a newer state and cancel the wake-up).
    until("the session reported", Duration::from_secs(30), || async {
        let v = ok(&life, "GET", &format!("/api/tasks/{t}"), None).await;
        (v["execution"]["sessionId"] == "sess-parked" && v["agentState"]["state"].is_string())
            .then_some(())
    })
    .await;

    // The watcher's report, through a core on the server's database.
    let url = match db {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}", data.join("harness.db").display()),
    };
    let store = AnyStore::open(&url).await.unwrap().port();
    let h = Harness::new(store, HarnessConfig::new("x".repeat(64)));
    let reset = Utc::now() + chrono::Duration::seconds(6);
    // At the millisecond precision the database keeps.
    let reset = chrono::DateTime::from_timestamp_millis(reset.timestamp_millis()).unwrap();
    let plan = h
        .agents()
        .plan_recovery(&StateChange {
            task_id: t.clone(),
            execution_id: exec.clone(),
            previous: Some(AgentState::Working),
            state: AgentState::UsageLimited { reset: None },
            lines: vec!["■ You’ve hit your usage limit. try again at 12:26 PM.".into()],
            reset_at: Some(reset),
            at: Utc::now(),
        })
        .await
        .unwrap();
    assert_eq!(plan.tell, Tell::WillResumeAt(reset));
    let action = plan.action.unwrap();

    // Killed while it waits for its time.
    life.kill();
    assert_eq!(
        h.agents().agent_action(&action.id).await.unwrap().state,
        ActionState::Pending,
        "killed before it was due"
    );
    assert_eq!(continues(&inputs), 0);
    let life = Life::start_on(&data, db).await;
    let typed_at = until(
        "continue typed after the restart",
        Duration::from_secs(30),
        || async { (continues(&inputs) > 0).then(Utc::now) },
    )
    .await;
    assert!(
        typed_at >= reset,
        "typed at {typed_at}, before the reset {reset}"
    );
    let done = until("the action done", Duration::from_secs(10), || async {
        let a = h.agents().agent_action(&action.id).await.unwrap();
        (a.state == ActionState::Done).then_some(a)
    })
    .await;
    let delivery = done.delivery_id.expect("typed through a delivery");
    until(
        "its delivery delivered",
        Duration::from_secs(10),
        || async {
            let d = ok(&life, "GET", &format!("/api/deliveries/{delivery}"), None).await;
            (d["state"] == "DELIVERED").then_some(())
        },
    )
    .await;
    assert_eq!(continues(&inputs), 1, "typed once");
    let (st, out) = life
        .call("POST", &format!("/api/tasks/{t}/stop"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    life.stop();
}
