//! The node registry: heartbeats are upserts timed by the
//! database's clock; a node is alive until its heartbeat is older than the
//! store's dead-after ([`NODE_DEAD_AFTER`], set by the backends' factories);
//! a dead node's boot is recovered once; a new boot starts its row again.

use std::time::Duration;

use harness_core::ids;

use super::{Backend, support::*};

/// The dead-after the factories open their stores with.
pub const NODE_DEAD_AFTER: Duration = Duration::from_millis(1500);

pub async fn a_heartbeat_is_an_upsert_timed_by_the_database(b: &Backend) {
    let s = b.store.as_ref();
    let (id, boot) = (ids::new_id(), ids::new_id());
    assert!(s.get_node(&id).await.unwrap().is_none());
    let before = s.db_now().await.unwrap();
    s.node_heartbeat(&id, &boot, Some("http://10.0.0.2:7700"), None)
        .await
        .unwrap();
    let row = s.get_node(&id).await.unwrap().unwrap();
    assert_eq!(
        (
            row.boot.as_str(),
            row.url.as_deref(),
            row.alive,
            row.draining
        ),
        (boot.as_str(), Some("http://10.0.0.2:7700"), true, false)
    );
    assert_eq!(row.started_at, row.heartbeat_at);
    assert!(row.heartbeat_at >= before, "{row:?} vs {before}");
    // Later heartbeats of the same boot move heartbeat_at only.
    tokio::time::sleep(Duration::from_millis(20)).await;
    s.node_heartbeat(&id, &boot, None, None).await.unwrap();
    let again = s.get_node(&id).await.unwrap().unwrap();
    assert_eq!(again.started_at, row.started_at);
    assert!(again.heartbeat_at > row.heartbeat_at);
    assert_eq!(again.url, None, "the url is the latest heartbeat's");
    // Draining is kept across heartbeats and across a new boot (a drained
    // node restarted stays drained until undrained).
    assert!(s.set_node_draining(&id, true).await.unwrap());
    assert!(!s.set_node_draining(&ids::new_id(), true).await.unwrap());
    s.node_heartbeat(&id, &boot, None, None).await.unwrap();
    assert!(s.get_node(&id).await.unwrap().unwrap().draining);
    let reboot = ids::new_id();
    s.node_heartbeat(&id, &reboot, None, None).await.unwrap();
    let fresh = s.get_node(&id).await.unwrap().unwrap();
    assert_eq!(fresh.boot, reboot);
    assert!(fresh.draining, "a restart keeps the drain");
    assert!(fresh.started_at > row.started_at);
    assert!(s.set_node_draining(&id, false).await.unwrap());
    assert!(!s.get_node(&id).await.unwrap().unwrap().draining);
    // Another connection sees the same rows.
    let other = b.another().await;
    let listed = other.list_nodes().await.unwrap();
    assert!(listed.iter().any(|n| n.id == id && n.boot == reboot));
    // The database's clock is close to this machine's (one host).
    let drift = (other.db_now().await.unwrap() - now()).num_seconds().abs();
    assert!(drift < 5, "{drift}");
}

