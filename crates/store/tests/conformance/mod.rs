//! The store contract, written once against the `Store` port and run against
//! every backend: a backend's test file builds a [`Backend`] and expands
//! `conformance_suite!(factory)` (see `sqlite_conformance.rs`). A PostgreSQL
//! backend plugs in with its own factory; the cases do not change.
//!
//! Every case uses fresh ids, so a backend may share one database between
//! cases; each gets its own backend instance here.

use std::{any::Any, sync::Arc};

use chrono::{DateTime, Duration, Utc};
use harness_core::{
    ids,
    model::{
        AgentConfig, Cursor, ExecutionStatus, MessageKind, MessageQuery, MessageState, MessageView,
        Provider,
    },
    store::{Dismissed, NewAsk, NewExecution, NewProject, NewTask, Store, StoreError},
};

/// One backend under test: the port, and whatever must outlive it (a temp
/// directory, a container, a schema to drop).
pub struct Backend {
    pub store: Arc<dyn Store>,
    pub _guard: Box<dyn Any + Send + Sync>,
}

/// Expands to one `#[tokio::test]` (multi-threaded: the races are real) per
/// case, each on a fresh backend from `$factory().await`.
macro_rules! conformance_suite {
    ($factory:path) => {
        conformance_suite!(@cases $factory;
            workspaces_and_projects,
            tasks_round_trip,
            missing_project_is_a_missing_reference,
            unattended_flag,
            execution_lifecycle,
            one_live_execution_per_task,
            ask_supersedes_and_parks,
            one_open_ask_per_task,
            answer_is_conditional,
            concurrent_answers_have_one_winner,
            notify_ignore_dismiss,
            cancel_and_expire,
            message_listing,
            settings_round_trip,
        );
    };
    (@cases $factory:path; $($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let backend = $factory().await;
                conformance::$case(&backend).await;
            }
        )+
    };
}

fn now() -> DateTime<Utc> {
    Utc::now()
}

fn command_agent() -> AgentConfig {
    AgentConfig {
        provider: Provider::Command,
        command: Some(vec!["true".into()]),
        cwd: None,
        env: Default::default(),
    }
}

async fn new_task(s: &dyn Store, title: &str) -> String {
    new_task_in(s, title, None).await
}

async fn new_task_in(s: &dyn Store, title: &str, project_id: Option<String>) -> String {
    let id = ids::new_id();
    s.create_task(NewTask {
        id: id.clone(),
        title: title.into(),
        description: None,
        project_id,
        parent_task_id: None,
        agent: command_agent(),
        now: now(),
    })
    .await
    .unwrap();
    id
}

/// The node the suite's executions run on.
const NODE: &str = "node-a";

