//! Escalation and reachability (2 and 4): an ask is
//! escalated once (all its targets' rows in one transaction, only while it
//! waits); its answer — in the same transaction — writes one "answered"
//! notice per chat reached; a reminder leased before its ask was answered
//! is known closed right before its send; and the rows say when a chat
//! last wrote and how a target's sends fail.

use chrono::{Duration, Utc};
use harness_core::{
    escalation, ids,
    outbox::{OutboundState, Receipt, SendOutcome},
    store::{
        Dedup, EscalationReason, InboundIntent, NewEscalation, NewInbound, NewOutbound,
        ReminderCandidate,
    },
};

use super::{
    Backend,
    reminders::{OWNER, candidate_of, reminder, sent_ask},
};

pub(super) fn escalation_to(c: &ReminderCandidate, dests: &[&str]) -> NewEscalation {
    NewEscalation {
        message_id: c.message_id.clone(),
        reason: EscalationReason::Schedule,
        notice: escalation::answered_notice(&c.first.message),
        rows: dests
            .iter()
            .map(|d| {
                (
                    format!("boss {d}"),
                    NewOutbound {
                        id: ids::new_id(),
                        message_id: None,
                        task_id: Some(c.task_id.clone()),
                        dedup: Dedup::Explicit(String::new()),
                        gateway: "openclaw".into(),
                        downstream: Some("telegram".into()),
                        dest: Some((*d).to_string()),
                        requested_to: None,
                        profile: None,
                        scope: c.first.scope.clone(),
                        expect_reply: true,
                        message: escalation::escalation_text(
                            Some("phone"),
                            7_200_000,
                            &c.first.message,
                        ),
                        presentation: None,
                        now: Utc::now(),
                        choices: None,
                    },
                )
            })
            .collect(),
    }
}

fn delivered(id: &str, chat: &str) -> SendOutcome {
    SendOutcome::Delivered(Receipt {
        message_id: Some(format!("pm-{id}")),
        platform: None,
        chat_id: Some(chat.into()),
    })
}

