//! Gateway replies: owed work on the engine — written with its
//! cause, leased, settled with each outcome, never resent once it may have
//! been sent.

use chrono::{DateTime, Duration, Utc};
use harness_core::{
    ids,
    store::{
        InboundFinish, InboundIntent, InboundState, NewInbound, NewReply, ReplyKind, ReplySettle,
        ReplyState, ReplyTurn, Store,
    },
};

use super::Backend;

const OWNER: &str = "node-a:boot-1";

async fn inbound(s: &dyn Store, pmid: &str, now: DateTime<Utc>) -> String {
    let (row, _) = s
        .create_inbound(NewInbound {
            id: ids::new_id(),
            dedup_key: format!("gateway-inbound:openclaw:telegram:-100:{pmid}"),
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: "-100".into(),
            sender_id: Some("42".into()),
            platform_message_id: pmid.into(),
            thread_id: Some("7".into()),
            root_message_id: None,
            reply_to_message_id: None,
            intent: InboundIntent::ProjectWork,
            content: "continue".into(),
            now,
        })
        .await
        .unwrap();
    row.id
}

fn new_reply(inbound_id: &str, kind: ReplyKind, now: DateTime<Utc>) -> NewReply {
    NewReply {
        id: ids::new_id(),
        inbound_id: inbound_id.into(),
        kind,
        content: format!("{} for {inbound_id}", kind.as_str()),
        dedup_key: format!("gateway-reply:{}:{inbound_id}", kind.as_str()),
        now,
    }
}

fn turn(owner: &str, now: DateTime<Utc>, limit: u32) -> ReplyTurn {
    ReplyTurn {
        owner: owner.into(),
        settles: Vec::new(),
        released: Vec::new(),
        lease_until: now + Duration::seconds(120),
        now,
        limit,
    }
}

/// The acknowledgement is written by the transaction that records the
/// inbound row as PROCESSED, once per message however often it is
/// finished; a reply copies its destination from the inbound row and is
/// one per dedup key; without the inbound row nothing is written.
pub async fn a_reply_is_written_with_its_inbound_row_once_per_key(b: &Backend) {
    let s = b.store.clone();
    let now = super::support::now_ms();
    let id = inbound(s.as_ref(), "501", now).await;
    for n in 0..2 {
        let finished = s
            .finish_inbound(InboundFinish {
                id: id.clone(),
                state: InboundState::Processed,
                response: "{}".into(),
                last_error: None,
                now: now + Duration::seconds(n),
                reply: Some(new_reply(&id, ReplyKind::QueuedAck, now)),
            })
            .await
            .unwrap();
        assert!(finished.is_some());
    }
    let replies = s.replies_for_inbound(&id).await.unwrap();
    assert_eq!(replies.len(), 1, "{replies:?}");
    let ack = &replies[0];
    assert_eq!((ack.state, ack.attempts), (ReplyState::Pending, 0));
    assert_eq!(
        (
            ack.gateway.as_str(),
            ack.platform.as_str(),
            ack.chat_id.as_str(),
            ack.reply_to_message_id.as_str(),
            ack.thread_id.as_deref()
        ),
        ("openclaw", "telegram", "-100", "501", Some("7"))
    );
    assert_eq!(ack.next_attempt_at, Some(now), "due at once");
    assert_eq!(s.get_reply(&ack.id).await.unwrap().as_ref(), Some(ack));
    assert_eq!(s.get_reply("missing").await.unwrap(), None);

    // A finish of a missing inbound row writes no reply.
    let none = s
        .finish_inbound(InboundFinish {
            id: "missing".into(),
            state: InboundState::Processed,
            response: "{}".into(),
            last_error: None,
            now,
            reply: Some(new_reply("missing", ReplyKind::QueuedAck, now)),
        })
        .await
        .unwrap();
    assert_eq!(none, None);
    assert!(s.replies_for_inbound("missing").await.unwrap().is_empty());
    assert_eq!(
        s.enqueue_reply(new_reply("missing", ReplyKind::FinalResult, now))
            .await
            .unwrap(),
        None
    );

    let (result, created) = s
        .enqueue_reply(new_reply(&id, ReplyKind::FinalResult, now))
        .await
        .unwrap()
        .unwrap();
    assert!(created);
    let mut again = new_reply(&id, ReplyKind::FinalResult, now);
    again.content = "other".into();
    let (same, created) = s.enqueue_reply(again).await.unwrap().unwrap();
    assert!(!created);
    assert_eq!(same, result, "the first content wins");
    assert_eq!(s.replies_for_inbound(&id).await.unwrap().len(), 2);
}

