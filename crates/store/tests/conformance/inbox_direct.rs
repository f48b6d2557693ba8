//! The inbox port's own transitions, called directly (the `inbox` cases
//! drive the same methods through the core): a turn end on an execution; a
//! claim released with its error; a batch stored only under its claim; the
//! batch in flight until its delivery settles; lease-token transitions;
//! the turn end as the receipt; ended children without an event.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{
    Harness,
    deliveries::DeliveryState,
    ids,
    inbox::{BatchState, EventKind, EventState, NewEvent, Priority},
    model::ExecutionStatus,
    store::{NewBatch, Store},
};
use serde_json::json;

use super::Backend;

const OWNER: &str = "node-a:boot-1";

async fn open(b: &Backend) -> (Arc<dyn Store>, Harness) {
    super::support::node_a(b, None).await
}

async fn task(h: &Harness, parent: Option<&str>) -> String {
    super::support::core_task(h, "t", parent).await
}

fn event(parent: &str, child: &str, execution: &str, key: &str) -> NewEvent {
    NewEvent {
        id: ids::new_id(),
        parent_task_id: parent.into(),
        source_task_id: child.into(),
        execution_id: Some(execution.into()),
        kind: EventKind::ChildExecutionFailed,
        priority: Priority::High,
        dedup_key: key.into(),
        execution_review_key: None,
        fallback: false,
        payload: json!({"exitCode": 1}),
        now: Utc::now(),
    }
}

fn batch(parent: &str, claim: &str, event_ids: Vec<String>) -> NewBatch {
    let now = Utc::now();
    NewBatch {
        id: ids::new_id(),
        parent_task_id: parent.into(),
        execution_id: None,
        claim_token: claim.into(),
        event_ids,
        prompt: "[EXECUTION FAILED] child".into(),
        lease_token: ids::new_id(),
        lease_until: now + Duration::minutes(10),
        node_id: Some("node-a".into()),
        metadata: json!({"type": "workbench_event_batch"}).to_string(),
        now,
    }
}

