//! The parent's durable inbox, through the core:
//! dedup keys and the one-review-per-execution race (stop hook vs. exit
//! fallback, in both orders, and racing on two connections), HIGH before
//! NORMAL, the batch stored with its TaskMessage and delivery in one
//! transaction, a failed delivery returning the events to PENDING and the
//! same batch id replayed, expired and dead-boot claims recovered.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{
    Harness,
    deliveries::DeliveryState,
    inbox::{BatchState, EventKind, EventState, Priority},
    model::ExecutionStatus,
    store::Store,
};

use super::Backend;

/// The core on node-a over another store on the backend's database.
async fn open(b: &Backend) -> (Arc<dyn Store>, Harness) {
    super::support::node_a(b, Some("node-a:boot-1")).await
}

async fn task(h: &Harness, parent: Option<&str>) -> String {
    super::support::core_task(h, "t", parent).await
}

/// A derived child with a live execution; returns (child, execution).
async fn running_child(h: &Harness, parent: &str) -> (String, String) {
    let child = task(h, Some(parent)).await;
    let (exec, _) = h.tasks().begin_execution(&child).await.unwrap();
    (child, exec.id)
}

pub async fn one_review_per_execution_whoever_comes_first(b: &Backend) {
    let (store, h) = open(b).await;
    let parent = task(&h, None).await;

    // Stop hook first, then the COMPLETED exit: one event (the hook's).
    let (c1, e1) = running_child(&h, &parent).await;
    let stop = h
        .deliveries()
        .record_turn_end(&c1, &e1, Some("s"), Some("turn-1"), Some("done"))
        .await
        .unwrap();
    assert!(stop.owns_turn && !stop.deduped);
    let again = h
        .deliveries()
        .record_turn_end(&c1, &e1, Some("s2"), Some("turn-1"), Some("done"))
        .await
        .unwrap();
    assert!(
        again.deduped && again.event_id == stop.event_id,
        "session id changes keep the key"
    );
    h.tasks()
        .finish_execution(&c1, &e1, ExecutionStatus::Completed, Some(0), "exited")
        .await
        .unwrap();
    let (fallback, created) = h
        .deliveries()
        .record_child_exit(&c1, &e1, ExecutionStatus::Completed, Some(0))
        .await
        .unwrap()
        .unwrap();
    assert!(!created);
    assert_eq!(Some(fallback.id), stop.event_id);

    // Exit first, then a late stop hook: the fallback stays the only review.
    let (c2, e2) = running_child(&h, &parent).await;
    h.tasks()
        .finish_execution(&c2, &e2, ExecutionStatus::Completed, Some(0), "exited")
        .await
        .unwrap();
    let (fb, created) = h
        .deliveries()
        .record_child_exit(&c2, &e2, ExecutionStatus::Completed, Some(0))
        .await
        .unwrap()
        .unwrap();
    assert!(created && fb.priority == Priority::Normal);
    assert_eq!(
        fb.execution_review_key.as_deref(),
        Some(format!("execution-review:{c2}:{e2}").as_str())
    );
    let late = h
        .deliveries()
        .record_turn_end(&c2, &e2, None, Some("turn-1"), Some("late"))
        .await
        .unwrap();
    assert!(
        !late.owns_turn && late.event_id.is_none(),
        "a finished execution no longer owns a turn"
    );

    // A second distinct turn of one live execution is its own event.
    let (c3, e3) = running_child(&h, &parent).await;
    let t1 = h
        .deliveries()
        .record_turn_end(&c3, &e3, None, Some("turn-1"), Some("a"))
        .await
        .unwrap();
    let t2 = h
        .deliveries()
        .record_turn_end(&c3, &e3, None, Some("turn-2"), Some("b"))
        .await
        .unwrap();
    assert!(!t1.deduped && !t2.deduped && t1.event_id != t2.event_id);

    // A FAILED exit is always a HIGH failure, once.
    let (c4, e4) = running_child(&h, &parent).await;
    h.tasks()
        .finish_execution(&c4, &e4, ExecutionStatus::Failed, Some(2), "exited")
        .await
        .unwrap();
    let (f, created) = h
        .deliveries()
        .record_child_exit(&c4, &e4, ExecutionStatus::Failed, Some(2))
        .await
        .unwrap()
        .unwrap();
    assert!(created && f.kind == EventKind::ChildExecutionFailed && f.priority == Priority::High);
    assert!(
        !h.deliveries()
            .record_child_exit(&c4, &e4, ExecutionStatus::Failed, Some(2))
            .await
            .unwrap()
            .unwrap()
            .1
    );
    // Parentless: nothing.
    let lone = task(&h, None).await;
    let (le, _) = h.tasks().begin_execution(&lone).await.unwrap();
    assert!(
        h.deliveries()
            .record_child_exit(&lone, &le.id, ExecutionStatus::Failed, None)
            .await
            .unwrap()
            .is_none()
    );

    let events = store.list_workbench_events(&parent, 100).await.unwrap();
    assert_eq!(events.len(), 5, "{events:#?}");
}

