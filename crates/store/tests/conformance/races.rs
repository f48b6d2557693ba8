//! Several stores (each its own connections, as several processes would
//! be) racing on one database on a multi-threaded runtime, for the
//! read-then-write paths a single SQLite writer makes safe by itself and
//! another backend must make safe with locks or constraints: outbox and
//! inbox claims, the settings compare-and-set, one Workbench per project.
//! (Delivery claims, one idempotency key, one open ask, one live execution
//! and conditional answers race in their own areas' files.)

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
};

use chrono::{Duration, Utc};
use harness_core::{
    ids,
    inbox::{EventKind, NewEvent, Priority},
    store::{Dedup, NewOutbound, NewProject, NewTask, Store},
};
use serde_json::json;

use super::{Backend, support::*};

/// `n` stores on the backend's database, the backend's own first.
async fn stores(b: &Backend, n: usize) -> Vec<Arc<dyn Store>> {
    let mut all = vec![b.store.clone()];
    while all.len() < n {
        all.push(b.another().await);
    }
    all
}

fn outbound(task_id: &str, i: usize) -> NewOutbound {
    NewOutbound {
        id: ids::new_id(),
        message_id: Some(ids::new_id()),
        task_id: Some(task_id.into()),
        dedup: Dedup::Explicit(format!("harness:{task_id}:race-{i}")),
        gateway: "hermes".into(),
        downstream: None,
        dest: None,
        requested_to: None,
        profile: None,
        scope: "work".into(),
        expect_reply: false,
        message: format!("message {i}"),
        presentation: None,
        now: now(),
        choices: None,
    }
}

