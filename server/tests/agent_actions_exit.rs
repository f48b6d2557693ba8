//! A crash restarted at once (`crashRestartDelaySecs` 0) waits for its
//! exit's own handling: the exit's record plans the restart, and the action
//! worker may claim it before that record has finished — the execution
//! finished, its state and push written, the parent's inbox told. The
//! restart starts only once all of that is settled (`terminals::exits`):
//! the old execution FAILED with its code (never superseded by the new
//! start), its parent's failure event written before the new execution
//! exists, the agent restarted exactly once with its session, and the new
//! execution receiving "continue". Real PTYs, the agent double, a
//! multi-threaded runtime.

use crate::{
    agent_actions::{channel, continues, double_task_under, script, start, task_json},
    common,
    reboot_resume::Reaper,
};

use common::until;

use std::time::Duration;

use chrono::{DateTime, Utc};
use harness_core::{
    agent_actions::{ActionKind, ActionState},
    model::ExecutionStatus,
};
use reqwest::StatusCode;
use serde_json::json;

fn time(v: &serde_json::Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|e| panic!("not a time: {v} ({e})"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crash_restarted_at_once_waits_for_its_exit_to_be_recorded() {
    let began = Utc::now() - chrono::Duration::seconds(1);
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    channel(&s, &dir.path().join("sent.jsonl")).await;
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/recovery",
            Some(json!({"crashRestartDelaySecs": 0})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    // A derived task: its exit is told to its parent's inbox, by the exit's
    // own path.
    let parent = s.task("the parent").await;
    // Its first run stays at its prompt until told to crash (the resumed
    // run reads the same script: it stays up).
    script(dir.path(), "atonce", "session_start");
    let t = double_task_under(
        &s,
        dir.path(),
        "atonce",
        json!({"recovery": {"crashMaxPerHour": 1}}),
        Some(parent.as_str()),
    )
    .await;
    let _reaper = Reaper(vec![t.clone()]);
    let first = start(&s, &t, "sess-atonce").await;
    // Mid-turn, it dies.
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": "!exit 3", "submit": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let record = dir.path().join("atonce.record");
    let runs = until("restarted", Duration::from_secs(30), || async {
        let runs = common::json_lines(&record);
        (runs.len() >= 2).then_some(runs)
    })
    .await;
    assert_eq!(
        runs[1]["resume"], "sess-atonce",
        "with its session: {:#}",
        runs[1]
    );
    until(
        "continue typed into the resumed agent",
        Duration::from_secs(20),
        || async { (continues(dir.path(), "atonce") == 1).then_some(()) },
    )
    .await;
    let action = until("the restart done", Duration::from_secs(20), || async {
        s.running
            .harness
            .agents()
            .agent_actions(&t)
            .await
            .ok()?
            .into_iter()
            .find(|a| a.action == ActionKind::Restart && a.state == ActionState::Done)
    })
    .await;
    assert_eq!(action.execution_id, first);
    let second = action
        .started_execution_id
        .clone()
        .expect("the new execution");
    assert_ne!(second, first);
    // The new execution got it: its terminal shows it.
    let (st, screen) = s
        .admin("GET", &format!("/api/tasks/{t}/screen"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{screen}");
    let text = screen["text"].as_str().unwrap_or_default().to_string();
    assert!(text.contains("RESUMED sess-atonce"), "{text}");
    assert!(text.contains("GOT INPUT: continue"), "{text}");
    let v = task_json(&s, &t).await;
    assert_eq!(v["execution"]["id"], second.as_str());
    assert_eq!(v["execution"]["status"], "RUNNING");
    // The old execution's exit as it happened: FAILED with its code, its
    // state recorded — not superseded by a start that found it still live.
    let old = s
        .running
        .harness
        .agents()
        .agent_state(&first)
        .await
        .unwrap()
        .expect("the exit's state recorded");
    assert_eq!((old.state.as_str(), old.exit_code), ("exited", Some(3)));
    let h = &s.running.harness;
    let list = h
        .store()
        .watched_executions(&h.config().node_id, began, 100)
        .await
        .unwrap();
    let old_exec = list
        .iter()
        .find(|e| e.id == first)
        .unwrap_or_else(|| panic!("{list:#?}"));
    assert_eq!(
        (old_exec.status, old_exec.exit_code),
        (ExecutionStatus::Failed, Some(3)),
        "{old_exec:#?}"
    );
    // The parent heard of the failure before the restart began: the exit
    // was settled first.
    let (st, inbox) = s
        .admin("GET", &format!("/api/tasks/{parent}/inbox"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{inbox}");
    let failed: Vec<_> = inbox["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e["kind"] == "CHILD_EXECUTION_FAILED" && e["executionId"] == first.as_str())
        .collect();
    assert_eq!(failed.len(), 1, "{inbox:#}");
    let new_exec = list
        .iter()
        .find(|e| e.id == second)
        .unwrap_or_else(|| panic!("{list:#?}"));
    assert!(
        time(&failed[0]["createdAt"]) <= new_exec.created_at,
        "the restart began before the exit was recorded: {:#} / {new_exec:#?}",
        failed[0]
    );
    // Once, with no alarm: the action did it at its first attempt.
    assert_eq!(action.attempts, 1, "{action:?}");
    assert_eq!(
        common::json_lines(&record).len(),
        2,
        "restarted exactly once"
    );
    assert!(
        common::outbox::pushes(&s, &format!("agent-state:{first}:"))
            .await
            .is_empty(),
        "no alarm for a crash the recovery restarts"
    );
    s.shutdown().await;
}
