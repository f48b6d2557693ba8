//! Approvals of risky tool calls: the audit row, the one
//! conditional decision that also answers its ask and resumes the task, the
//! hook's park, and the one-time grant used by an atomic consume.

use std::sync::Arc;

use harness_core::{
    ids,
    model::{ExecutionStatus, MessageState},
    options::{AskOption, Choices, Urgency},
    store::{ApprovalDecision, ApprovalState, DeliveryState, NewApproval, NewInput, Store},
};

use chrono::Utc;

use super::{Backend, support::*};

fn new_approval(task_id: &str, request_id: &str, hash: &str) -> NewApproval {
    NewApproval {
        id: ids::new_id(),
        task_id: task_id.into(),
        execution_id: None,
        request_id: request_id.into(),
        tool: "Bash".into(),
        input: r#"{"command":"git push --force"}"#.into(),
        input_hash: hash.into(),
        cwd: Some("/repo".into()),
        rule: r#"{"source":"builtin","index":0}"#.into(),
        now: now_ms(),
        push_not_before: None,
        push: None,
    }
}

fn decision(approve: bool) -> ApprovalDecision {
    ApprovalDecision {
        approve,
        by: "admin".into(),
        via: "rest".into(),
        reason: (!approve).then(|| "not on main".to_string()),
        reply_text: if approve { "Approve" } else { "Deny" }.into(),
        typed: None,
        now: now_ms(),
        from_chat: false,
    }
}

/// A task with a running execution parked by an OPEN ask; (task, ask id).
async fn parked_task(s: &dyn Store) -> (String, String) {
    let task = new_task(s, "approvals").await;
    new_execution(s, &task).await.unwrap();
    let asked = s
        .record_ask(ask(&task, "Approve git push?", now_ms()))
        .await
        .unwrap();
    assert_eq!(
        execution_status(s, &task).await,
        Some(ExecutionStatus::Paused)
    );
    (task, asked.message.id)
}

pub async fn a_decision_wins_once_answers_its_ask_and_its_grant_is_used_once(b: &Backend) {
    let s = b.store.as_ref();
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h1"))
        .await
        .unwrap();
    assert_eq!(a.state, ApprovalState::Pending);
    assert!(!a.parked && a.decided_at.is_none() && a.consumed_at.is_none());
    assert_eq!(s.get_approval(&a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(
        s.approval_for_request(&request).await.unwrap(),
        Some(a.clone())
    );
    assert_eq!(
        s.pending_approval_for_call(&task, "h1").await.unwrap(),
        Some(a.clone())
    );
    assert!(
        s.pending_approval_for_call(&task, "other")
            .await
            .unwrap()
            .is_none()
    );
    // A request id is one approval.
    assert!(
        s.insert_approval(new_approval(&task, &request, "h1"))
            .await
            .is_err()
    );
    // Nothing decided yet: nothing to use.
    assert!(
        s.consume_approval(&task, "h1", now_ms())
            .await
            .unwrap()
            .is_none()
    );

    // Two stores decide at once: exactly one wins.
    let other = b.another().await;
    let (yes, no) = (decision(true), decision(false));
    let (x, y) = tokio::join!(
        s.decide_approval(&a.id, &yes),
        other.decide_approval(&a.id, &no)
    );
    let winners: Vec<_> = [x.unwrap(), y.unwrap()]
        .into_iter()
        .flatten()
        .map(|d| d.approval)
        .collect();
    assert_eq!(winners.len(), 1, "{winners:?}");
    let won = &winners[0];
    assert_eq!(won.decided_by.as_deref(), Some("admin"));
    assert_eq!(won.decided_via.as_deref(), Some("rest"));
    assert!(won.decided_at.is_some());
    // The ask is answered with the label and the task runs again, same txn.
    let m = s.get_message(&request).await.unwrap().unwrap();
    assert_eq!(m.state, MessageState::Answered);
    assert_eq!(
        m.reply_text.as_deref(),
        Some(if won.state == ApprovalState::Approved {
            "Approve"
        } else {
            "Deny"
        })
    );
    assert_eq!(
        execution_status(s, &task).await,
        Some(ExecutionStatus::Running)
    );
    assert!(
        s.pending_approval_for_call(&task, "h1")
            .await
            .unwrap()
            .is_none()
    );
    // A later decision changes nothing.
    assert!(
        s.decide_approval(&a.id, &decision(true))
            .await
            .unwrap()
            .is_none()
    );

    // Used once, with what the agent did.
    let used = s
        .consume_approval(&task, "h1", now_ms())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(used.id, a.id);
    assert!(used.consumed_at.is_some());
    let expect = if won.state == ApprovalState::Approved {
        "ran"
    } else {
        "held"
    };
    assert_eq!(used.outcome.as_deref(), Some(expect));
    assert!(
        s.consume_approval(&task, "h1", now_ms())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        other
            .consume_approval(&task, "h1", now_ms())
            .await
            .unwrap()
            .is_none()
    );

    let q = |task_id: Option<String>, limit| harness_core::store::ApprovalQuery {
        task_id,
        limit,
        ..Default::default()
    };
    let listed = s.list_approvals(&q(Some(task.clone()), 10)).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].consumed_at, used.consumed_at);
    assert!(
        s.list_approvals(&q(None, 500))
            .await
            .unwrap()
            .iter()
            .any(|x| x.id == a.id)
    );
}

