//! The owed-work engine's rules (issue 27.1) on the real SQLite store,
//! through the core's transitions — what every runner's outcome turns into:
//! retry with the backoff 2, 4 … 256 s up to the cap, given up, unverified,
//! released, recovered after a crash, retried and marked by a person. The
//! skeleton's scheduling is tested next to it (`workers/engine_tests.rs`),
//! the runners in their own suites.

use std::time::Duration;

use chrono::Utc;
use harness_core::{
    CoreError, Harness, HarnessConfig,
    deliveries::{Delivery, DeliveryState, MAX_ATTEMPTS},
    tasks::CreateTask,
    work::{Lease, Outcome, backoff},
};
use harness_store::AnyStore;

async fn harness(dir: &std::path::Path) -> Harness {
    let url = format!("sqlite://{}", dir.join("engine.db").display());
    let store = AnyStore::open(&url).await.unwrap();
    Harness::new(store.port(), HarnessConfig::new("x".repeat(64)))
}

async fn queued_input(h: &Harness, key: &str) -> Delivery {
    let task = h
        .create_task(CreateTask {
            title: Some(format!("engine {key}")),
            ..CreateTask::default()
        })
        .await
        .unwrap();
    let (row, created) = h
        .enqueue_input(&task.task.id, "hello", true, key)
        .await
        .unwrap();
    assert!(created);
    assert_eq!(row.state, DeliveryState::Queued);
    row
}

fn lease(owner: &str, ttl: Duration) -> Lease {
    Lease {
        owner: owner.into(),
        ttl,
    }
}