async fn new_execution(s: &dyn Store, task_id: &str) -> Result<String, StoreError> {
    let id = ids::new_id();
    s.create_execution(NewExecution {
        id: id.clone(),
        task_id: task_id.into(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some(NODE.into()),
        now: now(),
    })
    .await
    .map(|e| e.id)
}

fn ask(task_id: &str, question: &str, at: DateTime<Utc>) -> NewAsk {
    NewAsk {
        id: ids::new_id(),
        task_id: task_id.into(),
        question: question.into(),
        now: at,
        idempotency_key: None,
    }
}

async fn execution_status(s: &dyn Store, task_id: &str) -> Option<ExecutionStatus> {
    s.get_task(task_id)
        .await
        .unwrap()
        .and_then(|v| v.execution)
        .map(|e| e.status)
}

pub async fn workspaces_and_projects(b: &Backend) {
    let s = b.store.as_ref();
    let name = format!("ws-{}", ids::new_id());
    let first = s
        .ensure_workspace(&ids::new_id(), &name, now())
        .await
        .unwrap();
    let again = s
        .ensure_workspace(&ids::new_id(), &name, now())
        .await
        .unwrap();
    assert_eq!(first, again, "a workspace is found by name");
    let project = NewProject {
        id: ids::new_id(),
        workspace_id: first.clone(),
        workspace_name: name.clone(),
        name: "p".into(),
        path: "/tmp/p".into(),
        now: now(),
    };
    let created = s.create_project(project.clone()).await.unwrap();
    assert_eq!(
        (created.workspace.as_str(), created.path.as_str()),
        (name.as_str(), "/tmp/p")
    );
    let duplicate = s
        .create_project(NewProject {
            id: ids::new_id(),
            ..project.clone()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(duplicate, StoreError::Duplicate(_)),
        "{duplicate:?}"
    );
    let listed = s.list_projects().await.unwrap();
    assert!(listed.iter().any(|p| p.id == created.id));
    let found = s.get_project(&created.id).await.unwrap().unwrap();
    assert_eq!(found, created);
    assert!(s.get_project(&ids::new_id()).await.unwrap().is_none());
    // Editing (issue 15): rename and move; a taken name; a missing project.
    let other = s
        .create_project(NewProject {
            id: ids::new_id(),
            name: "q".into(),
            ..project.clone()
        })
        .await
        .unwrap();
    let moved = s
        .update_project(&created.id, "p2", "/tmp/p2")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (moved.name.as_str(), moved.path.as_str()),
        ("p2", "/tmp/p2")
    );
    assert_eq!(s.get_project(&created.id).await.unwrap().unwrap(), moved);
    let taken = s
        .update_project(&created.id, &other.name, "/tmp/p2")
        .await
        .unwrap_err();
    assert!(matches!(taken, StoreError::Duplicate(_)), "{taken:?}");
    assert!(
        s.update_project(&ids::new_id(), "x", "/tmp/x")
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn tasks_round_trip(b: &Backend) {
    let s = b.store.as_ref();
    let older = new_task(s, "older").await;
    let newer = new_task(s, "newer").await;
    let view = s.get_task(&newer).await.unwrap().unwrap();
    assert_eq!(view.task.title, "newer");
    assert_eq!(view.task.agent, command_agent());
    assert!(view.execution.is_none() && !view.open_ask);
    let listed: Vec<String> = s
        .list_tasks(1000)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.task.id)
        .collect();
    let (i_new, i_old) = (
        listed.iter().position(|t| t == &newer).unwrap(),
        listed.iter().position(|t| t == &older).unwrap(),
    );
    assert!(i_new < i_old, "newest first");
    assert!(s.get_task(&ids::new_id()).await.unwrap().is_none());
}

pub async fn missing_project_is_a_missing_reference(b: &Backend) {
    let s = b.store.as_ref();
    let err = s
        .create_task(NewTask {
            id: ids::new_id(),
            title: "t".into(),
            description: None,
            project_id: Some(ids::new_id()),
            parent_task_id: None,
            agent: command_agent(),
            now: now(),
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MissingReference(_)), "{err:?}");
}

pub async fn unattended_flag(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let on = s.set_unattended(&t, true, now()).await.unwrap().unwrap();
    assert!(on.task.unattended);
    assert!(s.unattended_task_ids().await.unwrap().contains(&t));
    s.set_unattended(&t, false, now()).await.unwrap().unwrap();
    assert!(!s.unattended_task_ids().await.unwrap().contains(&t));
    assert!(
        s.set_unattended(&ids::new_id(), true, now())
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn execution_lifecycle(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let hash = ids::token_hash("secret-token");
    let exec = s
        .create_execution(NewExecution {
            id: ids::new_id(),
            task_id: t.clone(),
            token_hash: hash.clone(),
            status: ExecutionStatus::Running,
            node_id: Some(NODE.into()),
            now: now(),
        })
        .await
        .unwrap();
    assert_eq!(
        s.execution_by_token_hash(&hash).await.unwrap().unwrap().id,
        exec.id
    );
    assert!(
        s.execution_by_token_hash(&ids::token_hash("other"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        s.set_session_id(&exec.id, "first")
            .await
            .unwrap()
            .as_deref(),
        Some("first")
    );
    assert_eq!(
        s.set_session_id(&exec.id, "second")
            .await
            .unwrap()
            .as_deref(),
        Some("first"),
        "the first session id wins"
    );
    assert!(
        s.set_session_id(&ids::new_id(), "x")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(s.live_execution(&t).await.unwrap().unwrap().id, exec.id);
    let ended = s
        .finish_execution(
            &exec.id,
            ExecutionStatus::Completed,
            Some(0),
            "exited",
            now(),
        )
        .await
        .unwrap();
    assert!(ended);
    let again = s
        .finish_execution(&exec.id, ExecutionStatus::Failed, Some(1), "exited", now())
        .await
        .unwrap();
    assert!(!again, "only a live execution ends");
    assert!(s.live_execution(&t).await.unwrap().is_none());
    assert_eq!(
        execution_status(s, &t).await,
        Some(ExecutionStatus::Completed)
    );
    let t2 = new_task(s, "t2").await;
    new_execution(s, &t2).await.unwrap();
    // Another node's live execution is that node's business.
    let t3 = new_task(s, "t3").await;
    s.create_execution(NewExecution {
        id: ids::new_id(),
        task_id: t3.clone(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some("node-b".into()),
        now: now(),
    })
    .await
    .unwrap();
    let interrupted = s.interrupt_live_executions(NODE, now()).await.unwrap();
    assert!(interrupted.contains(&t2) && !interrupted.contains(&t));
    assert!(!interrupted.contains(&t3), "only this node's executions");
    assert_eq!(
        execution_status(s, &t3).await,
        Some(ExecutionStatus::Running)
    );
    assert_eq!(
        execution_status(s, &t2).await,
        Some(ExecutionStatus::Failed)
    );
}

pub async fn one_live_execution_per_task(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let first = new_execution(s, &t).await.unwrap();
    let second = new_execution(s, &t).await.unwrap_err();
    assert!(matches!(second, StoreError::Duplicate(_)), "{second:?}");
    // Parked is live too.
    s.record_ask(ask(&t, "q?", now())).await.unwrap();
    assert_eq!(execution_status(s, &t).await, Some(ExecutionStatus::Paused));
    assert!(matches!(
        new_execution(s, &t).await,
        Err(StoreError::Duplicate(_))
    ));
    // Racing inserts: exactly one wins.
    let t2 = new_task(s, "t2").await;
    let mut racers = Vec::new();
    for _ in 0..16 {
        let store = b.store.clone();
        let t2 = t2.clone();
        racers.push(tokio::spawn(async move {
            new_execution(store.as_ref(), &t2).await
        }));
    }
    let mut won = 0;
    for r in racers {
        match r.await.unwrap() {
            Ok(_) => won += 1,
            Err(StoreError::Duplicate(_)) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1);
    // Once it ended, the task may run again.
    s.finish_execution(&first, ExecutionStatus::Stopped, None, "stopped", now())
        .await
        .unwrap();
    new_execution(s, &t).await.unwrap();
}

pub async fn ask_supersedes_and_parks(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let exec = new_execution(s, &t).await.unwrap();
    let first = s.record_ask(ask(&t, "first?", now())).await.unwrap();
    assert_eq!(first.paused, vec![exec.clone()]);
    assert!(first.cancelled.is_empty());
    assert_eq!(first.message.execution_id.as_deref(), Some(exec.as_str()));
    assert_eq!(
        (first.message.kind, first.message.state),
        (MessageKind::Ask, MessageState::Open)
    );
    assert_eq!(execution_status(s, &t).await, Some(ExecutionStatus::Paused));
    let second = s.record_ask(ask(&t, "second?", now())).await.unwrap();
    assert_eq!(second.cancelled, vec![first.message.id.clone()]);
    assert!(second.paused.is_empty(), "already parked");
    assert_eq!(second.message.execution_id, None, "no RUNNING execution");
    let old = s.get_message(&first.message.id).await.unwrap().unwrap();
    assert_eq!(old.state, MessageState::Cancelled);
    assert_eq!(s.open_ask(&t).await.unwrap().unwrap().id, second.message.id);
    assert_eq!(
        s.latest_ask(&t).await.unwrap().unwrap().id,
        second.message.id
    );
    assert!(s.get_task(&t).await.unwrap().unwrap().open_ask);
    let missing = s
        .record_ask(ask(&ids::new_id(), "q", now()))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, StoreError::MissingReference(_)),
        "{missing:?}"
    );
}

pub async fn one_open_ask_per_task(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let mut racers = Vec::new();
    for i in 0..20 {
        let store = b.store.clone();
        let t = t.clone();
        racers.push(tokio::spawn(async move {
            store.record_ask(ask(&t, &format!("q{i}"), now())).await
        }));
    }
    for r in racers {
        r.await.unwrap().unwrap();
    }
    let open = s
        .list_messages(&MessageQuery {
            view: MessageView::Pending,
            task_id: Some(t.clone()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(open.len(), 1, "exactly one OPEN ask after concurrent asks");
}

pub async fn answer_is_conditional(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    assert!(
        s.answer_open_ask(&t, "nobody asked", &ids::new_id(), None, now())
            .await
            .unwrap()
            .is_none()
    );
    let exec = new_execution(s, &t).await.unwrap();
    let asked = s.record_ask(ask(&t, "q?", now())).await.unwrap();
    let delivery_id = ids::new_id();
    // Leased at once to this node's worker (the hand-off).
    let claim = harness_core::store::DeliveryClaim {
        owner: format!("{NODE}:boot"),
        node: NODE.into(),
        until: now() + Duration::seconds(60),
    };
    let answered = s
        .answer_open_ask(&t, "yes", &delivery_id, Some(&claim), now())
        .await
        .unwrap()
        .unwrap();
    // The reply's delivery row is written by the same transaction.
    let row = answered.delivery.clone().expect("a delivery row");
    assert_eq!(row.id, delivery_id);
    assert_eq!(
        row.node_id.as_deref(),
        Some(NODE),
        "bound to the PTY's node"
    );
    assert_eq!(row.lease_owner.as_deref(), Some(claim.owner.as_str()));
    // Leased: nobody else claims it while the lease runs.
    let other = s
        .claim_deliveries("node-a:other", NODE, now(), now(), 10)
        .await
        .unwrap();
    assert!(other.rows.is_empty(), "handed off, not claimable");
    let stored = s.get_delivery(&delivery_id).await.unwrap().unwrap();
    assert_eq!(
        stored.message_id.as_deref(),
        Some(asked.message.id.as_str())
    );
    assert_eq!(
        (stored.text.as_str(), stored.question.as_deref()),
        ("yes", Some("q?"))
    );
    assert_eq!(answered.message.id, asked.message.id);
    assert_eq!(answered.message.state, MessageState::Answered);
    assert_eq!(answered.message.reply_text.as_deref(), Some("yes"));
    assert!(answered.message.replied_at.is_some());
    assert_eq!(answered.resumed, vec![exec]);
    assert!(answered.running);
    assert_eq!(
        execution_status(s, &t).await,
        Some(ExecutionStatus::Running)
    );
    assert!(
        s.answer_open_ask(&t, "again", &ids::new_id(), None, now())
            .await
            .unwrap()
            .is_none(),
        "answered once"
    );
    assert!(s.open_ask(&t).await.unwrap().is_none());
    assert_eq!(
        s.latest_ask(&t).await.unwrap().unwrap().state,
        MessageState::Answered
    );
    // resume_executions is idempotent.
    let (resumed, running) = s.resume_executions(&t).await.unwrap();
    assert!(resumed.is_empty() && running);
}

pub async fn concurrent_answers_have_one_winner(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    new_execution(s, &t).await.unwrap();
    s.record_ask(ask(&t, "q?", now())).await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let mut racers = Vec::new();
    for i in 0..50 {
        let store = b.store.clone();
        let t = t.clone();
        let barrier = barrier.clone();
        racers.push(tokio::spawn(async move {
            barrier.wait().await;
            store
                .answer_open_ask(&t, &format!("r{i}"), &ids::new_id(), None, now())
                .await
        }));
    }
    let mut winners = 0;
    let mut resumed = 0;
    for r in racers {
        if let Some(a) = r.await.unwrap().unwrap() {
            winners += 1;
            resumed += a.resumed.len();
        }
    }
    assert_eq!((winners, resumed), (1, 1));
    assert_eq!(
        s.task_deliveries(&t, 100).await.unwrap().len(),
        1,
        "one answer, one delivery"
    );
}

pub async fn notify_ignore_dismiss(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let note = s.record_notify(ask(&t, "fyi", now())).await.unwrap();
    assert_eq!(
        (note.kind, note.state),
        (MessageKind::Notify, MessageState::Closed)
    );
    assert!(s.open_ask(&t).await.unwrap().is_none());
    let asked = s.record_ask(ask(&t, "q?", now())).await.unwrap();
    assert_eq!(
        s.dismiss_message(&asked.message.id).await.unwrap(),
        Dismissed::IsAsk
    );
    let ignored = s.ignore_ask(&asked.message.id).await.unwrap().unwrap();
    assert_eq!(ignored.state, MessageState::Ignored);
    assert!(
        s.ignore_ask(&asked.message.id).await.unwrap().is_none(),
        "only OPEN"
    );
    assert!(s.ignore_ask(&note.id).await.unwrap().is_none(), "only asks");
    match s.dismiss_message(&note.id).await.unwrap() {
        Dismissed::Deleted(m) => assert_eq!(m.id, note.id),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.dismiss_message(&note.id).await.unwrap(),
        Dismissed::NotFound
    );
    assert!(s.get_message(&note.id).await.unwrap().is_none());
}

pub async fn cancel_and_expire(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "t").await;
    let asked = s.record_ask(ask(&t, "q?", now())).await.unwrap();
    assert_eq!(
        s.cancel_open_asks(&t).await.unwrap(),
        vec![asked.message.id.clone()]
    );
    assert!(s.cancel_open_asks(&t).await.unwrap().is_empty());
    let stale_task = new_task(s, "stale").await;
    let stale = s
        .record_ask(ask(&stale_task, "old?", now() - Duration::days(20)))
        .await
        .unwrap();
    let fresh_task = new_task(s, "fresh").await;
    let fresh = s.record_ask(ask(&fresh_task, "new?", now())).await.unwrap();
    let expired = s
        .expire_asks_before(now() - Duration::days(14))
        .await
        .unwrap();
    assert!(expired.contains(&stale.message.id) && !expired.contains(&fresh.message.id));
    assert_eq!(
        s.get_message(&stale.message.id)
            .await
            .unwrap()
            .unwrap()
            .state,
        MessageState::Expired
    );
}

pub async fn message_listing(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "listing 100%_done").await;
    let other = new_task(s, "other").await;
    let base = now() - Duration::minutes(10);
    let mut ids_newest_first = Vec::new();
    for i in 0..7 {
        let m = s
            .record_notify(ask(&t, &format!("line {i}"), base + Duration::seconds(i)))
            .await
            .unwrap();
        ids_newest_first.insert(0, m.id);
    }
    s.record_ask(ask(&other, "pending?", now())).await.unwrap();
    // Keyset pages of 3 over the task's rows, newest first.
    let mut seen = Vec::new();
    let mut cursor: Option<Cursor> = None;
    loop {
        let page = s
            .list_messages(&MessageQuery {
                view: MessageView::All,
                task_id: Some(t.clone()),
                cursor: cursor.clone(),
                limit: 3,
                ..Default::default()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        let last = page.last().unwrap();
        cursor = Some(Cursor {
            created_at_ms: last.message.created_at.timestamp_millis(),
            id: last.message.id.clone(),
        });
        seen.extend(page.into_iter().map(|r| r.message.id));
    }
    assert_eq!(seen, ids_newest_first);
    // Search escapes LIKE wildcards: "%_" matches only the literal text.
    let literal = s
        .list_messages(&MessageQuery {
            view: MessageView::All,
            search: Some("100%_d".into()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(literal.len(), 7);
    assert!(literal.iter().all(|r| r.task_title == "listing 100%_done"));
    let wildcard = s
        .list_messages(&MessageQuery {
            view: MessageView::All,
            search: Some("%".into()),
            task_id: Some(other.clone()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(wildcard.is_empty(), "% is literal");
    assert!(s.pending_count().await.unwrap() >= 1);
    let row = s.message_row(&ids_newest_first[0]).await.unwrap().unwrap();
    assert_eq!(row.task_title, "listing 100%_done");
    assert!(s.message_row(&ids::new_id()).await.unwrap().is_none());
}

pub async fn settings_round_trip(b: &Backend) {
    let s = b.store.as_ref();
    let key = format!("test.{}", ids::new_id());
    assert!(s.get_setting(&key).await.unwrap().is_none());
    let v1 = serde_json::json!({"a": [1, 2, {"b": "ü"}]});
    s.put_setting(&key, &v1, now()).await.unwrap();
    assert_eq!(s.get_setting(&key).await.unwrap(), Some(v1));
    let v2 = serde_json::json!("replaced");
    s.put_setting(&key, &v2, now()).await.unwrap();
    assert_eq!(s.get_setting(&key).await.unwrap(), Some(v2));
}
