//! Reminders of pending approvals: a PENDING approval
//! whose push reached the chat is a reminder candidate (its ask, the high
//! schedule, the push as the first row), reminded with a text that says an
//! approval waits and quotes the call; its decision stops the reminders and
//! drops the unsent ones in its own transaction; and a push or reminder
//! leased before the approval was decided or ended is known closed right
//! before its send, so it is skipped, never sent.

use chrono::{Duration, Utc};
use harness_core::{
    auth::Person,
    outbox::{OutboundState, Receipt, SendOutcome},
    store::{ApprovalDecision, ApprovalState, Outbound, Store, Urgency},
};

use super::{
    Backend,
    approvals::{held, with_channel},
    reminders::{OWNER, candidate_of, reminder},
    support::core_task,
};

fn delivered(pmid: &str) -> SendOutcome {
    SendOutcome::Delivered(Receipt {
        message_id: Some(pmid.into()),
        platform: None,
        chat_id: Some("-100".into()),
    })
}

/// Lease every row due now.
async fn lease(store: &dyn Store) -> Vec<Outbound> {
    let now = Utc::now();
    store
        .claim_outbound(OWNER, now, now + Duration::seconds(120), 10)
        .await
        .unwrap()
}

/// Lease every due row now and settle the one keyed `key` as delivered.
async fn send(store: &dyn Store, h: &harness_core::Harness, key: &str) -> Outbound {
    let leased = lease(store).await;
    let row = leased
        .iter()
        .find(|r| r.dedup_key == key)
        .unwrap_or_else(|| panic!("{key} is due: {leased:?}"));
    h.outbox()
        .finish_send(row, OWNER, delivered(&format!("pm-{}", row.id)))
        .await
        .unwrap()
        .unwrap()
}

async fn is_candidate(store: &dyn Store, ask: &str) -> bool {
    store
        .reminder_candidates(None, 10)
        .await
        .unwrap()
        .iter()
        .any(|c| c.message_id == ask)
}

pub async fn a_pending_approval_whose_push_was_sent_is_reminded_until_it_is_decided(b: &Backend) {
    let (store, h) = with_channel(b).await;
    let parent = core_task(&h, "parent", None).await;
    let child = core_task(&h, "Deploy the fix", Some(&parent)).await;
    h.tasks().begin_execution(&child).await.unwrap();
    let v = held(&h, &child, "git push --force origin main").await;
    let (id, ask) = (v.approval_id.unwrap(), v.request_id.unwrap());
    let key = format!("approval:{id}");
    assert!(
        !is_candidate(store.as_ref(), &ask).await,
        "a push not sent yet has no reminder"
    );
    let push = send(store.as_ref(), &h, &key).await;
    assert_eq!(push.state, OutboundState::Delivered);

    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    assert_eq!(c.approval_id.as_deref(), Some(id.as_str()));
    assert_eq!((c.task_id.as_str(), c.sent), (child.as_str(), 0));
    assert_eq!(c.urgency, Urgency::High, "approvals are urgent");
    assert_eq!(c.first.id, push.id, "the push is the first row");
    assert!(!c.escalated);

    // The core's pass on the high schedule: nothing before 10 min, then one.
    let asked = c.asked_at;
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + Duration::minutes(9))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + Duration::minutes(11))
            .await
            .unwrap(),
        1
    );
    let listed = store
        .reminders_for(std::slice::from_ref(&ask))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    let first = store
        .get_outbound(&listed[0].outbound_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.dedup_key, format!("reminder:{ask}:1"));
    assert_eq!(
        (first.message_id.as_deref(), first.task_id.as_deref()),
        (None, Some(child.as_str())),
        "its mapping names the task, whose open ask is the approval"
    );
    assert_eq!(first.execution_id, push.execution_id);
    assert_eq!(
        (first.gateway.as_str(), first.dest.as_deref()),
        ("openclaw", Some("-100"))
    );
    assert!(
        first.message.starts_with(
            "Reminder 1: an approval is still waiting — the agent has been held 11 min"
        ),
        "{}",
        first.message
    );
    assert!(first.message.contains("$ git push --force origin main"));
    assert!(first.message.ends_with(&format!("[[tower:task={child}]]")));
    let first = send(store.as_ref(), &h, &first.dedup_key).await;

    // Reminder 2 written, not sent yet; then the decision.
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    assert_eq!(c.sent, 1);
    let second = store
        .record_reminder(reminder(&c, 2))
        .await
        .unwrap()
        .expect("written");
    let decided = h
        .approvals()
        .decide_approval(&Person::admin(), &id, true, None, "rest")
        .await
        .unwrap();
    assert_eq!(decided.state, ApprovalState::Approved);
    let dead = store.get_outbound(&second.id).await.unwrap().unwrap();
    assert_eq!(dead.state, OutboundState::Dead, "dropped by the decision");
    assert!(dead.last_error.unwrap().contains("decided"));
    assert_eq!(
        store.get_outbound(&first.id).await.unwrap().unwrap().state,
        OutboundState::Delivered,
        "a sent reminder stays as it was"
    );
    assert!(
        !is_candidate(store.as_ref(), &ask).await,
        "decided: no candidate"
    );
    assert!(
        store
            .record_reminder(reminder(&c, 3))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        h.asks()
            .send_due_reminders(asked + Duration::hours(3))
            .await
            .unwrap(),
        0
    );
    assert!(
        lease(store.as_ref()).await.is_empty(),
        "nothing left to send"
    );
}