/// One turn records every outcome, gives back rows never started and
/// leases due rows; a FAILED row is due at its time; a late outcome from
/// another owner is ignored.
pub async fn a_reply_turn_settles_every_outcome_and_leases_due_rows(b: &Backend) {
    let s = b.store.clone();
    let now = super::support::now_ms();
    let mut ids_ = Vec::new();
    for pmid in ["601", "602", "603", "604"] {
        let id = inbound(s.as_ref(), pmid, now).await;
        let (r, _) = s
            .enqueue_reply(new_reply(&id, ReplyKind::QueuedAck, now))
            .await
            .unwrap()
            .unwrap();
        ids_.push(r.id);
    }
    let claimed = s
        .settle_and_claim_replies(turn(OWNER, now, 10))
        .await
        .unwrap();
    let mut got: Vec<String> = claimed.iter().map(|r| r.id.clone()).collect();
    got.sort();
    let mut want = ids_.clone();
    want.sort();
    assert_eq!(got, want);
    for r in &claimed {
        assert_eq!((r.state, r.attempts), (ReplyState::Sending, 1));
        assert_eq!(r.lease_owner.as_deref(), Some(OWNER));
        // The lease's length is the caller's; its end is on the database's
        // clock (PostgreSQL's may differ from this process's by the round
        // trip).
        let end = r.lease_expires_at.unwrap();
        let drift = (end - (now + Duration::seconds(120)))
            .num_milliseconds()
            .abs();
        assert!(drift < 5_000, "{end} vs {now}");
    }
    assert!(
        s.settle_and_claim_replies(turn(OWNER, now, 10))
            .await
            .unwrap()
            .is_empty(),
        "nothing else is due"
    );

    // A late outcome under another owner changes nothing.
    let mut stranger = turn("node-b:boot-1", now, 0);
    stranger.settles.push(ReplySettle {
        id: ids_[0].clone(),
        state: ReplyState::Delivered,
        next_attempt_at: None,
        last_error: None,
        platform_message_id: Some("x".into()),
    });
    s.settle_and_claim_replies(stranger).await.unwrap();
    assert_eq!(
        s.get_reply(&ids_[0]).await.unwrap().unwrap().state,
        ReplyState::Sending
    );

    let t1 = now + Duration::seconds(1);
    let settle = |i: usize, state, next, pmid: Option<&str>| ReplySettle {
        id: ids_[i].clone(),
        state,
        next_attempt_at: next,
        last_error: (state != ReplyState::Delivered).then(|| "why".to_string()),
        platform_message_id: pmid.map(str::to_string),
    };
    let mut t = turn(OWNER, t1, 10);
    t.settles = vec![
        settle(0, ReplyState::Delivered, None, Some("9001")),
        settle(1, ReplyState::Failed, Some(t1 + Duration::seconds(2)), None),
        settle(2, ReplyState::SentUnverified, None, Some("9003")),
    ];
    t.released = vec![ids_[3].clone()];
    let leased = s.settle_and_claim_replies(t).await.unwrap();
    assert_eq!(
        leased.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [ids_[3].as_str()],
        "the released row is due at once, the failed one later"
    );
    assert_eq!(leased[0].attempts, 1, "the released claim's attempt undone");
    let get = |i: usize| {
        let s = s.clone();
        let id = ids_[i].clone();
        async move { s.get_reply(&id).await.unwrap().unwrap() }
    };
    let delivered = get(0).await;
    assert_eq!(delivered.state, ReplyState::Delivered);
    assert_eq!(delivered.platform_message_id.as_deref(), Some("9001"));
    assert_eq!(delivered.delivered_at, Some(t1));
    assert_eq!(delivered.lease_owner, None);
    let failed = get(1).await;
    assert_eq!(failed.state, ReplyState::Failed);
    assert_eq!(failed.last_error.as_deref(), Some("why"));
    assert_eq!(get(2).await.state, ReplyState::SentUnverified);

    let t3 = t1 + Duration::seconds(3);
    let retried = s
        .settle_and_claim_replies(turn(OWNER, t3, 10))
        .await
        .unwrap();
    assert_eq!(
        retried
            .iter()
            .map(|r| (r.id.as_str(), r.attempts))
            .collect::<Vec<_>>(),
        [(ids_[1].as_str(), 2)],
        "the failed row when due; the unverified one never"
    );
}

