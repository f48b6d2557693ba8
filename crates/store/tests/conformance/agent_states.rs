//! The agent states' rows (migration 0037): an execution's state is one
//! row, written with its push and its parent's event in one transaction;
//! `since` stays while only a detail changes; a push and an event are
//! written once per key however often the write comes; the task view
//! carries the latest execution's state; the newest hook event is kept.

use chrono::Duration;
use harness_core::{
    agent_state::{AgentState, ErrorKind, StateChange, record_of},
    ids,
    model::AgentStateRecord,
    store::{AgentStateWrite, Dedup, EventKind, NewEvent, NewOutbound, NewTask, Priority},
};
use serde_json::json;

use super::{Backend, support::*};

fn record(task: &str, execution: &str, state: AgentState, at_secs: i64) -> AgentStateRecord {
    record_of(&StateChange {
        task_id: task.into(),
        execution_id: execution.into(),
        previous: None,
        state,
        lines: vec!["✻ 529 Overloaded · retrying in 2s · attempt 3/10".into()],
        reset_at: None,
        at: now_ms() + Duration::seconds(at_secs),
    })
}

fn push(task: &str, key: &str) -> NewOutbound {
    NewOutbound {
        id: ids::new_id(),
        message_id: None,
        task_id: Some(task.into()),
        dedup: Dedup::Explicit(key.into()),
        gateway: "openclaw".into(),
        downstream: None,
        dest: Some("-100".into()),
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply: false,
        message: "[Agent erroring] …".into(),
        presentation: None,
        now: now_ms(),
        choices: None,
    }
}

fn event(parent: &str, child: &str, execution: &str) -> NewEvent {
    NewEvent {
        id: ids::new_id(),
        parent_task_id: parent.into(),
        source_task_id: child.into(),
        execution_id: Some(execution.into()),
        kind: EventKind::ChildExecutionFailed,
        priority: Priority::High,
        dedup_key: format!("agent-state:erroring:{child}:{execution}"),
        fallback: false,
        execution_review_key: None,
        payload: json!({"agentState": "erroring"}),
        now: now_ms(),
    }
}

fn erroring(attempt: u32) -> AgentState {
    AgentState::Erroring {
        kind: ErrorKind::Overloaded,
        attempt: Some(attempt),
        of: Some(10),
        gave_up: attempt == 10,
    }
}

