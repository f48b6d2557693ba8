//! The resident Workbench's runtime state as the project page shows it
//! (docs/tower-workbench.md §2.9). The derivation is the core's
//! (`harness_core::workbench_runtime::derive`).

use serde::{Deserialize, Serialize};

/// The Workbench's runtime state.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RuntimeState {
    /// At a provider turn end, no batch on its way: the next batch can go in.
    Idle,
    /// A turn in progress or a batch being processed.
    Busy,
    /// The database says the agent runs but no live terminal session exists.
    Degraded,
    /// No agent running.
    Stopped,
}

impl RuntimeState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "IDLE",
            Self::Busy => "BUSY",
            Self::Degraded => "DEGRADED",
            Self::Stopped => "STOPPED",
        }
    }
}

/// Why the Workbench is not taking new work (stable code; English text in
/// [`Blocked::message`], the UI translates the code).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockedReason {
    NotRunning,
    NoLiveSession,
    ProcessingBatch,
    TurnInProgress,
    AwaitingDispatch,
}

impl BlockedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotRunning => "not_running",
            Self::NoLiveSession => "no_live_session",
            Self::ProcessingBatch => "processing_batch",
            Self::TurnInProgress => "turn_in_progress",
            Self::AwaitingDispatch => "awaiting_dispatch",
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            Self::NotRunning => "Workbench terminal is not running",
            Self::NoLiveSession => {
                "Database execution is RUNNING but no live terminal session exists"
            }
            Self::ProcessingBatch => "Workbench is processing a durable batch",
            Self::TurnInProgress => "Provider turn in progress",
            Self::AwaitingDispatch => "Durable work is awaiting dispatch",
        }
    }
}
