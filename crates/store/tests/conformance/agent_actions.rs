//! Timed automatic actions (`agent_actions`): planned once per execution and
//! state episode (however many callers race), claimed by their node or any
//! node when due, settled under the claim's lease only, cancelled only
//! while due — the port's contract. The engine's rules for the kind
//! (backoff and cap, crash → unverified, release) run in `engine.rs`.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use harness_core::{
    ids,
    store::{ActionKind, ActionReason, ActionSettle, ActionState, ActionTurn, NewAction, Store},
};

use super::{
    Backend,
    support::{NODE, new_execution, new_task, now_ms},
};

const OWNER: &str = "node-a:boot-1";

fn new_action(
    task: &str,
    execution: &str,
    reason: ActionReason,
    n: u32,
    due_at: DateTime<Utc>,
    node: Option<&str>,
) -> NewAction {
    NewAction {
        id: ids::new_id(),
        task_id: task.into(),
        execution_id: execution.into(),
        node_id: node.map(str::to_string),
        action: ActionKind::Continue,
        reason,
        text: None,
        due_at,
        dedup_key: format!("agent-action:{execution}:{}:{n}", reason.as_str()),
        now: now_ms(),
    }
}

fn turn(owner: &str, node: &str, now: DateTime<Utc>, limit: u32) -> ActionTurn {
    ActionTurn {
        owner: owner.into(),
        node: node.into(),
        settles: Vec::new(),
        released: Vec::new(),
        lease_until: now + Duration::seconds(120),
        now,
        limit,
    }
}

fn settle(id: &str, state: ActionState) -> ActionSettle {
    ActionSettle {
        id: id.into(),
        state,
        next_attempt_at: None,
        last_error: None,
        result: Some("typed “continue”".into()),
        delivery_id: Some("d-1".into()),
        started_execution_id: None,
    }
}

pub async fn an_action_is_planned_once_per_episode_and_replaces_the_executions_due_ones(
    b: &Backend,
) {
    let s = b.store.as_ref();
    let task = new_task(s, "limited").await;
    let exec = new_execution(s, &task).await.unwrap();
    let now = now_ms();
    let at = now + Duration::minutes(5);
    let (first, created) = s
        .plan_action(
            new_action(&task, &exec, ActionReason::ApiErrors, 0, at, None),
            None,
        )
        .await
        .unwrap();
    assert!(created);
    assert_eq!(
        (first.state, first.attempts, first.next_attempt_at),
        (ActionState::Pending, 0, Some(at)),
        "due at its time"
    );
    // A repeat of the episode (the watcher again, another node): the row.
    let (again, created) = s
        .plan_action(
            new_action(&task, &exec, ActionReason::ApiErrors, 0, now, None),
            Some("replaced"),
        )
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(again, first, "the first plan stands, nothing replaced");
    assert_eq!(s.open_actions(&exec).await.unwrap(), vec![first.clone()]);
    // A newer state of the agent: its action replaces the due one.
    let (limit, created) = s
        .plan_action(
            new_action(&task, &exec, ActionReason::UsageLimit, 0, at, None),
            Some("replaced by the agent's newer state"),
        )
        .await
        .unwrap();
    assert!(created);
    let old = s.get_action(&first.id).await.unwrap().unwrap();
    assert_eq!(old.state, ActionState::Cancelled);
    assert_eq!(
        old.last_error.as_deref(),
        Some("replaced by the agent's newer state")
    );
    assert_eq!(s.open_actions(&exec).await.unwrap(), vec![limit.clone()]);
    assert_eq!(
        s.closed_action_count(&exec, ActionReason::ApiErrors)
            .await
            .unwrap(),
        1,
        "the next error episode is the second"
    );
    assert_eq!(
        s.closed_action_count(&exec, ActionReason::UsageLimit)
            .await
            .unwrap(),
        0
    );
    let listed = s.task_actions(&task, 10).await.unwrap();
    assert_eq!(
        listed.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        [limit.id.as_str(), first.id.as_str()],
        "newest first"
    );
    assert_eq!(s.task_actions(&task, 1).await.unwrap().len(), 1);
    assert!(s.get_action(&ids::new_id()).await.unwrap().is_none());
}

pub async fn racing_plans_of_one_episode_make_one_row(b: &Backend) {
    let task = new_task(b.store.as_ref(), "raced").await;
    let exec = new_execution(b.store.as_ref(), &task).await.unwrap();
    let at = now_ms();
    let mut racers = Vec::new();
    for _ in 0..8 {
        let store: Arc<dyn Store> = b.another().await;
        let new = new_action(&task, &exec, ActionReason::Crash, 0, at, None);
        racers.push(tokio::spawn(async move {
            store.plan_action(new, Some("x")).await
        }));
    }
    let mut ids = std::collections::HashSet::new();
    let mut created = 0;
    for r in racers {
        let (row, made) = r.await.unwrap().unwrap();
        ids.insert(row.id);
        created += usize::from(made);
    }
    assert_eq!((ids.len(), created), (1, 1), "one row, one writer");
    assert_eq!(b.store.open_actions(&exec).await.unwrap().len(), 1);
}

