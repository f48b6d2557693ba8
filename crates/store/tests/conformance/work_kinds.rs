//! The kinds of owed work seen alike, so one engine case runs over every
//! kind (`engine.rs`): each kind's own core calls
//! behind one small vocabulary — queue a row, claim, commit the in-flight
//! step, settle with an [`Outcome`], release, recover expired leases, a
//! person's retry and mark-delivered — and its states read as a [`Phase`].
//!
//! The parent's inbox is here too ([`WorkKind::Inbox`]: its events claimed
//! by the engine into one batch, released, recovered); its claim has no
//! outcome of its own — storing the batch is its step, and the batch's
//! delivery carries the outcome — so only the cases of claim, step, crash
//! and release run for it ([`WorkKind::attempted`]). The Workbench batches
//! themselves are leased to the parent's agent (ack / heartbeat / resolve).
//!
//! Timed actions on agents ([`WorkKind::AgentActions`]) are attempted like
//! the first three, but a person never retries or marks one (they act on
//! the agent instead): the cases of a person's decision skip them
//! ([`WorkKind::person_decides`]).
//!
//! One work item's steps, a row found, claimed, settled, are `work_steps`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use harness_core::{
    Harness,
    agent_actions::AgentAction,
    deliveries::Delivery,
    gateway::replies::REPLY_POLICY,
    ids,
    inbox::{EventKind, Priority, WorkbenchEvent},
    outbox::{Outbound, PushInput, Receipt},
    settings::NotifyTarget,
    store::{
        AGENT_ACTIONS, ActionKind, ActionReason, ActionTurn, GatewayReply, INBOX, InboundIntent,
        NewAction, NewEvent, NewInbound, ReplyKind,
    },
    tasks::CreateTask,
    work::{Kind, Lease, Scope},
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkKind {
    Deliveries,
    Outbox,
    GatewayReplies,
    Inbox,
    AgentActions,
}

/// Every kind on the engine.
pub const KINDS: [WorkKind; 5] = [
    WorkKind::Deliveries,
    WorkKind::Outbox,
    WorkKind::GatewayReplies,
    WorkKind::Inbox,
    WorkKind::AgentActions,
];

/// A row's state in the engine's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting to be claimed (leased or not).
    Due,
    /// Its step is committed: the side effect may be under way.
    InFlight,
    Done,
    /// A clean failure, due again at `next_attempt_at`.
    Failed,
    /// Never due again automatically (the cap, or given up).
    GivenUp,
    /// It may have happened: a person decides.
    Unverified,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub phase: Phase,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub lease_owner: Option<String>,
}

/// A row of some kind, as claimed.
#[derive(Debug, Clone)]
pub enum Row {
    D(Delivery),
    O(Outbound),
    R(GatewayReply),
    /// An event and the token of the claim that took it.
    I(WorkbenchEvent, String),
    A(AgentAction),
}

impl Row {
    pub fn id(&self) -> &str {
        match self {
            Self::D(r) => &r.id,
            Self::O(r) => &r.id,
            Self::R(r) => &r.id,
            Self::I(r, _) => &r.id,
            Self::A(r) => &r.id,
        }
    }
}

/// A queued row: its kind and id (a reply is read through its inbound row,
/// an event through its parent: `group`).
#[derive(Debug, Clone)]
pub struct Work {
    pub kind: WorkKind,
    pub id: String,
    pub(super) group: Option<String>,
}

pub fn lease(owner: &str, ttl: Duration) -> Lease {
    Lease {
        owner: owner.into(),
        ttl,
    }
}

pub(super) fn chrono_ttl(lease: &Lease) -> chrono::Duration {
    chrono::Duration::from_std(lease.ttl).unwrap_or(chrono::Duration::seconds(60))
}

pub(super) fn receipt() -> Receipt {
    Receipt {
        message_id: Some("pm-1".into()),
        platform: None,
        chat_id: Some("oc_home".into()),
    }
}

impl WorkKind {
    /// Whether a runner attempts the kind (an outcome, a cap, a person's
    /// decision); the inbox's claim ends in its batch instead.
    pub fn attempted(self) -> bool {
        self != Self::Inbox
    }

    /// Whether a person retries what was given up and marks what is
    /// unverified (not an automatic action: a person acts on the agent).
    pub fn person_decides(self) -> bool {
        self.attempted() && self != Self::AgentActions
    }

