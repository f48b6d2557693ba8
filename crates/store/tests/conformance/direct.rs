//! Port methods that the core-level cases of the other files reach only
//! through a `Harness`, called here directly with their results read back:
//! the manual delivery actions, the ask idempotency key, the outbox's
//! activation, recovery and manual actions, the choices' conditional
//! answers and the ask-for-a-parent transaction.

use chrono::Duration;
use harness_core::{
    deliveries::{DeliveryState, NewInput},
    ids,
    inbox::{EventKind, NewEvent, Priority},
    model::MessageState,
    outbox::OutboundState,
    store::{Dedup, Lapsed, NewAsk, NewOutbound, OUTBOX, RecoveredAs, Settle, SettleBatch},
};
use serde_json::json;

use super::{Backend, support::*};

pub async fn manual_delivery_actions_release_requeue_and_mark(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "deliveries").await;
    let at = now_ms();
    let (row, created) = s
        .enqueue_input(NewInput {
            id: ids::new_id(),
            task_id: t.clone(),
            node_id: None,
            text: "hello".into(),
            submit: true,
            dedup_key: "k".into(),
            resume: false,
            now: at,
        })
        .await
        .unwrap();
    assert!(created);
    let until = at + LEASE;
    let c = s
        .claim_deliveries("n:1", "n", true, at, until, 5)
        .await
        .unwrap();
    assert_eq!(c.rows.len(), 1);
    // Released untouched: due again at once for anybody.
    s.release_delivery(&row.id, "n:1").await.unwrap();
    let back = s.get_delivery(&row.id).await.unwrap().unwrap();
    assert_eq!(back.lease_owner, None);
    let c = s
        .claim_deliveries("n:2", "n", true, at, until, 5)
        .await
        .unwrap();
    assert_eq!(c.rows.len(), 1, "claimable again after the release");
    // Mid-write, then lost: UNVERIFIED; only a person moves it on.
    s.advance_delivery(&row.id, "n:2", DeliveryState::Writing, until, at)
        .await
        .unwrap()
        .unwrap();
    let later = past_lease().await;
    let c = s
        .claim_deliveries("n:3", "n", true, later, later, 5)
        .await
        .unwrap();
    assert_eq!(c.unverified.len(), 1);
    // Requeue only from the named states.
    assert!(
        s.requeue_delivery(&row.id, &[DeliveryState::Failed], later)
            .await
            .unwrap()
            .is_none()
    );
    let again = s
        .requeue_delivery(&row.id, &[DeliveryState::Unverified], later)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (again.state, again.lease_owner),
        (DeliveryState::Queued, None)
    );
    // Through once more, mid-write and lost again, then marked delivered.
    let c = s
        .claim_deliveries("n:4", "n", true, later, later + LEASE, 5)
        .await
        .unwrap();
    assert_eq!(c.rows.len(), 1);
    s.advance_delivery(&row.id, "n:4", DeliveryState::Writing, later + LEASE, later)
        .await
        .unwrap()
        .unwrap();
    let much_later = past_lease().await;
    s.claim_deliveries("n:5", "n", true, much_later, much_later, 5)
        .await
        .unwrap();
    let marked = s
        .mark_delivery_delivered(&row.id, much_later)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(marked.state, DeliveryState::Delivered);
    assert!(
        s.mark_delivery_delivered(&row.id, much_later)
            .await
            .unwrap()
            .is_none(),
        "only UNVERIFIED can be marked"
    );
    let stored = s.get_delivery(&row.id).await.unwrap().unwrap();
    assert_eq!(stored.state, DeliveryState::Delivered);
    assert!(stored.done_at.is_some());
}

pub async fn an_ask_is_found_by_its_idempotency_key(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "keys").await;
    let recorded = s
        .record_ask(NewAsk {
            idempotency_key: Some("key-1".into()),
            ..ask(&t, "once?", now())
        })
        .await
        .unwrap();
    let found = s.ask_by_key(&t, "key-1").await.unwrap().unwrap();
    assert_eq!(found.id, recorded.message.id);
    assert!(s.ask_by_key(&t, "key-2").await.unwrap().is_none());
    let other = new_task(s, "other").await;
    assert!(
        s.ask_by_key(&other, "key-1").await.unwrap().is_none(),
        "per task"
    );
    // Found in any state.
    s.cancel_open_asks(&t).await.unwrap();
    let cancelled = s.ask_by_key(&t, "key-1").await.unwrap().unwrap();
    assert_eq!(cancelled.state, MessageState::Cancelled);
}

fn outbound(task_id: &str, key: &str, expect_reply: bool) -> NewOutbound {
    NewOutbound {
        id: ids::new_id(),
        message_id: Some(ids::new_id()),
        task_id: Some(task_id.into()),
        dedup: Dedup::Explicit(format!("harness:{task_id}:{key}")),
        gateway: "hermes".into(),
        downstream: Some("feishu".into()),
        dest: None,
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply,
        message: format!("message {key}"),
        presentation: None,
        now: now_ms(),
        choices: None,
    }
}

