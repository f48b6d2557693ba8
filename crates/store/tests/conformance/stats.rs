//! `StatsStore`: counts by state (outbox included) and the answer-time
//! histogram counted by the store. Times are passed in: an ask asked an
//! hour ago is recorded with `now` an hour ago.

use chrono::{DateTime, Duration, Utc};
use harness_core::{
    ids,
    model::MessageState,
    store::{Dedup, NewOutbound, Settle, Store},
};

use super::{Backend, support::*};

/// One answered ask whose question was asked `age` ago and answered after
/// `wait_ms`, through the port with those times. Returns its id.
async fn answered(s: &dyn Store, age: Duration, wait_ms: i64) -> String {
    let t = new_task(s, "t").await;
    new_execution(s, &t).await.unwrap();
    let asked_at = now_ms() - age;
    let recorded = s.record_ask(ask(&t, "?", asked_at)).await.unwrap();
    let answered = s
        .answer_open_ask(
            &t,
            "ok",
            &ids::new_id(),
            None,
            asked_at + Duration::milliseconds(wait_ms),
            false,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answered.message.id, recorded.message.id);
    assert_eq!(answered.message.state, MessageState::Answered);
    recorded.message.id
}

pub async fn answer_histogram_counts_waits_into_buckets(b: &Backend) {
    let s = b.store.as_ref();
    let hour = Duration::hours(1);
    answered(s, hour, 500).await; // ≤ 1 s
    answered(s, hour, 1_000).await; // ≤ 1 s (bounds are inclusive)
    answered(s, hour, 3_000).await; // (2, 4]
    answered(s, hour, 100_000).await; // above the last bound
    answered(s, Duration::days(10), 500).await; // before `since`: not counted
    // An open ask is not counted either.
    let open_task = new_task(s, "open").await;
    s.record_ask(ask(&open_task, "still open?", now()))
        .await
        .unwrap();

    let bounds = [1.0, 2.0, 4.0, 8.0];
    let hist = s
        .answer_histogram(Utc::now() - Duration::days(7), &bounds)
        .await
        .unwrap();
    assert_eq!(hist.counts, vec![2, 0, 1, 0, 1]);
    assert_eq!(hist.total(), 4);
    assert!(
        (hist.sum_seconds - 104.5).abs() < 1e-9,
        "{}",
        hist.sum_seconds
    );

    let empty = s
        .answer_histogram(Utc::now() + Duration::days(1), &bounds)
        .await
        .unwrap();
    assert_eq!(empty.counts, vec![0; 5]);
    assert_eq!(empty.sum_seconds, 0.0);
}

pub async fn ask_timings_cover_recent_and_open_asks(b: &Backend) {
    let s = b.store.as_ref();
    let recent = answered(s, Duration::hours(1), 2_000).await;
    let old = answered(s, Duration::days(10), 500).await;
    let open_task = new_task(s, "open").await;
    let open = s
        .record_ask(ask(&open_task, "open?", now_ms() - Duration::days(20)))
        .await
        .unwrap()
        .message
        .id;
    let timings = s
        .ask_timings(Utc::now() - Duration::days(7), 100)
        .await
        .unwrap();
    assert_eq!(
        timings.len(),
        2,
        "the recent ask and the open one: {timings:?}"
    );
    let answered_one = timings.iter().find(|t| t.state == "ANSWERED").unwrap();
    let replied = answered_one.replied_at.unwrap();
    assert_eq!(
        (replied - answered_one.created_at).num_milliseconds(),
        2_000
    );
    assert_eq!(answered_one.project, None, "a task outside any project");
    let still_open = timings.iter().find(|t| t.state == "OPEN").unwrap();
    assert!(still_open.replied_at.is_none());
    // Newest first.
    assert!(timings[0].created_at >= timings[1].created_at);
    let _ = (recent, old, open);
}

fn outbound(task_id: &str, key: &str, at: DateTime<Utc>) -> NewOutbound {
    NewOutbound {
        id: ids::new_id(),
        message_id: Some(ids::new_id()),
        task_id: Some(task_id.into()),
        dedup: Dedup::Explicit(format!("harness:{task_id}:{key}")),
        gateway: "hermes".into(),
        downstream: None,
        dest: None,
        requested_to: None,
        profile: None,
        scope: "work".into(),
        expect_reply: false,
        message: "hi".into(),
        presentation: None,
        now: at,
        choices: None,
    }
}

pub async fn counts_include_outbox_rows_by_state_with_attempts(b: &Backend) {
    let s = b.store.as_ref();
    assert!(s.counts().await.unwrap().outbound.is_empty());
    let t = new_task(s, "counts").await;
    let mut at = now_ms();
    let o2 = s
        .enqueue_outbound(outbound(&t, "o2", at))
        .await
        .unwrap()
        .row;
    at += Duration::milliseconds(1);
    let o3 = s
        .enqueue_outbound(outbound(&t, "o3", at))
        .await
        .unwrap()
        .row;
    // Two failed attempts of both, then a third of o2 alone (oldest first).
    for (round, limit) in [(1, 2), (2, 2), (3, 1)] {
        at += Duration::seconds(1);
        let claimed = s
            .claim_outbound("node-a:1", at, at + Duration::seconds(60), limit)
            .await
            .unwrap();
        assert_eq!(claimed.len(), limit as usize, "round {round}");
        for row in claimed {
            let settled = s
                .settle_outbound(
                    &row.id,
                    "node-a:1",
                    None,
                    Settle::Failed {
                        error: "exit 1".into(),
                        // o3's second failure is due tomorrow: the third
                        // round is o2's alone.
                        next: Some(if round == 2 && row.id == o3.id {
                            at + Duration::days(1)
                        } else {
                            at + Duration::milliseconds(1)
                        }),
                    },
                    at,
                )
                .await
                .unwrap()
                .unwrap();
            assert_eq!(settled.row.attempts, round);
        }
    }
    s.enqueue_outbound(outbound(&t, "o1", at)).await.unwrap();
    assert_eq!(s.get_outbound(&o2.id).await.unwrap().unwrap().attempts, 3);
    assert_eq!(s.get_outbound(&o3.id).await.unwrap().unwrap().attempts, 2);
    let counts = s.counts().await.unwrap();
    assert_eq!(
        counts.outbound,
        vec![("FAILED".to_string(), 2, 5), ("PENDING".to_string(), 1, 0)]
    );
    // The other families count what the case wrote.
    assert_eq!(
        counts.messages.iter().map(|(_, _, n)| n).sum::<i64>(),
        3,
        "one message per outbound row: {:?}",
        counts.messages
    );
}