    /// The kind's attempt cap.
    pub fn cap(self, h: &Harness) -> u32 {
        match self {
            Self::Deliveries => harness_core::deliveries::MAX_ATTEMPTS,
            Self::Outbox => h.config().outbox_max_attempts,
            Self::GatewayReplies => REPLY_POLICY.max_attempts,
            Self::Inbox => INBOX.max_attempts,
            Self::AgentActions => AGENT_ACTIONS.max_attempts,
        }
    }

    /// Queue a fresh row (`key` makes it unique).
    pub async fn queue(self, h: &Harness, key: &str) -> Work {
        let task = || async move {
            h.tasks()
                .create_task(CreateTask {
                    title: Some(format!("engine {key}")),
                    ..CreateTask::default()
                })
                .await
                .unwrap()
                .task
                .id
        };
        match self {
            Self::Deliveries => {
                let (row, created) = h
                    .deliveries()
                    .enqueue_input(&task().await, "hello", true, key)
                    .await
                    .unwrap();
                assert!(created);
                Work {
                    kind: self,
                    id: row.id,
                    group: None,
                }
            }
            Self::Outbox => {
                h.settings()
                    .set_notify_targets(vec![NotifyTarget {
                        id: None,
                        label: "home".into(),
                        gateway: "hermes".into(),
                        downstream: Some("feishu".into()),
                        dest: None,
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
                let out = h
                    .outbox()
                    .push_to_human(PushInput {
                        task_id: Some(task().await),
                        message: Some(format!("hello {key}")),
                        scope: Some("unattended".into()),
                        expect_reply: Some(false),
                        dedup_key: Some(key.into()),
                        ..PushInput::default()
                    })
                    .await
                    .unwrap();
                Work {
                    kind: self,
                    id: out.outbound_id,
                    group: None,
                }
            }
            Self::GatewayReplies => {
                let (inbound, _) = h
                    .store()
                    .create_inbound(NewInbound {
                        id: ids::new_id(),
                        dedup_key: format!("gateway-inbound:openclaw:telegram:-100:{key}"),
                        gateway: "openclaw".into(),
                        platform: "telegram".into(),
                        chat_id: "-100".into(),
                        sender_id: Some("42".into()),
                        platform_message_id: key.into(),
                        thread_id: None,
                        root_message_id: None,
                        reply_to_message_id: None,
                        intent: InboundIntent::ProjectWork,
                        content: "continue".into(),
                        now: Utc::now(),
                    })
                    .await
                    .unwrap();
                let (row, created) = h
                    .gateway()
                    .enqueue_gateway_reply(&inbound.id, ReplyKind::QueuedAck, "queued")
                    .await
                    .unwrap();
                assert!(created);
                Work {
                    kind: self,
                    id: row.id,
                    group: Some(inbound.id),
                }
            }
            Self::Inbox => {
                let parent = task().await;
                let child = h
                    .tasks()
                    .create_task(CreateTask {
                        title: Some(format!("child {key}")),
                        parent_task_id: Some(parent.clone()),
                        ..CreateTask::default()
                    })
                    .await
                    .unwrap()
                    .task
                    .id;
                let (row, created) = h
                    .store()
                    .add_workbench_event(NewEvent {
                        id: ids::new_id(),
                        parent_task_id: parent.clone(),
                        source_task_id: child,
                        execution_id: None,
                        kind: EventKind::ChildExecutionFailed,
                        priority: Priority::High,
                        dedup_key: format!("engine:{key}:{}", ids::new_id()),
                        execution_review_key: None,
                        fallback: false,
                        payload: serde_json::json!({"childTitle": key}),
                        now: Utc::now(),
                    })
                    .await
                    .unwrap();
                assert!(created);
                Work {
                    kind: self,
                    id: row.id,
                    group: Some(parent),
                }
            }
            Self::AgentActions => {
                let task = task().await;
                let (execution, _) = h.tasks().begin_execution(&task).await.unwrap();
                let now = Utc::now();
                let (row, created) = h
                    .store()
                    .plan_action(
                        NewAction {
                            id: ids::new_id(),
                            task_id: task,
                            execution_id: execution.id.clone(),
                            node_id: None,
                            action: ActionKind::Continue,
                            reason: ActionReason::UsageLimit,
                            text: None,
                            due_at: now,
                            dedup_key: format!("agent-action:{}:usage_limit:0", execution.id),
                            now,
                        },
                        None,
                    )
                    .await
                    .unwrap();
                assert!(created);
                Work {
                    kind: self,
                    id: row.id,
                    group: None,
                }
            }
        }
    }

    /// The core's claim of due rows for `lease` (what the kind's worker
    /// calls each turn); for the deliveries also the recovery of rows
    /// found in flight with an expired lease.
    pub async fn claim(self, h: &Harness, lease: &Lease) -> Vec<Row> {
        match self {
            Self::Deliveries => h
                .deliveries()
                .claim_deliveries(lease, 100)
                .await
                .unwrap()
                .into_iter()
                .map(Row::D)
                .collect(),
            Self::Outbox => h
                .outbox()
                .settle_and_claim(&lease.owner, Vec::new(), Vec::new(), chrono_ttl(lease), 100)
                .await
                .unwrap()
                .into_iter()
                .map(Row::O)
                .collect(),
            Self::GatewayReplies => h
                .gateway()
                .settle_and_claim_replies(
                    &lease.owner,
                    Vec::new(),
                    Vec::new(),
                    chrono_ttl(lease),
                    100,
                )
                .await
                .unwrap()
                .into_iter()
                .map(Row::R)
                .collect(),
            Self::Inbox => self.claim_at(h, lease, Utc::now()).await,
            Self::AgentActions => h
                .agents()
                .settle_and_claim_actions(
                    &lease.owner,
                    &h.config().node_id,
                    Vec::new(),
                    Vec::new(),
                    chrono_ttl(lease),
                    100,
                )
                .await
                .unwrap()
                .into_iter()
                .map(Row::A)
                .collect(),
        }
    }

    /// The store's claim as of `at` (a time after a backoff), for `lease`.
    pub async fn claim_at(self, h: &Harness, lease: &Lease, at: DateTime<Utc>) -> Vec<Row> {
        let until = lease.until(at);
        match self {
            Self::Deliveries => h
                .store()
                .claim_deliveries(&lease.owner, &h.config().node_id, true, at, until, 100)
                .await
                .unwrap()
                .rows
                .into_iter()
                .map(Row::D)
                .collect(),
            Self::Outbox => h
                .store()
                .claim_outbound(&lease.owner, at, until, 100)
                .await
                .unwrap()
                .into_iter()
                .map(Row::O)
                .collect(),
            Self::GatewayReplies => h
                .store()
                .settle_and_claim_replies(harness_core::store::ReplyTurn {
                    owner: lease.owner.clone(),
                    settles: Vec::new(),
                    released: Vec::new(),
                    lease_until: until,
                    now: at,
                    limit: 100,
                })
                .await
                .unwrap()
                .into_iter()
                .map(Row::R)
                .collect(),
            // The inbox worker's claim: each parent with due events.
            Self::Inbox => {
                let mut rows = Vec::new();
                for parent in h.deliveries().inbox_parents_pending().await.unwrap() {
                    let token = ids::new_id();
                    let claimed = h
                        .store()
                        .claim_workbench_events(&parent, &lease.owner, &token, 50, at, until)
                        .await
                        .unwrap();
                    rows.extend(claimed.into_iter().map(|e| Row::I(e, token.clone())));
                }
                rows
            }
            Self::AgentActions => h
                .store()
                .settle_and_claim_actions(ActionTurn {
                    owner: lease.owner.clone(),
                    node: h.config().node_id.clone(),
                    settles: Vec::new(),
                    released: Vec::new(),
                    lease_until: until,
                    now: at,
                    limit: 100,
                })
                .await
                .unwrap()
                .into_iter()
                .map(Row::A)
                .collect(),
        }
    }

    /// The upkeep's recovery of rows whose lease ended mid-attempt, then a
    /// claim for `lease` (a worker's next turn).
    pub async fn recover_and_claim(self, h: &Harness, lease: &Lease) -> Vec<Row> {
        match self {
            // The claim itself recovers.
            Self::Deliveries => {}
            // The one recovery pass of the engine.
            Self::Outbox => {
                h.cluster()
                    .recover_work(Kind::Outbox, Scope::Expired)
                    .await
                    .unwrap();
            }
            Self::GatewayReplies => {
                h.cluster()
                    .recover_work(Kind::GatewayReplies, Scope::Expired)
                    .await
                    .unwrap();
            }
            Self::Inbox => {
                h.cluster()
                    .recover_work(Kind::Inbox, Scope::Expired)
                    .await
                    .unwrap();
            }
            Self::AgentActions => {
                h.cluster()
                    .recover_work(Kind::AgentActions, Scope::Expired)
                    .await
                    .unwrap();
            }
        }
        self.claim(h, lease).await
    }
}
