//! The ungated-run watch's rows (migration 0033): pre-tool checks kept once
//! per task and call; an execution flagged once, with its notice and its
//! push written in the flag's own transaction, whoever flags it and however
//! often; the executions a node's watch reads.

use std::sync::Arc;

use chrono::Duration;
use harness_core::{
    approvals::ToolCall,
    ids,
    model::{ExecutionStatus, MessageKind, MessageState},
    outbox::OutboundState,
    store::{NewToolCheck, NewUngatedFlag, Store, StoreError, UngatedEvidence, ungated_push_key},
    ungated::SeenCall,
};
use serde_json::json;

use super::{Backend, approvals::with_channel, support::*};

fn check(task: &str, key: &str) -> NewToolCheck {
    NewToolCheck {
        task_id: task.into(),
        execution_id: None,
        call_key: key.into(),
        tool: "Bash".into(),
        now: now_ms(),
    }
}

fn flag(
    task: &str,
    execution: &str,
    push: Option<harness_core::store::NewOutbound>,
) -> NewUngatedFlag {
    NewUngatedFlag {
        execution_id: execution.into(),
        task_id: task.into(),
        tool: "Bash".into(),
        call_key: "id:toolu_1".into(),
        evidence: UngatedEvidence::Transcript,
        detail: "Bash: git push --force".into(),
        message_id: ids::new_id(),
        message: "[Ungated run] …".into(),
        push,
        now: now_ms(),
    }
}

fn push_row(task: &str) -> harness_core::store::NewOutbound {
    harness_core::store::NewOutbound {
        id: ids::new_id(),
        message_id: None,
        task_id: Some(task.into()),
        dedup: harness_core::store::Dedup::Explicit("ignored".into()),
        gateway: "openclaw".into(),
        downstream: None,
        dest: None,
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply: false,
        message: "[Ungated run] …".into(),
        presentation: None,
        now: now_ms(),
        choices: None,
    }
}

pub async fn checks_are_kept_once_per_task_and_call(b: &Backend) {
    let s = b.store.as_ref();
    let (t1, t2) = (new_task(s, "one").await, new_task(s, "two").await);
    s.record_tool_check(check(&t1, "id:a")).await.unwrap();
    // A retried check of the same call is kept once, without an error.
    s.record_tool_check(check(&t1, "id:a")).await.unwrap();
    s.record_tool_check(check(&t2, "id:b")).await.unwrap();
    let asked = ["id:a".to_string(), "id:b".into(), "id:c".into()];
    assert_eq!(s.checked_calls(&t1, &asked).await.unwrap(), ["id:a"]);
    assert_eq!(s.checked_calls(&t2, &asked).await.unwrap(), ["id:b"]);
    assert!(s.checked_calls(&t1, &[]).await.unwrap().is_empty());
    // A long list is asked in parts.
    let many: Vec<String> = (0..1000).map(|i| format!("id:m{i}")).collect();
    for k in many.iter().step_by(100) {
        s.record_tool_check(check(&t1, k)).await.unwrap();
    }
    let mut found = b.another().await.checked_calls(&t1, &many).await.unwrap();
    found.sort();
    let mut want: Vec<String> = many.iter().step_by(100).cloned().collect();
    want.sort();
    assert_eq!(found, want);
    // A check of a task that does not exist is refused.
    assert!(matches!(
        s.record_tool_check(check("cnotataskatallxxxxxxxxx", "id:x"))
            .await,
        Err(StoreError::MissingReference(_))
    ));
}

