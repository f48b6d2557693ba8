//! The morning report's store (migration 0041): the facts of a window —
//! executions live in it with why they ended, messages created or answered
//! in it with their reminders and who answered, every OPEN ask and PENDING
//! approval whenever asked — and a report kept with its numbered items and
//! its chat parts in one transaction.

use chrono::Duration;
use harness_core::{
    ids,
    model::{ExecutionStatus, MessageKind, MessageState},
    store::{
        Dedup, ItemKind, ItemRef, NewApproval, NewOutbound, NewReport, ReportChannel,
        report_of_key, report_part_key,
    },
};

use super::{Backend, support::*};

pub async fn a_windows_facts_are_read_with_how_each_was_answered(b: &Backend) {
    let s = b.store.as_ref();
    let before = now_ms() - Duration::hours(1);
    // Ended before the window: not read.
    let old = new_task(s, "old").await;
    let old_exec = new_execution(s, &old).await.unwrap();
    s.finish_execution(
        &old_exec,
        ExecutionStatus::Completed,
        Some(0),
        "exited",
        before,
    )
    .await
    .unwrap();
    let since = now_ms();
    let task = new_task(s, "night").await;
    let exec = new_execution(s, &task).await.unwrap();
    s.record_notify(ask(&task, "tests pass", now_ms()))
        .await
        .unwrap();
    let asked = s
        .record_ask(ask(&task, "Which DB?", now_ms()))
        .await
        .unwrap();
    let delivery = ids::new_id();
    s.answer_open_ask(&task, "SQLite", &delivery, None, now_ms(), true)
        .await
        .unwrap()
        .expect("answered");
    s.finish_execution(&exec, ExecutionStatus::Failed, Some(3), "exited", now_ms())
        .await
        .unwrap();
    // Still waiting: a question asked before the window, and an approval.
    let waiting = new_task(s, "waiting").await;
    let open = s
        .record_ask(ask(&waiting, "Deploy now?", before))
        .await
        .unwrap();
    let held = new_task(s, "held").await;
    let carrier = s
        .record_ask(ask(&held, "Approve git push?", now_ms()))
        .await
        .unwrap();
    let approval = s
        .insert_approval(NewApproval {
            id: ids::new_id(),
            task_id: held.clone(),
            execution_id: None,
            request_id: carrier.message.id.clone(),
            tool: "Bash".into(),
            input: r#"{"command":"git push"}"#.into(),
            input_hash: ids::new_id(),
            cwd: None,
            rule: r#"{"source":"builtin","index":0}"#.into(),
            now: before,
            push_not_before: None,
            push: None,
        })
        .await
        .unwrap();
    let until = now_ms() + Duration::seconds(1);

    let runs = s.report_executions(since, until, 5000).await.unwrap();
    let mine: Vec<_> = runs
        .iter()
        .filter(|e| e.execution.task_id == task)
        .collect();
    assert_eq!(mine.len(), 1, "{runs:?}");
    assert_eq!(mine[0].execution.status, ExecutionStatus::Failed);
    assert_eq!(mine[0].execution.exit_code, Some(3));
    assert_eq!(mine[0].end_reason.as_deref(), Some("exited"));
    assert!(
        !runs.iter().any(|e| e.execution.id == old_exec),
        "an execution that ended before the window is not read"
    );

    let messages = s.report_messages(since, until, 5000).await.unwrap();
    let of = |t: &str| {
        messages
            .iter()
            .filter(|m| m.message.task_id == t)
            .collect::<Vec<_>>()
    };
    let night = of(&task);
    assert_eq!(night.len(), 2, "{night:?}");
    assert_eq!(night[0].message.kind, MessageKind::Notify);
    assert_eq!(night[1].message.id, asked.message.id);
    assert_eq!(night[1].message.state, MessageState::Answered);
    assert!(night[1].via_chat, "answered from the chat");
    assert!(!night[1].by_default);
    assert_eq!(night[1].reminders, 0);
    let old_open = of(&waiting);
    assert_eq!(old_open.len(), 1, "an OPEN ask asked before the window");
    assert_eq!(old_open[0].message.id, open.message.id);

    let approvals = s.report_approval_ids(since, until, 5000).await.unwrap();
    assert!(
        approvals.contains(&approval.id),
        "a PENDING approval is read"
    );
    // An empty window reads only what waits now.
    let now = now_ms() + Duration::seconds(2);
    assert!(
        s.report_executions(now, now, 5000)
            .await
            .unwrap()
            .iter()
            .all(|e| e.execution.ended_at.is_none())
    );
    let now_messages = s.report_messages(now, now, 5000).await.unwrap();
    assert!(
        now_messages
            .iter()
            .all(|m| m.message.state == MessageState::Open)
    );
    assert!(now_messages.iter().any(|m| m.message.id == open.message.id));
    assert!(
        !now_messages
            .iter()
            .any(|m| m.message.id == asked.message.id)
    );
}

