//! The owed-work engine's rules, run over every kind on the engine
//! (`work_kinds`: the deliveries, the outbox, the gateway replies, the timed
//! actions on agents — all but a person's decision —; the parent's inbox
//! for the cases of claim, step, crash and release) on every
//! backend, through the core's transitions — what every runner's outcome
//! turns into: retry with the backoff 2, 4 … 256 s up to the cap, given up,
//! unverified, released, recovered after a crash, retried and marked by a
//! person. The skeleton's scheduling is tested next to it
//! (`server/src/workers/engine_tests.rs`), the runners in their own suites.

use std::time::Duration;

use chrono::Utc;
use harness_core::{
    CoreError, Harness,
    work::{Lease, Outcome, backoff},
};

use super::{
    Backend,
    support::harness_on,
    work_kinds::{KINDS, Phase, Work, WorkKind, lease},
};

/// `case` once per kind, all on the backend's database (every row is
/// fresh, claims see their own kind's rows only).
async fn for_every_kind<F, Fut>(b: &Backend, case: F)
where
    F: Fn(WorkKind, Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for kind in KINDS {
        case(kind, harness_on(b.store.clone(), "node-a")).await;
    }
}

/// `case` once per kind a runner attempts (an outcome, a cap, a person's
/// decision: not the inbox, whose claim ends in its batch).
async fn for_every_attempted_kind<F, Fut>(b: &Backend, case: F)
where
    F: Fn(WorkKind, Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for kind in KINDS.into_iter().filter(|k| k.attempted()) {
        case(kind, harness_on(b.store.clone(), "node-a")).await;
    }
}

pub async fn a_failed_attempt_backs_off_doubling_and_is_given_up_at_the_cap(b: &Backend) {
    for_every_attempted_kind(b, |kind, h| async move {
        let work = kind.queue(&h, "retry").await;
        let a = lease("a:1", Duration::from_secs(60));
        let cap = kind.cap(&h);
        let want = if kind == WorkKind::AgentActions {
            5
        } else {
            20
        };
        assert_eq!(cap, want, "{kind:?}");
        let mut due = None;
        for attempt in 1..=cap {
            let rows = match due {
                None => kind.claim(&h, &a).await,
                Some(at) => kind.claim_at(&h, &a, at).await,
            };
            let row = work.claimed(&rows);
            let before = Utc::now();
            work.settle(&h, &row, &a, Outcome::Retry("nobody home".into()))
                .await;
            let v = work.view(&h).await;
            assert_eq!(v.attempts, attempt, "{kind:?}");
            assert_eq!(v.lease_owner, None, "{kind:?}");
            assert_eq!(v.last_error.as_deref(), Some("nobody home"), "{kind:?}");
            if attempt < cap {
                assert_eq!(v.phase, Phase::Failed, "{kind:?} attempt {attempt}");
                let next = v.next_attempt_at.expect("due again");
                let wait = (next - before).num_milliseconds();
                let want = i64::try_from(backoff(attempt).as_millis()).unwrap();
                assert!(
                    (want - 50..=want + 1000).contains(&wait),
                    "{kind:?} attempt {attempt}: due after {wait} ms, want {want}"
                );
                // Not due yet: a claim now does not take it.
                assert!(work.find(&kind.claim(&h, &a).await).is_none(), "{kind:?}");
                due = Some(next);
            } else {
                assert_eq!(v.phase, Phase::GivenUp, "{kind:?}: given up at the cap");
            }
        }
        assert_eq!(backoff(8).as_secs(), 256);
        // Given up: no worker takes it again, however late.
        let later = Utc::now() + chrono::Duration::days(1);
        assert!(kind.claim_at(&h, &a, later).await.is_empty(), "{kind:?}");
    })
    .await;
}

