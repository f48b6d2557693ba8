//! The outbox's rows: an outbound message, its states, and the platform
//! message id → task mapping.

use chrono::{DateTime, Utc};
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
        Some(match s {
            "PENDING" => Self::Pending,
            "SENDING" => Self::Sending,
            "DELIVERED" => Self::Delivered,
            "SENT_UNVERIFIED" => Self::SentUnverified,
            "FAILED" => Self::Failed,
            "DEAD" => Self::Dead,
            _ => return None,
        })
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

/// One outbound row (the reference's HarnessOutbound).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outbound {
    pub id: String,
    pub dedup_key: String,
    pub task_id: Option<String>,
    pub execution_id: Option<String>,
    pub message_id: Option<String>,
    pub gateway: String,
    pub downstream: Option<String>,
    pub dest: Option<String>,
    pub requested_to: Option<String>,
    pub profile: Option<String>,
    pub scope: String,
    pub expect_reply: bool,
    pub message: String,
    pub presentation: Option<String>,
    pub state: OutboundState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub platform: Option<String>,
    pub platform_chat_id: Option<String>,
    pub platform_message_id: Option<String>,
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Outbound {
    /// An empty row (for checks that need only a few fields).
    pub(crate) fn blank() -> Self {
        let now = Utc::now();
        Self {
            id: String::new(),
            dedup_key: String::new(),
            task_id: None,
            execution_id: None,
            message_id: None,
            gateway: String::new(),
            downstream: None,
            dest: None,
            requested_to: None,
            profile: None,
            scope: "work".into(),
            expect_reply: false,
            message: String::new(),
            presentation: None,
            state: OutboundState::Pending,
            attempts: 0,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            platform: None,
            platform_chat_id: None,
            platform_message_id: None,
            last_error: None,
            delivered_at: None,
            created_at: now,
            updated_at: now,
        }
    }
}

#[cfg(test)]
impl Outbound {
    pub(crate) fn sample(
        gateway: &str,
        downstream: Option<&str>,
        dest: Option<&str>,
        message: &str,
    ) -> Self {
        let now = Utc::now();
        Self {
            id: "c0".into(),
            dedup_key: "k".into(),
            task_id: None,
            execution_id: None,
            message_id: None,
            gateway: gateway.into(),
            downstream: downstream.map(Into::into),
            dest: dest.map(Into::into),
            requested_to: None,
            profile: None,
            scope: "work".into(),
            expect_reply: false,
            message: message.into(),
            presentation: None,
            state: OutboundState::Pending,
            attempts: 0,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            platform: None,
            platform_chat_id: None,
            platform_message_id: None,
            last_error: None,
            delivered_at: None,
            created_at: now,
            updated_at: now,
        }
    }
}

/// Platform message id → task (the reference's HarnessDelivery).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryMapping {
    pub id: String,
    pub harness_message_id: Option<String>,
    pub task_id: Option<String>,
    pub outbound_id: Option<String>,
    pub platform: String,
    pub chat_id: String,
    pub platform_message_id: String,
    pub scope: String,
    pub expect_reply: bool,
    pub created_at: DateTime<Utc>,
}