fn part(report: &str, i: usize, text: &str) -> NewOutbound {
    NewOutbound {
        id: ids::new_id(),
        message_id: None,
        task_id: None,
        dedup: Dedup::Explicit(report_part_key(report, i)),
        gateway: "openclaw".into(),
        downstream: Some("telegram".into()),
        dest: Some("-100123".into()),
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply: true,
        message: text.into(),
        presentation: None,
        now: now_ms(),
        choices: None,
    }
}

pub async fn a_report_is_kept_with_its_items_and_its_chat_parts_in_one_transaction(b: &Backend) {
    let s = b.store.as_ref();
    let task = new_task(s, "report").await;
    let scope = format!("task:{task}");
    assert_eq!(
        s.last_report_until(ReportChannel::Chat, &scope)
            .await
            .unwrap(),
        None
    );
    let id = ids::new_id();
    let until = now_ms();
    let items = vec![
        ItemRef {
            number: 1,
            kind: ItemKind::Approval,
            ref_id: ids::new_id(),
            task_id: task.clone(),
        },
        ItemRef {
            number: 2,
            kind: ItemKind::Question,
            ref_id: ids::new_id(),
            task_id: task.clone(),
        },
    ];
    let parts = s
        .record_report(NewReport {
            id: id.clone(),
            channel: ReportChannel::Chat,
            scope: scope.clone(),
            since: until - Duration::hours(12),
            until,
            content: "(1/2) a\n(2/2) b".into(),
            items: items.clone(),
            parts: vec![part(&id, 0, "(1/2) a"), part(&id, 1, "(2/2) b")],
            now: until,
        })
        .await
        .unwrap();
    assert_eq!(parts.len(), 2);
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p.dedup_key, report_part_key(&id, i));
        assert_eq!(report_of_key(&p.dedup_key), Some(id.as_str()));
        assert!(p.expect_reply);
    }
    let kept = s.get_report(&id).await.unwrap().expect("kept");
    assert_eq!(kept.items, items);
    assert_eq!(kept.channel, ReportChannel::Chat);
    assert_eq!(kept.until, until);
    assert_eq!(
        s.last_report_until(ReportChannel::Chat, &scope)
            .await
            .unwrap(),
        Some(until)
    );
    // A view does not move the chat report's window.
    let view = ids::new_id();
    s.record_report(NewReport {
        id: view.clone(),
        channel: ReportChannel::Web,
        scope: scope.clone(),
        since: until,
        until: until + Duration::minutes(5),
        content: String::new(),
        items: Vec::new(),
        parts: Vec::new(),
        now: until,
    })
    .await
    .unwrap();
    assert_eq!(
        s.last_report_until(ReportChannel::Chat, &scope)
            .await
            .unwrap(),
        Some(until)
    );
    // A part's key taken twice fails the whole report: nothing is kept.
    let again = ids::new_id();
    let clash = s
        .record_report(NewReport {
            id: again.clone(),
            channel: ReportChannel::Chat,
            scope: scope.clone(),
            since: until,
            until: until + Duration::hours(1),
            content: String::new(),
            items: items.clone(),
            parts: vec![part(&id, 0, "same key")],
            now: until,
        })
        .await;
    assert!(clash.is_err());
    assert!(s.get_report(&again).await.unwrap().is_none());
    assert_eq!(
        s.last_report_until(ReportChannel::Chat, &scope)
            .await
            .unwrap(),
        Some(until)
    );
    assert!(s.get_report("cnosuchreport").await.unwrap().is_none());
}
