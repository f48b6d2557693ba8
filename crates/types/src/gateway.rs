//! What the chat gateways bring in (inbound platform messages,
//! docs/tower-messaging.md §2.5 / §3.3) and the replies Harness sends back
//! (§2.6 / §3.4): their intents, states and kinds. The rules are the core's
//! (`harness_core::gateway`); what a person may do with a reply in each
//! state is [`crate::manual`].

use serde::{Deserialize, Serialize};

use crate::macros::{plain_enum, text_enum};

/// GatewayRequestKind (docs/tower-messaging.md §2.5).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InboundIntent {
    Direct,
    Tower,
    ProjectDiscussion,
    ProjectWork,
}

/// GatewayMessageState (docs/tower-messaging.md §2.5 / docs/tower-messaging.md §3.3).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InboundState {
    Received,
    Queued,
    Processing,
    Processed,
    Failed,
}

text_enum!(InboundIntent {
    Direct = "DIRECT",
    Tower = "TOWER",
    ProjectDiscussion = "PROJECT_DISCUSSION",
    ProjectWork = "PROJECT_WORK",
});
text_enum!(InboundState {
    Received = "RECEIVED",
    Queued = "QUEUED",
    Processing = "PROCESSING",
    Processed = "PROCESSED",
    Failed = "FAILED",
});

impl InboundState {
    /// Every state, in the order the `/gateway` page offers them as filters.
    pub const ALL: [Self; 5] = [
        Self::Queued,
        Self::Processing,
        Self::Processed,
        Self::Failed,
        Self::Received,
    ];
}

/// GatewayDeliveryKind (docs/tower-messaging.md §2.6), the kinds Harness writes.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReplyKind {
    /// "Received, queued": a continuation was queued.
    QueuedAck,
    /// The Workbench confirmed the task it created for a work request.
    TaskCreated,
    /// The Workbench's answer to a discussion.
    DiscussionReply,
    /// The result of project work.
    FinalResult,
}

/// GatewayDeliveryState (docs/tower-messaging.md §2.6) plus DEAD (the retry cap, docs/decisions.md D7).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReplyState {
    Pending,
    Sending,
    Delivered,
    /// The platform may have it (a crash mid-send, an error that printed a
    /// message id): never sent again automatically.
    SentUnverified,
    /// Nothing was sent; due again at `next_attempt_at`.
    Failed,
    /// Given up (the cap, or an attempt that must not be repeated).
    Dead,
}

impl ReplyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::QueuedAck => "QUEUED_ACK",
            Self::TaskCreated => "TASK_CREATED",
            Self::DiscussionReply => "DISCUSSION_REPLY",
            Self::FinalResult => "FINAL_RESULT",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::QueuedAck,
            Self::TaskCreated,
            Self::DiscussionReply,
            Self::FinalResult,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

impl ReplyState {
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
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// GatewaySessionStatus (docs/tower-messaging.md §2.4).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionStatus {
    Active,
    Closed,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::Closed => "CLOSED",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ACTIVE" => Some(Self::Active),
            "CLOSED" => Some(Self::Closed),
            _ => None,
        }
    }
}

plain_enum!(
    /// A chat's access record (docs/tower-messaging.md §8.8): whether the
    /// chat may reach Harness.
    ChatAccess { Authorized = "AUTHORIZED", Revoked = "REVOKED" }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_the_serde_names() {
        let json = |v: serde_json::Result<serde_json::Value>| v.ok();
        for s in InboundState::ALL {
            assert_eq!(InboundState::parse(s.as_str()), Some(s));
            assert_eq!(json(serde_json::to_value(s)), Some(s.as_str().into()));
        }
        for i in [
            InboundIntent::Direct,
            InboundIntent::Tower,
            InboundIntent::ProjectDiscussion,
            InboundIntent::ProjectWork,
        ] {
            assert_eq!(InboundIntent::parse(i.as_str()), Some(i));
            assert_eq!(json(serde_json::to_value(i)), Some(i.as_str().into()));
        }
        for s in [SessionStatus::Active, SessionStatus::Closed] {
            assert_eq!(SessionStatus::parse(s.as_str()), Some(s));
            assert_eq!(json(serde_json::to_value(s)), Some(s.as_str().into()));
        }
        for a in [ChatAccess::Authorized, ChatAccess::Revoked] {
            assert_eq!(ChatAccess::parse(a.as_str()), Some(a));
            assert_eq!(json(serde_json::to_value(a)), Some(a.as_str().into()));
        }
        for s in ReplyState::ALL {
            assert_eq!(json(serde_json::to_value(s)), Some(s.as_str().into()));
        }
        for k in [
            ReplyKind::QueuedAck,
            ReplyKind::TaskCreated,
            ReplyKind::DiscussionReply,
            ReplyKind::FinalResult,
        ] {
            assert_eq!(ReplyKind::parse(k.as_str()), Some(k));
            assert_eq!(json(serde_json::to_value(k)), Some(k.as_str().into()));
        }
    }
}
