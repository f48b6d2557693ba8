//! Helpers shared by the conformance cases: fresh rows through the port and
//! a core [`Harness`] over any store of the backend.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use harness_core::{
    Harness, HarnessConfig, ids,
    model::{AgentConfig, ExecutionStatus, Provider},
    store::{AskOption, Choices, NewAsk, NewExecution, NewTask, Store, StoreError, Urgency},
};

pub const ADMIN: &str = "admin-secret";

pub fn now() -> DateTime<Utc> {
    Utc::now()
}

/// `now` at the millisecond precision every backend stores.
pub fn now_ms() -> DateTime<Utc> {
    let ms = Utc::now().timestamp_millis();
    DateTime::from_timestamp_millis(ms).unwrap()
}

/// A lease short enough for a case to wait for its end: leases are judged
/// by the database's clock (PostgreSQL's, not the caller's), so a case
/// cannot pass a later `now` to end one.
pub const LEASE: chrono::Duration = chrono::Duration::milliseconds(800);

/// Waits until a lease of [`LEASE`] taken before the call has ended on
/// every clock; answers the caller's now then.
pub async fn past_lease() -> DateTime<Utc> {
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    now_ms()
}

/// The core over `store`, as the server builds it, on node `node`.
pub fn harness_on(store: Arc<dyn Store>, node: &str) -> Harness {
    let mut config = HarnessConfig::new(ids::token_hash(ADMIN));
    config.node_id = node.into();
    Harness::new(store, config)
}

/// A task created through the core (`parent`: a derived child of it).
pub async fn core_task(h: &Harness, title: &str, parent: Option<&str>) -> String {
    h.tasks()
        .create_task(harness_core::tasks::CreateTask {
            title: Some(title.into()),
            parent_task_id: parent.map(str::to_string),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id
}

/// Another store on the backend's database and the core over it on
/// node-a, its delivery worker leasing as `owner` when given.
pub async fn node_a(b: &super::Backend, owner: Option<&str>) -> (Arc<dyn Store>, Harness) {
    let store = b.another().await;
    let mut config = HarnessConfig::new(ids::token_hash(ADMIN));
    config.node_id = "node-a".into();
    config.delivery_owner = owner.map(str::to_string);
    (store.clone(), Harness::new(store, config))
}

pub fn command_agent() -> AgentConfig {
    AgentConfig {
        provider: Provider::Command,
        command: Some(vec!["true".into()]),
        cwd: None,
        env: Default::default(),
        restart_on_interrupt: false,
        recovery: None,
    }
}

pub async fn new_task(s: &dyn Store, title: &str) -> String {
    new_task_in(s, title, None).await
}

pub async fn new_task_in(s: &dyn Store, title: &str, project_id: Option<String>) -> String {
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
pub const NODE: &str = "node-a";

pub async fn new_execution(s: &dyn Store, task_id: &str) -> Result<String, StoreError> {
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

pub fn ask(task_id: &str, question: &str, at: DateTime<Utc>) -> NewAsk {
    NewAsk {
        id: ids::new_id(),
        task_id: task_id.into(),
        question: question.into(),
        now: at,
        idempotency_key: None,
        evidence: None,
    }
}

pub async fn execution_status(s: &dyn Store, task_id: &str) -> Option<ExecutionStatus> {
    s.get_task(task_id)
        .await
        .unwrap()
        .and_then(|v| v.execution)
        .map(|e| e.status)
}

/// An ask with the options `labels` and `default`, due at `deadline`,
/// recorded through the port (which, unlike the API, takes any deadline):
/// how a case gets an ask whose deadline passes without waiting a minute.
/// Returns its id.
pub async fn ask_due_at(
    s: &dyn Store,
    task_id: &str,
    question: &str,
    labels: &[&str],
    default: Option<&str>,
    deadline: DateTime<Utc>,
) -> String {
    let choices = Choices {
        options: labels
            .iter()
            .map(|l| AskOption {
                label: (*l).into(),
                description: None,
            })
            .collect(),
        multi_select: false,
        default: default.map(Into::into),
        deadline_at: Some(deadline),
        urgency: Urgency::Normal,
        answered_by: None,
        answered_options: None,
    };
    s.record_ask_with_choices(ask(task_id, question, now()), choices)
        .await
        .unwrap()
        .message
        .id
}

/// A recovery's counts as `(unverified, released)`.
pub fn recovered(r: &harness_core::work::Recovery) -> (usize, usize) {
    (r.unverified, r.released)
}
