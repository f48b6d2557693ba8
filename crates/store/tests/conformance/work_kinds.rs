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

use std::time::Duration;

use chrono::{DateTime, Utc};
use harness_core::{
    CoreResult, Harness,
    agent_actions::{ActionOutcome, AgentAction},
    deliveries::{Delivery, DeliveryState},
    gateway::replies::{REPLY_POLICY, ReplyOutcome},
    ids,
    inbox::{EventKind, Priority, WorkbenchEvent},
    outbox::{Outbound, PushInput, Receipt, SendOutcome},
    settings::NotifyTarget,
    store::{
        AGENT_ACTIONS, ActionKind, ActionReason, ActionTurn, GatewayReply, INBOX, InboundIntent,
        NewAction, NewBatch, NewEvent, NewInbound, ReplyKind,
    },
    tasks::CreateTask,
    work::{Kind, Lease, Outcome, Scope},
};

use super::work_views::{action_view, delivery_view, event_view, outbound_view, reply_view};

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
    group: Option<String>,
}

pub fn lease(owner: &str, ttl: Duration) -> Lease {
    Lease {
        owner: owner.into(),
        ttl,
    }
}

fn chrono_ttl(lease: &Lease) -> chrono::Duration {
    chrono::Duration::from_std(lease.ttl).unwrap_or(chrono::Duration::seconds(60))
}

