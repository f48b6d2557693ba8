//! One work item of a kind (`work_kinds`) through the engine's steps: the
//! row found among the kind's rows, claimed, committed, settled with an
//! [`Outcome`], released, retried or marked by a person.

use chrono::Utc;
use harness_core::{
    CoreResult, Harness,
    agent_actions::ActionOutcome,
    deliveries::DeliveryState,
    gateway::replies::ReplyOutcome,
    ids,
    outbox::SendOutcome,
    store::NewBatch,
    work::{Lease, Outcome},
};

use super::work_kinds::{Phase, Row, View, Work, WorkKind, chrono_ttl, receipt};
use super::work_views::{action_view, delivery_view, event_view, outbound_view, reply_view};

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
