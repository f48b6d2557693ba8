//! A parent's inbox (docs/tower-workbench.md): the kinds, priorities and
//! states of the events its derived children and the gateways leave for it,
//! and of the batches they are typed in. The rules are the core's
//! (`harness_core::inbox`).

use crate::macros::plain_enum;

plain_enum!(EventKind {
    ChildReviewRequired = "CHILD_REVIEW_REQUIRED",
    ChildDecisionRequired = "CHILD_DECISION_REQUIRED",
    ChildExecutionFailed = "CHILD_EXECUTION_FAILED",
    GatewayDiscussionRequest = "GATEWAY_DISCUSSION_REQUEST",
    GatewayWorkRequest = "GATEWAY_WORK_REQUEST",
});
plain_enum!(Priority { High = "HIGH", Normal = "NORMAL" });
plain_enum!(EventState {
    Pending = "PENDING",
    Processing = "PROCESSING",
    Delivered = "DELIVERED",
    Consumed = "CONSUMED",
});
plain_enum!(BatchState {
    Claimed = "CLAIMED",
    Dispatched = "DISPATCHED",
    Acked = "ACKED",
    Resolved = "RESOLVED",
    Failed = "FAILED",
});

impl Priority {
    /// Explicit sort rank: HIGH before NORMAL (never rely on text order).
    pub fn rank(self) -> u8 {
        match self {
            Self::High => 0,
            Self::Normal => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_the_serde_names() {
        let json = |v: serde_json::Result<serde_json::Value>| v.ok();
        for s in [
            EventState::Pending,
            EventState::Processing,
            EventState::Delivered,
            EventState::Consumed,
        ] {
            assert_eq!(EventState::parse(s.as_str()), Some(s));
            assert_eq!(json(serde_json::to_value(s)), Some(s.as_str().into()));
        }
        assert_eq!(
            json(serde_json::to_value(BatchState::Dispatched)),
            Some("DISPATCHED".into())
        );
        assert_eq!(
            json(serde_json::to_value(EventKind::ChildReviewRequired)),
            Some("CHILD_REVIEW_REQUIRED".into())
        );
        assert!(Priority::High.rank() < Priority::Normal.rank());
    }
}