fn receipt() -> Receipt {
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

/// The outbox's answer for an outcome (what the gateway CLI's receipt says).
fn send_outcome(outcome: &Outcome) -> SendOutcome {
    match outcome {
        Outcome::Done => SendOutcome::Delivered(receipt()),
        Outcome::Retry(e) => SendOutcome::Failed(e.clone()),
        Outcome::GaveUp(e) => SendOutcome::Skipped(e.clone()),
        Outcome::Unverified(e) => SendOutcome::Unverified(receipt(), e.clone()),
    }
}

impl Work {
    pub fn find<'a>(&self, rows: &'a [Row]) -> Option<&'a Row> {
        rows.iter().find(|r| r.id() == self.id)
    }

    /// The row as the kind's worker claimed it (panics when it was not).
    pub fn claimed(&self, rows: &[Row]) -> Row {
        self.find(rows)
            .cloned()
            .unwrap_or_else(|| panic!("{:?} {} was not claimed", self.kind, self.id))
    }

    pub async fn view(&self, h: &Harness) -> View {
        match self.kind {
            WorkKind::Deliveries => {
                delivery_view(&h.deliveries().delivery(&self.id).await.unwrap())
            }
            WorkKind::Outbox => outbound_view(&h.outbox().outbound(&self.id).await.unwrap()),
            WorkKind::GatewayReplies => {
                let inbound = self.group.as_deref().unwrap_or_default();
                let rows = h.gateway().gateway_replies(inbound).await.unwrap();
                let row = rows.iter().find(|r| r.id == self.id).expect("the reply");
                reply_view(row)
            }
            WorkKind::Inbox => {
                let parent = self.group.as_deref().unwrap_or_default();
                let rows = h.store().list_workbench_events(parent, 50).await.unwrap();
                let row = rows.iter().find(|r| r.id == self.id).expect("the event");
                event_view(row)
            }
            WorkKind::AgentActions => {
                action_view(&h.agents().agent_action(&self.id).await.unwrap())
            }
        }
    }

    /// Commit the attempt's in-flight step before its side effect: a
    /// delivery's WRITING, an outbound row's started mark; gateway replies
    /// commit SENDING at the claim (a leased reply counts as started), so
    /// for them the claim was the step. `false`: lease lost.
    pub async fn start(&self, h: &Harness, row: &Row, lease: &Lease) -> bool {
        match row {
            Row::D(d) => h
                .deliveries()
                .advance_delivery(d, lease, DeliveryState::Writing)
                .await
                .unwrap(),
            // The outbox's step is its started mark (committed just before
            // the CLI is spawned).
            Row::O(o) => h
                .outbox()
                .mark_outbound_started(o, &lease.owner)
                .await
                .unwrap(),
            Row::R(_) | Row::A(_) => self.view(h).await.phase == Phase::InFlight,
            // The inbox's step: its batch stored under the claim (the
            // batch and its delivery then hold the event).
            Row::I(e, token) => {
                let now = Utc::now();
                h.store()
                    .store_workbench_batch(NewBatch {
                        id: harness_core::inbox::batch_id(&[e.dedup_key.as_str()]),
                        parent_task_id: e.parent_task_id.clone(),
                        execution_id: None,
                        claim_token: token.clone(),
                        event_ids: vec![e.id.clone()],
                        prompt: "batch".into(),
                        lease_token: ids::new_id(),
                        lease_until: lease.until(now),
                        node_id: Some(h.config().node_id.clone()),
                        metadata: "{}".into(),
                        now,
                    })
                    .await
                    .unwrap()
                    .is_some()
            }
        }
    }

    /// Commit how the attempt at `row` (claimed under `lease`) ended.
    pub async fn settle(&self, h: &Harness, row: &Row, lease: &Lease, outcome: Outcome) {
        match row {
            Row::D(d) => {
                h.deliveries()
                    .settle_delivery(d, lease, &outcome)
                    .await
                    .unwrap();
            }
            Row::O(o) => {
                h.outbox()
                    .finish_send(o, &lease.owner, send_outcome(&outcome))
                    .await
                    .unwrap();
            }
            Row::R(r) => {
                let receipt = matches!(outcome, Outcome::Done | Outcome::Unverified(_))
                    .then(|| "pm-1".to_string());
                h.gateway()
                    .settle_and_claim_replies(
                        &lease.owner,
                        vec![(
                            r.clone(),
                            ReplyOutcome {
                                outcome,
                                platform_message_id: receipt,
                            },
                        )],
                        Vec::new(),
                        chrono_ttl(lease),
                        0,
                    )
                    .await
                    .unwrap();
            }
            Row::A(a) => {
                h.agents()
                    .settle_and_claim_actions(
                        &lease.owner,
                        &h.config().node_id,
                        vec![(a.clone(), ActionOutcome::of(outcome))],
                        Vec::new(),
                        chrono_ttl(lease),
                        0,
                    )
                    .await
                    .unwrap();
            }
            // A claim's outcome is its batch: done = stored (again: the
            // same batch); anything else gives the claim back.
            Row::I(..) => match outcome {
                Outcome::Done => {
                    self.start(h, row, lease).await;
                }
                Outcome::Retry(e) | Outcome::GaveUp(e) | Outcome::Unverified(e) => {
                    self.release_with(h, lease, row, &e).await;
                }
            },
        }
    }

    async fn release_with(&self, h: &Harness, lease: &Lease, row: &Row, why: &str) {
        if let Row::I(_, token) = row {
            h.store()
                .release_workbench_claim(&lease.owner, token, why, Utc::now())
                .await
                .unwrap();
        }
    }

    /// Give the leased row back untouched (the worker stops before the attempt).
    pub async fn release(&self, h: &Harness, row: &Row, lease: &Lease) {
        let ids = vec![self.id.clone()];
        match self.kind {
            WorkKind::Deliveries => {
                h.deliveries()
                    .settle_and_claim_deliveries(lease, Vec::new(), ids, 0)
                    .await
                    .unwrap();
            }
            WorkKind::Outbox => {
                h.outbox()
                    .settle_and_claim(&lease.owner, Vec::new(), ids, chrono_ttl(lease), 0)
                    .await
                    .unwrap();
            }
            WorkKind::GatewayReplies => {
                h.gateway()
                    .settle_and_claim_replies(&lease.owner, Vec::new(), ids, chrono_ttl(lease), 0)
                    .await
                    .unwrap();
            }
            WorkKind::Inbox => self.release_with(h, lease, row, "released").await,
            WorkKind::AgentActions => {
                h.agents()
                    .settle_and_claim_actions(
                        &lease.owner,
                        &h.config().node_id,
                        Vec::new(),
                        ids,
                        chrono_ttl(lease),
                        0,
                    )
                    .await
                    .unwrap();
            }
        }
    }

    /// A person's "try again" (FAILED or DEAD; a delivery also UNVERIFIED).
    pub async fn retry(&self, h: &Harness) -> CoreResult<View> {
        match self.kind {
            WorkKind::Deliveries => h
                .deliveries()
                .retry_delivery(&self.id)
                .await
                .map(|r| delivery_view(&r)),
            WorkKind::Outbox => h
                .outbox()
                .retry_outbound(&self.id)
                .await
                .map(|r| outbound_view(&r)),
            WorkKind::GatewayReplies => h
                .gateway()
                .retry_gateway_reply(&self.id)
                .await
                .map(|r| reply_view(&r)),
            WorkKind::Inbox => Err(harness_core::CoreError::Conflict(
                "an event has no retry of its own (its batch's delivery has)".into(),
            )),
            WorkKind::AgentActions => Err(harness_core::CoreError::Conflict(
                "a person acts on the agent, not on an automatic action".into(),
            )),
        }
    }

    /// A person's "mark as delivered" (UNVERIFIED only).
    pub async fn mark_delivered(&self, h: &Harness) -> CoreResult<View> {
        match self.kind {
            WorkKind::Deliveries => h
                .deliveries()
                .mark_delivered(&self.id)
                .await
                .map(|r| delivery_view(&r)),
            WorkKind::Outbox => h
                .outbox()
                .mark_outbound_delivered(&self.id)
                .await
                .map(|r| outbound_view(&r)),
            WorkKind::GatewayReplies => h
                .gateway()
                .mark_gateway_reply_delivered(&self.id)
                .await
                .map(|r| reply_view(&r)),
            WorkKind::Inbox => Err(harness_core::CoreError::Conflict(
                "an event has no mark of its own (its batch's delivery has)".into(),
            )),
            WorkKind::AgentActions => Err(harness_core::CoreError::Conflict(
                "a person acts on the agent, not on an automatic action".into(),
            )),
        }
    }
}