pub async fn an_execution_is_flagged_once_with_its_notice_and_push(b: &Backend) {
    let s = b.store.as_ref();
    let task = new_task(s, "ungated").await;
    let exec = new_execution(s, &task).await.unwrap();
    let first = s
        .flag_ungated(flag(&task, &exec, Some(push_row(&task))))
        .await
        .unwrap();
    assert!(first.created);
    assert_eq!(first.flag.evidence, UngatedEvidence::Transcript);
    assert_eq!(first.flag.detail, "Bash: git push --force");
    let push = first.push.clone().expect("the push");
    assert_eq!(push.dedup_key, ungated_push_key(&exec));
    assert_eq!(push.state, OutboundState::Pending);
    assert_eq!(push.execution_id.as_deref(), Some(exec.as_str()));
    assert_eq!(first.flag.outbound_id.as_deref(), Some(push.id.as_str()));
    let notice = s
        .get_message(first.flag.message_id.as_deref().unwrap())
        .await
        .unwrap()
        .expect("the notice");
    assert_eq!(
        (notice.kind, notice.state),
        (MessageKind::Notify, MessageState::Closed)
    );
    assert_eq!(notice.execution_id.as_deref(), Some(exec.as_str()));
    // Again, from another connection (another node's watch, a restart):
    // nothing written, the first flag answered.
    let again = b
        .another()
        .await
        .flag_ungated(flag(&task, &exec, Some(push_row(&task))))
        .await
        .unwrap();
    assert!(!again.created);
    assert!(again.push.is_none());
    assert_eq!(again.flag, first.flag);
    assert_eq!(
        s.ungated_flags(&task).await.unwrap(),
        std::slice::from_ref(&first.flag)
    );
    assert_eq!(s.list_outbound(Some(&task), 10).await.unwrap().len(), 1);
    // Without a channel: the notice only.
    let exec2 = {
        s.finish_execution(&exec, ExecutionStatus::Completed, Some(0), "exited", now())
            .await
            .unwrap();
        new_execution(s, &task).await.unwrap()
    };
    let second = s.flag_ungated(flag(&task, &exec2, None)).await.unwrap();
    assert!(second.created && second.push.is_none());
    assert_eq!(second.flag.outbound_id, None);
    assert_eq!(s.ungated_flags(&task).await.unwrap().len(), 2);
    assert_eq!(s.list_outbound(Some(&task), 10).await.unwrap().len(), 1);
    // A flag of a missing task writes nothing.
    let missing = "cnotataskatallxxxxxxxxx";
    assert!(
        s.flag_ungated(flag(missing, &ids::new_id(), None))
            .await
            .is_err()
    );
    assert!(s.ungated_flags(missing).await.unwrap().is_empty());
}

pub async fn racing_flags_of_one_execution_write_one_alert(b: &Backend) {
    let s = b.store.clone();
    let task = new_task(s.as_ref(), "raced").await;
    let exec = new_execution(s.as_ref(), &task).await.unwrap();
    let mut stores: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..6 {
        stores.push(b.another().await);
    }
    let runs = stores.into_iter().map(|st| {
        let (task, exec) = (task.clone(), exec.clone());
        tokio::spawn(async move {
            st.flag_ungated(flag(&task, &exec, Some(push_row(&task))))
                .await
                .unwrap()
        })
    });
    let mut created = 0;
    for r in runs {
        created += usize::from(r.await.unwrap().created);
    }
    assert_eq!(created, 1, "one winner");
    assert_eq!(s.list_outbound(Some(&task), 10).await.unwrap().len(), 1);
    assert_eq!(s.ungated_flags(&task).await.unwrap().len(), 1);
}

