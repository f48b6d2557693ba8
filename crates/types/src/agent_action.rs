//! Harness' automatic actions on an unattended agent: what an action does,
//! the agent's state it answers, and its state on the durable-work engine
//! (docs/agent-states.md, docs/durable-work.md). When an action is planned
//! and how it is done are the core's (`harness_core::agent_actions`).

use crate::macros::string_enum;

string_enum!(
    /// What the action does.
    ActionKind {
        /// Type "continue" into the live agent (resume it with its session
        /// first when its process exited: a usage limit's wake-up).
        Continue => "continue",
        /// Start the exited agent again with its provider session.
        Resume => "resume",
        /// Start the crashed agent again with its session (a `command`
        /// agent with `restartOnInterrupt`: from its start).
        Restart => "restart",
        /// Type the policy's nudge text into a stalled agent, once.
        Nudge => "nudge",
        /// Press the key of the option of a CLI's own dialog that keeps the
        /// task as configured.
        AnswerDialog => "answer_dialog",
    }
);

string_enum!(
    /// Why: the agent's state the action answers.
    ActionReason {
        /// The account's usage limit: woken at its reset.
        UsageLimit => "usage_limit",
        /// A CLI that waits for its reset by itself: checked after it.
        UsageLimitSelfWait => "usage_limit_self_wait",
        /// The CLI stopped retrying its API: "continue" after a backoff.
        ApiErrors => "api_errors",
        /// The process crashed or exited with a failure.
        Crash => "crash",
        /// No output for the stall threshold.
        Stalled => "stalled",
        /// A dialog of the CLI blocks the terminal.
        Dialog => "dialog",
    }
);

string_enum!(
    /// The engine's states of an action (`harness_core::work::AGENT_ACTIONS`).
    ActionState {
        /// Due at `next_attempt_at`.
        Pending => "PENDING",
        /// Claimed: the action may be under way.
        Running => "RUNNING",
        Done => "DONE",
        /// A clean failure: due again at `next_attempt_at`.
        Failed => "FAILED",
        /// Not done and never due again (no longer applies, or the cap).
        GaveUp => "GAVE_UP",
        /// It may or may not have been done (a crash mid-attempt): never
        /// done again automatically.
        Unverified => "UNVERIFIED",
        /// A person acted first, or a newer state of the agent replaced it.
        Cancelled => "CANCELLED",
    }
);

impl ActionState {
    /// Still to be done (due, or under way).
    pub fn open(self) -> bool {
        matches!(self, Self::Pending | Self::Running | Self::Failed)
    }

    /// Waits for its time (`next_attempt_at`): due, or due again after a
    /// clean failure.
    pub fn scheduled(self) -> bool {
        matches!(self, Self::Pending | Self::Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::macros::round_trip;

    #[test]
    fn texts_are_the_serde_names() {
        round_trip!(
            ActionKind,
            ["continue", "resume", "restart", "nudge", "answer_dialog"]
        );
        round_trip!(
            ActionReason,
            [
                "usage_limit",
                "usage_limit_self_wait",
                "api_errors",
                "crash",
                "stalled",
                "dialog"
            ]
        );
        round_trip!(
            ActionState,
            [
                "PENDING",
                "RUNNING",
                "DONE",
                "FAILED",
                "GAVE_UP",
                "UNVERIFIED",
                "CANCELLED"
            ]
        );
    }

    #[test]
    fn open_and_scheduled_states() {
        let open: Vec<ActionState> = ActionState::ALL
            .iter()
            .copied()
            .filter(|s| s.open())
            .collect();
        assert_eq!(
            open,
            [
                ActionState::Pending,
                ActionState::Running,
                ActionState::Failed
            ]
        );
        let scheduled: Vec<ActionState> = ActionState::ALL
            .iter()
            .copied()
            .filter(|s| s.scheduled())
            .collect();
        assert_eq!(scheduled, [ActionState::Pending, ActionState::Failed]);
    }
}
