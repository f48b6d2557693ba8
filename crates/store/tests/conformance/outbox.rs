//! The durable outbox, through the core: the message
//! and its outbound row in one transaction, the dedup rules (explicit keys
//! strict, implicit keys per ask lifecycle), every transition of the state
//! machine, expired leases, start-up recovery, and concurrent enqueues of
//! one key from two writers on one database.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{
    CoreError, Harness, HarnessConfig, ids,
    model::{ExecutionStatus, MessageKind, MessageState},
    outbox::{OutboundState, PushInput, Receipt, SendOutcome, Unsent},
    settings::NotifyTarget,
    store::Store,
    tasks::CreateTask,
};

use harness_core::work::{Kind, Scope};

use super::{
    Backend,
    support::{harness_on, recovered},
};

/// The core on `node` over another store on the backend's database.
async fn harness(b: &Backend, node: &str) -> (Arc<dyn Store>, Harness) {
    let store = b.another().await;
    let h = harness_on(store.clone(), node);
    (store, h)
}

async fn task(h: &Harness) -> String {
    h.tasks()
        .create_task(CreateTask {
            title: Some("Fix CI".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id
}

fn target(scope: &str, gateway: &str, downstream: &str, dest: Option<&str>) -> NotifyTarget {
    NotifyTarget {
        id: None,
        label: format!("{scope} chat"),
        gateway: gateway.into(),
        downstream: Some(downstream.into()),
        dest: dest.map(Into::into),
        profile: None,
        scope: scope.into(),
        active: true,
        include_screen: false,
        report_at: None,
        report_time_zone: None,
        report_since: None,
        language: None,
    }
}

async fn configured(h: &Harness) {
    h.settings()
        .set_notify_targets(vec![
            target("unattended", "hermes", "feishu", None),
            target("work", "openclaw", "telegram", Some("-100")),
        ])
        .await
        .unwrap();
}

fn push(task_id: &str, message: &str, expect_reply: bool) -> PushInput {
    PushInput {
        task_id: Some(task_id.into()),
        message: Some(message.into()),
        scope: Some("unattended".into()),
        expect_reply: Some(expect_reply),
        ..Default::default()
    }
}

/// Delivered into the chat `oc_home`.
fn delivered(id: &str) -> SendOutcome {
    SendOutcome::Delivered(Receipt {
        message_id: Some(id.into()),
        platform: None,
        chat_id: Some("oc_home".into()),
    })
}

const OWNER: &str = "node-a:boot-1";

async fn claim_one(h: &Harness, at: chrono::DateTime<Utc>) -> harness_core::outbox::Outbound {
    let mut rows = h
        .store()
        .claim_outbound(OWNER, at, at + Duration::seconds(120), 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "exactly one due row");
    rows.remove(0)
}

pub async fn no_channel_and_work_without_destination_are_refused(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    let t = task(&h).await;
    let err = outbox
        .push_to_human(push(&t, "hi", true))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CoreError::Conflict(m) if m == "No active unattended channel configured"),
        "{err:?}"
    );
    h.settings()
        .set_notify_targets(vec![target("work", "openclaw", "telegram", None)])
        .await
        .unwrap();
    let mut p = push(&t, "hi", false);
    p.scope = Some("work".into());
    let err = outbox.push_to_human(p.clone()).await.unwrap_err();
    assert_eq!(err.field(), Some("to"));
    p.to = Some("-100".into());
    let out = outbox.push_to_human(p).await.unwrap();
    assert_eq!(out.state, OutboundState::Pending);
    assert!(!out.parked && !out.sent);
}

pub async fn enqueue_writes_message_and_row_and_delivery_activates_the_ask(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    configured(&h).await;
    let t = task(&h).await;
    let exec = h.tasks().begin_execution(&t).await.unwrap();
    let old = h.asks().ask(&t, Some("older question")).await.unwrap();
    h.store().resume_executions(&t).await.unwrap();

    let out = outbox
        .push_to_human(push(&t, "Postgres or SQLite?", true))
        .await
        .unwrap();
    assert_eq!(
        (out.state, out.deduped, out.sent, out.parked),
        (OutboundState::Pending, false, false, false)
    );
    let message = h
        .store()
        .get_message(out.message_id.as_deref().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (message.kind, message.state),
        (MessageKind::Ask, MessageState::PendingDelivery)
    );
    let row = outbox.outbound(&out.outbound_id).await.unwrap();
    assert_eq!(
        row.message,
        format!("Fix CI\n\nPostgres or SQLite?\n\nTask ID: [[tower:task={t}]]")
    );
    // Not pending yet: the older ask is still the OPEN one.
    assert!(h.asks().pending(&t).await.unwrap().pending);

    let claimed = claim_one(&h, Utc::now()).await;
    assert_eq!(
        (claimed.state, claimed.attempts),
        (OutboundState::Sending, 1)
    );
    let done = outbox
        .finish_send(&claimed, OWNER, delivered("om_1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.state, OutboundState::Delivered);
    assert_eq!(done.platform.as_deref(), Some("feishu"));
    assert!(done.delivered_at.is_some() && done.lease_owner.is_none());
    let pending = h.asks().pending(&t).await.unwrap();
    assert_eq!(pending.request_id.as_deref(), out.message_id.as_deref());
    let older = h
        .store()
        .get_message(&old.request_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(older.state, MessageState::Cancelled);
    let live = h.store().live_execution(&t).await.unwrap().unwrap();
    assert_eq!(
        (live.id.as_str(), live.status),
        (exec.0.id.as_str(), ExecutionStatus::Paused)
    );
    let map = h
        .gateway()
        .delivery_mapping("Hermes", "FEISHU", "feishu:oc_home", "om_1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(map.task_id.as_deref(), Some(t.as_str()));
    assert_eq!(map.harness_message_id, out.message_id);
    assert!(map.expect_reply);
    assert!(
        h.gateway()
            .delivery_mapping("hermes", "feishu", "oc_home", "om_2")
            .await
            .unwrap()
            .is_none()
    );
    // A late result of the same attempt changes nothing.
    assert!(
        outbox
            .finish_send(&claimed, OWNER, delivered("om_9"))
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn explicit_keys_are_strict_and_implicit_keys_cover_one_ask_lifecycle(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    configured(&h).await;
    let t = task(&h).await;
    let mut a = push(&t, "first text", true);
    a.dedup_key = Some(" k1 ".into());
    let first = outbox.push_to_human(a.clone()).await.unwrap();
    a.message = Some("other text, same key".into());
    let again = outbox.push_to_human(a).await.unwrap();
    assert!(again.deduped);
    assert_eq!(again.outbound_id, first.outbound_id);
    assert_eq!(
        outbox.outbound(&first.outbound_id).await.unwrap().dedup_key,
        format!("harness:{t}:k1")
    );

    // Implicit (another task): same content while pending → the same row.
    let t = task(&h).await;
    let p1 = outbox.push_to_human(push(&t, "same", true)).await.unwrap();
    let p2 = outbox.push_to_human(push(&t, "same", true)).await.unwrap();
    assert!(!p1.deduped && p2.deduped && p1.outbound_id == p2.outbound_id);
    // Deliver p1 (its ask OPEN): still the same lifecycle.
    let now = Utc::now();
    let rows = h
        .store()
        .claim_outbound(OWNER, now, now + Duration::seconds(120), 10)
        .await
        .unwrap();
    for r in &rows {
        let id = format!("om_{}", r.id);
        outbox
            .finish_send(r, OWNER, delivered(&id))
            .await
            .unwrap()
            .unwrap();
    }
    let open = h.asks().pending(&t).await.unwrap();
    let p3 = outbox.push_to_human(push(&t, "same", true)).await.unwrap();
    assert!(p3.deduped, "the ask is OPEN: same lifecycle");
    assert_eq!(p3.outbound_id, p1.outbound_id);
    // Answer the ask (whichever is OPEN now): a new lifecycle for the content.
    assert!(open.pending);
    h.asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("answer"),
            false,
        )
        .await
        .unwrap();
    if h.asks().pending(&t).await.unwrap().pending {
        h.asks()
            .reply(
                &harness_core::auth::Person::admin(),
                &t,
                Some("answer 2"),
                false,
            )
            .await
            .unwrap();
    }
    let p4 = outbox.push_to_human(push(&t, "same", true)).await.unwrap();
    assert!(!p4.deduped, "answered: a new cycle");
    let row = outbox.outbound(&p4.outbound_id).await.unwrap();
    assert!(row.dedup_key.ends_with(":cycle:2"), "{}", row.dedup_key);
    // Different content → a new row.
    assert!(
        !outbox
            .push_to_human(push(&t, "different", true))
            .await
            .unwrap()
            .deduped
    );
}

pub async fn failures_back_off_then_die_and_a_person_can_retry(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    configured(&h).await;
    let t = task(&h).await;
    let out = outbox
        .push_to_human(push(&t, "will fail", false))
        .await
        .unwrap();
    let mut at = Utc::now();
    let row = claim_one(&h, at).await;
    let failed = outbox
        .finish_send(&row, OWNER, SendOutcome::Failed("exit 1".into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.state, OutboundState::Failed);
    // (The stamp may be the database's clock when it is later than this
    // process's, by a few milliseconds on one machine.)
    let wait = (failed.next_attempt_at.unwrap() - failed.updated_at).num_milliseconds();
    assert!(
        (1_900..=2_000).contains(&wait),
        "first backoff is 2 s: {wait} ms"
    );
    // Not due before its time.
    assert!(
        h.store()
            .claim_outbound(OWNER, at, at + Duration::seconds(1), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let msg = h
        .store()
        .get_message(out.message_id.as_deref().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(msg.state, MessageState::PendingDelivery);
    let mut last = failed;
    for _ in 1..harness_core::deliveries::MAX_ATTEMPTS {
        at = last.next_attempt_at.unwrap() + Duration::milliseconds(1);
        let row = claim_one(&h, at).await;
        last = outbox
            .finish_send(&row, OWNER, SendOutcome::Failed("still".into()))
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!((last.state, last.attempts), (OutboundState::Dead, 20));
    assert!(last.next_attempt_at.is_none());
    let far = Utc::now() + Duration::days(1);
    assert!(
        h.store()
            .claim_outbound(OWNER, far, far, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let err = outbox.mark_outbound_delivered(&last.id).await.unwrap_err();
    assert_eq!(err.http_status(), 409);
    let retried = outbox.retry_outbound(&last.id).await.unwrap();
    assert_eq!(retried.state, OutboundState::Pending);
    let row = claim_one(&h, Utc::now()).await;
    let done = outbox
        .finish_send(&row, OWNER, delivered("om_ok"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((done.state, done.attempts), (OutboundState::Delivered, 21));
    let msg = h
        .store()
        .get_message(out.message_id.as_deref().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        msg.state,
        MessageState::Closed,
        "a notify closes on delivery"
    );
}

/// A send whose command line cannot be built is given up at once (DEAD, not
/// due again), as a gateway reply's is; a send that could work next time
/// (settings unreadable, a destination not resolved) backs off as FAILED.
pub async fn a_send_that_cannot_be_built_is_dead_at_once(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    configured(&h).await;
    let t = task(&h).await;
    outbox
        .push_to_human(push(&t, "unbuildable", true))
        .await
        .unwrap();
    let row = claim_one(&h, Utc::now()).await;
    let dead = outbox
        .finish_send(
            &row,
            OWNER,
            Unsent::Command("Unsupported gateway: x".into()).into(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(dead.state, OutboundState::Dead);
    assert!(dead.next_attempt_at.is_none());
    assert_eq!(dead.last_error.as_deref(), Some("Unsupported gateway: x"));
    // A person can still send it again.
    assert_eq!(
        outbox.retry_outbound(&dead.id).await.unwrap().state,
        OutboundState::Pending
    );
    let row = claim_one(&h, Utc::now()).await;
    let failed = outbox
        .finish_send(&row, OWNER, Unsent::Settings.into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.state, OutboundState::Failed);
    assert!(failed.next_attempt_at.is_some());
}

pub async fn unverified_is_never_resent_and_can_be_marked_delivered(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    configured(&h).await;
    let t = task(&h).await;
    let out = outbox.push_to_human(push(&t, "no id", true)).await.unwrap();
    let row = claim_one(&h, Utc::now()).await;
    let outcome = SendOutcome::Unverified(Receipt::default(), "exit 0 without id".into());
    let done = outbox
        .finish_send(&row, OWNER, outcome)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.state, OutboundState::SentUnverified);
    assert_eq!(done.last_error.as_deref(), Some("exit 0 without id"));
    assert!(
        h.asks().pending(&t).await.unwrap().pending,
        "the ask is OPEN anyway"
    );
    let far = Utc::now() + Duration::days(1);
    assert!(
        h.store()
            .claim_outbound(OWNER, far, far, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        outbox
            .retry_outbound(&out.outbound_id)
            .await
            .unwrap_err()
            .http_status(),
        409
    );
    let marked = outbox
        .mark_outbound_delivered(&out.outbound_id)
        .await
        .unwrap();
    assert_eq!(marked.state, OutboundState::Delivered);
    // The same content for a SENT_UNVERIFIED notify stays deduped.
    let n1 = outbox.push_to_human(push(&t, "fyi", false)).await.unwrap();
    let row = claim_one(&h, Utc::now()).await;
    outbox
        .finish_send(
            &row,
            OWNER,
            SendOutcome::Unverified(Receipt::default(), "?".into()),
        )
        .await
        .unwrap();
    let n2 = outbox.push_to_human(push(&t, "fyi", false)).await.unwrap();
    assert!(n2.deduped && n2.outbound_id == n1.outbound_id);
}

pub async fn expired_leases_and_earlier_boots_become_unverified(b: &Backend) {
    let (_s, h) = harness(b, "node-a").await;
    let outbox = h.outbox();
    configured(&h).await;
    let t = task(&h).await;
    outbox.push_to_human(push(&t, "one", true)).await.unwrap();
    let now = Utc::now();
    let rows = h
        .store()
        .claim_outbound(OWNER, now, now - Duration::milliseconds(1), 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    // Its CLI was spawned (the evidence is committed first).
    assert!(outbox.mark_outbound_started(&rows[0], OWNER).await.unwrap());
    assert_eq!(
        h.cluster()
            .recover_work(Kind::Outbox, Scope::Expired)
            .await
            .unwrap()
            .unverified,
        1
    );
    let row = outbox.outbound(&rows[0].id).await.unwrap();
    assert_eq!(row.state, OutboundState::SentUnverified);
    assert!(
        h.asks().pending(&t).await.unwrap().pending,
        "activated: the ask is OPEN"
    );
    // The original sender finishing late loses.
    assert!(
        outbox
            .finish_send(&rows[0], OWNER, delivered("om_late"))
            .await
            .unwrap()
            .is_none()
    );

    // An expired lease whose send never started: released, due again.
    outbox
        .push_to_human(push(&t, "unsent", false))
        .await
        .unwrap();
    let now = Utc::now();
    let unsent = h
        .store()
        .claim_outbound(OWNER, now, now - Duration::milliseconds(1), 10)
        .await
        .unwrap();
    assert_eq!(unsent.len(), 1);
    assert_eq!(
        h.cluster()
            .recover_work(Kind::Outbox, Scope::Expired)
            .await
            .unwrap()
            .unverified,
        0
    );
    let back = outbox.outbound(&unsent[0].id).await.unwrap();
    assert_eq!(
        (back.state, back.attempts, back.lease_owner),
        (OutboundState::Pending, 0, None)
    );
    let resent = claim_one(&h, Utc::now()).await;
    assert_eq!(resent.id, unsent[0].id);
    outbox
        .finish_send(&resent, OWNER, delivered("om_unsent"))
        .await
        .unwrap()
        .unwrap();

    outbox.push_to_human(push(&t, "two", false)).await.unwrap();
    let row = claim_one(&h, Utc::now()).await;
    assert!(outbox.mark_outbound_started(&row, OWNER).await.unwrap());
    assert_eq!(
        h.cluster()
            .recover_work(Kind::Outbox, Scope::Expired)
            .await
            .unwrap()
            .unverified,
        0,
        "lease still valid"
    );
    assert_eq!(
        recovered(
            &h.cluster()
                .recover_work(Kind::Outbox, Scope::Boot(OWNER))
                .await
                .unwrap()
        ),
        (0, 0),
        "our own boot"
    );
    // Another node never touches it.
    let (_s3, hb) = harness(b, "node-b").await;
    assert_eq!(
        recovered(
            &hb.cluster()
                .recover_work(Kind::Outbox, Scope::Boot("node-b:boot-1"))
                .await
                .unwrap()
        ),
        (0, 0),
        "another node's rows"
    );
    // This node restarted with a new boot:
    let (_s2, h2) = harness(b, "node-a").await;
    assert_eq!(
        recovered(
            &h2.cluster()
                .recover_work(Kind::Outbox, Scope::Boot("node-a:boot-2"))
                .await
                .unwrap()
        ),
        (1, 0)
    );
    assert_eq!(
        h2.outbox().outbound(&row.id).await.unwrap().state,
        OutboundState::SentUnverified
    );
}

pub async fn concurrent_enqueues_of_one_key_make_one_row(b: &Backend) {
    let (_a, ha) = harness(b, "node-a").await;
    let (_b, hb) = harness(b, "node-b").await;
    configured(&ha).await;
    let t = task(&ha).await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..40 {
        let h = if i % 2 == 0 { ha.clone() } else { hb.clone() };
        let t = t.clone();
        set.spawn(async move {
            let mut p = push(&t, &format!("text {i}"), true);
            if i % 4 < 2 {
                p.dedup_key = Some("same-key".into());
            } else {
                p.message = Some("same content".into());
            }
            h.outbox().push_to_human(p).await.unwrap()
        });
    }
    let mut ids = std::collections::HashSet::new();
    let mut fresh = 0;
    while let Some(out) = set.join_next().await {
        let out = out.unwrap();
        ids.insert(out.outbound_id.clone());
        fresh += usize::from(!out.deduped);
    }
    assert_eq!(ids.len(), 2, "one row per key");
    assert_eq!(fresh, 2, "exactly one creator per key");
    let all = ha.outbox().list_outbound(Some(&t), 100).await.unwrap();
    assert_eq!(all.len(), 2);
    let page = ha
        .asks()
        .list_messages(harness_core::model::MessageQuery {
            view: harness_core::model::MessageView::All,
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.rows.len(), 2, "one message per row");
}

pub async fn the_attempt_cap_is_configurable(b: &Backend) {
    let store = b.another().await;
    let mut config = HarnessConfig::new(ids::token_hash("admin"));
    config.outbox_max_attempts = 3;
    let h = Harness::new(store, config);
    configured(&h).await;
    let t = task(&h).await;
    h.outbox()
        .push_to_human(push(&t, "x", false))
        .await
        .unwrap();
    let mut at = Utc::now();
    let mut states = Vec::new();
    for _ in 0..3 {
        let row = claim_one(&h, at).await;
        let done = h
            .outbox()
            .finish_send(&row, OWNER, SendOutcome::Failed("no".into()))
            .await
            .unwrap()
            .unwrap();
        states.push(done.state);
        at = done.next_attempt_at.unwrap_or(at) + Duration::milliseconds(1);
    }
    assert_eq!(
        states,
        [
            OutboundState::Failed,
            OutboundState::Failed,
            OutboundState::Dead
        ]
    );
}