pub async fn parking_is_conditional_and_a_parked_approval_survives_a_new_connection(b: &Backend) {
    let s = b.store.as_ref();
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h2"))
        .await
        .unwrap();
    let parked = s.park_approval(&a.id, now_ms()).await.unwrap().unwrap();
    assert!(parked.parked);
    assert_eq!(parked.state, ApprovalState::Pending);
    assert_eq!(parked.outcome.as_deref(), Some("told-to-wait"));
    // Another connection (a restarted server) still sees it pending.
    let reopened = b.another().await;
    let seen = reopened.get_approval(&a.id).await.unwrap().unwrap();
    assert!(seen.parked && seen.state == ApprovalState::Pending);
    let denied = reopened
        .decide_approval(&a.id, &decision(false))
        .await
        .unwrap()
        .unwrap()
        .approval;
    assert!(denied.parked, "the decision knows it must be typed in");
    assert_eq!(denied.reason.as_deref(), Some("not on main"));
    // Parking a decided approval changes nothing.
    let after = s.park_approval(&a.id, now_ms()).await.unwrap().unwrap();
    assert_eq!(after.state, ApprovalState::Denied);
    assert!(
        s.park_approval(&ids::new_id(), now_ms())
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn racing_calls_use_one_grant_once(b: &Backend) {
    let s = b.store.as_ref();
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h3"))
        .await
        .unwrap();
    s.decide_approval(&a.id, &decision(true))
        .await
        .unwrap()
        .unwrap();
    let mut stores: Vec<Arc<dyn Store>> = vec![b.store.clone()];
    stores.push(b.another().await);
    let mut joins = Vec::new();
    for i in 0..8 {
        let st = stores[i % 2].clone();
        let task = task.clone();
        joins.push(tokio::spawn(async move {
            st.consume_approval(&task, "h3", now_ms()).await.unwrap()
        }));
    }
    let mut used = 0;
    for j in joins {
        used += usize::from(j.await.unwrap().is_some());
    }
    assert_eq!(used, 1, "one approval, one run");
}

fn approve_deny() -> Choices {
    Choices {
        options: ["Approve", "Deny"]
            .into_iter()
            .map(|l| AskOption {
                label: l.into(),
                description: None,
            })
            .collect(),
        multi_select: false,
        default: None,
        deadline_at: None,
        urgency: Urgency::High,
        answered_by: None,
        answered_options: None,
    }
}

pub async fn an_approval_and_its_ask_are_recorded_in_one_transaction(b: &Backend) {
    let s = b.store.as_ref();
    let (task, earlier) = parked_task(s).await;
    let first = s
        .insert_approval(new_approval(&task, &earlier, "h4"))
        .await
        .unwrap();
    // The approval row fails (its id is taken): the ask is not written
    // either, and the task's earlier ask is untouched.
    let ask1 = ask(&task, "Approve rm -rf?", now_ms());
    let mut broken = new_approval(&task, &ask1.id, "h5");
    broken.id = first.id.clone();
    assert!(
        s.record_approval_ask(ask1.clone(), approve_deny(), None, broken)
            .await
            .is_err()
    );
    assert!(s.get_message(&ask1.id).await.unwrap().is_none());
    assert!(s.approval_for_request(&ask1.id).await.unwrap().is_none());
    assert_eq!(
        s.get_message(&earlier).await.unwrap().unwrap().state,
        MessageState::Open
    );
    // Both written: the ask (with its options) and its PENDING approval.
    let ask2 = ask(&task, "Approve rm -rf?", now_ms());
    let asked = s
        .record_approval_ask(
            ask2.clone(),
            approve_deny(),
            None,
            new_approval(&task, &ask2.id, "h5"),
        )
        .await
        .unwrap();
    assert!(!asked.event_added);
    assert_eq!(asked.recorded.message.id, ask2.id);
    assert_eq!(asked.recorded.cancelled, vec![earlier.clone()]);
    assert_eq!(asked.approval.request_id, ask2.id);
    assert_eq!(asked.approval.state, ApprovalState::Pending);
    assert_eq!(
        s.approval_for_request(&ask2.id).await.unwrap(),
        Some(asked.approval.clone())
    );
    let m = s.get_message(&ask2.id).await.unwrap().unwrap();
    assert_eq!(m.state, MessageState::Open);
    let choices = s.choices_for(std::slice::from_ref(&ask2.id)).await.unwrap();
    assert_eq!(choices.len(), 1);
    assert_eq!(choices[0].1.options.len(), 2);
    // A request id that is not the ask's is refused, nothing written.
    let ask3 = ask(&task, "x", now_ms());
    assert!(
        s.record_approval_ask(
            ask3.clone(),
            approve_deny(),
            None,
            new_approval(&task, "other", "h6")
        )
        .await
        .is_err()
    );
    assert!(s.get_message(&ask3.id).await.unwrap().is_none());
}

fn typed(task: &str, approval_id: &str, text: &str) -> NewInput {
    NewInput {
        id: ids::new_id(),
        task_id: task.into(),
        node_id: None,
        text: text.into(),
        submit: true,
        dedup_key: format!("approval:{approval_id}"),
        resume: true,
        now: now_ms(),
    }
}

pub async fn a_late_decision_and_its_typed_message_are_one_transaction(b: &Backend) {
    let s = b.store.as_ref();
    // Not parked: the hook is still waiting, nothing is typed.
    let (task, request) = parked_task(s).await;
    let waiting = s
        .insert_approval(new_approval(&task, &request, "h7"))
        .await
        .unwrap();
    let mut d = decision(true);
    d.typed = Some(typed(&task, &waiting.id, "Approved: run it now"));
    let done = s.decide_approval(&waiting.id, &d).await.unwrap().unwrap();
    assert!(done.delivery.is_none());
    assert!(
        s.task_deliveries(&task, 10).await.unwrap().is_empty(),
        "a waiting hook gets the decision itself"
    );

    // Parked: the decision row and the typed delivery commit together.
    let (task, request) = parked_task(s).await;
    let parked = s
        .insert_approval(new_approval(&task, &request, "h8"))
        .await
        .unwrap();
    s.park_approval(&parked.id, now_ms()).await.unwrap();
    let mut d = decision(false);
    d.typed = Some(typed(&task, &parked.id, "Denied: because not on main"));
    let done = s.decide_approval(&parked.id, &d).await.unwrap().unwrap();
    let (row, created) = done.delivery.expect("the typed decision's delivery");
    assert!(created);
    assert_eq!(row.text, "Denied: because not on main");
    assert_eq!(row.state, DeliveryState::Queued);
    // An agent gone meanwhile (a server restart) is resumed to read it.
    assert!(row.resume, "{row:?}");
    assert_eq!(
        row.dedup_key.as_deref(),
        Some(format!("approval:{}", parked.id).as_str())
    );
    let stored = s.task_deliveries(&task, 10).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, row.id);
    // A second decision neither wins nor types anything.
    let mut again = decision(true);
    again.typed = Some(typed(&task, &parked.id, "Approved"));
    assert!(
        s.decide_approval(&parked.id, &again)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(s.task_deliveries(&task, 10).await.unwrap().len(), 1);
}

pub async fn a_pending_approval_ends_with_its_ask(b: &Backend) {
    let s = b.store.as_ref();
    // Cancelled with the task's OPEN asks (stop task).
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h9"))
        .await
        .unwrap();
    assert_eq!(s.cancel_open_asks(&task).await.unwrap(), vec![request]);
    let ended = s.get_approval(&a.id).await.unwrap().unwrap();
    assert_eq!(ended.state, ApprovalState::Cancelled);
    assert_eq!(ended.decided_by.as_deref(), Some("harness"));
    assert!(ended.decided_at.is_some());
    assert!(
        s.decide_approval(&a.id, &decision(true))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        s.consume_approval(&task, "h9", now_ms())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        s.pending_approval_for_call(&task, "h9")
            .await
            .unwrap()
            .is_none()
    );

    // Replaced by a newer ask of the task.
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h10"))
        .await
        .unwrap();
    s.record_ask(ask(&task, "something else?", now_ms()))
        .await
        .unwrap();
    assert_eq!(
        s.get_approval(&a.id).await.unwrap().unwrap().state,
        ApprovalState::Cancelled
    );

    // Expired with its ask (the pending TTL).
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h11"))
        .await
        .unwrap();
    let expired = s
        .expire_asks_before(now_ms() + chrono::Duration::seconds(60))
        .await
        .unwrap();
    assert!(expired.contains(&request));
    assert_eq!(
        s.get_approval(&a.id).await.unwrap().unwrap().state,
        ApprovalState::Expired
    );

    // A decided approval is left as it was when its ask ends later.
    let (task, request) = parked_task(s).await;
    let a = s
        .insert_approval(new_approval(&task, &request, "h12"))
        .await
        .unwrap();
    s.decide_approval(&a.id, &decision(true))
        .await
        .unwrap()
        .unwrap();
    s.cancel_open_asks(&task).await.unwrap();
    assert_eq!(
        s.get_approval(&a.id).await.unwrap().unwrap().state,
        ApprovalState::Approved
    );
}

const OWNER: &str = "node-a:boot-1";

/// The core over another store with an unattended chat channel; a
/// derived task's push goes out at once (no parent's step).
pub(super) async fn with_channel(b: &Backend) -> (Arc<dyn Store>, harness_core::Harness) {
    with_channel_step(b, std::time::Duration::ZERO).await
}

/// [`with_channel`] with the parent's step before a derived task's push.
pub(super) async fn with_channel_step(
    b: &Backend,
    step: std::time::Duration,
) -> (Arc<dyn Store>, harness_core::Harness) {
    let store = b.another().await;
    let mut config = harness_core::HarnessConfig::new(ids::token_hash(ADMIN));
    config.node_id = "node-a".into();
    config.approval_parent_step = step;
    let h = harness_core::Harness::new(store.clone(), config);
    h.settings()
        .set_notify_targets(vec![harness_core::settings::NotifyTarget {
            id: None,
            label: "phone".into(),
            gateway: "openclaw".into(),
            downstream: Some("telegram".into()),
            dest: Some("-100".into()),
            profile: None,
            scope: "unattended".into(),
            active: true,
            include_screen: false,
            report_at: None,
            report_time_zone: None,
            report_since: None,
            language: None,
        }])
        .await
        .unwrap();
    (store, h)
}

pub(super) async fn held(
    h: &harness_core::Harness,
    task: &str,
    cmd: &str,
) -> harness_core::approvals::CallVerdict {
    let call: harness_core::approvals::ToolCall = serde_json::from_value(
        serde_json::json!({"tool": "Bash", "input": {"command": cmd}, "cwd": "/repo"}),
    )
    .unwrap();
    h.approvals()
        .check_tool_call(task, None, &call, std::time::Duration::ZERO)
        .await
        .unwrap()
}

pub async fn an_approval_is_pushed_to_chat_in_its_ask_transaction_and_an_unsent_push_dies_with_the_decision(
    b: &Backend,
) {
    use harness_core::{
        auth::Person,
        outbox::{OutboundState, Receipt, SendOutcome},
    };
    let (store, h) = with_channel_step(b, harness_core::approvals::flow::PARENT_STEP).await;
    let parent = core_task(&h, "parent", None).await;
    let child = core_task(&h, "Deploy the fix", Some(&parent)).await;
    let exec = h.tasks().begin_execution(&child).await.unwrap().0;
    let v = held(&h, &child, "git push --force origin main").await;
    assert!(v.waiting, "{v:?}");
    let id = v.approval_id.clone().unwrap();
    let rows = store.list_outbound(Some(&child), 10).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let push = &rows[0];
    assert_eq!(push.dedup_key, format!("approval:{id}"));
    assert_eq!(push.state, OutboundState::Pending);
    assert_eq!(push.message_id, None, "no message of its own");
    assert_eq!(push.execution_id.as_deref(), Some(exec.id.as_str()));
    assert!(push.expect_reply);
    assert_eq!(
        (push.gateway.as_str(), push.scope.as_str()),
        ("openclaw", "unattended")
    );
    for part in [
        "$ git push --force origin main",
        "Task: Deploy the fix",
        "Working directory: /repo",
        "\"approve\" (or 1)",
        "\"deny\" (or 2)",
    ] {
        assert!(push.message.contains(part), "{part} in {}", push.message);
    }
    assert!(
        push.message.ends_with(&format!("[[tower:task={child}]]")),
        "{}",
        push.message
    );
    // The same call asked again reuses the pending approval: no second push.
    let again = held(&h, &child, "git push --force origin main").await;
    assert_eq!(again.approval_id.as_deref(), Some(id.as_str()));
    assert_eq!(
        store.list_outbound(Some(&child), 10).await.unwrap().len(),
        1
    );

    // Decided before it was sent: the push is dropped, never sent.
    h.approvals()
        .decide_approval(&Person::admin(), &id, false, None, "rest")
        .await
        .unwrap();
    let dead = store.get_outbound(&push.id).await.unwrap().unwrap();
    assert_eq!(dead.state, OutboundState::Dead);
    assert!(dead.last_error.unwrap().contains("decided"));
    let now = Utc::now();
    assert!(
        store
            .claim_outbound(OWNER, now, now + chrono::Duration::seconds(60), 10)
            .await
            .unwrap()
            .iter()
            .all(|r| r.id != push.id)
    );

    // Sent first: the decision leaves the sent row as it is. A derived
    // task's push is due only after its parent's step (the ladder).
    let v = held(&h, &child, "rm -rf build").await;
    let id = v.approval_id.unwrap();
    let now = Utc::now();
    assert!(
        store
            .claim_outbound(OWNER, now, now + chrono::Duration::seconds(60), 10)
            .await
            .unwrap()
            .iter()
            .all(|r| r.dedup_key != format!("approval:{id}")),
        "not due before the parent's step"
    );
    let later = now
        + chrono::Duration::from_std(harness_core::approvals::flow::PARENT_STEP).unwrap()
        + chrono::Duration::seconds(1);
    let claimed = store
        .claim_outbound(OWNER, later, later + chrono::Duration::seconds(60), 10)
        .await
        .unwrap();
    let mine = claimed
        .iter()
        .find(|r| r.dedup_key == format!("approval:{id}"))
        .expect("the push is due after the step");
    let receipt = SendOutcome::Delivered(Receipt {
        message_id: Some("m-approval".into()),
        platform: None,
        chat_id: Some("-100".into()),
    });
    h.outbox().finish_send(mine, OWNER, receipt).await.unwrap();
    // Its mapping names the task, so a reply to it answers the approval.
    let map = h
        .gateway()
        .delivery_mapping("openclaw", "telegram", "-100", "m-approval")
        .await
        .unwrap()
        .expect("mapped");
    assert_eq!(map.task_id.as_deref(), Some(child.as_str()));
    assert!(map.expect_reply);
    let asked = store
        .approval_for_request(&v.request_id.unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        asked.state,
        ApprovalState::Pending,
        "sending did not touch the approval's ask"
    );
    h.approvals()
        .decide_approval(&Person::admin(), &id, true, None, "rest")
        .await
        .unwrap();
    assert_eq!(
        store.get_outbound(&mine.id).await.unwrap().unwrap().state,
        OutboundState::Delivered
    );

    // Its ask ended (task stopped) before it went out: the stale pass drops it.
    let v = held(&h, &child, "git clean -fdx").await;
    let key = format!("approval:{}", v.approval_id.unwrap());
    assert_eq!(store.cancel_open_asks(&child).await.unwrap().len(), 1);
    let dropped = store.drop_stale_reminders(Utc::now()).await.unwrap();
    let row = dropped
        .iter()
        .find(|r| r.dedup_key == key)
        .expect("dropped");
    assert_eq!(row.state, OutboundState::Dead);
}

pub async fn an_approval_without_a_channel_is_not_pushed_and_a_failed_ask_writes_no_push(
    b: &Backend,
) {
    let s = b.store.as_ref();
    let (task, earlier) = parked_task(s).await;
    let first = s
        .insert_approval(new_approval(&task, &earlier, "p1"))
        .await
        .unwrap();
    let ask1 = ask(&task, "Approve?", now_ms());
    let mut broken = new_approval(&task, &ask1.id, "p2");
    broken.id = first.id.clone();
    broken.push = Some(harness_core::store::NewOutbound {
        id: ids::new_id(),
        message_id: None,
        task_id: Some(task.clone()),
        dedup: harness_core::store::Dedup::Explicit(String::new()),
        gateway: "openclaw".into(),
        downstream: None,
        dest: None,
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply: true,
        message: "Approve?".into(),
        presentation: None,
        now: now_ms(),
        choices: None,
    });
    assert!(
        s.record_approval_ask(ask1, approve_deny(), None, broken)
            .await
            .is_err()
    );
    assert!(
        s.list_outbound(Some(&task), 10).await.unwrap().is_empty(),
        "rolled back together"
    );

    // No channel configured: asked in Harness only.
    let store = b.another().await;
    let core = harness_on(store.clone(), "node-a");
    let parent = core_task(&core, "p", None).await;
    let child = core_task(&core, "c", Some(&parent)).await;
    let v = held(&core, &child, "git push --force").await;
    assert!(v.approval_id.is_some());
    assert!(
        store
            .list_outbound(Some(&child), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A decided approval (`task`'s ask `request`, asked by `execution`).
async fn decided(s: &dyn Store, task: &str, request: &str, execution: &str, hash: &str) -> String {
    let mut new = new_approval(task, request, hash);
    new.execution_id = Some(execution.into());
    let a = s.insert_approval(new).await.unwrap();
    assert!(
        s.decide_approval(&a.id, &decision(true))
            .await
            .unwrap()
            .is_some()
    );
    a.id
}

/// An ask of `task` recorded now; its id.
async fn asked(s: &dyn Store, task: &str) -> String {
    s.record_ask(ask(task, "Approve git push?", now_ms()))
        .await
        .unwrap()
        .message
        .id
}

pub async fn an_unused_grant_expires_with_a_newer_ask_or_the_end_of_its_execution(b: &Backend) {
    let s = b.store.as_ref();
    let pause = || tokio::time::sleep(std::time::Duration::from_millis(5));
    // 1. The task asks something new after the decision: the grant is gone.
    let task = new_task(s, "stale grants").await;
    let exec = new_execution(s, &task).await.unwrap();
    let request = asked(s, &task).await;
    let a = decided(s, &task, &request, &exec, "h1").await;
    pause().await;
    asked(s, &task).await;
    assert!(
        s.consume_approval(&task, "h1", now_ms())
            .await
            .unwrap()
            .is_none()
    );
    let gone = s.get_approval(&a).await.unwrap().unwrap();
    assert!(gone.consumed_at.is_some());
    assert_eq!(gone.outcome.as_deref(), Some("unused"));

    // 2. Its execution was interrupted by a restart: the resumed agent may
    //    still use it.
    let task = new_task(s, "interrupted").await;
    let exec = new_execution(s, &task).await.unwrap();
    let request = asked(s, &task).await;
    let a = decided(s, &task, &request, &exec, "h2").await;
    pause().await;
    assert!(
        s.finish_execution(
            &exec,
            ExecutionStatus::Failed,
            None,
            "interrupted",
            now_ms()
        )
        .await
        .unwrap()
    );
    let used = s
        .consume_approval(&task, "h2", now_ms())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (used.id.as_str(), used.outcome.as_deref()),
        (a.as_str(), Some("ran"))
    );

    // 3. Its execution ended otherwise after the decision: gone.
    let task = new_task(s, "ended").await;
    let exec = new_execution(s, &task).await.unwrap();
    let request = asked(s, &task).await;
    let a = decided(s, &task, &request, &exec, "h3").await;
    pause().await;
    assert!(
        s.finish_execution(
            &exec,
            ExecutionStatus::Completed,
            Some(0),
            "exited",
            now_ms()
        )
        .await
        .unwrap()
    );
    assert!(
        s.consume_approval(&task, "h3", now_ms())
            .await
            .unwrap()
            .is_none()
    );
    let gone = s.get_approval(&a).await.unwrap().unwrap();
    assert_eq!(gone.outcome.as_deref(), Some("unused"));
}

pub async fn the_audit_pages_with_a_cursor_and_a_time_window(b: &Backend) {
    let s = b.store.as_ref();
    let task = new_task(s, "audit pages").await;
    let t0 = now_ms();
    let mut made = Vec::new();
    // Four approvals: two in the same millisecond (the cursor breaks ties by id).
    for offset in [0, 1000, 2000, 2000] {
        let mut a = new_approval(&task, &ids::new_id(), "h");
        a.now = t0 + chrono::Duration::milliseconds(offset);
        made.push(s.insert_approval(a).await.unwrap());
    }
    let q = |before: Option<String>| harness_core::store::ApprovalQuery {
        task_id: Some(task.clone()),
        before,
        limit: 2,
        ..Default::default()
    };
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = s.list_approvals(&q(before.clone())).await.unwrap();
        if page.is_empty() {
            break;
        }
        before = page.last().map(|a| a.id.clone());
        seen.extend(page);
    }
    assert_eq!(seen.len(), 4, "every row once: {seen:?}");
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
    assert_eq!(seen, sorted, "newest first");
    let window = s
        .list_approvals(&harness_core::store::ApprovalQuery {
            since: Some(t0 + chrono::Duration::milliseconds(500)),
            until: Some(t0 + chrono::Duration::milliseconds(2000)),
            limit: 500,
            ..Default::default()
        })
        .await
        .unwrap();
    let window: Vec<_> = window.into_iter().map(|a| a.id).collect();
    assert_eq!(window, vec![made[1].id.clone()]);
}