pub async fn a_state_is_one_row_written_with_its_push_and_parent_event_once(b: &Backend) {
    let s = b.store.as_ref();
    let parent = new_task(s, "parent").await;
    let child = ids::new_id();
    s.create_task(NewTask {
        id: child.clone(),
        title: "child".into(),
        description: None,
        project_id: None,
        parent_task_id: Some(parent.clone()),
        agent: command_agent(),
        now: now_ms(),
    })
    .await
    .unwrap();
    let e = new_execution(s, &child).await.unwrap();
    assert_eq!(s.agent_state(&e).await.unwrap(), None);

    let working = record(&child, &e, AgentState::Working, 0);
    let out = s
        .write_agent_state(AgentStateWrite {
            record: Some(working.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(out.record.as_ref(), Some(&working));
    assert!(out.push.is_none() && out.event.is_none());
    let view = s.get_task(&child).await.unwrap().unwrap();
    assert_eq!(view.agent_state.as_ref(), Some(&working));

    // Erroring, with a push and the parent's event: all in one write.
    let key = format!("agent-state:{e}:erroring");
    let first = record(&child, &e, erroring(3), 10);
    let out = s
        .write_agent_state(AgentStateWrite {
            record: Some(first.clone()),
            push: Some(push(&child, &key)),
            parent_event: Some(event(&parent, &child, &e)),
        })
        .await
        .unwrap();
    assert_eq!(out.record.as_ref().unwrap().since, first.since);
    let pushed = out.push.expect("the push is queued");
    assert_eq!(pushed.dedup_key, key);
    assert_eq!(pushed.task_id.as_deref(), Some(child.as_str()));
    assert!(out.event.is_some(), "the parent's event is added");

    // The next attempt: a detail changes, `since` stays; the push and the
    // event are not written twice.
    let next = record(&child, &e, erroring(10), 20);
    let out = s
        .write_agent_state(AgentStateWrite {
            record: Some(next.clone()),
            push: Some(push(&child, &key)),
            parent_event: Some(event(&parent, &child, &e)),
        })
        .await
        .unwrap();
    let stored = out.record.unwrap();
    assert_eq!(stored.since, first.since, "since the state began");
    assert_eq!((stored.attempt, stored.gave_up), (Some(10), true));
    assert_eq!(stored.updated_at, next.updated_at);
    assert!(out.push.is_none() && out.event.is_none(), "once per key");
    let rows = s.list_outbound(Some(&child), 50).await.unwrap();
    assert_eq!(rows.iter().filter(|r| r.dedup_key == key).count(), 1);
    let events = s.list_workbench_events(&parent, 50).await.unwrap();
    assert_eq!(events.len(), 1, "{events:?}");

    // Another state: a new `since`; every detail round-trips.
    let dialog = record(
        &child,
        &e,
        AgentState::WaitingForPerson {
            dialog: Some(("Which colour?".into(), vec!["Red".into(), "Blue".into()])),
        },
        30,
    );
    s.write_agent_state(AgentStateWrite {
        record: Some(dialog.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(s.agent_state(&e).await.unwrap().as_ref(), Some(&dialog));
    // The task view shows its latest execution's state only.
    let e2 = {
        s.finish_execution(
            &e,
            harness_core::model::ExecutionStatus::Completed,
            Some(0),
            "exited",
            now_ms(),
        )
        .await
        .unwrap();
        new_execution(s, &child).await.unwrap()
    };
    let view = s.get_task(&child).await.unwrap().unwrap();
    assert_eq!(view.execution.unwrap().id, e2);
    assert_eq!(view.agent_state, None);

    // A push alone (the recovery's), once per key.
    let limited = format!("agent-state:{e2}:usage_limited");
    for n in 0..2 {
        let out = s
            .write_agent_state(AgentStateWrite {
                push: Some(push(&child, &limited)),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(out.push.is_some(), n == 0);
        assert!(out.record.is_none());
    }
}

pub async fn the_newest_hook_event_is_kept_per_execution(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "hooks").await;
    let e = new_execution(s, &t).await.unwrap();
    assert_eq!(s.last_hook(&e).await.unwrap(), None);
    let at = now_ms();
    s.note_hook(&e, "stop", at).await.unwrap();
    assert_eq!(s.last_hook(&e).await.unwrap(), Some(("stop".into(), at)));
    let later = at + Duration::seconds(5);
    s.note_hook(&e, "pre_tool_use", later).await.unwrap();
    assert_eq!(
        s.last_hook(&e).await.unwrap(),
        Some(("pre_tool_use".into(), later))
    );
    // Another execution's is its own.
    let other = new_execution(s, &new_task(s, "other").await).await.unwrap();
    assert_eq!(s.last_hook(&other).await.unwrap(), None);
}

/// The waiting count's one query: every open unattended task's latest
/// execution with that execution's recorded state (none when the watcher
/// wrote none); attended tasks and tasks that never ran are not listed.
pub async fn the_latest_runs_of_unattended_tasks_come_with_their_recorded_state(b: &Backend) {
    use harness_core::{
        model::ExecutionStatus,
        store::{NewExecution, RecordedState},
    };
    let s = b.store.as_ref();
    let at = now_ms();
    let run = |task: &str, secs: i64| NewExecution {
        id: ids::new_id(),
        task_id: task.into(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some(NODE.into()),
        now: at + Duration::seconds(secs),
    };
    // Two runs, each with a record: only the later one is listed.
    let stalled = new_task(s, "stalled").await;
    s.set_unattended(&stalled, true, at).await.unwrap();
    let old = s.create_execution(run(&stalled, 0)).await.unwrap().id;
    s.write_agent_state(AgentStateWrite {
        record: Some(record(&stalled, &old, AgentState::LoggedOut, 1)),
        ..Default::default()
    })
    .await
    .unwrap();
    s.finish_execution(&old, ExecutionStatus::Failed, Some(1), "exited", at)
        .await
        .unwrap();
    let latest = s.create_execution(run(&stalled, 5)).await.unwrap().id;
    let stall = record(
        &stalled,
        &latest,
        AgentState::Stalled { silent_secs: 1500 },
        6,
    );
    s.write_agent_state(AgentStateWrite {
        record: Some(stall.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    // A failed run the watcher never saw: no record.
    let failed = new_task(s, "failed").await;
    s.set_unattended(&failed, true, at).await.unwrap();
    let f = s.create_execution(run(&failed, 0)).await.unwrap().id;
    s.finish_execution(
        &f,
        ExecutionStatus::Failed,
        Some(2),
        "spawn_failed",
        at + Duration::seconds(3),
    )
    .await
    .unwrap();
    // Not listed: attended, or unattended without a run.
    let attended = new_task(s, "attended").await;
    s.create_execution(run(&attended, 0)).await.unwrap();
    let never = new_task(s, "never ran").await;
    s.set_unattended(&never, true, at).await.unwrap();

    let ours = [&stalled, &failed, &attended, &never];
    let runs: Vec<_> = s
        .latest_unattended_runs()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| ours.contains(&&r.task_id))
        .collect();
    let mut want = vec![stalled.clone(), failed.clone()];
    want.sort();
    assert_eq!(
        runs.iter().map(|r| r.task_id.clone()).collect::<Vec<_>>(),
        want,
        "by task id, the listed tasks only"
    );
    let of = |id: &str| runs.iter().find(|r| r.task_id == id).unwrap();
    let r = of(&stalled);
    assert_eq!(
        (r.execution_id.as_str(), r.status),
        (latest.as_str(), ExecutionStatus::Running)
    );
    assert!(r.unattended);
    assert_eq!(r.created_at, at + Duration::seconds(5));
    assert_eq!(r.state, Some(RecordedState::of(&stall)));
    let r = of(&failed);
    assert_eq!(
        (r.execution_id.as_str(), r.status),
        (f.as_str(), ExecutionStatus::Failed)
    );
    assert_eq!(
        (r.exit_code, r.ended_at),
        (Some(2), Some(at + Duration::seconds(3)))
    );
    assert_eq!(r.state, None);
    // The same facts as the task view's latest execution and state.
    for r in &runs {
        let view = s.get_task(&r.task_id).await.unwrap().unwrap();
        let e = view.execution.unwrap();
        assert_eq!(
            (e.id.as_str(), e.status, e.exit_code),
            (r.execution_id.as_str(), r.status, r.exit_code)
        );
        assert_eq!(view.agent_state.as_ref().map(RecordedState::of), r.state);
        assert_eq!(view.task.status, r.task_status);
    }
    // Attended again: no longer listed.
    s.set_unattended(&stalled, false, at).await.unwrap();
    assert!(
        !s.latest_unattended_runs()
            .await
            .unwrap()
            .iter()
            .any(|r| r.task_id == stalled)
    );
}
