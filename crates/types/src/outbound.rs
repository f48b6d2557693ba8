//! Messages owed to a person's chat through a gateway (the outbox,
//! docs/decisions.md D7): the row's states. The sender's rules are the
//! core's (`harness_core::outbox`); what a person may do in each state is
//! [`crate::manual`].

use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OutboundState {
    Pending,
    Sending,
    Delivered,
    SentUnverified,
    Failed,
    Dead,
}

impl OutboundState {
    pub const ALL: [Self; 6] = [
        Self::Pending,
        Self::Sending,
        Self::Delivered,
        Self::SentUnverified,
        Self::Failed,
        Self::Dead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Sending => "SENDING",
            Self::Delivered => "DELIVERED",
            Self::SentUnverified => "SENT_UNVERIFIED",
            Self::Failed => "FAILED",
            Self::Dead => "DEAD",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }

    /// The platform has (or may have) the message.
    pub fn sent(self) -> bool {
        matches!(self, Self::Delivered | Self::SentUnverified)
    }

    /// An attempt has ended (what `push_to_human` waits for).
    pub fn attempted(self) -> bool {
        !matches!(self, Self::Pending | Self::Sending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_as_text_and_json() {
        for s in OutboundState::ALL {
            assert_eq!(OutboundState::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::Value::from(s.as_str()))
            );
        }
    }
}
