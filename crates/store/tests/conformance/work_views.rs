//! How each kind's row reads as the engine's [`View`] (`work_kinds`): its
//! state as a [`Phase`], its attempts, when it is due again, its error and
//! its lease.

use chrono::{DateTime, Utc};
use harness_core::{
    agent_actions::AgentAction,
    deliveries::{Delivery, DeliveryState},
    inbox::{EventState, WorkbenchEvent},
    outbox::{Outbound, OutboundState},
    store::{ActionState, GatewayReply, ReplyState},
};

use super::work_kinds::{Phase, View};

pub(super) fn failed(next: Option<DateTime<Utc>>) -> Phase {
    if next.is_some() {
        Phase::Failed
    } else {
        Phase::GivenUp
    }
}

pub(super) fn delivery_view(r: &Delivery) -> View {
    let phase = match r.state {
        DeliveryState::Queued => Phase::Due,
        DeliveryState::WaitingBoundary | DeliveryState::Resuming | DeliveryState::Writing => {
            Phase::InFlight
        }
        DeliveryState::Delivered => Phase::Done,
        DeliveryState::Failed => failed(r.next_attempt_at),
        DeliveryState::Unverified => Phase::Unverified,
    };
    View {
        phase,
        attempts: r.attempts,
        next_attempt_at: (phase == Phase::Failed)
            .then_some(r.next_attempt_at)
            .flatten(),
        last_error: r.last_error.clone(),
        lease_owner: r.lease_owner.clone(),
    }
}

pub(super) fn outbound_view(r: &Outbound) -> View {
    let phase = match r.state {
        OutboundState::Pending => Phase::Due,
        OutboundState::Sending => Phase::InFlight,
        OutboundState::Delivered => Phase::Done,
        OutboundState::SentUnverified => Phase::Unverified,
        OutboundState::Failed => failed(r.next_attempt_at),
        OutboundState::Dead => Phase::GivenUp,
    };
    View {
        phase,
        attempts: r.attempts,
        next_attempt_at: (phase == Phase::Failed)
            .then_some(r.next_attempt_at)
            .flatten(),
        last_error: r.last_error.clone(),
        lease_owner: r.lease_owner.clone(),
    }
}

pub(super) fn reply_view(r: &GatewayReply) -> View {
    let phase = match r.state {
        ReplyState::Pending => Phase::Due,
        ReplyState::Sending => Phase::InFlight,
        ReplyState::Delivered => Phase::Done,
        ReplyState::SentUnverified => Phase::Unverified,
        ReplyState::Failed => failed(r.next_attempt_at),
        ReplyState::Dead => Phase::GivenUp,
    };
    View {
        phase,
        attempts: r.attempts,
        next_attempt_at: (phase == Phase::Failed)
            .then_some(r.next_attempt_at)
            .flatten(),
        last_error: r.last_error.clone(),
        lease_owner: r.lease_owner.clone(),
    }
}

/// An event as the engine sees its claim: PENDING is due, claimed and not
/// batched is leased, batched is in flight (its batch's), DELIVERED done.
pub(super) fn event_view(r: &WorkbenchEvent) -> View {
    let phase = match r.state {
        EventState::Pending => Phase::Due,
        EventState::Processing if r.batch_id.is_none() => Phase::Due,
        EventState::Processing => Phase::InFlight,
        EventState::Delivered | EventState::Consumed => Phase::Done,
    };
    View {
        phase,
        attempts: r.attempts,
        next_attempt_at: None,
        last_error: r.last_error.clone(),
        lease_owner: r.lease_owner.clone(),
    }
}

pub(super) fn action_view(r: &AgentAction) -> View {
    let phase = match r.state {
        ActionState::Pending => Phase::Due,
        ActionState::Running => Phase::InFlight,
        ActionState::Done => Phase::Done,
        ActionState::Failed => failed(r.next_attempt_at),
        ActionState::GaveUp | ActionState::Cancelled => Phase::GivenUp,
        ActionState::Unverified => Phase::Unverified,
    };
    View {
        phase,
        attempts: r.attempts,
        next_attempt_at: (phase == Phase::Failed)
            .then_some(r.next_attempt_at)
            .flatten(),
        last_error: r.last_error.clone(),
        lease_owner: r.lease_owner.clone(),
    }
}
