//! Reminders of OPEN asks: the reminder row and its outbound row
//! in one transaction, each number at most once — raced from several
//! connections too —, only while the ask waits, and a reminder not sent when
//! its ask stops waiting is dropped, never sent.

use std::sync::Arc;

use chrono::{Duration, Utc};
use harness_core::{
    Harness, ids,
    outbox::{OutboundState, PushInput, Receipt, SendOutcome},
    reminders,
    settings::NotifyTarget,
    store::{Dedup, NewOutbound, NewReminder, ReminderCandidate, Store, Urgency},
};

use super::{
    Backend,
    support::{core_task, harness_on},
};

pub(super) const OWNER: &str = "node-a:boot-1";

/// A task whose ask went out to the chat and waits: (store, core, task, ask).
pub(super) async fn sent_ask(b: &Backend) -> (Arc<dyn Store>, Harness, String, String) {
    let store = b.another().await;
    let h = harness_on(store.clone(), "node-a");
    h.settings()
        .set_notify_targets(vec![NotifyTarget {
            id: None,
            label: "phone".into(),
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
    let t = core_task(&h, "Fix CI", None).await;
    h.tasks().begin_execution(&t).await.unwrap();
    let out = h
        .outbox()
        .push_to_human(PushInput {
            task_id: Some(t.clone()),
            message: Some("Postgres or SQLite?".into()),
            scope: Some("unattended".into()),
            expect_reply: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let ask = out.message_id.unwrap();
    assert!(
        store
            .reminder_candidates(None, 10)
            .await
            .unwrap()
            .is_empty(),
        "an ask not sent yet has no reminder"
    );
    let now = Utc::now();
    let claimed = store
        .claim_outbound(OWNER, now, now + Duration::seconds(120), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let receipt = SendOutcome::Delivered(Receipt {
        message_id: Some("m1".into()),
        platform: None,
        chat_id: Some("-100".into()),
    });
    h.outbox()
        .finish_send(&claimed[0], OWNER, receipt)
        .await
        .unwrap();
    (store, h, t, ask)
}

pub(super) fn candidate_of(list: Vec<ReminderCandidate>, ask: &str) -> ReminderCandidate {
    list.into_iter()
        .find(|c| c.message_id == ask)
        .expect("the ask is a candidate")
}

pub(super) fn reminder(c: &ReminderCandidate, seq: u32) -> NewReminder {
    NewReminder {
        message_id: c.message_id.clone(),
        seq,
        waited_ms: 600_000,
        outbound: NewOutbound {
            id: ids::new_id(),
            message_id: None,
            task_id: Some(c.task_id.clone()),
            dedup: Dedup::Explicit(String::new()),
            gateway: c.first.gateway.clone(),
            downstream: c.first.downstream.clone(),
            dest: c.first.dest.clone(),
            requested_to: None,
            profile: None,
            scope: c.first.scope.clone(),
            expect_reply: true,
            message: reminders::reminder_text(seq, 600_000, &c.first.message),
            presentation: None,
            now: Utc::now(),
            choices: None,
        },
    }
}

pub async fn a_reminder_is_written_once_and_only_while_its_ask_waits(b: &Backend) {
    let (store, _h, t, ask) = sent_ask(b).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    assert_eq!(
        (c.task_id.as_str(), c.sent, c.urgency),
        (t.as_str(), 0, Urgency::Normal)
    );
    assert_eq!(c.first.state, OutboundState::Delivered);
    assert!(c.first.message.contains("Postgres or SQLite?"));

    let row = store
        .record_reminder(reminder(&c, 1))
        .await
        .unwrap()
        .expect("written");
    assert_eq!(row.state, OutboundState::Pending);
    assert_eq!(
        (row.message_id.as_deref(), row.task_id.as_deref()),
        (None, Some(t.as_str()))
    );
    assert_eq!(row.dedup_key, format!("reminder:{ask}:1"));
    assert!(row.execution_id.is_some(), "the ask's execution");
    assert_eq!(row.execution_id, c.first.execution_id);
    assert_eq!(
        (row.gateway.as_str(), row.dest.as_deref()),
        ("openclaw", Some("-100"))
    );
    assert!(
        row.message
            .starts_with("Reminder 1: the agent has been waiting 10 min")
    );
    assert!(row.message.contains(&format!("[[tower:task={t}]]")));

    // The same number again, from this store or another one: nothing.
    assert!(
        store
            .record_reminder(reminder(&c, 1))
            .await
            .unwrap()
            .is_none()
    );
    let other = b.another().await;
    assert!(
        other
            .record_reminder(reminder(&c, 1))
            .await
            .unwrap()
            .is_none()
    );
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    assert_eq!(c.sent, 1);
    assert_eq!(
        c.first.id,
        candidate_of(other.reminder_candidates(None, 10).await.unwrap(), &ask)
            .first
            .id
    );
    assert_ne!(
        c.first.id, row.id,
        "the first row stays the first one, not the reminder"
    );
    let listed = store
        .reminders_for(std::slice::from_ref(&ask))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].seq,
            listed[0].outbound_id.as_str(),
            listed[0].waited_ms
        ),
        (1, row.id.as_str(), 600_000)
    );

    // Answered: no candidate, no reminder.
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .reminder_candidates(None, 10)
            .await
            .unwrap()
            .iter()
            .all(|c| c.message_id != ask)
    );
    assert!(
        store
            .record_reminder(reminder(&c, 2))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(store.reminders_for(&[ask]).await.unwrap().len(), 1);
}

pub async fn a_reminder_not_sent_when_its_ask_is_answered_is_dropped(b: &Backend) {
    let (store, _h, t, ask) = sent_ask(b).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    let row = store
        .record_reminder(reminder(&c, 1))
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .drop_stale_reminders(Utc::now())
            .await
            .unwrap()
            .is_empty(),
        "its ask still waits"
    );
    store
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    let dropped = store.drop_stale_reminders(Utc::now()).await.unwrap();
    assert_eq!(dropped.len(), 1);
    assert_eq!(
        (dropped[0].id.as_str(), dropped[0].state),
        (row.id.as_str(), OutboundState::Dead)
    );
    assert!(
        dropped[0]
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("no longer waiting"))
    );
    let now = Utc::now() + Duration::hours(1);
    assert!(
        store
            .claim_outbound(OWNER, now, now + Duration::seconds(60), 10)
            .await
            .unwrap()
            .is_empty(),
        "never sent"
    );
    assert!(store.drop_stale_reminders(now).await.unwrap().is_empty());
}

pub async fn racing_writers_write_one_reminder_of_a_number(b: &Backend) {
    let (store, _h, _t, ask) = sent_ask(b).await;
    let c = candidate_of(store.reminder_candidates(None, 10).await.unwrap(), &ask);
    let mut stores = vec![store];
    for _ in 0..3 {
        stores.push(b.another().await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(stores.len() * 2));
    let mut racers = Vec::new();
    for s in &stores {
        for _ in 0..2 {
            let (s, barrier, r) = (s.clone(), barrier.clone(), reminder(&c, 1));
            racers.push(tokio::spawn(async move {
                barrier.wait().await;
                s.record_reminder(r).await.unwrap().is_some()
            }));
        }
    }
    let mut won = 0;
    for r in racers {
        won += usize::from(r.await.unwrap());
    }
    assert_eq!(won, 1, "one reminder 1, whoever wrote it");
    assert_eq!(stores[0].reminders_for(&[ask]).await.unwrap().len(), 1);
}

/// An ask of a new task, pushed (not sent yet): its message id.
async fn push_ask(h: &Harness, title: &str, urgency: &str) -> String {
    let t = core_task(h, title, None).await;
    h.tasks().begin_execution(&t).await.unwrap();
    h.outbox()
        .push_to_human(PushInput {
            task_id: Some(t),
            message: Some(format!("{title}?")),
            scope: Some("unattended".into()),
            expect_reply: Some(true),
            choices: harness_core::options::ChoicesInput {
                urgency: Some(serde_json::json!(urgency)),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap()
        .message_id
        .unwrap()
}

pub async fn a_pass_reaches_every_waiting_ask_however_many_older_ones_wait(b: &Backend) {
    let (store, h, t, first) = sent_ask(b).await;
    // 250 older asks with nothing left to do (low: no reminder), more than
    // a page, then a new normal one.
    let mut old = Vec::new();
    for i in 0..250 {
        old.push(push_ask(&h, &format!("Old {i}"), "low").await);
    }
    let new = push_ask(&h, "New", "normal").await;
    let now = Utc::now();
    let mut n = 0;
    loop {
        let claimed = store
            .claim_outbound(OWNER, now, now + Duration::seconds(600), 100)
            .await
            .unwrap();
        if claimed.is_empty() {
            break;
        }
        for row in &claimed {
            n += 1;
            let receipt = SendOutcome::Delivered(Receipt {
                message_id: Some(format!("m-{n}")),
                platform: None,
                chat_id: Some("-100".into()),
            });
            h.outbox().finish_send(row, OWNER, receipt).await.unwrap();
        }
    }
    assert_eq!(n, 251);
    // Paged by (asked at, id): every candidate once, oldest first.
    let mut seen = Vec::new();
    let mut after: Option<ReminderCandidate> = None;
    loop {
        let page = store
            .reminder_candidates(after.as_ref(), 100)
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        seen.extend(page.iter().map(|c| c.message_id.clone()));
        after = page.into_iter().last();
    }
    let mut all = old.clone();
    all.extend([first.clone(), new.clone()]);
    all.sort();
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(sorted, all, "each waiting ask once, over the pages");
    assert_eq!(seen.first(), Some(&first), "oldest first");

    // The first ask answered; the pass an hour later reminds the new one.
    h.store()
        .answer_open_ask(&t, "SQLite", &ids::new_id(), None, Utc::now(), false)
        .await
        .unwrap()
        .unwrap();
    let queued = h
        .asks()
        .send_due_reminders(Utc::now() + Duration::minutes(61))
        .await
        .unwrap();
    assert_eq!(queued, 1, "the new ask is reminded, not starved");
    let written = store
        .reminders_for(std::slice::from_ref(&new))
        .await
        .unwrap();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].seq, 1);
}