pub async fn outbox_activation_recovery_and_manual_actions(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "outbox").await;
    let exec = new_execution(s, &t).await.unwrap();
    let ask_row = s.enqueue_outbound(outbound(&t, "ask", true)).await.unwrap();
    assert!(!ask_row.deduped);
    assert_eq!(ask_row.message_state, Some(MessageState::PendingDelivery));
    let again = s.enqueue_outbound(outbound(&t, "ask", true)).await.unwrap();
    assert!(again.deduped, "the explicit key is strict");
    assert_eq!(again.row.id, ask_row.row.id);
    let note = s
        .enqueue_outbound(outbound(&t, "note", false))
        .await
        .unwrap();
    let at = now_ms();
    // One turn: lease both.
    let turn = s
        .settle_and_claim_outbound(SettleBatch {
            owner: "node-a:1".into(),
            expired_before: None,
            settles: Vec::new(),
            now: at,
            lease_until: at + LEASE,
            limit: 10,
            released: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(turn.claimed.len(), 2);
    // The ask is sent (activation: it opens, the execution parks, the
    // platform id maps to the task); the notify is left to expire.
    let done = s
        .settle_and_claim_outbound(SettleBatch {
            owner: "node-a:1".into(),
            expired_before: None,
            settles: vec![(
                ask_row.row.id.clone(),
                Settle::Sent {
                    state: OutboundState::Delivered,
                    platform: Some("feishu".into()),
                    chat_id: Some("chat-1".into()),
                    platform_message_id: Some("om_1".into()),
                    note: None,
                },
            )],
            now: at,
            lease_until: at,
            limit: 0,
            released: Vec::new(),
        })
        .await
        .unwrap();
    assert_eq!(done.settled.len(), 1);
    assert_eq!(done.settled[0].message_state, Some(MessageState::Open));
    assert_eq!(done.settled[0].paused, vec![exec.clone()]);
    let mappings = s
        .delivery_mappings("hermes", "feishu", "om_1")
        .await
        .unwrap();
    assert_eq!(mappings.len(), 1, "{mappings:?}");
    let mapping = mappings[0].clone();
    assert_eq!(mapping.gateway, "hermes");
    assert_eq!(mapping.task_id.as_deref(), Some(t.as_str()));
    assert_eq!(
        mapping.outbound_id.as_deref(),
        Some(ask_row.row.id.as_str())
    );
    assert_eq!(mapping.chat_id, "chat-1");
    assert!(mapping.expect_reply);
    assert!(
        s.delivery_mappings("hermes", "feishu", "om_2")
            .await
            .unwrap()
            .is_empty()
    );
    let ids_of = [
        ask_row.row.message_id.clone().unwrap(),
        note.row.message_id.clone().unwrap(),
    ];
    let by_message = s.outbound_for_messages(&ids_of).await.unwrap();
    assert_eq!(by_message.len(), 2);
    // The notify's CLI was spawned (its started mark), then its lease runs
    // out: the engine's recovery answers it for the outbox's own settle
    // (its settle hook), unchanged — by lease expiry and by the node's
    // other boots.
    assert_eq!(
        s.mark_outbound_started("node-a:1", &[(note.row.id.clone(), 1)])
            .await
            .unwrap(),
        vec![note.row.id.clone()]
    );
    let node = |current_owner| Lapsed::Node {
        node: "node-a",
        current_owner,
    };
    assert!(
        s.recover_work(&OUTBOX, Lapsed::Expired, at)
            .await
            .unwrap()
            .is_empty()
    );
    let later = past_lease().await;
    let expired = s
        .recover_work(&OUTBOX, Lapsed::Expired, later)
        .await
        .unwrap();
    assert_eq!(
        expired
            .iter()
            .map(|r| (r.id.clone(), r.what))
            .collect::<Vec<_>>(),
        vec![(note.row.id.clone(), RecoveredAs::ToSettle)]
    );
    let earlier = s
        .recover_work(&OUTBOX, node("node-a:2"), later)
        .await
        .unwrap();
    assert_eq!(earlier.len(), 1);
    assert_eq!(earlier[0].lease_owner.as_deref(), Some("node-a:1"));
    assert!(
        s.recover_work(&OUTBOX, node("node-a:1"), later)
            .await
            .unwrap()
            .is_empty(),
        "the current boot's own rows"
    );
    let other = Lapsed::Node {
        node: "node-b",
        current_owner: "node-b:1",
    };
    assert!(
        s.recover_work(&OUTBOX, other, later)
            .await
            .unwrap()
            .is_empty()
    );
    // Recovered as sent-unverified (the lease ended before the settle).
    let recovered = s
        .settle_outbound(
            &note.row.id,
            "node-a:1",
            Some(later),
            Settle::Sent {
                state: OutboundState::SentUnverified,
                platform: None,
                chat_id: None,
                platform_message_id: None,
                note: Some("lease expired".into()),
            },
            later,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(recovered.row.state, OutboundState::SentUnverified);
    assert!(
        s.retry_outbound(&note.row.id, at).await.unwrap().is_none(),
        "SENT_UNVERIFIED is never sent again by a retry"
    );
    let marked = s
        .mark_outbound_delivered(&note.row.id, at + Duration::seconds(40))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(marked.state, OutboundState::Delivered);
    assert!(
        s.mark_outbound_delivered(&note.row.id, at)
            .await
            .unwrap()
            .is_none()
    );
    // A dead row is retried by a person: PENDING, due now.
    let dead = s
        .enqueue_outbound(outbound(&t, "dead", false))
        .await
        .unwrap();
    let later = at + Duration::seconds(50);
    let claimed = s
        .claim_outbound("node-a:1", later, later + Duration::seconds(30), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let died = s
        .settle_outbound(
            &dead.row.id,
            "node-a:1",
            None,
            Settle::Failed {
                error: "no".into(),
                next: None,
            },
            later,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(died.row.state, OutboundState::Dead);
    let retried = s
        .retry_outbound(&dead.row.id, later)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(retried.state, OutboundState::Pending);
    assert_eq!(
        s.get_outbound(&dead.row.id).await.unwrap().unwrap().state,
        OutboundState::Pending
    );
}

pub async fn conditional_answers_of_choices_and_the_ask_for_a_parent(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "choices").await;
    new_execution(s, &t).await.unwrap();
    let at = now_ms();
    let id = ask_due_at(
        s,
        &t,
        "Which?",
        &["A", "B", "C"],
        Some("B"),
        at + Duration::seconds(60),
    )
    .await;
    // Not yet due: the default is not applied.
    assert!(
        s.answer_with_default(&id, "B", &ids::new_id(), None, at)
            .await
            .unwrap()
            .is_none()
    );
    // A person picks two options.
    let answered = s
        .answer_with_options(&id, "C, A", &[2, 0], &ids::new_id(), None, at, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answered.message.state, MessageState::Answered);
    assert!(answered.delivery.is_some(), "the agent ran: a reply row");
    let c = s.choices_for(std::slice::from_ref(&id)).await.unwrap();
    assert_eq!(c[0].1.answered_options, Some(vec![2, 0]));
    // No longer OPEN: neither answer applies again.
    let due = at + Duration::seconds(61);
    assert!(
        s.answer_with_default(&id, "B", &ids::new_id(), None, due)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        s.answer_with_options(&id, "A", &[0], &ids::new_id(), None, due, false)
            .await
            .unwrap()
            .is_none()
    );
    // A due default is applied once.
    let id2 = ask_due_at(s, &t, "Retry?", &["Retry", "Skip"], Some("Skip"), at).await;
    let by_default = s
        .answer_with_default(&id2, "Skip (default)", &ids::new_id(), None, due)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_default.message.reply_text.as_deref(), Some("Skip"));
    let c = s.choices_for(std::slice::from_ref(&id2)).await.unwrap();
    assert!(c[0].1.answered_by_default());
    assert!(
        s.answer_with_default(&id2, "Skip", &ids::new_id(), None, due)
            .await
            .unwrap()
            .is_none()
    );

    // An ask and its parent's inbox event in one transaction; the event
    // is undelivered until typed into the parent.
    let parent = new_task(s, "parent").await;
    let child = ids::new_id();
    s.create_task(harness_core::store::NewTask {
        id: child.clone(),
        title: "child".into(),
        description: None,
        project_id: None,
        parent_task_id: Some(parent.clone()),
        agent: command_agent(),
        now: now(),
    })
    .await
    .unwrap();
    let key = format!("decision:{child}");
    let event = |id: String| NewEvent {
        id,
        parent_task_id: parent.clone(),
        source_task_id: child.clone(),
        execution_id: None,
        kind: EventKind::ChildDecisionRequired,
        priority: Priority::High,
        dedup_key: key.clone(),
        execution_review_key: None,
        fallback: false,
        payload: json!({"childTaskId": child, "question": "Which?"}),
        now: now(),
    };
    let event_id = ids::new_id();
    let (asked, added) = s
        .record_ask_for_parent(ask(&child, "Which?", now()), None, event(event_id.clone()))
        .await
        .unwrap();
    assert!(added);
    assert_eq!(asked.message.state, MessageState::Open);
    assert_eq!(
        s.undelivered_event(&key).await.unwrap(),
        Some(event_id.clone())
    );
    assert!(s.undelivered_event("no-such-key").await.unwrap().is_none());
    let (_, added_again) = s
        .record_ask_for_parent(ask(&child, "Which?", now()), None, event(ids::new_id()))
        .await
        .unwrap();
    assert!(!added_again, "the event under its key is left as it is");
    let events = s.list_workbench_events(&parent, 10).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].id, event_id);
}
