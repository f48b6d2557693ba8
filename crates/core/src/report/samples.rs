//! One of each value the report's phrase tables speak about: every
//! [`Said`] (with each [`Refusal`] and [`Expected`]), a spread of
//! [`Blocks`] and every run end reason. The tests of each table — the
//! core's per language (`words`) and the page's (`app::api::report_words`) —
//! walk these, so a new variant is added here once and checked everywhere.

use super::{
    batch::{Expected, Refusal},
    rank::Blocks,
    reply::Said,
};

/// Every [`Said`], [`Refusal`] and [`Expected`].
pub fn said() -> Vec<Said> {
    let not_understood = |expected| {
        Said::Refused(Refusal::NotUnderstood {
            number: 4,
            text: "x".into(),
            expected,
        })
    };
    let answered = |again| Said::Answered {
        text: "B".into(),
        again,
    };
    let decided = |state: &str| Said::AlreadyDecided {
        state: state.into(),
        by: "web".into(),
    };
    let gone = |state: &str| Said::NoLongerWaiting {
        state: state.into(),
    };
    vec![
        answered(false),
        answered(true),
        Said::Approved { again: false },
        Said::Approved { again: true },
        Said::Denied { again: false },
        Said::Denied { again: true },
        Said::LeftWaiting,
        Said::Resumed,
        Said::Restarted,
        Said::Stopped,
        Said::AlreadyAnswered { answer: "B".into() },
        decided("approved"),
        decided("denied"),
        gone("cancelled"),
        gone("expired"),
        gone("ignored"),
        Said::Gone,
        Said::AgentActedUpon,
        Said::OnItsPage {
            link: "/tasks/ct1".into(),
        },
        Said::DoesNotFit,
        Said::Refused(Refusal::UnknownNumber(9)),
        Said::Refused(Refusal::Ambiguous(2)),
        Said::Refused(Refusal::NoAnswer(3)),
        not_understood(Expected::Option),
        not_understood(Expected::Decision),
        not_understood(Expected::AgentAction),
        Said::Failed("boom".into()),
    ]
}

/// What blocks a waiting item, over the ranges its words change at.
pub fn blocks() -> Vec<Blocks> {
    let mut out = Vec::new();
    for (agents, plan_tasks) in [(1, 0), (3, 1), (1, 2)] {
        for agent_minutes in [0, 45, 60, 90] {
            for default_soon in [false, true] {
                out.push(Blocks {
                    agents,
                    plan_tasks,
                    agent_minutes,
                    default_soon,
                });
            }
        }
    }
    out
}

/// Every end reason of a run.
pub const END_REASONS: [&str; 5] = [
    "exited",
    "stopped",
    "interrupted",
    "spawn_failed",
    "superseded",
];
