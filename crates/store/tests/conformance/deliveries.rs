//! The durable delivery queue: the reply's row in the
//! answering transaction, claims with leases across several connections
//! (two stores on one database = two writers, as two processes would be),
//! expired leases, UNVERIFIED rows, backoff, start-up release, dedup keys.

use std::{collections::HashSet, sync::Arc};

use chrono::{Duration, Utc};
use harness_core::{
    Harness,
    deliveries::{self, DeliveryKind, DeliveryState, NewInput},
    ids,
    store::Store,
    tasks::CreateTask,
};

use super::{
    Backend,
    support::{LEASE, harness_on, past_lease},
};

struct Node {
    store: Arc<dyn Store>,
    harness: Harness,
}

/// A node of its own over another store on the backend's database.
async fn node(b: &Backend, node_id: &str) -> Node {
    let store = b.another().await;
    let harness = harness_on(store.clone(), node_id);
    Node { store, harness }
}

async fn task(h: &Harness) -> String {
    h.tasks()
        .create_task(CreateTask {
            title: Some("t".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id
}

fn input(task_id: &str, key: &str, node: Option<&str>) -> NewInput {
    NewInput {
        id: ids::new_id(),
        task_id: task_id.into(),
        node_id: node.map(Into::into),
        text: format!("text {key}"),
        submit: true,
        dedup_key: key.into(),
        resume: false,
        now: Utc::now(),
    }
}

pub async fn the_reply_row_is_written_by_the_answering_transaction(b: &Backend) {
    let a = node(b, "node-a").await;
    let h = &a.harness;
    // Never ran: nothing to type into, no row.
    let idle = task(h).await;
    h.asks().ask(&idle, Some("Q?")).await.unwrap();
    let out = h
        .asks()
        .reply(&harness_core::auth::Person::admin(), &idle, Some("A"), true)
        .await
        .unwrap();
    assert_eq!((out.delivery, out.delivery_id.as_deref()), ("none", None));

    let t = task(h).await;
    h.tasks().begin_execution(&t).await.unwrap();
    let ask = h.asks().ask(&t, Some("Which one?")).await.unwrap();
    let out = h
        .asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("the second"),
            true,
        )
        .await
        .unwrap();
    assert_eq!(out.delivery, "queued");
    let row = a
        .store
        .get_delivery(out.delivery_id.as_deref().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.kind, DeliveryKind::Reply);
    assert_eq!(row.state, DeliveryState::Queued);
    assert_eq!(row.message_id.as_deref(), Some(ask.request_id.as_str()));
    assert_eq!(
        row.node_id.as_deref(),
        Some("node-a"),
        "bound to the PTY's node"
    );
    assert_eq!(row.question.as_deref(), Some("Which one?"));
    assert_eq!(row.text, "the second");
    // A deduped repeat neither queues nor resets anything.
    let again = h
        .asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("the second"),
            true,
        )
        .await
        .unwrap();
    assert!(again.deduped);
    assert_eq!(again.delivery_id, out.delivery_id);
    assert_eq!(a.store.task_deliveries(&t, 10).await.unwrap().len(), 1);
}

pub async fn concurrent_claimers_on_two_connections_lease_each_row_once(b: &Backend) {
    let a = node(b, "node-a").await;
    let b = node(b, "node-a").await;
    let t = task(&a.harness).await;
    let mut all = HashSet::new();
    for i in 0..40 {
        let (row, created) = a
            .store
            .enqueue_input(input(&t, &format!("k{i}"), Some("node-a")))
            .await
            .unwrap();
        assert!(created);
        all.insert(row.id);
    }
    let mut claimers = Vec::new();
    for c in 0..8 {
        let store = if c % 2 == 0 {
            a.store.clone()
        } else {
            b.store.clone()
        };
        claimers.push(tokio::spawn(async move {
            let owner = format!("node-a:boot{c}");
            let mut mine = Vec::new();
            loop {
                let now = Utc::now();
                let claimed = store
                    .claim_deliveries(&owner, "node-a", true, now, now + Duration::seconds(60), 3)
                    .await
                    .unwrap();
                if claimed.rows.is_empty() {
                    return mine;
                }
                for r in claimed.rows {
                    assert_eq!(r.lease_owner.as_deref(), Some(owner.as_str()));
                    mine.push(r.id);
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut seen = Vec::new();
    for c in claimers {
        seen.extend(c.await.unwrap());
    }
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(seen.len(), unique.len(), "a row was leased twice");
    assert_eq!(unique, all, "every due row was claimed");
}

pub async fn leases_expire_steps_need_the_lease_and_other_nodes_rows_are_left_alone(b: &Backend) {
    let a = node(b, "node-a").await;
    let t = task(&a.harness).await;
    let (mine, _) = a
        .store
        .enqueue_input(input(&t, "x", Some("node-a")))
        .await
        .unwrap();
    let (theirs, _) = a
        .store
        .enqueue_input(input(&t, "y", Some("node-b")))
        .await
        .unwrap();
    // Leases are judged by the database's clock (on PostgreSQL it is not
    // the caller's): a short one, then its real end is waited for.
    let now = Utc::now();
    let lease = now + LEASE;
    let c = a
        .store
        .claim_deliveries("node-a:1", "node-a", true, now, lease, 10)
        .await
        .unwrap();
    let ids: Vec<_> = c.rows.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids, vec![mine.id.clone()], "node-b's row is node-b's");
    // Held: nobody else gets it before the lease expires …
    let c2 = a
        .store
        .claim_deliveries(
            "node-a:2",
            "node-a",
            true,
            now,
            now + Duration::seconds(30),
            10,
        )
        .await
        .unwrap();
    assert!(c2.rows.is_empty());
    // … and after it, another owner does; the old owner's steps then fail.
    let later = past_lease().await;
    let c3 = a
        .store
        .claim_deliveries(
            "node-a:2",
            "node-a",
            true,
            later,
            later + Duration::seconds(30),
            10,
        )
        .await
        .unwrap();
    assert_eq!(c3.rows.len(), 1);
    let lost = a
        .store
        .advance_delivery(&mine.id, "node-a:1", DeliveryState::Writing, later, later)
        .await
        .unwrap();
    assert!(lost.is_none(), "a lost lease cannot write");
    let step = a
        .store
        .advance_delivery(
            &mine.id,
            "node-a:2",
            DeliveryState::WaitingBoundary,
            later + Duration::seconds(30),
            later,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(step.state, DeliveryState::WaitingBoundary);
    // node-b sees its own row.
    let cb = a
        .store
        .claim_deliveries("node-b:1", "node-b", true, now, lease, 10)
        .await
        .unwrap();
    assert_eq!(
        cb.rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        vec![theirs.id]
    );
}

pub async fn a_row_found_writing_after_its_lease_is_unverified_and_never_claimed_again(
    b: &Backend,
) {
    let a = node(b, "node-a").await;
    let t = task(&a.harness).await;
    let (row, _) = a.store.enqueue_input(input(&t, "w", None)).await.unwrap();
    let now = Utc::now();
    let until = now + LEASE;
    a.store
        .claim_deliveries("node-a:1", "node-a", true, now, until, 1)
        .await
        .unwrap();
    a.store
        .advance_delivery(&row.id, "node-a:1", DeliveryState::Writing, until, now)
        .await
        .unwrap()
        .unwrap();
    // Still in its lease: left alone.
    let c = a
        .store
        .claim_deliveries("node-a:2", "node-a", true, now, until, 5)
        .await
        .unwrap();
    assert!(c.rows.is_empty() && c.unverified.is_empty());
    // Lease expired (the process died mid-write): UNVERIFIED, not claimed.
    let later = past_lease().await;
    let c = a
        .store
        .claim_deliveries("node-a:2", "node-a", true, later, later, 5)
        .await
        .unwrap();
    assert!(c.rows.is_empty());
    assert_eq!(c.unverified.len(), 1);
    assert_eq!(c.unverified[0].state, DeliveryState::Unverified);
    assert!(c.unverified[0].last_error.is_some());
    let far = later + Duration::days(1);
    let c = a
        .store
        .claim_deliveries("node-a:3", "node-a", true, far, far, 5)
        .await
        .unwrap();
    assert!(
        c.rows.is_empty() && c.unverified.is_empty(),
        "never again by itself"
    );
    // The two manual actions.
    assert!(a.harness.deliveries().mark_delivered(&row.id).await.is_ok());
    let err = a
        .harness
        .deliveries()
        .mark_delivered(&row.id)
        .await
        .unwrap_err();
    assert!(
        matches!(err, harness_core::CoreError::Conflict(_)),
        "{err:?}"
    );
    let err = a
        .harness
        .deliveries()
        .retry_delivery(&row.id)
        .await
        .unwrap_err();
    assert!(
        matches!(err, harness_core::CoreError::Conflict(_)),
        "DELIVERED stays"
    );
}

pub async fn clean_failures_back_off_two_four_eight_seconds_and_keep_the_error(b: &Backend) {
    let a = node(b, "node-a").await;
    let t = task(&a.harness).await;
    let (row, _) = a.store.enqueue_input(input(&t, "f", None)).await.unwrap();
    // Stored times are milliseconds.
    let mut now = chrono::DateTime::from_timestamp_millis(Utc::now().timestamp_millis()).unwrap();
    for attempt in 1..=3u32 {
        let c = a
            .store
            .claim_deliveries("o:1", "node-a", true, now, now + Duration::seconds(60), 5)
            .await
            .unwrap();
        assert_eq!(c.rows.len(), 1, "due at attempt {attempt}");
        let next = deliveries::next_attempt(c.rows[0].attempts + 1, now);
        let failed = a
            .store
            .fail_delivery(
                &row.id,
                "o:1",
                "cannot restart the agent: boom",
                next,
                false,
                now,
            )
            .await
            .unwrap()
            .unwrap();
        assert_eq!(failed.state, DeliveryState::Failed);
        assert_eq!(failed.attempts, attempt);
        assert_eq!(
            failed.last_error.as_deref(),
            Some("cannot restart the agent: boom")
        );
        let wait = failed.next_attempt_at.unwrap() - now;
        assert_eq!(wait.num_seconds(), 1i64 << attempt);
        // Not due a moment before.
        let early = failed.next_attempt_at.unwrap() - Duration::milliseconds(1);
        let c = a
            .store
            .claim_deliveries("o:1", "node-a", true, early, early, 5)
            .await
            .unwrap();
        assert!(c.rows.is_empty());
        now = failed.next_attempt_at.unwrap();
    }
    // Gave up: FAILED without a next attempt is never due; a person may retry.
    let c = a
        .store
        .claim_deliveries("o:1", "node-a", true, now, now + Duration::seconds(60), 5)
        .await
        .unwrap();
    let gave_up = a
        .store
        .fail_delivery(&c.rows[0].id, "o:1", "still broken", None, false, now)
        .await
        .unwrap()
        .unwrap();
    assert!(gave_up.next_attempt_at.is_none());
    let far = now + Duration::days(30);
    assert!(
        a.store
            .claim_deliveries("o:1", "node-a", true, far, far, 5)
            .await
            .unwrap()
            .rows
            .is_empty()
    );
    let again = a
        .harness
        .deliveries()
        .retry_delivery(&row.id)
        .await
        .unwrap();
    assert_eq!(again.state, DeliveryState::Queued);
    assert_eq!(again.attempts, 4, "attempts are kept");
}

pub async fn start_up_releases_only_this_nodes_earlier_leases(b: &Backend) {
    let a = node(b, "node-a").await;
    let t = task(&a.harness).await;
    let (writing, _) = a
        .store
        .enqueue_input(input(&t, "1", Some("node-a")))
        .await
        .unwrap();
    let (waiting, _) = a
        .store
        .enqueue_input(input(&t, "2", Some("node-a")))
        .await
        .unwrap();
    let (other, _) = a
        .store
        .enqueue_input(input(&t, "3", Some("node-b")))
        .await
        .unwrap();
    let now = Utc::now();
    let until = now + Duration::seconds(600);
    a.store
        .claim_deliveries("node-a:old", "node-a", true, now, until, 5)
        .await
        .unwrap();
    a.store
        .claim_deliveries("node-b:1", "node-b", true, now, until, 5)
        .await
        .unwrap();
    a.store
        .advance_delivery(
            &writing.id,
            "node-a:old",
            DeliveryState::Writing,
            until,
            now,
        )
        .await
        .unwrap()
        .unwrap();
    a.store
        .advance_delivery(
            &waiting.id,
            "node-a:old",
            DeliveryState::WaitingBoundary,
            until,
            now,
        )
        .await
        .unwrap()
        .unwrap();
    a.store
        .advance_delivery(&other.id, "node-b:1", DeliveryState::Writing, until, now)
        .await
        .unwrap()
        .unwrap();

    let released = a
        .store
        .recover_work(
            &harness_core::store::DELIVERIES,
            harness_core::store::Lapsed::Node {
                node: "node-a",
                current_owner: "node-a:new",
            },
            now,
        )
        .await
        .unwrap();
    assert_eq!(released.len(), 2);
    let w = a.store.get_delivery(&writing.id).await.unwrap().unwrap();
    assert_eq!(
        w.state,
        DeliveryState::Unverified,
        "caught mid-write: never repeated"
    );
    let c = a
        .store
        .claim_deliveries("node-a:new", "node-a", true, now, until, 5)
        .await
        .unwrap();
    let ids: Vec<_> = c.rows.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids, vec![waiting.id], "due again at once, no lease wait");
    let o = a.store.get_delivery(&other.id).await.unwrap().unwrap();
    assert_eq!(
        (o.state, o.lease_owner.as_deref()),
        (DeliveryState::Writing, Some("node-b:1"))
    );
}

pub async fn one_idempotency_key_is_one_row_even_when_raced(b: &Backend) {
    let a = node(b, "node-a").await;
    let b = node(b, "node-a").await;
    let t = task(&a.harness).await;
    let mut jobs = Vec::new();
    for i in 0..20 {
        let store = if i % 2 == 0 {
            a.store.clone()
        } else {
            b.store.clone()
        };
        let t = t.clone();
        jobs.push(tokio::spawn(async move {
            store
                .enqueue_input(input(&t, "same-key", Some("node-a")))
                .await
                .unwrap()
        }));
    }
    let mut ids = HashSet::new();
    let mut created = 0;
    for j in jobs {
        let (row, c) = j.await.unwrap();
        ids.insert(row.id);
        created += usize::from(c);
    }
    assert_eq!((ids.len(), created), (1, 1));
}