pub async fn the_watch_reads_this_nodes_live_and_recent_unflagged_executions(b: &Backend) {
    let s = b.store.as_ref();
    let t0 = now_ms();
    let live_task = new_task(s, "live").await;
    let live = new_execution(s, &live_task).await.unwrap();
    let ended_task = new_task(s, "ended").await;
    let ended = new_execution(s, &ended_task).await.unwrap();
    s.finish_execution(&ended, ExecutionStatus::Completed, Some(0), "exited", t0)
        .await
        .unwrap();
    let flagged_task = new_task(s, "flagged").await;
    let flagged = new_execution(s, &flagged_task).await.unwrap();
    s.flag_ungated(flag(&flagged_task, &flagged, None))
        .await
        .unwrap();
    let ids_of = |v: Vec<harness_core::model::Execution>| -> Vec<String> {
        v.into_iter().map(|e| e.id).collect()
    };
    let seen = ids_of(
        s.watched_executions(NODE, t0 - Duration::minutes(1), 1000)
            .await
            .unwrap(),
    );
    assert!(seen.contains(&live) && seen.contains(&ended), "{seen:?}");
    assert!(!seen.contains(&flagged), "a flagged execution is done");
    // Ended before the window: no longer read.
    let later = ids_of(
        s.watched_executions(NODE, t0 + Duration::minutes(1), 1000)
            .await
            .unwrap(),
    );
    assert!(
        later.contains(&live) && !later.contains(&ended),
        "{later:?}"
    );
    // Another node's executions are that node's to read.
    let other = ids_of(
        s.watched_executions("node-z", t0 - Duration::minutes(1), 1000)
            .await
            .unwrap(),
    );
    assert!(!other.contains(&live), "{other:?}");
    assert!(
        s.watched_executions(NODE, t0 - Duration::minutes(1), 1)
            .await
            .unwrap()
            .len()
            <= 1
    );
}

/// Through the core: a checked call (its hook's `tool_use_id`) and an
/// unchecked one in the CLI's file → one flag, one notice, one push, on
/// every backend; the same reading again (another node, a restart) adds
/// nothing.
pub async fn the_core_flags_an_unchecked_call_once_and_never_a_checked_one(b: &Backend) {
    let (store, h) = with_channel(b).await;
    let task = core_task(&h, "watched", None).await;
    h.tasks().set_unattended(&task, true).await.unwrap();
    let exec = h.tasks().begin_execution(&task).await.unwrap().0;
    let call: ToolCall = serde_json::from_value(json!({"tool": "Bash",
        "input": {"command": "cargo test"}, "cwd": "/repo", "toolUseId": "toolu_ok"}))
    .unwrap();
    h.approvals()
        .check_tool_call(&task, Some(&exec.id), &call, std::time::Duration::ZERO)
        .await
        .unwrap();
    let seen = |id: &str, cmd: &str| SeenCall {
        call_id: Some(id.into()),
        tool: "Bash".into(),
        input: json!({"command": cmd}),
        at: Some(now()),
        not_run: false,
    };
    // Only the checked call: nothing to flag.
    assert!(
        h.approvals()
            .review_calls(&exec, &[(seen("toolu_ok", "cargo test"), true)])
            .await
            .unwrap()
            .is_none()
    );
    // An unchecked call not settled yet: not counted yet.
    let unchecked = seen("toolu_bad", "git push --force");
    assert!(
        h.approvals()
            .review_calls(&exec, &[(unchecked.clone(), false)])
            .await
            .unwrap()
            .is_none()
    );
    let calls = [(seen("toolu_ok", "cargo test"), true), (unchecked, true)];
    let f = h
        .approvals()
        .review_calls(&exec, &calls)
        .await
        .unwrap()
        .expect("flagged");
    assert_eq!(f.call_key, "id:toolu_bad");
    assert!(f.detail.contains("Bash: git push --force"), "{}", f.detail);
    let again = harness_on(b.another().await, "node-a")
        .approvals()
        .review_calls(&exec, &calls)
        .await
        .unwrap()
        .expect("the same flag");
    assert_eq!(again, f);
    let rows = store.list_outbound(Some(&task), 10).await.unwrap();
    let alerts: Vec<_> = rows
        .iter()
        .filter(|r| r.dedup_key == ungated_push_key(&exec.id))
        .collect();
    assert_eq!(alerts.len(), 1, "{rows:?}");
    assert!(alerts[0].message.contains("[Ungated run]"));
    assert_eq!(h.approvals().ungated_flags(&task).await.unwrap(), [f]);
}