pub async fn the_inbox_transitions_one_by_one(b: &Backend) {
    let (store, h) = open(b).await;
    let parent = task(&h, None).await;
    let child = task(&h, Some(&parent)).await;
    let (exec, _) = h.tasks().begin_execution(&child).await.unwrap();

    // A turn end is recorded on an execution that exists, only.
    assert!(
        store
            .record_turn_end(&exec.id, Some("did it"), Utc::now())
            .await
            .unwrap()
    );
    assert!(
        !store
            .record_turn_end(&ids::new_id(), None, Utc::now())
            .await
            .unwrap()
    );

    // The child ended without any event: found (once it has one, not).
    h.tasks()
        .finish_execution(&child, &exec.id, ExecutionStatus::Failed, Some(1), "exited")
        .await
        .unwrap();
    let since = Utc::now() - Duration::hours(1);
    let missing = store
        .child_executions_missing_events(since, 100)
        .await
        .unwrap();
    let ours: Vec<_> = missing.iter().filter(|m| m.1 == exec.id).collect();
    assert_eq!(ours.len(), 1, "{missing:?}");
    assert_eq!(
        (ours[0].0.as_str(), ours[0].2, ours[0].3),
        (child.as_str(), ExecutionStatus::Failed, Some(1))
    );
    let (ev, created) = store
        .add_workbench_event(event(&parent, &child, &exec.id, &ids::new_id()))
        .await
        .unwrap();
    assert!(created);
    assert!(
        store
            .child_executions_missing_events(since, 100)
            .await
            .unwrap()
            .iter()
            .all(|m| m.1 != exec.id)
    );

    // A claim released (never batched): PENDING again with the reason.
    let now = Utc::now();
    let claim = ids::new_id();
    let claimed = store
        .claim_workbench_events(&parent, OWNER, &claim, 10, now, now + Duration::minutes(2))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        store
            .release_workbench_claim(OWNER, &claim, "the parent went away", Utc::now())
            .await
            .unwrap(),
        1
    );
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert_eq!(events[0].state, EventState::Pending);
    assert_eq!(
        events[0].last_error.as_deref(),
        Some("the parent went away")
    );
    assert_eq!(
        store
            .release_workbench_claim(OWNER, &claim, "again", Utc::now())
            .await
            .unwrap(),
        0,
        "a released claim is released once"
    );

    // A batch is stored only under the claim that holds its events.
    let now = Utc::now();
    let claim = ids::new_id();
    store
        .claim_workbench_events(&parent, OWNER, &claim, 10, now, now + Duration::minutes(2))
        .await
        .unwrap();
    let lost = store
        .store_workbench_batch(batch(&parent, &ids::new_id(), vec![ev.id.clone()]))
        .await
        .unwrap();
    assert!(lost.is_none(), "another claim's batch is refused");
    assert!(!store.workbench_batch_in_flight(&parent).await.unwrap());
    let new = batch(&parent, &claim, vec![ev.id.clone()]);
    let lease_token = new.lease_token.clone();
    let (stored, delivery) = store.store_workbench_batch(new).await.unwrap().unwrap();
    assert_eq!(stored.state, BatchState::Claimed);
    assert_eq!(delivery.id, stored.id);
    assert_eq!(delivery.state, DeliveryState::Queued);
    assert_eq!(
        store.list_workbench_events(&parent, 10).await.unwrap()[0]
            .batch_id
            .as_deref(),
        Some(stored.id.as_str())
    );
    assert!(store.workbench_batch_in_flight(&parent).await.unwrap());
    // Nothing to follow while its delivery is on its way.
    let settled = store.settle_workbench_batches(Utc::now()).await.unwrap();
    assert!(settled.iter().all(|s| s.id != stored.id));

    // Its delivery is typed: the batch is DISPATCHED, its events DELIVERED.
    let now = Utc::now();
    let rows = store
        .claim_deliveries(OWNER, "node-a", true, now, now + Duration::seconds(60), 10)
        .await
        .unwrap();
    assert!(rows.rows.iter().any(|r| r.id == stored.id));
    store
        .advance_delivery(
            &stored.id,
            OWNER,
            DeliveryState::Writing,
            now + Duration::seconds(60),
            now,
        )
        .await
        .unwrap()
        .unwrap();
    store
        .complete_delivery(&stored.id, OWNER, now)
        .await
        .unwrap()
        .unwrap();
    let settled = store.settle_workbench_batches(Utc::now()).await.unwrap();
    let ours: Vec<_> = settled.iter().filter(|s| s.id == stored.id).collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].state, BatchState::Dispatched);
    assert!(!store.workbench_batch_in_flight(&parent).await.unwrap());
    assert_eq!(
        store.list_workbench_events(&parent, 10).await.unwrap()[0].state,
        EventState::Delivered
    );

    // Lease-token transitions: the right token and state only.
    let now = Utc::now();
    let wrong = store
        .transition_workbench_batch(
            &stored.id,
            &[BatchState::Dispatched],
            BatchState::Acked,
            "not-the-token",
            Some(now + Duration::minutes(5)),
            now,
        )
        .await
        .unwrap();
    assert!(wrong.is_none());
    let acked = store
        .transition_workbench_batch(
            &stored.id,
            &[BatchState::Dispatched],
            BatchState::Acked,
            &lease_token,
            Some(now + Duration::minutes(5)),
            now,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(acked.state, BatchState::Acked);
    assert!(acked.acked_at.is_some());
    let from_wrong_state = store
        .transition_workbench_batch(
            &stored.id,
            &[BatchState::Dispatched],
            BatchState::Acked,
            &lease_token,
            Some(now + Duration::minutes(5)),
            now,
        )
        .await
        .unwrap();
    assert!(from_wrong_state.is_none(), "ACKED is not DISPATCHED");

    // The parent's turn ended: the batch is RESOLVED, its events CONSUMED.
    let resolved = store
        .resolve_dispatched_batches(&parent, Utc::now())
        .await
        .unwrap();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0].state, BatchState::Resolved);
    let events = store.list_workbench_events(&parent, 10).await.unwrap();
    assert_eq!(events[0].state, EventState::Consumed);
    assert!(events[0].consumed_at.is_some());
    assert!(
        store
            .resolve_dispatched_batches(&parent, Utc::now())
            .await
            .unwrap()
            .is_empty(),
        "resolved once"
    );
}