pub async fn a_push_or_reminder_leased_before_the_approval_closed_is_skipped(b: &Backend) {
    let (store, h) = with_channel(b).await;
    let parent = core_task(&h, "parent", None).await;
    let child = core_task(&h, "Release", Some(&parent)).await;
    h.tasks().begin_execution(&child).await.unwrap();

    // Decided while its push was leased ahead (SENDING): the decision
    // leaves a leased row; the check right before the send skips it.
    let v = held(&h, &child, "git push --force").await;
    let id = v.approval_id.unwrap();
    let leased = lease(store.as_ref()).await;
    let push = leased
        .iter()
        .find(|r| r.dedup_key == format!("approval:{id}"))
        .expect("leased")
        .clone();
    assert_eq!(push.state, OutboundState::Sending);
    assert!(!store.question_closed(&push.id).await.unwrap());
    assert_eq!(
        h.asks().skip_before_send(&push).await,
        None,
        "still pending: sent"
    );
    h.approvals()
        .decide_approval(&Person::admin(), &id, false, None, "rest")
        .await
        .unwrap();
    assert_eq!(
        store.get_outbound(&push.id).await.unwrap().unwrap().state,
        OutboundState::Sending,
        "leased: the decision leaves it to its sender"
    );
    assert!(store.question_closed(&push.id).await.unwrap());
    let why = h.asks().skip_before_send(&push).await.expect("skipped");
    let done = h
        .outbox()
        .finish_send(&push, OWNER, SendOutcome::Skipped(why))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.state, OutboundState::Dead);
    assert!(
        done.last_error
            .as_deref()
            .is_some_and(|e| e.contains("no longer waiting")),
        "{done:?}"
    );

    // Its reminder leased ahead, then the approval's ask is cancelled (the
    // task stopped): the reminder and a re-leased push are both closed.
    let v = held(&h, &child, "rm -rf build").await;
    let (id, ask) = (v.approval_id.unwrap(), v.request_id.unwrap());
    let push = send(store.as_ref(), &h, &format!("approval:{id}")).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    let row = store
        .record_reminder(reminder(&c, 1))
        .await
        .unwrap()
        .unwrap();
    let leased = lease(store.as_ref()).await;
    let leased = leased.iter().find(|r| r.id == row.id).expect("leased");
    assert!(!store.question_closed(&row.id).await.unwrap());
    assert_eq!(store.cancel_open_asks(&child).await.unwrap(), vec![ask]);
    assert_eq!(
        store.get_approval(&id).await.unwrap().unwrap().state,
        ApprovalState::Cancelled
    );
    assert!(store.question_closed(&row.id).await.unwrap());
    assert!(store.question_closed(&push.id).await.unwrap());
    assert!(
        h.asks()
            .skip_before_send(leased)
            .await
            .is_some_and(|why| why.contains("no longer waiting"))
    );
    // A row that asks nothing is never closed.
    let plain = h
        .outbox()
        .push_to_human(harness_core::outbox::PushInput {
            task_id: Some(child.clone()),
            message: Some("FYI: the build is green".into()),
            scope: Some("unattended".into()),
            expect_reply: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!store.question_closed(&plain.outbound_id).await.unwrap());
}