pub async fn concurrent_outbox_claimers_lease_each_row_once(b: &Backend) {
    let all = stores(b, 4).await;
    let t = new_task(all[0].as_ref(), "outbox race").await;
    let mut queued = HashSet::new();
    for i in 0..40 {
        let e = all[0].enqueue_outbound(outbound(&t, i)).await.unwrap();
        assert!(!e.deduped);
        queued.insert(e.row.id);
    }
    let mut claimers = Vec::new();
    for c in 0..8 {
        let store = all[c % all.len()].clone();
        claimers.push(tokio::spawn(async move {
            let owner = format!("node-{c}:boot");
            let mut mine = Vec::new();
            loop {
                let at = Utc::now();
                let rows = store
                    .claim_outbound(&owner, at, at + Duration::seconds(120), 3)
                    .await
                    .unwrap();
                if rows.is_empty() {
                    return (owner, mine);
                }
                mine.extend(rows.into_iter().map(|r| r.id));
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut seen = Vec::new();
    let mut owners = HashMap::new();
    for c in claimers {
        let (owner, mine) = c.await.unwrap();
        for id in &mine {
            owners.insert(id.clone(), owner.clone());
        }
        seen.extend(mine);
    }
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(seen.len(), unique.len(), "a row was leased twice");
    assert_eq!(unique, queued, "every due row was claimed");
    // Read back: each row is SENDING under the lease its claimer got.
    let rows = all[1]
        .outbound_for_messages(
            &all[0]
                .list_outbound(Some(&t), 100)
                .await
                .unwrap()
                .into_iter()
                .filter_map(|r| r.message_id)
                .collect::<Vec<_>>(),
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 40);
    for row in rows {
        assert_eq!(row.attempts, 1, "claimed once");
        assert_eq!(row.lease_owner.as_ref(), owners.get(&row.id));
    }
}

fn event(parent: &str, child: &str, i: usize) -> NewEvent {
    NewEvent {
        id: ids::new_id(),
        parent_task_id: parent.into(),
        source_task_id: child.into(),
        execution_id: None,
        // Not a review: no claim consumes it as stale, every one is claimed.
        kind: EventKind::ChildExecutionFailed,
        priority: if i.is_multiple_of(3) {
            Priority::High
        } else {
            Priority::Normal
        },
        dedup_key: format!("race:{child}:{i}"),
        execution_review_key: None,
        fallback: false,
        payload: json!({"childTaskId": child, "i": i}),
        now: now(),
    }
}

async fn child_of(s: &dyn Store, parent: &str) -> String {
    let id = ids::new_id();
    s.create_task(NewTask {
        id: id.clone(),
        title: "child".into(),
        description: None,
        project_id: None,
        parent_task_id: Some(parent.into()),
        agent: command_agent(),
        now: now(),
    })
    .await
    .unwrap();
    id
}

pub async fn concurrent_inbox_claimers_take_each_event_once(b: &Backend) {
    let all = stores(b, 4).await;
    let s = all[0].as_ref();
    let parent = new_task(s, "parent").await;
    let mut added = HashSet::new();
    for _ in 0..4 {
        let child = child_of(s, &parent).await;
        for i in 0..8 {
            let (e, fresh) = s
                .add_workbench_event(event(&parent, &child, i))
                .await
                .unwrap();
            assert!(fresh);
            added.insert(e.id);
        }
    }
    assert_eq!(s.child_task_ids(&parent).await.unwrap().len(), 4);
    let mut claimers = Vec::new();
    for c in 0..8 {
        let store = all[c % all.len()].clone();
        let parent = parent.clone();
        claimers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let at = Utc::now();
                let token = ids::new_id();
                let got = store
                    .claim_workbench_events(
                        &parent,
                        &format!("node-{c}:boot"),
                        &token,
                        3,
                        at,
                        at + Duration::seconds(60),
                    )
                    .await
                    .unwrap();
                if got.is_empty() {
                    return mine;
                }
                mine.extend(got.into_iter().map(|e| e.id));
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut seen = Vec::new();
    for c in claimers {
        seen.extend(c.await.unwrap());
    }
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(seen.len(), unique.len(), "an event was claimed twice");
    assert_eq!(unique, added, "every PENDING event was claimed");
    // Read back: every event is PROCESSING (leased), none left PENDING.
    let events = s.list_workbench_events(&parent, 100).await.unwrap();
    assert_eq!(events.len(), added.len());
    assert!(
        events
            .iter()
            .all(|e| e.state == harness_core::inbox::EventState::Processing),
        "{events:?}"
    );
    assert!(s.workbench_parents_pending(100).await.unwrap().is_empty());
}

pub async fn racing_compare_and_set_has_one_winner_per_value(b: &Backend) {
    let all = stores(b, 4).await;
    let key = format!("race.{}", ids::new_id());
    // 40 writers each read nothing and try to be the first value.
    let mut jobs = Vec::new();
    for i in 0..40 {
        let store = all[i % all.len()].clone();
        let key = key.clone();
        jobs.push(tokio::spawn(async move {
            let won = store
                .replace_setting(&key, None, &json!({ "writer": i }), now())
                .await
                .unwrap();
            (i, won)
        }));
    }
    let mut winners = Vec::new();
    for j in jobs {
        let (i, won) = j.await.unwrap();
        if won {
            winners.push(i);
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "one writer saw the key absent: {winners:?}"
    );
    let stored = all[2].get_setting(&key).await.unwrap();
    assert_eq!(stored, Some(json!({ "writer": winners[0] })));
    // A counter incremented by compare-and-set from every store: no lost update.
    let counter = format!("counter.{}", ids::new_id());
    all[0]
        .put_setting(&counter, &json!(0), now())
        .await
        .unwrap();
    let mut jobs = Vec::new();
    for i in 0..8 {
        let store = all[i % all.len()].clone();
        let counter = counter.clone();
        jobs.push(tokio::spawn(async move {
            for _ in 0..5 {
                loop {
                    let current = store.get_setting(&counter).await.unwrap().unwrap();
                    let next = json!(current.as_i64().unwrap() + 1);
                    if store
                        .replace_setting(&counter, Some(&current), &next, now())
                        .await
                        .unwrap()
                    {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for j in jobs {
        j.await.unwrap();
    }
    assert_eq!(all[3].get_setting(&counter).await.unwrap(), Some(json!(40)));
}

pub async fn one_workbench_per_project_when_raced(b: &Backend) {
    let all = stores(b, 4).await;
    let s = all[0].as_ref();
    let ws = s
        .ensure_workspace(&ids::new_id(), &format!("ws-{}", ids::new_id()), now())
        .await
        .unwrap();
    let project = s
        .create_project(NewProject {
            id: ids::new_id(),
            workspace_id: ws,
            workspace_name: "ws".into(),
            name: format!("p-{}", ids::new_id()),
            path: "/tmp/p".into(),
            now: now(),
        })
        .await
        .unwrap();
    assert!(s.project_workbench(&project.id).await.unwrap().is_none());
    let mut jobs = Vec::new();
    for i in 0..20 {
        let store = all[i % all.len()].clone();
        let project_id = project.id.clone();
        jobs.push(tokio::spawn(async move {
            store
                .create_project_workbench(NewTask {
                    id: ids::new_id(),
                    title: "Workbench".into(),
                    description: None,
                    project_id: Some(project_id),
                    parent_task_id: None,
                    agent: command_agent(),
                    now: now(),
                })
                .await
                .unwrap()
        }));
    }
    let mut ids_seen = HashSet::new();
    let mut created = 0;
    for j in jobs {
        let (id, fresh) = j.await.unwrap();
        ids_seen.insert(id);
        created += usize::from(fresh);
    }
    assert_eq!(
        (ids_seen.len(), created),
        (1, 1),
        "one Workbench, made once"
    );
    let bench = ids_seen.into_iter().next().unwrap();
    assert_eq!(
        all[1].project_workbench(&project.id).await.unwrap(),
        Some(bench.clone())
    );
    assert!(all[2].is_workbench(&bench).await.unwrap());
    let other = new_task(s, "not a workbench").await;
    assert!(!all[3].is_workbench(&other).await.unwrap());
}

/// Sent asks of one task settled by several senders at once, with asks of
/// the same task recorded beside them, round after round: every turn and
/// every ask succeeds, each row is DELIVERED, and the task is left with one
/// OPEN ask. On PostgreSQL turns and asks hold the store's lock shared, so
/// this holds only because each locks its task before it changes the
/// task's asks (without that, two activations both open an ask and the
/// second breaks the one-OPEN-ask index).
pub async fn racing_turns_and_asks_of_one_task_leave_one_open_ask(b: &Backend) {
    use harness_core::{
        outbox::OutboundState,
        store::{Settle, SettleBatch},
    };
    let all = stores(b, 4).await;
    for round in 0..8 {
        let t = new_task(all[0].as_ref(), "turn race").await;
        new_execution(all[0].as_ref(), &t).await.unwrap();
        for i in 0..4 {
            let mut row = outbound(&t, round * 10 + i);
            row.expect_reply = true;
            assert!(!all[0].enqueue_outbound(row).await.unwrap().deduped);
        }
        let mut leased = Vec::new();
        for (c, store) in all.iter().enumerate() {
            let owner = format!("node-{c}:boot-{round}");
            let at = Utc::now();
            let rows = store
                .claim_outbound(&owner, at, at + Duration::seconds(120), 1)
                .await
                .unwrap();
            assert_eq!(rows.len(), 1, "one row per sender");
            leased.push((owner, rows[0].id.clone()));
        }
        let mut racers = tokio::task::JoinSet::new();
        for (c, (owner, id)) in leased.into_iter().enumerate() {
            let store = all[c].clone();
            racers.spawn(async move {
                let at = Utc::now();
                let done = store
                    .settle_and_claim_outbound(SettleBatch {
                        owner,
                        expired_before: None,
                        settles: vec![(
                            id.clone(),
                            Settle::Sent {
                                state: OutboundState::Delivered,
                                platform: None,
                                chat_id: Some("oc_race".into()),
                                platform_message_id: Some(format!("pm-{id}")),
                                note: None,
                            },
                        )],
                        now: at,
                        lease_until: at + Duration::seconds(120),
                        limit: 0,
                        released: Vec::new(),
                    })
                    .await
                    .map_err(|e| format!("turn of {id}: {e:?}"))?;
                match done.settled.as_slice() {
                    [s] if s.row.state == OutboundState::Delivered => Ok(()),
                    other => Err(format!("turn of {id} settled {other:?}")),
                }
            });
        }
        for store in all.iter().take(2) {
            let (store, t) = (store.clone(), t.clone());
            racers.spawn(async move {
                store
                    .record_ask(ask(&t, "beside the turns?", now()))
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("ask: {e:?}"))
            });
        }
        while let Some(done) = racers.join_next().await {
            if let Err(why) = done.unwrap() {
                panic!("round {round}: {why}");
            }
        }
        assert!(
            all[3].open_ask(&t).await.unwrap().is_some(),
            "round {round}: the task is left with an OPEN ask"
        );
    }
}
