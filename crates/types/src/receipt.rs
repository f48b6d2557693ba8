//! A question's receipt (docs/evidence.md): the steps of its timeline and
//! how far each got. Building the timeline from the rows Harness writes is
//! the core's (`harness_core::receipt`).

use serde::{Deserialize, Serialize};

use crate::macros::text_enum;

/// One step of a question's life.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// The agent asked.
    Asked,
    /// The question was sent to the person's chat (the outbox row).
    Pushed,
    /// A reminder was sent.
    Reminded,
    /// The question was escalated to another notify target.
    Escalated,
    /// A person (or the deadline's default) answered.
    Answered,
    /// The answer was typed into the agent's terminal.
    Typed,
    /// The agent went on after the answer.
    Resumed,
    /// The agent's screen a few seconds after the answer was typed.
    ScreenAfter,
}

/// How far a step got.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// It happened (`at`).
    Done,
    /// Not yet, and not late.
    Waiting,
    /// It should have happened by now: the question stalled here.
    Stalled,
    /// It will not happen by itself (a dead push, a failed delivery, an
    /// ask that ended unanswered).
    Failed,
    /// It may or may not have happened (a send without a message id, a
    /// write cut by a crash): a person decides.
    Unverified,
    /// Not applicable (no agent ever ran to type into, no screen captured).
    Skipped,
}

text_enum!(StepKind {
    Asked = "asked",
    Pushed = "pushed",
    Reminded = "reminded",
    Escalated = "escalated",
    Answered = "answered",
    Typed = "typed",
    Resumed = "resumed",
    ScreenAfter = "screen_after",
});
text_enum!(StepStatus {
    Done = "done",
    Waiting = "waiting",
    Stalled = "stalled",
    Failed = "failed",
    Unverified = "unverified",
    Skipped = "skipped",
});

impl StepKind {
    /// Every step, in the timeline's order.
    pub const ALL: [Self; 8] = [
        Self::Asked,
        Self::Pushed,
        Self::Reminded,
        Self::Escalated,
        Self::Answered,
        Self::Typed,
        Self::Resumed,
        Self::ScreenAfter,
    ];
}

impl StepStatus {
    pub const ALL: [Self; 6] = [
        Self::Done,
        Self::Waiting,
        Self::Stalled,
        Self::Failed,
        Self::Unverified,
        Self::Skipped,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::macros::round_trip;

    #[test]
    fn texts_are_the_serde_names() {
        round_trip!(
            StepKind,
            [
                "asked",
                "pushed",
                "reminded",
                "escalated",
                "answered",
                "typed",
                "resumed",
                "screen_after",
            ]
        );
        round_trip!(
            StepStatus,
            [
                "done",
                "waiting",
                "stalled",
                "failed",
                "unverified",
                "skipped"
            ]
        );
    }
}