async fn claim_one(h: &Harness, lease: &Lease, id: &str) -> Delivery {
    let rows = h.claim_deliveries(lease, 100).await.unwrap();
    rows.into_iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id} was not claimable"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_attempt_backs_off_doubling_and_is_given_up_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(dir.path()).await;
    let row = queued_input(&h, "retry").await;
    let a = lease("node:a", Duration::from_secs(60));
    for attempt in 1..=MAX_ATTEMPTS {
        let claimed = claim_one(&h, &a, &row.id).await;
        assert_eq!(claimed.attempts, attempt - 1);
        let before = Utc::now();
        let settled = h
            .settle_delivery(&claimed, &a, &Outcome::Retry("nobody home".into()))
            .await
            .unwrap()
            .expect("our lease");
        assert_eq!(settled.state, DeliveryState::Failed);
        assert_eq!(settled.attempts, attempt);
        assert_eq!(settled.lease_owner, None);
        assert_eq!(settled.last_error.as_deref(), Some("nobody home"));
        if attempt < MAX_ATTEMPTS {
            let next = settled.next_attempt_at.expect("due again");
            let wait = (next - before).num_milliseconds();
            let want = i64::try_from(backoff(attempt).as_millis()).unwrap();
            assert!(
                (want - 50..=want + 1000).contains(&wait),
                "attempt {attempt}: due after {wait} ms, want {want}"
            );
            // Not due yet: a claim now does not take it.
            assert!(
                h.claim_deliveries(&a, 100)
                    .await
                    .unwrap()
                    .iter()
                    .all(|r| r.id != row.id)
            );
            // A person's retry makes it due now (attempts are kept).
            let again = h.retry_delivery(&row.id).await.unwrap();
            assert_eq!(again.state, DeliveryState::Queued);
            assert_eq!(again.attempts, attempt);
        } else {
            assert_eq!(settled.next_attempt_at, None, "given up at the cap");
        }
    }
    assert_eq!(backoff(8).as_secs(), 256);
    // Given up: no worker takes it again.
    assert!(h.claim_deliveries(&a, 100).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_the_step_and_the_outcome_leaves_the_row_unverified() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(dir.path()).await;
    let row = queued_input(&h, "crash").await;
    let a = lease("node:a", Duration::from_millis(300));
    let claimed = claim_one(&h, &a, &row.id).await;
    // The step is committed before the side effect…
    assert!(
        h.advance_delivery(&claimed, &a, DeliveryState::Writing)
            .await
            .unwrap()
    );
    assert_eq!(
        h.delivery(&row.id).await.unwrap().state,
        DeliveryState::Writing
    );
    // …and the process dies before the outcome. Its lease runs out; the next
    // claim (any worker) finds the row in flight and does not take it.
    let b = lease("node:b", Duration::from_secs(60));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let claimed_by_b = h.claim_deliveries(&b, 100).await.unwrap();
        assert!(
            claimed_by_b.iter().all(|r| r.id != row.id),
            "a row that may have been written was handed out again"
        );
        if h.delivery(&row.id).await.unwrap().state == DeliveryState::Unverified {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The dead worker's late outcome changes nothing (its lease is gone).
    let late = h
        .settle_delivery(&claimed, &a, &Outcome::Done)
        .await
        .unwrap();
    assert!(late.is_none());
    let now = h.delivery(&row.id).await.unwrap();
    assert_eq!(now.state, DeliveryState::Unverified);
    assert!(now.last_error.is_some());
    assert!(h.claim_deliveries(&b, 100).await.unwrap().is_empty());
    // A person decides: it arrived.
    let marked = h.mark_delivered(&row.id).await.unwrap();
    assert_eq!(marked.state, DeliveryState::Delivered);
    assert!(matches!(
        h.retry_delivery(&row.id).await,
        Err(CoreError::Conflict(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcomes_map_to_states_once() {
    let dir = tempfile::tempdir().unwrap();
    let h = harness(dir.path()).await;
    let a = lease("node:a", Duration::from_secs(60));

    // Done: only from the committed write step.
    let done = queued_input(&h, "done").await;
    let c = claim_one(&h, &a, &done.id).await;
    assert!(
        h.advance_delivery(&c, &a, DeliveryState::Writing)
            .await
            .unwrap()
    );
    let d = h.settle_delivery(&c, &a, &Outcome::Done).await.unwrap();
    assert_eq!(d.map(|d| d.state), Some(DeliveryState::Delivered));
    // Recording it again (a retried turn) changes nothing.
    assert!(
        h.settle_delivery(&c, &a, &Outcome::Done)
            .await
            .unwrap()
            .is_none()
    );

    // GaveUp: FAILED, never due again, a person may retry.
    let gave = queued_input(&h, "gave-up").await;
    let c = claim_one(&h, &a, &gave.id).await;
    let g = h
        .settle_delivery(&c, &a, &Outcome::GaveUp("stopped".into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((g.state, g.next_attempt_at), (DeliveryState::Failed, None));

    // Unverified: never written again automatically.
    let unsure = queued_input(&h, "unsure").await;
    let c = claim_one(&h, &a, &unsure.id).await;
    assert!(
        h.advance_delivery(&c, &a, DeliveryState::Writing)
            .await
            .unwrap()
    );
    let u = h
        .settle_delivery(&c, &a, &Outcome::Unverified("write failed".into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u.state, DeliveryState::Unverified);

    // Released untouched: due again at once, attempts unchanged.
    let back = queued_input(&h, "released").await;
    let c = claim_one(&h, &a, &back.id).await;
    let again = h
        .settle_and_claim_deliveries(&a, Vec::new(), vec![c.id.clone()], 0)
        .await
        .unwrap();
    assert!(again.is_empty());
    let r = h.delivery(&back.id).await.unwrap();
    assert_eq!((r.lease_owner.as_deref(), r.attempts), (None, 0));
    let b = lease("node:b", Duration::from_secs(60));
    assert_eq!(claim_one(&h, &b, &back.id).await.attempts, 0);

    // A row leased to one worker is not claimable by another.
    let held = queued_input(&h, "held").await;
    claim_one(&h, &a, &held.id).await;
    assert!(
        h.claim_deliveries(&b, 100)
            .await
            .unwrap()
            .iter()
            .all(|r| r.id != held.id)
    );

    // Only the gave-up and unverified rows are closed out of order.
    assert!(matches!(
        h.mark_delivered(&gave.id).await,
        Err(CoreError::Conflict(_))
    ));
    assert_eq!(
        h.retry_delivery(&unsure.id).await.unwrap().state,
        DeliveryState::Queued
    );
}