pub async fn an_escalated_approval_decided_tells_the_chat_of_its_push_and_the_escalation(
    b: &Backend,
) {
    let (store, h) = with_channel(b).await;
    let parent = core_task(&h, "parent", None).await;
    let child = core_task(&h, "Deploy the fix", Some(&parent)).await;
    h.tasks().begin_execution(&child).await.unwrap();
    let v = held(&h, &child, "git push --force origin main").await;
    let (id, ask) = (v.approval_id.unwrap(), v.request_id.unwrap());
    send(store.as_ref(), &h, &format!("approval:{id}")).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    // Reminder 1 reached the chat; reminder 2 was written, never sent.
    let r1 = store
        .record_reminder(reminder(&c, 1))
        .await
        .unwrap()
        .unwrap();
    send(store.as_ref(), &h, &r1.dedup_key).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    store
        .record_reminder(reminder(&c, 2))
        .await
        .unwrap()
        .unwrap();
    let rows = store
        .record_escalation(super::escalations::escalation_to(&c, &["-200"]))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    // Lease both due rows; the escalation reaches its chat, reminder 2 is
    // left leased (not sent).
    let leased = lease(store.as_ref()).await;
    let esc = leased
        .iter()
        .find(|r| r.id == rows[0].id)
        .expect("the escalation is due");
    h.outbox()
        .finish_send(esc, OWNER, delivered("pm-esc"))
        .await
        .unwrap();
    let follow = h
        .asks()
        .follow_ups(std::slice::from_ref(&ask))
        .await
        .unwrap();
    assert_eq!(
        follow.get(&ask).map(|f| f.reminders),
        Some(1),
        "reminders that reached the chat, not the highest number written"
    );

    h.approvals()
        .decide_approval(&Person::admin(), &id, true, None, "rest")
        .await
        .unwrap();
    let later = Utc::now() + Duration::seconds(300);
    let mut notices: Vec<(String, String)> = store
        .claim_outbound(OWNER, later, later + Duration::seconds(60), 10)
        .await
        .unwrap()
        .into_iter()
        .filter(|n| n.dedup_key.starts_with("answered:"))
        .map(|n| (n.dedup_key, n.dest.unwrap_or_default()))
        .collect();
    notices.sort();
    assert_eq!(
        notices,
        vec![
            (format!("answered:{ask}:0"), "-100".to_string()),
            (format!("answered:{ask}:1"), "-200".to_string()),
        ],
        "the chat of the approval's push is told too"
    );
}

/// An approval decided by the person in the chat is recorded as answered
/// through a gateway in the decision's own transaction: the chat of its
/// push wrote at the decision's time.
pub async fn an_approval_decided_in_the_chat_is_recorded_with_it(b: &Backend) {
    let (store, h) = with_channel(b).await;
    let parent = core_task(&h, "parent", None).await;
    let child = core_task(&h, "Deploy the fix", Some(&parent)).await;
    h.tasks().begin_execution(&child).await.unwrap();
    let v = held(&h, &child, "git push --force origin main").await;
    let id = v.approval_id.unwrap();
    send(store.as_ref(), &h, &format!("approval:{id}")).await;
    let wrote = || async {
        store
            .chat_activity("openclaw", "telegram", "-100", Some("-100"))
            .await
            .unwrap()
            .last_wrote
            .map(|t| t.timestamp_millis())
    };
    assert_eq!(wrote().await, None, "nobody wrote yet");
    let at = Utc::now() + Duration::seconds(5);
    let decision = ApprovalDecision {
        approve: true,
        by: "owner".into(),
        via: "chat".into(),
        reason: None,
        reply_text: "Approve".into(),
        typed: None,
        now: at,
        from_chat: true,
    };
    let decided = store.decide_approval(&id, &decision).await.unwrap();
    assert_eq!(
        decided.map(|d| d.approval.state),
        Some(ApprovalState::Approved)
    );
    assert_eq!(wrote().await, Some(at.timestamp_millis()));
}
