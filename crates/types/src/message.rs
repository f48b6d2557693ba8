//! Harness messages (asks and notify lines) and the notification center's
//! views (docs/tower-messaging.md §3.1).

use serde::{Deserialize, Serialize};

use crate::macros::string_enum;

string_enum!(
    /// What a harness message is.
    MessageKind { Ask => "ask", Notify => "notify" }
);
string_enum!(
    /// State of a harness message (see docs/tower-messaging.md §3.1).
    MessageState { Open => "OPEN", Answered => "ANSWERED", Ignored => "IGNORED", Cancelled => "CANCELLED", Expired => "EXPIRED", Closed => "CLOSED", PendingDelivery => "PENDING_DELIVERY" }
);

/// How the task's agent was resumed by a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeMode {
    /// A parked execution went PAUSED → RUNNING.
    Continued,
    /// An execution was already running; nothing to resume.
    AlreadyRunning,
    /// No live execution: the reply is recorded and waits for the next start.
    NotRunning,
    /// The terminal was gone: the agent was started again (provider resume
    /// mode) and given the reply prefixed with the question.
    Started,
}

/// The notification center's views.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MessageView {
    #[default]
    Pending,
    Answered,
    All,
}

impl MessageView {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Self::Pending),
            "answered" => Some(Self::Answered),
            "all" => Some(Self::All),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Answered => "answered",
            Self::All => "all",
        }
    }
}