pub async fn racing_stop_and_fallback_on_two_connections_make_one_event(b: &Backend) {
    let (_, h) = open(b).await;
    let (_, h2) = open(b).await;
    let parent = task(&h, None).await;
    for _ in 0..20 {
        let (child, exec) = running_child(&h, &parent).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let (a, b) = (barrier.clone(), barrier);
        let (hc, ec, h1) = (child.clone(), exec.clone(), h.clone());
        let stop = tokio::spawn(async move {
            a.wait().await;
            h1.deliveries()
                .record_turn_end(&hc, &ec, None, Some("t"), Some("done"))
                .await
                .unwrap()
        });
        let (hc, ec, h3) = (child.clone(), exec.clone(), h2.clone());
        let exit = tokio::spawn(async move {
            b.wait().await;
            h3.deliveries()
                .record_child_exit(&hc, &ec, ExecutionStatus::Completed, Some(0))
                .await
                .unwrap()
        });
        let (_, _) = (stop.await.unwrap(), exit.await.unwrap());
        let rows: Vec<_> = h
            .store()
            .list_workbench_events(&parent, 500)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.source_task_id == child)
            .collect();
        assert_eq!(rows.len(), 1, "{rows:#?}");
    }
}

pub async fn a_batch_is_high_first_and_a_failed_delivery_replays_the_same_batch_id(b: &Backend) {
    let (store, h) = open(b).await;
    let parent = task(&h, None).await;
    let (pe, _) = h.tasks().begin_execution(&parent).await.unwrap();
    let (r, re) = running_child(&h, &parent).await;
    h.deliveries()
        .record_turn_end(&r, &re, None, Some("t1"), Some("review me"))
        .await
        .unwrap();
    let (f, fe) = running_child(&h, &parent).await;
    h.tasks()
        .finish_execution(&f, &fe, ExecutionStatus::Failed, Some(1), "exited")
        .await
        .unwrap();
    h.deliveries()
        .record_child_exit(&f, &fe, ExecutionStatus::Failed, Some(1))
        .await
        .unwrap();

    let (batch, delivery) = h
        .deliveries()
        .drain_inbox(&parent, Some(&pe.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivery.id, batch.id, "the delivery id is the batch id");
    assert!(delivery.resume && delivery.state == DeliveryState::Queued);
    assert_eq!(batch.state, BatchState::Claimed);
    assert!(
        batch.prompt.find("[EXECUTION FAILED]").unwrap()
            < batch.prompt.find("[REVIEW REQUIRED]").unwrap()
    );
    let messages = store.list_task_messages(&parent, 10).await.unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].id, batch.id);
    assert!(
        h.deliveries()
            .drain_inbox(&parent, Some(&pe.id))
            .await
            .unwrap()
            .is_none(),
        "nothing left pending"
    );
    assert!(h.deliveries().inbox_batch_in_flight(&parent).await.unwrap());

    // The delivery fails cleanly (nothing written): the events return to PENDING.
    let now = Utc::now();
    let claimed = store
        .claim_deliveries(
            "node-a:boot-1",
            "node-a",
            true,
            now,
            now + Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    assert_eq!(claimed.rows.len(), 1);
    store
        .fail_delivery(
            &batch.id,
            "node-a:boot-1",
            "Parent terminal is not running",
            Some(now + Duration::seconds(2)),
            false,
            now,
        )
        .await
        .unwrap()
        .unwrap();
    h.deliveries().maintain_inbox(false).await.unwrap();
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert!(
        events
            .iter()
            .all(|e| e.state == EventState::Pending && e.batch_id.is_none()),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .all(|e| e.last_error.as_deref() == Some("Parent terminal is not running"))
    );
    assert_eq!(
        store
            .get_workbench_batch(&batch.id)
            .await
            .unwrap()
            .unwrap()
            .state,
        BatchState::Failed
    );
    let taken_back = store.get_delivery(&batch.id).await.unwrap().unwrap();
    assert!(
        taken_back.next_attempt_at.is_none(),
        "the queue no longer retries it by itself"
    );

    // The next drain of the same events replays the same batch id: one
    // batch, one TaskMessage, the same delivery row queued again.
    let (again, d2) = h
        .deliveries()
        .drain_inbox(&parent, Some(&pe.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.id, batch.id);
    assert_eq!(d2.id, batch.id);
    assert_eq!(d2.state, DeliveryState::Queued);
    assert_ne!(again.lease_token, batch.lease_token, "a new lease token");
    assert_eq!(
        store.list_task_messages(&parent, 10).await.unwrap().len(),
        1
    );
    assert_eq!(
        store
            .list_workbench_batches(&parent, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert!(
        events
            .iter()
            .all(|e| e.attempts == 2 && e.state == EventState::Processing)
    );

    // Delivered: the batch is DISPATCHED and its events DELIVERED.
    let now = Utc::now();
    store
        .claim_deliveries(
            "node-a:boot-1",
            "node-a",
            true,
            now,
            now + Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    store
        .advance_delivery(
            &batch.id,
            "node-a:boot-1",
            DeliveryState::Writing,
            now + Duration::seconds(60),
            now,
        )
        .await
        .unwrap()
        .unwrap();
    store
        .complete_delivery(&batch.id, "node-a:boot-1", now)
        .await
        .unwrap()
        .unwrap();
    h.deliveries().maintain_inbox(false).await.unwrap();
    let b = store.get_workbench_batch(&batch.id).await.unwrap().unwrap();
    assert_eq!((b.state, b.dispatch_attempts), (BatchState::Dispatched, 1));
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert!(events.iter().all(|e| e.state == EventState::Delivered));
}

pub async fn stale_reviews_are_consumed_not_delivered(b: &Backend) {
    let (store, h) = open(b).await;
    let parent = task(&h, None).await;
    let (c, e) = running_child(&h, &parent).await;
    let older = h
        .deliveries()
        .record_turn_end(&c, &e, None, Some("t1"), Some("first"))
        .await
        .unwrap();
    let newer = h
        .deliveries()
        .record_turn_end(&c, &e, None, Some("t2"), Some("second"))
        .await
        .unwrap();
    let (batch, _) = h
        .deliveries()
        .drain_inbox(&parent, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(batch.event_ids, vec![newer.event_id.clone().unwrap()]);
    assert!(batch.prompt.contains("second") && !batch.prompt.contains("first"));
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    let old = events
        .iter()
        .find(|ev| Some(&ev.id) == older.event_id.as_ref())
        .unwrap();
    assert_eq!(old.state, EventState::Consumed);
    assert!(old.batch_id.is_none());
}

pub async fn expired_and_dead_boot_claims_return_to_pending_but_batched_ones_stay(b: &Backend) {
    let (store, h) = open(b).await;
    let parent = task(&h, None).await;
    for _ in 0..3 {
        let (c, e) = running_child(&h, &parent).await;
        h.deliveries()
            .record_turn_end(&c, &e, None, Some("t"), Some("x"))
            .await
            .unwrap();
    }
    let now = Utc::now();
    // An expired claim and a live claim of a dead boot of this node.
    store
        .claim_workbench_events(
            &parent,
            "node-b:boot-0",
            "k1",
            1,
            now,
            now - Duration::seconds(60),
        )
        .await
        .unwrap();
    store
        .claim_workbench_events(
            &parent,
            "node-a:boot-0",
            "k2",
            1,
            now,
            now + Duration::seconds(60),
        )
        .await
        .unwrap();
    store
        .claim_workbench_events(
            &parent,
            "node-a:boot-1",
            "k3",
            1,
            now,
            now + Duration::seconds(5),
        )
        .await
        .unwrap();
    // The worker's upkeep: the engine's recovery pass of expired leases.
    let upkeep = h
        .cluster()
        .recover_work(
            harness_core::work::Kind::Inbox,
            harness_core::work::Scope::Expired,
        )
        .await
        .unwrap();
    assert_eq!(upkeep.released, 1, "only the expired one");
    assert_eq!(
        h.deliveries().maintain_inbox(false).await.unwrap().0,
        0,
        "a turn recovers nothing"
    );
    assert_eq!(
        h.deliveries().maintain_inbox(true).await.unwrap().0,
        1,
        "at start-up the dead boot's too"
    );
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    let pending = events
        .iter()
        .filter(|e| e.state == EventState::Pending)
        .count();
    assert_eq!(pending, 2, "this boot's live claim is kept: {events:#?}");
    // A claim whose batch was stored is governed by its delivery, not its claim lease.
    let (batch, _) = h
        .deliveries()
        .drain_inbox(&parent, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(batch.event_ids.len(), 2);
    // Its lease ends (by the database's clock).
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    // The engine's one recovery pass (the inbox's own is gone).
    let pass = h
        .cluster()
        .recover_work(
            harness_core::work::Kind::Inbox,
            harness_core::work::Scope::Expired,
        )
        .await
        .unwrap();
    assert_eq!(
        (pass.released, pass.unverified),
        (1, 0),
        "only the unbatched k3"
    );
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert_eq!(
        events
            .iter()
            .filter(
                |e| e.state == EventState::Processing && e.batch_id.as_deref() == Some(&batch.id)
            )
            .count(),
        2,
        "the batched claims stay with their batch: {events:#?}"
    );
    let released = events
        .iter()
        .find(|e| e.state == EventState::Pending)
        .expect("k3's event");
    assert_eq!(
        released.last_error.as_deref(),
        Some("claim lease expired; returned to pending")
    );
}

pub async fn exits_without_an_event_are_recovered_at_start_up_once(b: &Backend) {
    let (store, h) = open(b).await;
    let parent = task(&h, None).await;
    let (before, be) = running_child(&h, &parent).await;
    h.tasks()
        .finish_execution(&before, &be, ExecutionStatus::Failed, None, "interrupted")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(
        h.deliveries().recover_missing_child_events().await.unwrap(),
        0,
        "first run only sets the checkpoint"
    );
    let (c, e) = running_child(&h, &parent).await;
    h.tasks()
        .finish_execution(&c, &e, ExecutionStatus::Failed, None, "interrupted")
        .await
        .unwrap();
    let (d, de) = running_child(&h, &parent).await;
    h.tasks()
        .finish_execution(&d, &de, ExecutionStatus::Completed, Some(0), "exited")
        .await
        .unwrap();
    assert_eq!(
        h.deliveries().recover_missing_child_events().await.unwrap(),
        2
    );
    assert_eq!(
        h.deliveries().recover_missing_child_events().await.unwrap(),
        0
    );
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert_eq!(
        events.len(),
        2,
        "nothing for the execution that ended before the checkpoint"
    );
    assert!(
        events
            .iter()
            .any(|ev| ev.source_task_id == c && ev.kind == EventKind::ChildExecutionFailed)
    );
    assert!(
        events
            .iter()
            .any(|ev| ev.source_task_id == d && ev.kind == EventKind::ChildReviewRequired)
    );
}

/// The Workbench start throttle is durable and cluster-wide: one try per
/// window, whichever node or boot asks — another node on the same database
/// and a restarted process wait it out too; after it, the next try wins.
pub async fn a_workbench_start_is_tried_once_per_window_across_nodes_and_restarts(b: &Backend) {
    use super::support::{LEASE, past_lease};
    let (store, h) = open(b).await;
    let wb = task(&h, None).await;
    let other = task(&h, None).await;
    let now = Utc::now();
    assert!(
        store
            .take_workbench_start(&wb, "node-a:boot-1", now, now + LEASE)
            .await
            .unwrap(),
        "the first try starts it"
    );
    assert!(
        !store
            .take_workbench_start(&wb, "node-a:boot-1", now, now + LEASE)
            .await
            .unwrap(),
        "not twice in the window"
    );
    // Another node on the same database (its own connections).
    let node_b = b.another().await;
    let now = Utc::now();
    assert!(
        !node_b
            .take_workbench_start(&wb, "node-b:boot-1", now, now + LEASE)
            .await
            .unwrap(),
        "another node waits the window out"
    );
    // A restart of node A (a new process, another boot).
    let restarted = b.another().await;
    assert!(
        !restarted
            .take_workbench_start(&wb, "node-a:boot-2", now, now + LEASE)
            .await
            .unwrap(),
        "a restart waits the window out"
    );
    assert!(
        node_b
            .take_workbench_start(&other, "node-b:boot-1", now, now + LEASE)
            .await
            .unwrap(),
        "each Workbench has its own window"
    );
    let later = past_lease().await;
    assert!(
        node_b
            .take_workbench_start(&wb, "node-b:boot-1", later, later + LEASE)
            .await
            .unwrap(),
        "after the window, the next try (any node) starts it"
    );
    assert!(
        !store
            .take_workbench_start(&wb, "node-a:boot-1", later, later + LEASE)
            .await
            .unwrap()
    );
    // The core's rule: nothing is started for a task that is no Workbench,
    // nor for one that runs.
    assert!(
        !h.deliveries()
            .workbench_start_due(&other, false)
            .await
            .unwrap()
    );
    assert!(!h.deliveries().workbench_start_due(&wb, true).await.unwrap());
}