/// The engine's recovery of `node`'s boots other than `owner` (the generic
/// port): how many rows it changed.
async fn recover_boots(
    s: &dyn harness_core::store::Store,
    node: &str,
    owner: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> harness_core::store::StoreResult<u64> {
    let lapsed = harness_core::store::Lapsed::Node {
        node,
        current_owner: owner,
    };
    let rows = s
        .recover_work(&harness_core::store::GATEWAY_REPLIES, lapsed, now)
        .await?;
    Ok(u64::try_from(rows.len()).unwrap_or(u64::MAX))
}

/// A SENDING reply of an earlier boot of this node, or one whose lease
/// ended, may have been sent: SENT_UNVERIFIED, never leased again.
pub async fn interrupted_replies_become_unverified_never_resent(b: &Backend) {
    let s = b.store.clone();
    let now = super::support::now_ms();
    let first = inbound(s.as_ref(), "701", now).await;
    let second = inbound(s.as_ref(), "702", now).await;
    s.enqueue_reply(new_reply(&first, ReplyKind::QueuedAck, now))
        .await
        .unwrap();
    let claimed = s
        .settle_and_claim_replies(turn(OWNER, now, 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        recover_boots(s.as_ref(), "node-a", OWNER, now)
            .await
            .unwrap(),
        0,
        "the current boot's rows are its own"
    );
    assert_eq!(
        recover_boots(s.as_ref(), "node-a", "node-a:boot-2", now)
            .await
            .unwrap(),
        1
    );
    let row = s.get_reply(&claimed[0].id).await.unwrap().unwrap();
    assert_eq!(row.state, ReplyState::SentUnverified);
    assert_eq!(row.lease_owner, None);

    s.enqueue_reply(new_reply(&second, ReplyKind::QueuedAck, now))
        .await
        .unwrap();
    let now = super::support::now_ms();
    let mut short = turn("node-b:boot-1", now, 1);
    short.lease_until = now + super::support::LEASE;
    let leased = s.settle_and_claim_replies(short).await.unwrap();
    assert_eq!(leased.len(), 1);
    // Another worker's turn after the lease ended (by the database's clock).
    let later = super::support::past_lease().await;
    assert!(
        s.settle_and_claim_replies(turn(OWNER, later, 10))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.get_reply(&leased[0].id).await.unwrap().unwrap().state,
        ReplyState::SentUnverified
    );
    assert_eq!(
        recover_boots(s.as_ref(), "node-c", "node-c:b", later)
            .await
            .unwrap(),
        0
    );
}

/// A person's decision (docs/decisions.md D7): a row in one of the given states moves (to
/// PENDING, due now, or DELIVERED); a row in another state, or an unknown
/// id, is left alone and answers `None`.
pub async fn a_persons_decision_moves_only_a_row_in_the_given_states(b: &Backend) {
    let s = b.store.clone();
    let now = super::support::now_ms();
    let first = inbound(s.as_ref(), "801", now).await;
    s.enqueue_reply(new_reply(&first, ReplyKind::QueuedAck, now))
        .await
        .unwrap();
    let claimed = s
        .settle_and_claim_replies(turn(OWNER, now, 1))
        .await
        .unwrap();
    let id = claimed[0].id.clone();
    recover_boots(s.as_ref(), "node-a", "node-a:boot-2", now)
        .await
        .unwrap();
    let unverified = [ReplyState::SentUnverified];
    let failed = [ReplyState::Failed, ReplyState::Dead];
    let later = now + Duration::seconds(3);
    assert!(
        s.decide_reply(&id, &failed, ReplyState::Pending, later)
            .await
            .unwrap()
            .is_none(),
        "SENT_UNVERIFIED is not FAILED / DEAD"
    );
    assert!(
        s.decide_reply("nope", &unverified, ReplyState::Pending, later)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        s.decide_reply(&id, &[], ReplyState::Pending, later)
            .await
            .unwrap()
            .is_none()
    );
    let retried = s
        .decide_reply(&id, &unverified, ReplyState::Pending, later)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(retried.state, ReplyState::Pending);
    assert_eq!(retried.next_attempt_at, Some(later));
    assert_eq!(retried.lease_owner, None);
    // Due now: the next turn leases it again.
    let again = s
        .settle_and_claim_replies(turn(OWNER, later, 10))
        .await
        .unwrap();
    assert!(again.iter().any(|r| r.id == id));
    recover_boots(s.as_ref(), "node-a", "node-a:boot-3", later)
        .await
        .unwrap();
    let marked = s
        .decide_reply(&id, &unverified, ReplyState::Delivered, later)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(marked.state, ReplyState::Delivered);
    assert_eq!(marked.delivered_at, Some(later));
    assert_eq!(marked.next_attempt_at, None);
    assert!(
        s.decide_reply(&id, &unverified, ReplyState::Pending, later)
            .await
            .unwrap()
            .is_none(),
        "DELIVERED stays"
    );
}
