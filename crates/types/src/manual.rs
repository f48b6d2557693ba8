//! What a person may do with owed work the worker stopped on — one rule
//! per kind, used by the core's conditional transitions (the state a
//! request finds must be one listed here, else 409) and by the UI (which
//! buttons a row shows):
//!
//! | kind | retry ("deliver again", "retry now") | mark as delivered |
//! |---|---|---|
//! | delivery into a terminal | FAILED, UNVERIFIED | UNVERIFIED |
//! | outbound message (outbox) | FAILED, DEAD | SENT_UNVERIFIED |
//! | gateway reply | FAILED, DEAD, SENT_UNVERIFIED | SENT_UNVERIFIED |
//!
//! A retry of a row that may already have arrived (UNVERIFIED,
//! SENT_UNVERIFIED) is a person accepting a possible duplicate. An
//! outbound SENT_UNVERIFIED row is not sent again: its send already
//! opened the ask it carries (docs/tower-messaging.md §3.2), a second send
//! would open it again.

use serde::{Deserialize, Serialize};

use crate::{delivery::DeliveryState, gateway::ReplyState, outbound::OutboundState};

/// A person's decision on a row the worker will not touch by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManualAction {
    /// Queue it once more (due now).
    Retry,
    /// Close it as delivered: a person saw it arrive.
    MarkDelivered,
}

impl ManualAction {
    pub const ALL: [Self; 2] = [Self::Retry, Self::MarkDelivered];
}

/// A kind's states with the manual actions each allows.
pub trait ManualActions: Copy + PartialEq + 'static {
    /// The states `action` accepts.
    fn accepted_by(action: ManualAction) -> &'static [Self];
    /// The state's text (for the "expected …" of a refusal).
    fn text(self) -> &'static str;

    /// Whether `action` is allowed in this state.
    fn allows(self, action: ManualAction) -> bool {
        Self::accepted_by(action).contains(&self)
    }

    /// The actions allowed in this state, in [`ManualAction::ALL`]'s order.
    fn manual_actions(self) -> Vec<ManualAction> {
        ManualAction::ALL
            .into_iter()
            .filter(|a| self.allows(*a))
            .collect()
    }

    /// "FAILED, DEAD or SENT_UNVERIFIED": the states `action` accepts, for
    /// the refusal of a row found in another one.
    fn expected(action: ManualAction) -> String {
        let states: Vec<&str> = Self::accepted_by(action).iter().map(|s| s.text()).collect();
        match states.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }
}

/// The table above, one line per kind.
macro_rules! manual_actions {
    ($($state:ident: retry [$($retry:ident),+], mark [$($mark:ident),+];)+) => {$(
        impl ManualActions for $state {
            fn accepted_by(action: ManualAction) -> &'static [Self] {
                match action {
                    ManualAction::Retry => &[$(Self::$retry),+],
                    ManualAction::MarkDelivered => &[$(Self::$mark),+],
                }
            }
            fn text(self) -> &'static str {
                self.as_str()
            }
        }
    )+};
}

manual_actions! {
    DeliveryState: retry [Failed, Unverified], mark [Unverified];
    OutboundState: retry [Failed, Dead], mark [SentUnverified];
    ReplyState: retry [Failed, Dead, SentUnverified], mark [SentUnverified];
}

#[cfg(test)]
mod tests {
    use super::{ManualAction::*, *};

    #[test]
    fn deliveries_retry_failed_and_unverified_and_mark_only_unverified() {
        let actions = |s: DeliveryState| s.manual_actions();
        assert_eq!(actions(DeliveryState::Failed), vec![Retry]);
        assert_eq!(
            actions(DeliveryState::Unverified),
            vec![Retry, MarkDelivered]
        );
        for s in [
            DeliveryState::Queued,
            DeliveryState::WaitingBoundary,
            DeliveryState::Resuming,
            DeliveryState::Writing,
            DeliveryState::Delivered,
        ] {
            assert!(actions(s).is_empty(), "{s:?}");
        }
        assert_eq!(DeliveryState::expected(Retry), "FAILED or UNVERIFIED");
        assert_eq!(DeliveryState::expected(MarkDelivered), "UNVERIFIED");
    }

    #[test]
    fn outbound_retries_failed_and_dead_and_never_resends_an_unverified_send() {
        let actions = |s: OutboundState| s.manual_actions();
        assert_eq!(actions(OutboundState::Failed), vec![Retry]);
        assert_eq!(actions(OutboundState::Dead), vec![Retry]);
        assert_eq!(actions(OutboundState::SentUnverified), vec![MarkDelivered]);
        for s in [
            OutboundState::Pending,
            OutboundState::Sending,
            OutboundState::Delivered,
        ] {
            assert!(actions(s).is_empty(), "{s:?}");
        }
        assert_eq!(OutboundState::expected(Retry), "FAILED or DEAD");
    }

    #[test]
    fn gateway_replies_retry_failed_dead_and_unverified() {
        let actions = |s: ReplyState| s.manual_actions();
        assert_eq!(actions(ReplyState::Failed), vec![Retry]);
        assert_eq!(actions(ReplyState::Dead), vec![Retry]);
        assert_eq!(
            actions(ReplyState::SentUnverified),
            vec![Retry, MarkDelivered]
        );
        for s in [
            ReplyState::Pending,
            ReplyState::Sending,
            ReplyState::Delivered,
        ] {
            assert!(actions(s).is_empty(), "{s:?}");
        }
        assert_eq!(
            ReplyState::expected(Retry),
            "FAILED, DEAD or SENT_UNVERIFIED"
        );
        assert_eq!(ReplyState::expected(MarkDelivered), "SENT_UNVERIFIED");
    }
}
