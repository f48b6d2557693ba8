//! Messages: asks, notifies and replies, with the executions they park
//! and resume.

use std::sync::Arc;

use chrono::Duration;
use harness_core::{
    ids,
    model::{Cursor, ExecutionStatus, MessageKind, MessageQuery, MessageState, MessageView},
    store::{Dismissed, StoreError},
};

use super::{Backend, support::*};

pub async fn ask_supersedes_and_parks(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let exec = new_execution(s, &t).await.unwrap();
    let first = s.record_ask(ask(&t, "first?", now())).await.unwrap();
    assert_eq!(first.paused, vec![exec.clone()]);
    assert!(first.cancelled.is_empty());
    assert_eq!(first.message.execution_id.as_deref(), Some(exec.as_str()));
    assert_eq!(
        (first.message.kind, first.message.state),
        (MessageKind::Ask, MessageState::Open)
    );
    assert_eq!(execution_status(s, &t).await, Some(ExecutionStatus::Paused));
    let second = s.record_ask(ask(&t, "second?", now())).await.unwrap();
    assert_eq!(second.cancelled, vec![first.message.id.clone()]);
    assert!(second.paused.is_empty(), "already parked");
    assert_eq!(second.message.execution_id, None, "no RUNNING execution");
    let old = s.get_message(&first.message.id).await.unwrap().unwrap();
    assert_eq!(old.state, MessageState::Cancelled);
    assert_eq!(s.open_ask(&t).await.unwrap().unwrap().id, second.message.id);
    assert_eq!(
        s.latest_ask(&t).await.unwrap().unwrap().id,
        second.message.id
    );
    assert!(s.get_task(&t).await.unwrap().unwrap().open_ask);
    let missing = s
        .record_ask(ask(&ids::new_id(), "q", now()))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::MissingReference(_)),
        "{missing:?}"
    );
}

