//! Deliveries into agents' terminals (docs/decisions.md D3, D5, D6): the
//! row's states and kinds. The rules that move a row between them are the
//! core's (`harness_core::deliveries`); what a person may do in each state
//! is [`crate::manual`].

use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DeliveryState {
    Queued,
    WaitingBoundary,
    Resuming,
    Writing,
    Delivered,
    Failed,
    Unverified,
}

impl DeliveryState {
    pub const ALL: [Self; 7] = [
        Self::Queued,
        Self::WaitingBoundary,
        Self::Resuming,
        Self::Writing,
        Self::Delivered,
        Self::Failed,
        Self::Unverified,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "QUEUED",
            Self::WaitingBoundary => "WAITING_BOUNDARY",
            Self::Resuming => "RESUMING",
            Self::Writing => "WRITING",
            Self::Delivered => "DELIVERED",
            Self::Failed => "FAILED",
            Self::Unverified => "UNVERIFIED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }

    /// Nothing more happens by itself (DELIVERED, UNVERIFIED, or FAILED is
    /// reported to the waiting caller as it stands).
    pub fn settled(self) -> bool {
        matches!(self, Self::Delivered | Self::Unverified | Self::Failed)
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryKind {
    /// The answer to an ask.
    Reply,
    /// `POST /api/tasks/{id}/input` / `send_task_terminal_input` with an idempotency key.
    Input,
}

impl DeliveryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reply => "reply",
            Self::Input => "input",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "reply" => Some(Self::Reply),
            "input" => Some(Self::Input),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_as_text_and_json() {
        for s in DeliveryState::ALL {
            assert_eq!(DeliveryState::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::Value::from(s.as_str()))
            );
        }
        for k in [DeliveryKind::Reply, DeliveryKind::Input] {
            assert_eq!(DeliveryKind::parse(k.as_str()), Some(k));
            assert_eq!(
                serde_json::to_value(k).ok(),
                Some(serde_json::Value::from(k.as_str()))
            );
        }
    }
}
