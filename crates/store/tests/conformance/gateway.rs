//! The gateway-inbound aggregate: the delivery mapping per chat,
//! signed requests' nonces, inbound rows.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{
    Harness,
    gateway::context::{BindingSource, TaskContextInput},
    ids,
    outbox::{PushInput, Receipt, SendOutcome},
    settings::NotifyTarget,
    store::{InboundClaim, InboundFinish, InboundIntent, InboundState, NewInbound, Store},
    tasks::CreateTask,
};

use super::{Backend, support::harness_on};

const OWNER: &str = "node-a:boot-1";

async fn harness(b: &Backend) -> (Arc<dyn Store>, Harness) {
    let store = b.store.clone();
    let h = harness_on(store.clone(), "node-a");
    h.settings()
        .set_notify_targets(vec![NotifyTarget {
            id: None,
            label: "group".into(),
            gateway: "openclaw".into(),
            downstream: Some("telegram".into()),
            dest: Some("-100".into()),
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

/// Push a question for `task` and settle its send: delivered into `chat`
/// as platform message `pmid`.
async fn sent(h: &Harness, task: &str, chat: &str, pmid: &str) {
    h.outbox()
        .push_to_human(PushInput {
            task_id: Some(task.into()),
            message: Some(format!("question of {task}")),
            scope: Some("unattended".into()),
            expect_reply: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let leased = h
        .outbox()
        .settle_and_claim(OWNER, Vec::new(), Vec::new(), Duration::seconds(120), 1)
        .await
        .unwrap();
    assert_eq!(leased.len(), 1);
    let outcome = SendOutcome::Delivered(Receipt {
        message_id: Some(pmid.into()),
        platform: Some("telegram".into()),
        chat_id: Some(chat.into()),
    });
    h.outbox()
        .settle_and_claim(
            OWNER,
            vec![(leased[0].clone(), outcome)],
            Vec::new(),
            Duration::seconds(120),
            0,
        )
        .await
        .unwrap();
}

/// Telegram message ids are unique only within a chat: the same id sent
/// into a second chat is a second mapping, and a lookup from the first
/// chat still finds the first task (the wrong-chat case).
pub async fn a_message_id_reused_in_another_chat_does_not_take_over_the_mapping(b: &Backend) {
    let (s, h) = harness(b).await;
    let (first, second) = (task(&h, "A").await, task(&h, "B").await);
    sent(&h, &first, "-100111", "77").await;
    sent(&h, &second, "-100222", "77").await;

    let both = s
        .delivery_mappings("openclaw", "telegram", "77")
        .await
        .unwrap();
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.iter().all(|m| m.gateway == "openclaw"));
    let of = |chat: &'static str| {
        let h = h.clone();
        async move {
            h.gateway()
                .delivery_mapping("openclaw", "telegram", chat, "77")
                .await
                .unwrap()
                .and_then(|m| m.task_id)
        }
    };
    assert_eq!(of("-100111").await.as_deref(), Some(first.as_str()));
    assert_eq!(
        of("telegram:-100222").await.as_deref(),
        Some(second.as_str())
    );
    assert_eq!(of("-100333").await, None, "a third chat maps to nothing");
    // Another gateway's message with that id is not this one.
    assert!(
        s.delivery_mappings("hermes", "telegram", "77")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        h.gateway()
            .delivery_mapping("hermes", "telegram", "-100111", "77")
            .await
            .unwrap(),
        None
    );
    // A reply to message 77 in B's chat that quotes A's token is B's: the
    // reply binding of this chat comes first (docs/tower-messaging.md §8.3).
    let resolve = |chat: &str, quoted: Option<String>| TaskContextInput {
        gateway: Some("openclaw".into()),
        platform: Some("Telegram".into()),
        chat_id: Some(chat.into()),
        reply_to_message_id: Some("77".into()),
        quoted_text: quoted,
        task_id: None,
    };
    let quoting_a = Some(format!("Task ID: [[TOWER:TASK={}]]", first.to_uppercase()));
    let ctx = h
        .gateway()
        .resolve_gateway_task_context(&resolve("-100222", quoting_a.clone()))
        .await
        .unwrap();
    assert_eq!(ctx.subject_task_id.as_deref(), Some(second.as_str()));
    assert_eq!(ctx.binding_source, Some(BindingSource::HarnessDelivery));
    // From a third chat the mapping does not apply: the (upper-case) token does.
    let ctx = h
        .gateway()
        .resolve_gateway_task_context(&resolve("-100333", quoting_a))
        .await
        .unwrap();
    assert_eq!(ctx.subject_task_id.as_deref(), Some(first.as_str()));
    assert_eq!(ctx.binding_source, Some(BindingSource::QuotedTaskToken));
    let ctx = h
        .gateway()
        .resolve_gateway_task_context(&resolve("-100333", None))
        .await
        .unwrap();
    assert!(!ctx.bound);
    assert_eq!(ctx.reason.as_deref(), Some("not_found"));
}

/// A nonce is remembered until it expires — by another store on the same
/// database too (a restart) — and forgotten afterwards.
pub async fn a_nonce_is_refused_until_it_expires_even_after_a_restart(b: &Backend) {
    let s = b.store.clone();
    let now = Utc::now();
    let nonce = uuid_like();
    assert!(
        s.remember_nonce(&nonce, now + Duration::minutes(5), now)
            .await
            .unwrap()
    );
    assert!(
        !s.remember_nonce(&nonce, now + Duration::minutes(5), now)
            .await
            .unwrap()
    );
    let restarted = b.another().await;
    assert!(
        !restarted
            .remember_nonce(
                &nonce,
                now + Duration::minutes(5),
                now + Duration::minutes(4)
            )
            .await
            .unwrap(),
        "a replay after a restart is refused"
    );
    // Past its expiry the nonce is cleaned up (and could be seen again).
    let later = now + Duration::minutes(6);
    assert!(
        restarted
            .remember_nonce(&nonce, later + Duration::minutes(5), later)
            .await
            .unwrap()
    );
}

fn uuid_like() -> String {
    let id = ids::new_id();
    format!("{}-{}", &id[..8], &id[8..])
}

fn new_inbound(pmid: &str, now: chrono::DateTime<Utc>) -> NewInbound {
    NewInbound {
        id: ids::new_id(),
        dedup_key: format!("gateway-inbound:openclaw:telegram:-100:{pmid}"),
        gateway: "openclaw".into(),
        platform: "telegram".into(),
        chat_id: "-100".into(),
        sender_id: Some("42".into()),
        platform_message_id: pmid.into(),
        thread_id: None,
        root_message_id: None,
        reply_to_message_id: Some("77".into()),
        intent: InboundIntent::ProjectWork,
        content: "continue".into(),
        now,
    }
}

/// One row per dedup key; a claim leases the row to the calling process,
/// fenced by what the caller saw; finishing records the result and ends the
/// lease.
pub async fn inbound_rows_are_one_per_message_and_claimed_by_compare_and_set(b: &Backend) {
    let s = b.store.clone();
    let now = super::support::now_ms();
    let pmid = ids::new_id();
    let (row, created) = s.create_inbound(new_inbound(&pmid, now)).await.unwrap();
    assert!(created);
    assert_eq!((row.state, row.attempts), (InboundState::Received, 0));
    assert_eq!(row.response, None);
    let (again, created) = s
        .create_inbound(new_inbound(&pmid, now + Duration::seconds(1)))
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(again, row, "the first row, unchanged");

    let claim = |seen_updated_at, response: &str| InboundClaim {
        id: row.id.clone(),
        seen_state: InboundState::Received,
        seen_response: None,
        seen_updated_at,
        response: response.into(),
        owner: "node-a:boot-1".into(),
        lease_until: now + Duration::seconds(62),
        now: now + Duration::seconds(2),
    };
    assert_eq!(
        s.claim_inbound(claim(now - Duration::seconds(1), "{}"))
            .await
            .unwrap(),
        None,
        "a claim on a row that changed since it was read"
    );
    let claimed = s
        .claim_inbound(claim(now, r#"{"mode":"continue_in_progress"}"#))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (claimed.state, claimed.attempts),
        (InboundState::Processing, 1)
    );
    assert_eq!(claimed.updated_at, now + Duration::seconds(2));
    assert_eq!(claimed.lease_owner.as_deref(), Some("node-a:boot-1"));
    // The lease ends by the database's clock: 60 s after the claim.
    let ends = claimed.lease_expires_at.expect("a leased claim");
    assert!(
        (ends - Utc::now() - Duration::seconds(60))
            .num_seconds()
            .abs()
            <= 5,
        "{ends}"
    );
    // The same claim again loses: the row is PROCESSING now.
    assert_eq!(s.claim_inbound(claim(now, "{}")).await.unwrap(), None);

    let done = s
        .finish_inbound(InboundFinish {
            id: row.id.clone(),
            state: InboundState::Processed,
            response: r#"{"mode":"continued_task"}"#.into(),
            last_error: None,
            now: now + Duration::seconds(3),
            reply: None,
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.state, InboundState::Processed);
    assert_eq!(done.processed_at, Some(now + Duration::seconds(3)));
    assert_eq!((&done.lease_owner, done.lease_expires_at), (&None, None));
    assert_eq!(s.get_inbound(&row.id).await.unwrap(), Some(done));
    assert_eq!(s.get_inbound("missing").await.unwrap(), None);
    assert_eq!(
        s.finish_inbound(InboundFinish {
            id: "missing".into(),
            state: InboundState::Failed,
            response: "{}".into(),
            last_error: Some("x".into()),
            now,
            reply: None,
        })
        .await
        .unwrap(),
        None
    );
}

/// A `continue_bound_task` claim is a lease held by its call (the engine's
/// lease columns, judged by the database's clock): the recovery pass leaves
/// a live holder's claim alone, and settles one whose holder's boot is gone
/// (its node restarted) or whose lease ended — by what it had queued
/// (nothing here: FAILED, for the gateway's retry), its lease cleared.
pub async fn a_continuation_claim_lapses_with_its_lease_or_its_holders_boot(b: &Backend) {
    let (s, h) = super::support::node_a(b, Some("node-a:boot-2")).await;
    // This node runs boot-2; boot-1 was its earlier process.
    assert!(
        s.node_heartbeat("node-a", "boot-2", None, None)
            .await
            .unwrap()
    );
    let now = h.cluster().db_now().await.unwrap();
    let mut rows = Vec::new();
    for (owner, ttl) in [
        ("node-a:boot-2", Duration::seconds(60)),
        ("node-a:boot-1", Duration::seconds(60)),
        ("node-a:boot-2", super::support::LEASE),
    ] {
        let (row, _) = s
            .create_inbound(new_inbound(&ids::new_id(), now))
            .await
            .unwrap();
        let claimed = s
            .claim_inbound(InboundClaim {
                id: row.id.clone(),
                seen_state: row.state,
                seen_response: None,
                seen_updated_at: row.updated_at,
                response: r#"{"mode":"continue_in_progress"}"#.into(),
                owner: owner.into(),
                lease_until: now + ttl,
                now,
            })
            .await
            .unwrap()
            .expect("claimed");
        assert_eq!(claimed.lease_owner.as_deref(), Some(owner));
        rows.push(claimed.id);
    }
    super::support::past_lease().await;
    let pass = h
        .gateway()
        .recover_gateway_inbound(h.cluster().db_now().await.unwrap())
        .await
        .unwrap();
    assert_eq!((pass.advanced, pass.failed), (0, 2), "{pass:?}");
    let live = s.get_inbound(&rows[0]).await.unwrap().unwrap();
    assert_eq!(
        live.state,
        InboundState::Processing,
        "a live holder's claim is left alone"
    );
    assert_eq!(live.lease_owner.as_deref(), Some("node-a:boot-2"));
    for id in &rows[1..] {
        let lapsed = s.get_inbound(id).await.unwrap().unwrap();
        assert_eq!(lapsed.state, InboundState::Failed, "{lapsed:?}");
        assert_eq!((lapsed.lease_owner, lapsed.lease_expires_at), (None, None));
    }
}