pub async fn one_open_ask_per_task(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let mut racers = Vec::new();
    for i in 0..20 {
        let store = b.store.clone();
        let t = t.clone();
        racers.push(tokio::spawn(async move {
            store.record_ask(ask(&t, &format!("q{i}"), now())).await
        }));
    }
    for r in racers {
        r.await.unwrap().unwrap();
    }
    let open = s
        .list_messages(&MessageQuery {
            view: MessageView::Pending,
            task_id: Some(t.clone()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(open.len(), 1, "exactly one OPEN ask after concurrent asks");
}

pub async fn answer_is_conditional(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    assert!(
        s.answer_open_ask(&t, "nobody asked", &ids::new_id(), None, now(), false)
            .await
            .unwrap()
            .is_none()
    );
    let exec = new_execution(s, &t).await.unwrap();
    let asked = s.record_ask(ask(&t, "q?", now())).await.unwrap();
    let delivery_id = ids::new_id();
    // Leased at once to this node's worker (the hand-off).
    let claim = harness_core::store::DeliveryClaim {
        owner: format!("{NODE}:boot"),
        node: NODE.into(),
        until: now() + Duration::seconds(60),
    };
    let answered = s
        .answer_open_ask(&t, "yes", &delivery_id, Some(&claim), now(), false)
        .await
        .unwrap()
        .unwrap();
    // The reply's delivery row is written by the same transaction.
    let row = answered.delivery.clone().expect("a delivery row");
    assert_eq!(row.id, delivery_id);
    assert_eq!(
        row.node_id.as_deref(),
        Some(NODE),
        "bound to the PTY's node"
    );
    assert_eq!(row.lease_owner.as_deref(), Some(claim.owner.as_str()));
    // Leased: nobody else claims it while the lease runs.
    let other = s
        .claim_deliveries("node-a:other", NODE, true, now(), now(), 10)
        .await
        .unwrap();
    assert!(other.rows.is_empty(), "handed off, not claimable");
    let stored = s.get_delivery(&delivery_id).await.unwrap().unwrap();
    assert_eq!(
        stored.message_id.as_deref(),
        Some(asked.message.id.as_str())
    );
    assert_eq!(
        (stored.text.as_str(), stored.question.as_deref()),
        ("yes", Some("q?"))
    );
    assert_eq!(answered.message.id, asked.message.id);
    assert_eq!(answered.message.state, MessageState::Answered);
    assert_eq!(answered.message.reply_text.as_deref(), Some("yes"));
    assert!(answered.message.replied_at.is_some());
    assert_eq!(answered.resumed, vec![exec]);
    assert!(answered.running);
    assert_eq!(
        execution_status(s, &t).await,
        Some(ExecutionStatus::Running)
    );
    assert!(
        s.answer_open_ask(&t, "again", &ids::new_id(), None, now(), false)
            .await
            .unwrap()
            .is_none(),
        "answered once"
    );
    assert!(s.open_ask(&t).await.unwrap().is_none());
    assert_eq!(
        s.latest_ask(&t).await.unwrap().unwrap().state,
        MessageState::Answered
    );
    // resume_executions is idempotent.
    let (resumed, running) = s.resume_executions(&t).await.unwrap();
    assert!(resumed.is_empty() && running);
}

pub async fn concurrent_answers_have_one_winner(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    new_execution(s, &t).await.unwrap();
    s.record_ask(ask(&t, "q?", now())).await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let mut racers = Vec::new();
    for i in 0..50 {
        let store = b.store.clone();
        let t = t.clone();
        let barrier = barrier.clone();
        racers.push(tokio::spawn(async move {
            barrier.wait().await;
            store
                .answer_open_ask(&t, &format!("r{i}"), &ids::new_id(), None, now(), false)
                .await
        }));
    }
    let mut winners = 0;
    let mut resumed = 0;
    for r in racers {
        if let Some(a) = r.await.unwrap().unwrap() {
            winners += 1;
            resumed += a.resumed.len();
        }
    }
    assert_eq!((winners, resumed), (1, 1));
    assert_eq!(
        s.task_deliveries(&t, 100).await.unwrap().len(),
        1,
        "one answer, one delivery"
    );
}

pub async fn notify_ignore_dismiss(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let note = s.record_notify(ask(&t, "fyi", now())).await.unwrap();
    assert_eq!(
        (note.kind, note.state),
        (MessageKind::Notify, MessageState::Closed)
    );
    assert!(s.open_ask(&t).await.unwrap().is_none());
    let asked = s.record_ask(ask(&t, "q?", now())).await.unwrap();
    assert_eq!(
        s.dismiss_message(&asked.message.id).await.unwrap(),
        Dismissed::IsAsk
    );
    let ignored = s.ignore_ask(&asked.message.id).await.unwrap().unwrap();
    assert_eq!(ignored.state, MessageState::Ignored);
    assert!(
        s.ignore_ask(&asked.message.id).await.unwrap().is_none(),
        "only OPEN"
    );
    assert!(s.ignore_ask(&note.id).await.unwrap().is_none(), "only asks");
    match s.dismiss_message(&note.id).await.unwrap() {
        Dismissed::Deleted(m) => assert_eq!(m.id, note.id),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.dismiss_message(&note.id).await.unwrap(),
        Dismissed::NotFound
    );
    assert!(s.get_message(&note.id).await.unwrap().is_none());
}

pub async fn cancel_and_expire(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let asked = s.record_ask(ask(&t, "q?", now())).await.unwrap();
    assert_eq!(
        s.cancel_open_asks(&t).await.unwrap(),
        vec![asked.message.id.clone()]
    );
    assert!(s.cancel_open_asks(&t).await.unwrap().is_empty());
    let stale_task = new_task(s, "stale").await;
    let stale = s
        .record_ask(ask(&stale_task, "old?", now() - Duration::days(20)))
        .await
        .unwrap();
    let fresh_task = new_task(s, "fresh").await;
    let fresh = s.record_ask(ask(&fresh_task, "new?", now())).await.unwrap();
    let expired = s
        .expire_asks_before(now() - Duration::days(14))
        .await
        .unwrap();
    assert!(expired.contains(&stale.message.id) && !expired.contains(&fresh.message.id));
    assert_eq!(
        s.get_message(&stale.message.id)
            .await
            .unwrap()
            .unwrap()
            .state,
        MessageState::Expired
    );
}

pub async fn message_listing(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "listing 100%_done").await;
    let other = new_task(s, "other").await;
    let base = now() - Duration::minutes(10);
    let mut ids_newest_first = Vec::new();
    for i in 0..7 {
        let m = s
            .record_notify(ask(&t, &format!("line {i}"), base + Duration::seconds(i)))
            .await
            .unwrap();
        ids_newest_first.insert(0, m.id);
    }
    s.record_ask(ask(&other, "pending?", now())).await.unwrap();
    // Keyset pages of 3 over the task's rows, newest first.
    let mut seen = Vec::new();
    let mut cursor: Option<Cursor> = None;
    loop {
        let page = s
            .list_messages(&MessageQuery {
                view: MessageView::All,
                task_id: Some(t.clone()),
                cursor: cursor.clone(),
                limit: 3,
                ..Default::default()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        let last = page.last().unwrap();
        cursor = Some(Cursor {
            created_at_ms: last.message.created_at.timestamp_millis(),
            id: last.message.id.clone(),
        });
        seen.extend(page.into_iter().map(|r| r.message.id));
    }
    assert_eq!(seen, ids_newest_first);
    // Search escapes LIKE wildcards: "%_" matches only the literal text.
    let literal = s
        .list_messages(&MessageQuery {
            view: MessageView::All,
            search: Some("100%_d".into()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(literal.len(), 7);
    assert!(literal.iter().all(|r| r.task_title == "listing 100%_done"));
    let wildcard = s
        .list_messages(&MessageQuery {
            view: MessageView::All,
            search: Some("%".into()),
            task_id: Some(other.clone()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(wildcard.is_empty(), "% is literal");
    assert!(s.pending_count().await.unwrap() >= 1);
    let row = s.message_row(&ids_newest_first[0]).await.unwrap().unwrap();
    assert_eq!(row.task_title, "listing 100%_done");
    assert!(s.message_row(&ids::new_id()).await.unwrap().is_none());
}
