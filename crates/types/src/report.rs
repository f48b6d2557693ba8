//! The morning report (docs/morning-report.md): the state of a question or
//! an approval it lists. Building the report is the core's
//! (`harness_core::report`).

use crate::{approval::ApprovalState, macros::string_enum, message::MessageState};

string_enum!(
    /// Where a question or an approval of the report stands: a question's
    /// [`MessageState`] or an approval's [`ApprovalState`], by the same
    /// texts.
    AskedState {
        /// A question waits for its answer.
        Open => "OPEN",
        /// An approval waits for its decision.
        Pending => "PENDING",
        Answered => "ANSWERED",
        Approved => "APPROVED",
        Denied => "DENIED",
        Cancelled => "CANCELLED",
        Expired => "EXPIRED",
        Ignored => "IGNORED",
        /// A notify line that was sent.
        Closed => "CLOSED",
        /// A question not sent yet.
        PendingDelivery => "PENDING_DELIVERY",
    }
);

impl AskedState {
    /// Still waits for a person: an open question, a pending approval.
    pub fn waiting(self) -> bool {
        matches!(self, Self::Open | Self::Pending)
    }
}

impl From<MessageState> for AskedState {
    fn from(s: MessageState) -> Self {
        match s {
            MessageState::Open => Self::Open,
            MessageState::Answered => Self::Answered,
            MessageState::Ignored => Self::Ignored,
            MessageState::Cancelled => Self::Cancelled,
            MessageState::Expired => Self::Expired,
            MessageState::Closed => Self::Closed,
            MessageState::PendingDelivery => Self::PendingDelivery,
        }
    }
}

impl From<ApprovalState> for AskedState {
    fn from(s: ApprovalState) -> Self {
        match s {
            ApprovalState::Pending => Self::Pending,
            ApprovalState::Approved => Self::Approved,
            ApprovalState::Denied => Self::Denied,
            ApprovalState::Cancelled => Self::Cancelled,
            ApprovalState::Expired => Self::Expired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::macros::round_trip;

    #[test]
    fn texts_are_the_serde_names() {
        round_trip!(
            AskedState,
            [
                "OPEN",
                "PENDING",
                "ANSWERED",
                "APPROVED",
                "DENIED",
                "CANCELLED",
                "EXPIRED",
                "IGNORED",
                "CLOSED",
                "PENDING_DELIVERY",
            ]
        );
    }

    #[test]
    fn a_question_or_an_approval_keeps_its_text() {
        for &s in MessageState::ALL {
            assert_eq!(AskedState::from(s).as_str(), s.as_str());
        }
        for s in [
            ApprovalState::Pending,
            ApprovalState::Approved,
            ApprovalState::Denied,
            ApprovalState::Cancelled,
            ApprovalState::Expired,
        ] {
            assert_eq!(AskedState::from(s).as_str(), s.as_str());
        }
        assert!(AskedState::Open.waiting() && AskedState::Pending.waiting());
        assert!(!AskedState::PendingDelivery.waiting() && !AskedState::Answered.waiting());
    }
}
