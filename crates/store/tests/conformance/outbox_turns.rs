//! A sender's turn: the attempts that ended and the
//! lease of the next due rows in one write transaction
//! (`Outbox::settle_and_claim`), each row settled exactly as it would be
//! alone — the activation per task, failures with backoff, a lost lease
//! left alone — and two sent asks of one task resolved in their order.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{
    Harness,
    model::{ExecutionStatus, MessageState},
    outbox::{Outbound, OutboundState, PushInput, Receipt, SendOutcome},
    settings::NotifyTarget,
    store::Store,
    tasks::CreateTask,
};

use harness_core::work::{Kind, Scope};

use super::{
    Backend,
    support::{harness_on, recovered},
};

const OWNER: &str = "node-a:boot-1";

async fn harness(b: &Backend) -> (Arc<dyn Store>, Harness) {
    let store = b.store.clone();
    let h = harness_on(store.clone(), "node-a");
    h.settings()
        .set_notify_targets(vec![NotifyTarget {
            id: None,
            label: "phone".into(),
            gateway: "hermes".into(),
            downstream: Some("feishu".into()),
            dest: None,
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

async fn task(h: &Harness, title: &str) -> String {
    h.tasks()
        .create_task(CreateTask {
            title: Some(title.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id
}

async fn push(h: &Harness, task_id: &str, message: &str, expect_reply: bool) -> String {
    h.outbox()
        .push_to_human(PushInput {
            task_id: Some(task_id.into()),
            message: Some(message.into()),
            scope: Some("unattended".into()),
            expect_reply: Some(expect_reply),
            ..Default::default()
        })
        .await
        .unwrap()
        .outbound_id
}

/// Delivered into the chat `oc_home`.
fn delivered(id: &str) -> SendOutcome {
    SendOutcome::Delivered(Receipt {
        message_id: Some(id.into()),
        platform: None,
        chat_id: Some("oc_home".into()),
    })
}

/// Write transactions so far (0 from a backend that does not measure them).
fn writes(store: &Arc<dyn Store>) -> u64 {
    store.transaction_latency().counts.iter().sum()
}

async fn claim(h: &Harness, n: u32) -> Vec<Outbound> {
    h.outbox()
        .settle_and_claim(OWNER, Vec::new(), Vec::new(), Duration::seconds(120), n)
        .await
        .unwrap()
}

async fn message_state(h: &Harness, row: &Outbound) -> MessageState {
    let id = row.message_id.as_deref().unwrap();
    h.store().get_message(id).await.unwrap().unwrap().state
}

pub async fn one_turn_settles_every_outcome_and_leases_the_next_rows_in_one_transaction(
    b: &Backend,
) {
    let (store, h) = harness(b).await;
    // Task A: a RUNNING execution with an older OPEN ask, and a pushed ask.
    let a = task(&h, "A").await;
    let exec = h.tasks().begin_execution(&a).await.unwrap();
    let older = h.asks().ask(&a, Some("older question")).await.unwrap();
    h.store().resume_executions(&a).await.unwrap();
    let ask_a = push(&h, &a, "Postgres or SQLite?", true).await;
    // Task B: a notify that fails; task C: a notify sent without an id.
    let b = task(&h, "B").await;
    let notify_b = push(&h, &b, "build is red", false).await;
    let c = task(&h, "C").await;
    let notify_c = push(&h, &c, "build is green", false).await;
    let leased = claim(&h, 3).await;
    assert_eq!(leased.len(), 3);
    // Two more due rows wait for the next turn.
    let d = task(&h, "D").await;
    let next_1 = push(&h, &d, "one", false).await;
    let next_2 = push(&h, &d, "two", false).await;

    let by_id = |id: &str| leased.iter().find(|r| r.id == id).unwrap().clone();
    let before = writes(&store);
    let claimed = h
        .outbox()
        .settle_and_claim(
            OWNER,
            vec![
                (by_id(&ask_a), delivered("om_a")),
                (by_id(&notify_b), SendOutcome::Failed("exit 1".into())),
                (
                    by_id(&notify_c),
                    SendOutcome::Unverified(Receipt::default(), "exit 0 without an id".into()),
                ),
            ],
            Vec::new(),
            Duration::seconds(120),
            2,
        )
        .await
        .unwrap();
    // A backend that measures its write transactions (SQLite does; the
    // port allows one that does not) shows the whole turn as one.
    if before > 0 {
        assert_eq!(
            writes(&store) - before,
            1,
            "the whole turn is one write transaction"
        );
    }

    // The next rows are leased to us, oldest first.
    let ids: Vec<&str> = claimed.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, [next_1.as_str(), next_2.as_str()]);
    assert!(claimed.iter().all(|r| r.state == OutboundState::Sending
        && r.attempts == 1
        && r.lease_owner.as_deref() == Some(OWNER)));

    // A: delivered, its ask OPEN, the older ask cancelled, the run parked,
    // the platform message id mapped to the task.
    let row_a = h.outbox().outbound(&ask_a).await.unwrap();
    assert_eq!(row_a.state, OutboundState::Delivered);
    assert!(row_a.delivered_at.is_some() && row_a.lease_owner.is_none());
    assert_eq!(message_state(&h, &row_a).await, MessageState::Open);
    let old = h
        .store()
        .get_message(&older.request_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old.state, MessageState::Cancelled);
    let live = h.store().live_execution(&a).await.unwrap().unwrap();
    assert_eq!(
        (live.id.as_str(), live.status),
        (exec.0.id.as_str(), ExecutionStatus::Paused)
    );
    let map = h
        .gateway()
        .delivery_mapping("hermes", "feishu", "oc_home", "om_a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(map.task_id.as_deref(), Some(a.as_str()));

    // B: FAILED, due again after the backoff, its message still waiting.
    let row_b = h.outbox().outbound(&notify_b).await.unwrap();
    assert_eq!(row_b.state, OutboundState::Failed);
    assert_eq!(row_b.last_error.as_deref(), Some("exit 1"));
    assert!(row_b.next_attempt_at.is_some_and(|at| at > Utc::now()));
    assert_eq!(
        message_state(&h, &row_b).await,
        MessageState::PendingDelivery
    );

    // C: SENT_UNVERIFIED (never resent), its notify closed, no mapping.
    let row_c = h.outbox().outbound(&notify_c).await.unwrap();
    assert_eq!(row_c.state, OutboundState::SentUnverified);
    assert_eq!(message_state(&h, &row_c).await, MessageState::Closed);
    assert!(row_c.platform_message_id.is_none());

    // Nothing else is due: B waits for its backoff.
    assert!(claim(&h, 10).await.is_empty());
}

pub async fn two_sent_asks_of_one_task_in_one_turn_leave_the_later_one_open(b: &Backend) {
    let (_store, h) = harness(b).await;
    let t = task(&h, "T").await;
    let first = push(&h, &t, "first?", true).await;
    let second = push(&h, &t, "second?", true).await;
    let other = task(&h, "U").await;
    let waiting = push(&h, &other, "queued", false).await;
    let leased = claim(&h, 2).await;
    assert_eq!(leased.len(), 2);
    let by_id = |id: &str| leased.iter().find(|r| r.id == id).unwrap().clone();

    let claimed = h
        .outbox()
        .settle_and_claim(
            OWNER,
            vec![
                (by_id(&first), delivered("om_1")),
                (by_id(&second), delivered("om_2")),
            ],
            Vec::new(),
            Duration::seconds(120),
            5,
        )
        .await
        .unwrap();
    // As if they had settled one after the other: the later ask supersedes.
    let (one, two) = (
        h.outbox().outbound(&first).await.unwrap(),
        h.outbox().outbound(&second).await.unwrap(),
    );
    assert_eq!(
        (one.state, two.state),
        (OutboundState::Delivered, OutboundState::Delivered)
    );
    assert_eq!(message_state(&h, &one).await, MessageState::Cancelled);
    assert_eq!(message_state(&h, &two).await, MessageState::Open);
    let pending = h.asks().pending(&t).await.unwrap();
    assert_eq!(pending.request_id, two.message_id);
    // The lease is taken once, after both.
    assert_eq!(
        claimed.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [waiting.as_str()]
    );
}

/// Two rows of one turn that the platform answered with the same message
/// id: one mapping for that key, the later row's (greater id) winning, as
/// if they had settled one after the other.
pub async fn two_rows_of_one_turn_with_one_platform_message_id_make_one_mapping(b: &Backend) {
    let (_store, h) = harness(b).await;
    let (t, u) = (task(&h, "T").await, task(&h, "U").await);
    let first = push(&h, &t, "first", false).await;
    let second = push(&h, &u, "second", false).await;
    let leased = claim(&h, 2).await;
    assert_eq!(leased.len(), 2);
    let by_id = |id: &str| leased.iter().find(|r| r.id == id).unwrap().clone();
    h.outbox()
        .settle_and_claim(
            OWNER,
            vec![
                (by_id(&first), delivered("om_same")),
                (by_id(&second), delivered("om_same")),
            ],
            Vec::new(),
            Duration::seconds(120),
            0,
        )
        .await
        .unwrap();
    for id in [&first, &second] {
        assert_eq!(
            h.outbox().outbound(id).await.unwrap().state,
            OutboundState::Delivered
        );
    }
    let (last, task_of_last) = if first > second {
        (&first, &t)
    } else {
        (&second, &u)
    };
    let map = h
        .gateway()
        .delivery_mapping("hermes", "feishu", "oc_home", "om_same")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(map.outbound_id.as_deref(), Some(last.as_str()));
    assert_eq!(map.task_id.as_deref(), Some(task_of_last.as_str()));
}

pub async fn a_row_whose_lease_was_lost_is_left_alone_while_the_turn_settles_the_rest(b: &Backend) {
    let (_store, h) = harness(b).await;
    let t = task(&h, "T").await;
    let kept = push(&h, &t, "mine", false).await;
    let lost = push(&h, &t, "taken over", false).await;
    let leased = claim(&h, 2).await;
    let by_id = |id: &str| leased.iter().find(|r| r.id == id).unwrap().clone();
    // Lease recovery decided the second row first (its sender looked dead).
    assert!(
        h.outbox()
            .finish_send(
                &by_id(&lost),
                OWNER,
                SendOutcome::Unverified(Receipt::default(), "lease expired".into()),
            )
            .await
            .unwrap()
            .is_some()
    );
    h.outbox()
        .settle_and_claim(
            OWNER,
            vec![
                (by_id(&kept), delivered("om_k")),
                (by_id(&lost), delivered("om_late")),
            ],
            Vec::new(),
            Duration::seconds(120),
            0,
        )
        .await
        .unwrap();
    assert_eq!(
        h.outbox().outbound(&kept).await.unwrap().state,
        OutboundState::Delivered
    );
    let late = h.outbox().outbound(&lost).await.unwrap();
    assert_eq!(late.state, OutboundState::SentUnverified);
    assert!(late.platform_message_id.is_none());
    assert!(
        h.gateway()
            .delivery_mapping("hermes", "feishu", "oc_home", "om_late")
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn rows_leased_ahead_and_never_started_are_released_not_marked_sent(b: &Backend) {
    let (_store, h) = harness(b).await;
    let t = task(&h, "A").await;
    let started = push(&h, &t, "started", false).await;
    let fresh = push(&h, &t, "never started", false).await;
    let retried = push(&h, &t, "failed once, then leased", false).await;
    let leased = claim(&h, 3).await;
    assert_eq!(leased.len(), 3);
    // The started evidence: only the lease holder, only at the current attempt.
    let row = |id: &str| leased.iter().find(|r| r.id == id).unwrap().clone();
    assert!(
        h.outbox()
            .mark_outbound_started(&row(&started), OWNER)
            .await
            .unwrap()
    );
    assert!(
        !h.outbox()
            .mark_outbound_started(&row(&fresh), "node-b:boot-1")
            .await
            .unwrap()
    );
    let mut wrong = row(&fresh);
    wrong.attempts = 2;
    assert!(
        !h.outbox()
            .mark_outbound_started(&wrong, OWNER)
            .await
            .unwrap()
    );
    assert!(
        h.outbox()
            .outbound(&started)
            .await
            .unwrap()
            .attempt_started()
    );
    assert!(!h.outbox().outbound(&fresh).await.unwrap().attempt_started());
    // `retried` started and failed its first attempt and is due again:
    // leased a second time, never started.
    let first = row(&retried);
    assert!(
        h.outbox()
            .mark_outbound_started(&first, OWNER)
            .await
            .unwrap()
    );
    h.store()
        .settle_outbound(
            &retried,
            OWNER,
            None,
            harness_core::store::Settle::Failed {
                error: "exit 1".into(),
                next: Some(Utc::now()),
            },
            Utc::now(),
        )
        .await
        .unwrap()
        .unwrap();
    let again = claim(&h, 1).await;
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (retried.as_str(), 2)
    );
    assert_eq!(first.attempts, 1);

    // A release by another owner, or of a row not leased, or of a row whose
    // attempt started, does nothing (the database decides).
    let kept = h
        .outbox()
        .settle_and_claim(
            OWNER,
            Vec::new(),
            vec![started.clone()],
            Duration::seconds(120),
            0,
        )
        .await
        .unwrap();
    assert!(kept.is_empty());
    assert_eq!(
        h.outbox().outbound(&started).await.unwrap().state,
        OutboundState::Sending
    );
    let other = h
        .outbox()
        .settle_and_claim(
            "node-b:boot-1",
            Vec::new(),
            vec![fresh.clone()],
            Duration::seconds(120),
            0,
        )
        .await
        .unwrap();
    assert!(other.is_empty());
    assert_eq!(
        h.outbox().outbound(&fresh).await.unwrap().state,
        OutboundState::Sending
    );

    // The node restarts: the database shows only `started` (attempt 1) began.
    let (unverified, released) = recovered(
        &h.cluster()
            .recover_work(Kind::Outbox, Scope::Boot("node-a:boot-2"))
            .await
            .unwrap(),
    );
    assert_eq!((unverified, released), (1, 2));
    let row = h.outbox().outbound(&started).await.unwrap();
    assert_eq!(
        row.state,
        OutboundState::SentUnverified,
        "it may have been sent"
    );
    let row = h.outbox().outbound(&fresh).await.unwrap();
    assert_eq!(
        row.state,
        OutboundState::Pending,
        "never started: due again"
    );
    assert_eq!(row.attempts, 0, "the lease's attempt is not counted");
    assert!(row.lease_owner.is_none() && row.lease_expires_at.is_none());
    assert!(row.next_attempt_at.is_some_and(|at| at <= Utc::now()));
    // Attempt 2 of `retried` was never started (the mark is attempt 1's).
    let row = h.outbox().outbound(&retried).await.unwrap();
    assert_eq!(
        row.state,
        OutboundState::Failed,
        "back to the state it was leased from"
    );
    assert_eq!(row.attempts, 1);
    assert_eq!(row.last_error.as_deref(), Some("exit 1"));
    // Released rows are leased again by the next turn.
    let next = h
        .outbox()
        .settle_and_claim(
            "node-a:boot-2",
            Vec::new(),
            Vec::new(),
            Duration::seconds(120),
            5,
        )
        .await
        .unwrap();
    let mut ids: Vec<&str> = next.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    let mut want = vec![fresh.as_str(), retried.as_str()];
    want.sort();
    assert_eq!(ids, want);
}

/// The started marks of several sends in one statement: each row by its
/// own lease and attempt, the others untouched.
pub async fn started_marks_of_several_sends_commit_together_each_by_its_own_lease(b: &Backend) {
    let (_store, h) = harness(b).await;
    let t = task(&h, "A").await;
    let mut ids = Vec::new();
    for n in 0..4 {
        ids.push(push(&h, &t, &format!("m{n}"), false).await);
    }
    let leased = claim(&h, 4).await;
    assert_eq!(leased.len(), 4);
    let attempt = |id: &str| leased.iter().find(|r| r.id == *id).unwrap().attempts;
    let marks = vec![
        (ids[0].clone(), attempt(&ids[0])),
        (ids[1].clone(), attempt(&ids[1]) + 1), // not its current attempt
        (ids[2].clone(), attempt(&ids[2])),
        ("no-such-row".to_string(), 1),
    ];
    let mut marked = h
        .outbox()
        .mark_outbound_started_many(OWNER, &marks)
        .await
        .unwrap();
    marked.sort();
    let mut want = vec![ids[0].clone(), ids[2].clone()];
    want.sort();
    assert_eq!(marked, want);
    for (n, started) in [(0, true), (1, false), (2, true), (3, false)] {
        assert_eq!(
            h.outbox()
                .outbound(&ids[n])
                .await
                .unwrap()
                .attempt_started(),
            started,
            "row {n}"
        );
    }
    // Another sender's marks change nothing; an empty batch is no write.
    let other = vec![(ids[3].clone(), attempt(&ids[3]))];
    assert!(
        h.outbox()
            .mark_outbound_started_many("node-b:boot-1", &other)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !h.outbox()
            .outbound(&ids[3])
            .await
            .unwrap()
            .attempt_started()
    );
    assert!(
        h.outbox()
            .mark_outbound_started_many(OWNER, &[])
            .await
            .unwrap()
            .is_empty()
    );
}