pub async fn a_silent_node_is_dead_and_its_boot_is_recovered_once(b: &Backend) {
    let s = b.store.as_ref();
    let (quiet, busy, boot) = (ids::new_id(), ids::new_id(), ids::new_id());
    s.node_heartbeat(&quiet, &boot, None, None).await.unwrap();
    s.node_heartbeat(&busy, &boot, None, None).await.unwrap();
    assert!(
        !s.nodes_to_recover()
            .await
            .unwrap()
            .iter()
            .any(|n| n.id == quiet)
    );
    assert!(
        !s.mark_node_recovered(&quiet, &boot).await.unwrap(),
        "alive"
    );
    // `busy` keeps heart-beating; `quiet` falls silent past the dead-after.
    let deadline = std::time::Instant::now() + NODE_DEAD_AFTER * 4;
    loop {
        s.node_heartbeat(&busy, &boot, None, None).await.unwrap();
        let row = s.get_node(&quiet).await.unwrap().unwrap();
        if !row.alive {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never judged dead");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(s.get_node(&busy).await.unwrap().unwrap().alive);
    let due = s.nodes_to_recover().await.unwrap();
    assert!(due.iter().any(|n| n.id == quiet && !n.alive));
    assert!(!due.iter().any(|n| n.id == busy));
    // Two survivors record the recovery at once: one wins.
    let other = b.another().await;
    let (x, y) = tokio::join!(
        s.mark_node_recovered(&quiet, &boot),
        other.mark_node_recovered(&quiet, &boot)
    );
    assert!(x.unwrap() ^ y.unwrap(), "exactly one survivor recovers it");
    assert!(
        !s.nodes_to_recover()
            .await
            .unwrap()
            .iter()
            .any(|n| n.id == quiet)
    );
    // The row stays (shown dead); a stale boot is never recorded.
    let row = s.get_node(&quiet).await.unwrap().unwrap();
    assert!(!row.alive);
    assert!(!s.mark_node_recovered(&quiet, "other-boot").await.unwrap());
    // It comes back with a new boot: alive, and its next death is recovered again.
    let reboot = ids::new_id();
    s.node_heartbeat(&quiet, &reboot, None, None).await.unwrap();
    assert!(s.get_node(&quiet).await.unwrap().unwrap().alive);
    assert!(!s.mark_node_recovered(&quiet, &reboot).await.unwrap());
}

/// A dead node's work, recovered by two survivors at once: its live
/// execution is interrupted (its OPEN ask stays answerable), its delivery
/// caught mid-write is UNVERIFIED and its queued one free for any node, its
/// started send SENT_UNVERIFIED and its never-started send due again — each
/// once; the recovery is recorded once, the row stays (dead).
pub async fn a_dead_nodes_work_is_recovered_once_by_racing_survivors(b: &Backend) {
    use harness_core::{
        deliveries::{DeliveryState, NewInput},
        model::ExecutionStatus,
        outbox::{OutboundState, PushInput},
        settings::NotifyTarget,
    };
    let (dead, owner) = ("node-x", "node-x:boot-1");
    let store = b.another().await;
    let a = harness_on(store.clone(), dead);
    store
        .node_heartbeat(dead, "boot-1", None, None)
        .await
        .unwrap();
    let t = a
        .tasks()
        .create_task(harness_core::tasks::CreateTask {
            title: Some("on the dead node".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id;
    a.tasks().begin_execution(&t).await.unwrap();
    a.asks().ask(&t, Some("Still there?")).await.unwrap();
    // Two deliveries for its terminal: one caught mid-write, one queued.
    let input = |key: &str| NewInput {
        id: ids::new_id(),
        task_id: t.clone(),
        node_id: Some(dead.into()),
        text: format!("text {key}"),
        submit: true,
        dedup_key: key.into(),
        resume: false,
        now: now(),
    };
    let (writing, _) = store.enqueue_input(input("w")).await.unwrap();
    let (queued, _) = store.enqueue_input(input("q")).await.unwrap();
    let at = now();
    let claimed = store
        .claim_deliveries(
            owner,
            dead,
            true,
            at,
            at + chrono::Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    assert_eq!(claimed.rows.len(), 2);
    store
        .advance_delivery(
            &writing.id,
            owner,
            DeliveryState::Writing,
            at + chrono::Duration::seconds(60),
            at,
        )
        .await
        .unwrap()
        .unwrap();
    store.release_delivery(&queued.id, owner).await.unwrap();
    // Two sends leased by it: one started, one leased ahead and never started.
    a.settings()
        .set_notify_targets(vec![NotifyTarget {
            id: None,
            label: "chat".into(),
            gateway: "openclaw".into(),
            downstream: Some("telegram".into()),
            dest: Some("-100".into()),
            profile: None,
            scope: "work".into(),
            active: true,
            include_screen: false,
            report_at: None,
            report_time_zone: None,
            report_since: None,
            language: None,
        }])
        .await
        .unwrap();
    for text in ["started", "never started"] {
        a.outbox()
            .push_to_human(PushInput {
                task_id: Some(t.clone()),
                message: Some(text.into()),
                scope: Some("work".into()),
                expect_reply: Some(false),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let at = now();
    let sends = store
        .claim_outbound(owner, at, at + chrono::Duration::seconds(120), 10)
        .await
        .unwrap();
    assert_eq!(sends.len(), 2);
    let started = sends.iter().find(|r| !r.message.contains("never")).unwrap();
    let unstarted = sends.iter().find(|r| r.message.contains("never")).unwrap();
    assert!(
        a.outbox()
            .mark_outbound_started(started, owner)
            .await
            .unwrap()
    );

    // Two survivors heart-beat; the node falls silent.
    let (y, z) = (b.another().await, b.another().await);
    let (hy, hz) = (
        harness_on(y.clone(), "node-y"),
        harness_on(z.clone(), "node-z"),
    );
    let deadline = std::time::Instant::now() + NODE_DEAD_AFTER * 4;
    loop {
        y.node_heartbeat("node-y", "b", None, None).await.unwrap();
        z.node_heartbeat("node-z", "b", None, None).await.unwrap();
        if !y.get_node(dead).await.unwrap().unwrap().alive {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never judged dead");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (cy, cz) = (hy.cluster(), hz.cluster());
    let (ry, rz) = tokio::join!(cy.recover_dead_nodes(), cz.recover_dead_nodes());
    let all: Vec<_> = ry.unwrap().into_iter().chain(rz.unwrap()).collect();
    assert!(all.iter().all(|r| r.node_id == dead), "{all:?}");
    assert_eq!(all.iter().filter(|r| r.recorded).count(), 1, "{all:?}");
    let interrupted: Vec<&String> = all.iter().flat_map(|r| &r.interrupted).collect();
    assert_eq!(interrupted, vec![&t], "interrupted once");
    let sum = |f: fn(&harness_core::nodes::NodeRecovery) -> u64| all.iter().map(f).sum::<u64>();
    assert_eq!(sum(|r| r.deliveries as u64), 1, "{all:?}");
    assert_eq!(sum(|r| r.unbound), 1, "{all:?}");
    assert_eq!(sum(|r| r.outbound_unverified as u64), 1, "{all:?}");
    assert_eq!(sum(|r| r.outbound_released as u64), 1, "{all:?}");

    // The rows.
    let view = y.get_task(&t).await.unwrap().unwrap();
    let execution = view.execution.unwrap();
    assert_eq!(execution.status, ExecutionStatus::Failed);
    assert!(
        hy.asks().pending(&t).await.unwrap().pending,
        "the ask stays OPEN"
    );
    let w = y.get_delivery(&writing.id).await.unwrap().unwrap();
    assert_eq!(w.state, DeliveryState::Unverified);
    let q = y.get_delivery(&queued.id).await.unwrap().unwrap();
    assert_eq!(
        (q.state, q.node_id, q.lease_owner),
        (DeliveryState::Queued, None, None)
    );
    let s = hy.outbox().outbound(&started.id).await.unwrap();
    assert_eq!(s.state, OutboundState::SentUnverified);
    let u = hy.outbox().outbound(&unstarted.id).await.unwrap();
    assert_eq!(
        (u.state, u.attempts, u.lease_owner),
        (OutboundState::Pending, 0, None)
    );
    // Recorded: the row stays, dead; nothing left to recover.
    let row = y.get_node(dead).await.unwrap().unwrap();
    assert!(!row.alive);
    assert!(hy.cluster().recover_dead_nodes().await.unwrap().is_empty());
    // Its release is idempotent: nothing of it is left.
    assert_eq!(
        z.release_dead_node(dead, "boot-1", now()).await.unwrap(),
        (Vec::new(), 0)
    );
    // The dead boot was fenced: if it only stalled, its next heartbeat is
    // refused (it must stop), and it stays dead.
    assert!(
        !store
            .node_heartbeat(dead, "boot-1", None, None)
            .await
            .unwrap()
    );
    assert!(!y.get_node(dead).await.unwrap().unwrap().alive);
    // It comes back with a new boot and continues.
    assert!(
        store
            .node_heartbeat(dead, "boot-2", None, None)
            .await
            .unwrap()
    );
    assert!(y.get_node(dead).await.unwrap().unwrap().alive);
}

/// A boot is fenced only while it is the node's and dead; a fenced boot's
/// heartbeat writes nothing; a run of the node's next boot is never
/// interrupted by a survivor still recovering the fenced one.
pub async fn a_fenced_boot_is_refused_and_a_new_boots_runs_are_kept(b: &Backend) {
    use harness_core::model::ExecutionStatus;
    let s = b.store.clone();
    let node = ids::new_id();
    assert!(s.node_heartbeat(&node, "boot-1", None, None).await.unwrap());
    // Alive: no fence.
    assert!(!s.fence_node(&node, "boot-1").await.unwrap());
    assert!(s.node_heartbeat(&node, "boot-1", None, None).await.unwrap());
    // Dead: fenced (twice is still true: several survivors may fence it).
    let deadline = std::time::Instant::now() + NODE_DEAD_AFTER * 4;
    while s.get_node(&node).await.unwrap().unwrap().alive {
        assert!(std::time::Instant::now() < deadline, "never judged dead");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!s.fence_node(&node, "another-boot").await.unwrap());
    assert!(s.fence_node(&node, "boot-1").await.unwrap());
    assert!(b.another().await.fence_node(&node, "boot-1").await.unwrap());
    // The fenced boot's heartbeat is refused, from any connection.
    assert!(!s.node_heartbeat(&node, "boot-1", None, None).await.unwrap());
    assert!(
        !b.another()
            .await
            .node_heartbeat(&node, "boot-1", None, None)
            .await
            .unwrap()
    );
    assert!(!s.get_node(&node).await.unwrap().unwrap().alive);
    // The node restarts (boot-2) and runs an agent before the survivor's
    // release of boot-1 commits: that run is not boot-1's.
    assert!(s.node_heartbeat(&node, "boot-2", None, None).await.unwrap());
    let h = harness_on(s.clone(), &node);
    let t = h
        .tasks()
        .create_task(harness_core::tasks::CreateTask {
            title: Some("on the new boot".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id;
    h.tasks().begin_execution(&t).await.unwrap();
    assert_eq!(
        s.release_dead_node(&node, "boot-1", now()).await.unwrap().0,
        Vec::<String>::new()
    );
    let view = s.get_task(&t).await.unwrap().unwrap();
    assert_eq!(view.execution.unwrap().status, ExecutionStatus::Running);
    // A heartbeat that wins the row first keeps the boot alive: no fence.
    assert!(!s.fence_node(&node, "boot-2").await.unwrap());
    assert!(s.node_heartbeat(&node, "boot-2", None, None).await.unwrap());
}

/// A draining node: its live runs are listed; it claims only the
/// deliveries bound to it; those of tasks without a live run on it are
/// unbound for the other nodes (never a row it holds, never its agents').
pub async fn a_draining_nodes_runs_are_listed_and_it_claims_only_its_own_deliveries(b: &Backend) {
    use harness_core::deliveries::NewInput;
    let node = format!("node-{}", ids::new_id());
    let owner = format!("{node}:boot");
    let store = b.another().await;
    let h = harness_on(store.clone(), &node);
    store
        .node_heartbeat(&node, "boot", None, None)
        .await
        .unwrap();
    let running = core_task(&h, "runs here", None).await;
    let (execution, _) = h.tasks().begin_execution(&running).await.unwrap();
    let stopped = core_task(&h, "no agent", None).await;
    assert_eq!(
        store.node_live_runs(&node).await.unwrap(),
        vec![(running.clone(), execution.id.clone())]
    );
    assert!(
        store
            .node_live_runs("no-such-node")
            .await
            .unwrap()
            .is_empty()
    );
    let input = |task: &str, bound: Option<&str>, key: &str| NewInput {
        id: ids::new_id(),
        task_id: task.to_string(),
        node_id: bound.map(str::to_string),
        text: format!("text {key}"),
        submit: true,
        dedup_key: key.into(),
        resume: false,
        now: now(),
    };
    let (mine, _) = store
        .enqueue_input(input(&running, Some(&node), "mine"))
        .await
        .unwrap();
    let (anyones, _) = store
        .enqueue_input(input(&stopped, None, "anyone"))
        .await
        .unwrap();
    let (left, _) = store
        .enqueue_input(input(&stopped, Some(&node), "left"))
        .await
        .unwrap();
    // Draining: only the rows bound to it, never an unbound one.
    let at = now();
    let claimed = store
        .claim_deliveries(
            &owner,
            &node,
            false,
            at,
            at + chrono::Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    let mut ids: Vec<_> = claimed.rows.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    let mut want = vec![mine.id.clone(), left.id.clone()];
    want.sort();
    assert_eq!(ids, want);
    // Held rows are never unbound; released, the one of a task without a
    // live run here is, the running agent's stays.
    assert_eq!(store.unbind_node_deliveries(&node, now()).await.unwrap(), 0);
    for id in [&mine.id, &left.id] {
        store.release_delivery(id, &owner).await.unwrap();
    }
    assert_eq!(store.unbind_node_deliveries(&node, now()).await.unwrap(), 1);
    let at = now();
    let other = store
        .claim_deliveries(
            "node-o:1",
            "node-o",
            true,
            at,
            at + chrono::Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    let mut ids: Vec<_> = other.rows.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    let mut want = vec![anyones.id.clone(), left.id.clone()];
    want.sort();
    assert_eq!(
        ids, want,
        "another node takes the unbound rows, not the agent's"
    );
}

pub async fn a_node_is_named_by_its_latest_heartbeat_and_its_tasks_show_the_name(b: &Backend) {
    use harness_core::{model::ExecutionStatus, store::NewExecution};
    let s = b.store.as_ref();
    // A node of its own: the suite's shared node must not be in the
    // registry (a dead one is recovered by the racing-survivors test).
    let node = format!("named-{}", ids::new_id());
    s.node_heartbeat(&node, "boot-1", None, Some("build-box 1 (東京)"))
        .await
        .unwrap();
    let row = s.get_node(&node).await.unwrap().unwrap();
    assert_eq!(row.name.as_deref(), Some("build-box 1 (東京)"));
    assert!(
        s.list_nodes()
            .await
            .unwrap()
            .iter()
            .any(|n| n.id == node && n.name.as_deref() == Some("build-box 1 (東京)"))
    );
    // The task view carries the name of its execution's node.
    let task = new_task(s, "named node").await;
    s.create_execution(NewExecution {
        id: ids::new_id(),
        task_id: task.clone(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some(node.clone()),
        now: now(),
    })
    .await
    .unwrap();
    let view = s.get_task(&task).await.unwrap().unwrap();
    let exec = view.execution.as_ref().unwrap();
    assert_eq!(
        (exec.node_id.as_deref(), exec.node_name.as_deref()),
        (Some(node.as_str()), Some("build-box 1 (東京)"))
    );
    assert!(
        s.list_tasks(1000)
            .await
            .unwrap()
            .iter()
            .any(|v| v.task.id == task
                && v.execution.as_ref().and_then(|e| e.node_name.as_deref())
                    == Some("build-box 1 (東京)"))
    );
    // A restart under another name renames it; a heartbeat without one
    // leaves it unnamed (shown by its id).
    s.node_heartbeat(&node, "boot-2", None, Some("renamed"))
        .await
        .unwrap();
    assert_eq!(
        s.get_node(&node).await.unwrap().unwrap().name.as_deref(),
        Some("renamed")
    );
    assert_eq!(
        s.get_task(&task)
            .await
            .unwrap()
            .unwrap()
            .execution
            .unwrap()
            .node_name
            .as_deref(),
        Some("renamed")
    );
    s.node_heartbeat(&node, "boot-2", None, None).await.unwrap();
    assert_eq!(s.get_node(&node).await.unwrap().unwrap().name, None);
    // An execution on a node the registry does not know has no name.
    let other = new_task(s, "unknown node").await;
    s.create_execution(NewExecution {
        id: ids::new_id(),
        task_id: other.clone(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some(format!("unknown-{}", ids::new_id())),
        now: now(),
    })
    .await
    .unwrap();
    let view = s.get_task(&other).await.unwrap().unwrap();
    assert_eq!(view.execution.unwrap().node_name, None);
}