pub async fn a_turn_claims_due_rows_of_its_node_and_settles_under_its_lease(b: &Backend) {
    let s = b.store.as_ref();
    let task = new_task(s, "turns").await;
    let exec = new_execution(s, &task).await.unwrap();
    let now = now_ms();
    let plan = |reason, n, due, node: Option<&str>| {
        let new = new_action(&task, &exec, reason, n, due, node);
        async move { s.plan_action(new, None).await.unwrap().0 }
    };
    let any = plan(ActionReason::UsageLimit, 0, now, None).await;
    let mine = plan(ActionReason::Dialog, 0, now, Some(NODE)).await;
    let theirs = plan(ActionReason::Stalled, 0, now, Some("node-b")).await;
    let later = plan(ActionReason::Crash, 0, now + Duration::hours(1), None).await;
    let claimed = s
        .settle_and_claim_actions(turn(OWNER, NODE, now, 10))
        .await
        .unwrap();
    let got: std::collections::HashSet<_> = claimed.iter().map(|a| a.id.clone()).collect();
    assert!(got.contains(&any.id) && got.contains(&mine.id), "{got:?}");
    assert!(!got.contains(&theirs.id), "node-b's row is node-b's");
    assert!(!got.contains(&later.id), "not due yet");
    for a in &claimed {
        assert_eq!(
            (a.state, a.attempts, a.lease_owner.as_deref()),
            (ActionState::Running, 1, Some(OWNER)),
            "the claim starts the attempt"
        );
    }
    // node-b claims its own.
    let other = s
        .settle_and_claim_actions(turn("node-b:boot-1", "node-b", now, 10))
        .await
        .unwrap();
    assert_eq!(
        other.iter().map(|a| &a.id).collect::<Vec<_>>(),
        [&theirs.id]
    );
    // Another owner's late outcome changes nothing; the owner's settles.
    let mut t = turn("node-b:boot-1", "node-b", now_ms(), 0);
    t.settles = vec![settle(&any.id, ActionState::Done)];
    s.settle_and_claim_actions(t).await.unwrap();
    assert_eq!(
        s.get_action(&any.id).await.unwrap().unwrap().state,
        ActionState::Running
    );
    let done_at = now_ms();
    let mut t = turn(OWNER, NODE, done_at, 0);
    t.settles = vec![settle(&any.id, ActionState::Done)];
    t.released = vec![mine.id.clone()];
    s.settle_and_claim_actions(t).await.unwrap();
    let done = s.get_action(&any.id).await.unwrap().unwrap();
    assert_eq!(done.state, ActionState::Done);
    assert_eq!(done.result.as_deref(), Some("typed “continue”"));
    assert_eq!(done.delivery_id.as_deref(), Some("d-1"));
    assert!(done.done_at.is_some_and(|t| t >= done_at));
    assert_eq!((done.lease_owner, done.next_attempt_at), (None, None));
    let released = s.get_action(&mine.id).await.unwrap().unwrap();
    assert_eq!(
        (released.state, released.attempts, released.lease_owner),
        (ActionState::Pending, 0, None),
        "given back untouched: due again, the attempt undone"
    );
    // The caps count what was done (or may have been) since a time.
    let hour_ago = now - Duration::hours(1);
    for (reason, want) in [
        (ActionReason::UsageLimit, 1),
        (ActionReason::Stalled, 1),
        (ActionReason::Dialog, 0),
        (ActionReason::Crash, 0),
    ] {
        assert_eq!(
            s.actions_done_since(&task, reason, hour_ago).await.unwrap(),
            want,
            "{reason:?}"
        );
    }
    assert_eq!(
        s.actions_done_since(
            &task,
            ActionReason::UsageLimit,
            now_ms() + Duration::hours(1)
        )
        .await
        .unwrap(),
        0,
        "none done after that"
    );
}

pub async fn only_due_actions_are_cancelled_and_only_of_the_named_execution(b: &Backend) {
    let s = b.store.as_ref();
    let task = new_task(s, "cancel").await;
    let first = new_execution(s, &task).await.unwrap();
    let now = now_ms();
    let running = s
        .plan_action(
            new_action(&task, &first, ActionReason::Crash, 0, now, None),
            None,
        )
        .await
        .unwrap()
        .0;
    let claimed = s
        .settle_and_claim_actions(turn(OWNER, NODE, now, 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let due = s
        .plan_action(
            new_action(
                &task,
                &first,
                ActionReason::UsageLimit,
                0,
                now + Duration::hours(1),
                None,
            ),
            None,
        )
        .await
        .unwrap()
        .0;
    let other_exec = ids::new_id();
    let nudge = s
        .plan_action(
            new_action(
                &task,
                &first,
                ActionReason::Stalled,
                0,
                now + Duration::hours(1),
                None,
            ),
            None,
        )
        .await
        .unwrap()
        .0;
    // Cancelling another execution's actions touches none of these.
    assert!(
        s.cancel_actions(&task, Some(&other_exec), "x", now_ms())
            .await
            .unwrap()
            .is_empty()
    );
    let cancelled = s
        .cancel_actions(&task, None, "a person replied", now_ms())
        .await
        .unwrap();
    let ids: std::collections::HashSet<_> = cancelled.iter().map(|a| a.id.clone()).collect();
    assert_eq!(
        ids,
        [due.id.clone(), nudge.id.clone()].into_iter().collect(),
        "the due ones, not the one under way"
    );
    for a in &cancelled {
        assert_eq!(a.state, ActionState::Cancelled);
        assert_eq!(a.last_error.as_deref(), Some("a person replied"));
        assert_eq!(a.next_attempt_at, None);
    }
    assert_eq!(
        s.get_action(&running.id).await.unwrap().unwrap().state,
        ActionState::Running
    );
    // Nothing cancelled is ever claimed.
    let later = now_ms() + Duration::hours(2);
    assert!(
        s.settle_and_claim_actions(turn("node-c:boot-1", NODE, later, 10))
            .await
            .unwrap()
            .is_empty()
    );
}