pub async fn an_ask_is_escalated_once_and_its_answer_notifies_every_chat_reached(b: &Backend) {
    let (store, h, t, ask) = sent_ask(b).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    assert!(!c.escalated);
    let rows = store
        .record_escalation(escalation_to(&c, &["-200", "-300"]))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].dedup_key, format!("escalation:{ask}:1"));
    assert_eq!(rows[1].dedup_key, format!("escalation:{ask}:2"));
    assert_eq!(rows[0].execution_id, c.first.execution_id);
    assert!(rows[0].expect_reply && rows[0].message.starts_with("Escalated to you"));
    // Once, from this store or another one.
    assert!(
        store
            .record_escalation(escalation_to(&c, &["-400"]))
            .await
            .unwrap()
            .is_empty()
    );
    let other = b.another().await;
    assert!(
        other
            .record_escalation(escalation_to(&c, &["-200"]))
            .await
            .unwrap()
            .is_empty()
    );
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    assert!(c.escalated);
    let listed = store
        .escalations_for(std::slice::from_ref(&ask))
        .await
        .unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|e| (e.seq, e.target.as_str(), e.reason.as_str()))
            .collect::<Vec<_>>(),
        vec![(1, "boss -200", "schedule"), (2, "boss -300", "schedule")]
    );

    // The first escalation row reaches its chat; the second one's send fails.
    let now = Utc::now();
    let claimed = store
        .claim_outbound(OWNER, now, now + Duration::seconds(120), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    for row in &claimed {
        let outcome = if row.id == rows[0].id {
            delivered(&row.id, "-200")
        } else {
            SendOutcome::Failed("chat not found".into())
        };
        h.outbox()
            .finish_send(row, OWNER, outcome)
            .await
            .unwrap()
            .unwrap();
    }

    // Answered from anywhere: the notices are written with the answer.
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    let dropped = store.drop_stale_reminders(Utc::now()).await.unwrap();
    assert_eq!(
        dropped.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        vec![rows[1].id.as_str()],
        "the escalation not sent (FAILED, due again) is never sent"
    );
    let later = Utc::now() + Duration::seconds(5);
    let mut notices = store
        .claim_outbound(OWNER, later, later + Duration::seconds(60), 10)
        .await
        .unwrap();
    notices.sort_by(|a, b| a.dedup_key.cmp(&b.dedup_key));
    assert_eq!(
        notices
            .iter()
            .map(|n| (n.dedup_key.clone(), n.dest.clone().unwrap_or_default()))
            .collect::<Vec<_>>(),
        vec![
            (format!("answered:{ask}:0"), "-100".to_string()),
            (format!("answered:{ask}:1"), "-200".to_string()),
        ],
        "one notice per chat reached: the first one and the escalation that was sent"
    );
    for n in &notices {
        assert!(!n.expect_reply);
        assert_eq!(n.task_id.as_deref(), Some(t.as_str()));
        assert!(
            n.message.starts_with("Answered — no reply needed"),
            "{}",
            n.message
        );
    }
    // A second answer (none: the ask is not OPEN) writes nothing more.
    assert!(
        store
            .answer_open_ask(&t, "Postgres", &ids::new_id(), None, Utc::now(), false)
            .await
            .unwrap()
            .is_none()
    );
    let again = Utc::now() + Duration::seconds(10);
    assert!(
        store
            .claim_outbound("node-b:boot-1", again, again + Duration::seconds(60), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn an_ask_answered_without_escalation_writes_no_notice(b: &Backend) {
    let (store, _h, t, ask) = sent_ask(b).await;
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    let c = store.reminder_candidates(None, 10).await.unwrap();
    assert!(c.iter().all(|c| c.message_id != ask));
    let later = Utc::now() + Duration::seconds(5);
    assert!(
        store
            .claim_outbound(OWNER, later, later + Duration::seconds(60), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn a_leased_reminder_of_an_answered_ask_is_known_closed_and_skipped(b: &Backend) {
    let (store, h, t, ask) = sent_ask(b).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    let row = store
        .record_reminder(reminder(&c, 1))
        .await
        .unwrap()
        .unwrap();
    let now = Utc::now();
    let leased = store
        .claim_outbound(OWNER, now, now + Duration::seconds(120), 10)
        .await
        .unwrap();
    assert_eq!(leased.len(), 1);
    assert_eq!(leased[0].state, OutboundState::Sending);
    assert!(!store.question_closed(&row.id).await.unwrap());
    assert!(!store.question_closed(&c.first.id).await.unwrap());
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    assert!(store.question_closed(&row.id).await.unwrap());
    assert!(
        !store.question_closed(&c.first.id).await.unwrap(),
        "the ask's own row is no reminder"
    );
    // Leased, so the drop leaves it; the sender's check skips it: DEAD.
    assert!(
        store
            .drop_stale_reminders(Utc::now())
            .await
            .unwrap()
            .is_empty()
    );
    let why = h
        .asks()
        .skip_before_send(&leased[0])
        .await
        .expect("skipped");
    let done = h
        .outbox()
        .finish_send(&leased[0], OWNER, SendOutcome::Skipped(why))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.state, OutboundState::Dead);
    assert!(
        done.last_error
            .as_deref()
            .is_some_and(|e| e.contains("no longer waiting"))
    );
}

pub async fn chat_activity_is_the_last_inbound_and_the_newest_failure(b: &Backend) {
    let (store, h, t, ask) = sent_ask(b).await;
    let none = store
        .chat_activity("openclaw", "telegram", "-999", Some("-999"))
        .await
        .unwrap();
    assert_eq!((none.last_wrote, none.last_failure), (None, None));
    let at = Utc::now() - Duration::hours(30);
    for (i, when) in [at - Duration::hours(2), at].into_iter().enumerate() {
        store
            .create_inbound(NewInbound {
                id: ids::new_id(),
                dedup_key: format!("in-{i}-{}", ids::new_id()),
                gateway: "openclaw".into(),
                platform: "telegram".into(),
                chat_id: "-100".into(),
                sender_id: None,
                platform_message_id: format!("p{i}"),
                thread_id: None,
                root_message_id: None,
                reply_to_message_id: None,
                intent: InboundIntent::Direct,
                content: "hi".into(),
                now: when,
            })
            .await
            .unwrap();
    }
    let seen = store
        .chat_activity("openclaw", "telegram", "-100", Some("-100"))
        .await
        .unwrap();
    assert_eq!(
        seen.last_wrote.map(|t| t.timestamp_millis()),
        Some(at.timestamp_millis())
    );
    assert_eq!(seen.last_failure, None, "its only send was delivered");

    // A send to the target fails: it shows with its error until a delivery.
    let t2 = super::support::core_task(&h, "Other", None).await;
    h.tasks().begin_execution(&t2).await.unwrap();
    h.outbox()
        .push_to_human(harness_core::outbox::PushInput {
            task_id: Some(t2.clone()),
            message: Some("Status?".into()),
            scope: Some("unattended".into()),
            expect_reply: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    let now = Utc::now() + Duration::seconds(1);
    let claimed = store
        .claim_outbound(OWNER, now, now + Duration::seconds(120), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    h.outbox()
        .finish_send(
            &claimed[0],
            OWNER,
            SendOutcome::Failed("chat not found".into()),
        )
        .await
        .unwrap();
    let failing = store
        .chat_activity("openclaw", "telegram", "-100", Some("-100"))
        .await
        .unwrap();
    let f = failing.last_failure.expect("the failure shows");
    assert_eq!(
        (f.error.as_str(), f.attempts, f.dead),
        ("chat not found", 1, false)
    );

    // A reminder dropped later because its ask was answered first never
    // tried to send: it is no failure, the real one still shows.
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    let dropped = store
        .record_reminder(reminder(&c, 1))
        .await
        .unwrap()
        .unwrap();
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    let gone = store
        .drop_stale_reminders(Utc::now() + Duration::seconds(2))
        .await
        .unwrap();
    assert_eq!(
        gone.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        vec![dropped.id.as_str()]
    );
    let still = store
        .chat_activity("openclaw", "telegram", "-100", Some("-100"))
        .await
        .unwrap();
    assert_eq!(
        still.last_failure.map(|f| f.error),
        Some("chat not found".to_string()),
        "a deliberate drop is no failure"
    );

    // The answer above was not given in the chat: the chat did not write
    // (an answer from the chat: `an_answer_from_the_chat_is_recorded_with_it`).
    assert_eq!(
        still.last_wrote.map(|t| t.timestamp_millis()),
        Some(at.timestamp_millis()),
        "an answer on the web leaves the chat's window as it was"
    );
}

/// An answer written in the chat (through a gateway) is recorded as such in
/// the answer's own transaction: the chat wrote at the winning answer's
/// time, and an answer that finds nothing OPEN records nothing.
pub async fn an_answer_from_the_chat_is_recorded_with_it(b: &Backend) {
    let (store, _h, t, _ask) = sent_ask(b).await;
    let base = Utc::now() - Duration::hours(3);
    // Eight answers from the chat at once, each at its own time: one wins.
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(8));
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (store, t, barrier) = (store.clone(), t.clone(), barrier.clone());
            tokio::spawn(async move {
                let at = base + Duration::minutes(i);
                barrier.wait().await;
                let won = store
                    .answer_open_ask(&t, &format!("r{i}"), &ids::new_id(), None, at, true)
                    .await
                    .unwrap();
                won.map(|_| at)
            })
        })
        .collect();
    let mut won = Vec::new();
    for r in racers {
        won.extend(r.await.unwrap());
    }
    assert_eq!(won.len(), 1, "one answer wins");
    // The chat wrote when the winner answered — not when a loser tried
    // (a later time, had it been recorded, would be the newest).
    let activity = |chat: &'static str| {
        let store = store.clone();
        async move {
            store
                .chat_activity("openclaw", "telegram", chat, Some(chat))
                .await
                .unwrap()
                .last_wrote
                .map(|t| t.timestamp_millis())
        }
    };
    assert_eq!(activity("-100").await, Some(won[0].timestamp_millis()));
    assert_eq!(activity("-999").await, None, "another chat did not write");
    // Nothing OPEN any more: a further answer from the chat records nothing.
    let late = store
        .answer_open_ask(&t, "again", &ids::new_id(), None, Utc::now(), true)
        .await
        .unwrap();
    assert!(late.is_none());
    assert_eq!(activity("-100").await, Some(won[0].timestamp_millis()));

    // Another ask to the same chat, answered on the web (now, later than
    // the winner): no record, the chat's last word stays the winner's.
    let (store, _h, t, _ask) = sent_ask(b).await;
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    let web = store
        .chat_activity("openclaw", "telegram", "-100", Some("-100"))
        .await
        .unwrap();
    assert_eq!(
        web.last_wrote.map(|t| t.timestamp_millis()),
        Some(won[0].timestamp_millis()),
        "an answer on the web is not the chat's"
    );
}