pub async fn a_crash_between_the_step_and_the_outcome_leaves_the_row_unverified(b: &Backend) {
    for_every_kind(b, |kind, h| async move {
        let work = kind.queue(&h, "crash").await;
        let a = lease("a:1", Duration::from_millis(300));
        let row = work.claimed(&kind.claim(&h, &a).await);
        // The step is committed before the side effect…
        assert!(work.start(&h, &row, &a).await, "{kind:?}");
        assert_eq!(work.view(&h).await.phase, Phase::InFlight, "{kind:?}");
        // …and the process dies before the outcome. Its lease runs out; the
        // next turn of any worker (upkeep, claim) finds the row in flight
        // and never hands it out again.
        let b = lease("b:1", Duration::from_secs(60));
        if !kind.attempted() {
            inbox_crash(&h, &work, &b).await;
            return;
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let taken = kind.recover_and_claim(&h, &b).await;
            assert!(
                work.find(&taken).is_none(),
                "{kind:?}: a row that may have been done was handed out again"
            );
            if work.view(&h).await.phase == Phase::Unverified {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{kind:?}: never recovered"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let recovered = work.view(&h).await;
        assert!(recovered.last_error.is_some(), "{kind:?}");
        // The dead worker's late outcome changes nothing (its lease is gone).
        work.settle(&h, &row, &a, Outcome::Done).await;
        assert_eq!(work.view(&h).await, recovered, "{kind:?}: late outcome");
        let taken = kind.recover_and_claim(&h, &b).await;
        assert!(work.find(&taken).is_none(), "{kind:?}");
        if !kind.person_decides() {
            return;
        }
        // A person decides: it arrived.
        let marked = work.mark_delivered(&h).await;
        assert_eq!(marked.unwrap().phase, Phase::Done, "{kind:?}");
        assert!(
            matches!(work.retry(&h).await, Err(CoreError::Conflict(_))),
            "{kind:?}: a delivered row is not retried"
        );
    })
    .await;
}

/// The inbox's side of a crash: a claim whose batch was stored is its
/// batch's (the batch's delivery carries the outcome) — never recovered,
/// never claimed again; a claim that died before its batch is due again
/// once its lease lapsed, with the reason, its attempt undone.
async fn inbox_crash(h: &Harness, batched: &Work, b: &Lease) {
    let kind = WorkKind::Inbox;
    let short = lease("a:1", Duration::from_millis(300));
    let unbatched = kind.queue(h, "crash-before-the-batch").await;
    let first = unbatched.claimed(&kind.claim(h, &short).await);
    let before = unbatched.view(h).await;
    assert_eq!(before.lease_owner.as_deref(), Some("a:1"));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let again = loop {
        let taken = kind.recover_and_claim(h, b).await;
        assert!(
            batched.find(&taken).is_none(),
            "a batched event was claimed again"
        );
        if let Some(row) = unbatched.find(&taken) {
            break row.clone();
        }
        assert!(std::time::Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(again.id(), first.id());
    let v = unbatched.view(h).await;
    assert_eq!(
        (v.phase, v.attempts, v.lease_owner.as_deref()),
        (Phase::Due, before.attempts, Some("b:1")),
        "released by the recovery, claimed by b, the lost claim not counted"
    );
    assert_eq!(
        v.last_error.as_deref(),
        None,
        "a new claim starts clean (the recovery noted why it was released)"
    );
    let held = batched.view(h).await;
    assert_eq!(held.phase, Phase::InFlight, "its batch holds it");
    assert_eq!(held.lease_owner, None, "the step ended the claim's lease");
}

pub async fn outcomes_map_to_states_once(b: &Backend) {
    for_every_attempted_kind(b, |kind, h| async move {
        let a = lease("a:1", Duration::from_secs(60));
        let b = lease("b:1", Duration::from_secs(60));

        // Done, after the committed step; recording it again (a retried
        // turn) changes nothing.
        let done = kind.queue(&h, "done").await;
        let row = done.claimed(&kind.claim(&h, &a).await);
        assert!(done.start(&h, &row, &a).await);
        done.settle(&h, &row, &a, Outcome::Done).await;
        let v = done.view(&h).await;
        assert_eq!(
            (v.phase, v.lease_owner.as_deref()),
            (Phase::Done, None),
            "{kind:?}"
        );
        done.settle(&h, &row, &a, Outcome::Done).await;
        assert_eq!(done.view(&h).await, v, "{kind:?}: settled twice");

        // GaveUp: never due again.
        let gave = kind.queue(&h, "gave-up").await;
        let row = gave.claimed(&kind.claim(&h, &a).await);
        gave.settle(&h, &row, &a, Outcome::GaveUp("stopped".into()))
            .await;
        let v = gave.view(&h).await;
        assert_eq!(
            (v.phase, v.next_attempt_at),
            (Phase::GivenUp, None),
            "{kind:?}"
        );
        assert_eq!(v.last_error.as_deref(), Some("stopped"), "{kind:?}");

        // Unverified: never done again automatically.
        let unsure = kind.queue(&h, "unsure").await;
        let row = unsure.claimed(&kind.claim(&h, &a).await);
        assert!(unsure.start(&h, &row, &a).await);
        unsure
            .settle(&h, &row, &a, Outcome::Unverified("no receipt".into()))
            .await;
        assert_eq!(unsure.view(&h).await.phase, Phase::Unverified, "{kind:?}");

        let later = Utc::now() + chrono::Duration::days(1);
        let taken = kind.claim_at(&h, &b, later).await;
        for closed in [&done, &gave, &unsure] {
            assert!(closed.find(&taken).is_none(), "{kind:?} {}", closed.id);
        }
    })
    .await;
}

pub async fn a_released_row_is_due_at_once_with_its_attempts_unchanged(b: &Backend) {
    for_every_kind(b, |kind, h| async move {
        let a = lease("a:1", Duration::from_secs(60));
        let b = lease("b:1", Duration::from_secs(60));
        let back = kind.queue(&h, "released").await;
        let before = back.view(&h).await;
        let first = back.claimed(&kind.claim(&h, &a).await);
        // A row leased to one worker is not claimable by another.
        assert!(back.find(&kind.claim(&h, &b).await).is_none(), "{kind:?}");
        let first_claim = back.view(&h).await;
        back.release(&h, &first, &a).await;
        let v = back.view(&h).await;
        assert_eq!(v.phase, Phase::Due, "{kind:?}");
        assert_eq!(v.lease_owner, None, "{kind:?}");
        assert_eq!(
            v.attempts, before.attempts,
            "{kind:?}: the attempt is not counted"
        );
        // Due at once, for any worker, as if never claimed.
        let again = back.claimed(&kind.claim(&h, &b).await);
        assert_eq!(again.id(), first.id());
        let second_claim = back.view(&h).await;
        assert_eq!(second_claim.attempts, first_claim.attempts, "{kind:?}");
        assert_eq!(second_claim.lease_owner.as_deref(), Some("b:1"), "{kind:?}");
    })
    .await;
}

pub async fn a_person_retries_what_was_given_up_and_marks_what_is_unverified(b: &Backend) {
    for_every_attempted_kind(b, |kind, h| async move {
        if !kind.person_decides() {
            return;
        }
        let a = lease("a:1", Duration::from_secs(60));
        let gave = kind.queue(&h, "gave-up").await;
        let row = gave.claimed(&kind.claim(&h, &a).await);
        gave.settle(&h, &row, &a, Outcome::GaveUp("stopped".into()))
            .await;
        let unsure = kind.queue(&h, "unsure").await;
        let row = unsure.claimed(&kind.claim(&h, &a).await);
        assert!(unsure.start(&h, &row, &a).await);
        unsure
            .settle(&h, &row, &a, Outcome::Unverified("no receipt".into()))
            .await;
        let attempts = gave.view(&h).await.attempts;
        // Retried: due now, its attempts kept, claimable again.
        let retried = gave.retry(&h).await.unwrap();
        assert_eq!(
            (retried.phase, retried.attempts),
            (Phase::Due, attempts),
            "{kind:?}"
        );
        gave.claimed(&kind.claim(&h, &a).await);
        // Only an unverified row is marked delivered.
        assert!(
            matches!(gave.mark_delivered(&h).await, Err(CoreError::Conflict(_))),
            "{kind:?}"
        );
        let marked = unsure.mark_delivered(&h).await.unwrap();
        assert_eq!(marked.phase, Phase::Done, "{kind:?}");
        assert!(
            matches!(unsure.mark_delivered(&h).await, Err(CoreError::Conflict(_))),
            "{kind:?}: marked twice"
        );
        // "Deliver again" of a terminal's unverified input or gateway reply
        // (a person saw it did not arrive and accepts a possible duplicate);
        // an unverified outbound push is only marked (docs/decisions.md D7: the platform may
        // have it).
        let again = kind.queue(&h, "again").await;
        let row = again.claimed(&kind.claim(&h, &a).await);
        assert!(again.start(&h, &row, &a).await);
        again
            .settle(&h, &row, &a, Outcome::Unverified("no receipt".into()))
            .await;
        let retried = again.retry(&h).await;
        match kind {
            WorkKind::Deliveries | WorkKind::GatewayReplies => {
                assert_eq!(retried.unwrap().phase, Phase::Due)
            }
            _ => assert!(matches!(retried, Err(CoreError::Conflict(_))), "{kind:?}"),
        }
    })
    .await;
}
