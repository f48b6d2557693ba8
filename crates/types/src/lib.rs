//! Harness' shared vocabulary: the states and kinds of its rows, what a
//! person may do in each state, and the small pure texts both sides show.
//! Used by the core (which re-exports the types where its models have
//! them, with the same JSON) and by the web UI in the browser — so the
//! browser never spells a state as a string. No I/O, no async runtime:
//! it builds for `wasm32-unknown-unknown`.

#![forbid(unsafe_code)]

mod macros;

pub mod agent_action;
pub mod agent_state;
pub mod approval;
pub mod approval_words;
pub mod channel;
pub mod delivery;
pub mod gateway;
pub mod inbox;
pub mod manual;
pub mod message;
pub mod outbound;
pub mod plan;
pub mod receipt;
pub mod report;
pub mod task;
pub mod waited;
pub mod workbench;

pub use agent_action::{ActionKind, ActionReason, ActionState};
pub use agent_state::{AgentStateName, Severity};
pub use approval::ApprovalState;
pub use channel::ChannelHealth;
pub use delivery::{DeliveryKind, DeliveryState};
pub use gateway::{ChatAccess, InboundIntent, InboundState, ReplyKind, ReplyState, SessionStatus};
pub use inbox::{BatchState, EventKind, EventState, Priority};
pub use manual::{ManualAction, ManualActions};
pub use message::{MessageKind, MessageState, MessageView, ResumeMode};
pub use outbound::OutboundState;
pub use plan::{PlanState, PlanStatus};
pub use receipt::{StepKind, StepStatus};
pub use report::AskedState;
pub use task::{Action, Blocked, ExecutionStatus, Provider, RunState, TaskStatus};
pub use waited::waited_text;
pub use workbench::{BlockedReason, RuntimeState};
