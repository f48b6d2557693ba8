//! The storage port, one small object-safe trait per aggregate:
//! [`TaskStore`] (projects, tasks, executions, credentials), [`MessageStore`]
//! (asks, notifies, replies), [`ChoicesStore`] (structured questions),
//! [`DeliveryStore`] (the durable delivery queue), [`OutboxStore`] (messages
//! owed to a gateway), [`InboxStore`] (a parent's workbench events and
//! batches), [`SettingsStore`], [`StatsStore`], [`ReminderStore`] (reminders of OPEN asks), [`ApprovalStore`] (held tool
//! calls), [`GatewayStore`] (the inbound side of the gateways: per-chat
//! delivery mappings, signed requests' nonces, inbound platform messages),
//! [`GatewayRouteStore`] (routed gateway requests, sessions, admission),
//! [`AgentActionStore`] (timed automatic actions on unattended agents) and
//! [`SessionStore`] (browser sessions), [`NodeStore`] (the nodes of a
//! cluster), [`ToolCheckStore`] (pre-tool checks seen, ungated runs), [`ReportStore`] (the morning
//! report's facts and the reports kept) and [`WorkStore`]
//! (the recovery every kind of owed work shares, with the kinds' definitions). Every method is one atomic
//! unit of work (one transaction where it writes). Implementations live outside
//! the core (`harness-store`); the core never sees SQL.
//!
//! [`Store`] is the combined port the core holds (`Arc<dyn Store>`): one
//! backend implements every aggregate, so a unit of work that spans two of
//! them (an ask parks executions; a reply resumes them) stays one transaction
//! inside the backend. Any type implementing all the aggregate traits is a
//! `Store` (blanket impl). A new aggregate is a new module here plus one more
//! bound on `Store`.
//!
//! **The port's types belong to the port.** Every row and record a method
//! takes or returns is defined in these files (a delivery, an outbound row,
//! a workbench event, an ask's choices …) and only re-exported by the
//! service modules that apply their rules (`crate::deliveries`,
//! `crate::outbox`, `crate::inbox`, `crate::options`), so a backend depends
//! on this module alone. The one exception is [`crate::model`], the shared
//! domain model (tasks, executions, messages and their states) that the
//! port, the services and the API all speak; it imports nothing from the
//! services either. Nothing here imports a service module.

mod agent_actions;
mod agent_states;
mod approvals;
mod choices;
mod deliveries;
mod gateway;
mod gateway_replies;
mod gateway_routes;
mod inbox;
mod messages;
mod nodes;
mod outbox;
mod receipts;
mod reminders;
mod reports;
mod sessions;
mod settings;
mod stats;
mod tasks;
mod tool_checks;
mod work;

pub use agent_actions::{
    ActionKind, ActionReason, ActionSettle, ActionState, ActionTurn, AgentAction, AgentActionStore,
    NewAction,
};
pub use agent_states::{
    AgentStateStore, AgentStateWrite, AgentStateWritten, LatestRun, RecordedState,
};
pub use approvals::{
    Approval, ApprovalAsked, ApprovalDecided, ApprovalDecision, ApprovalQuery, ApprovalState,
    ApprovalStore, NewApproval, approval_push_key,
};
pub use choices::{ANSWERED_BY_DEFAULT, AskOption, Choices, ChoicesStore, DueDefault, Urgency};
pub use deliveries::{
    Claimed, Delivery, DeliveryClaim, DeliveryKind, DeliveryState, DeliveryStore, NewInput,
};
pub use gateway::{
    GatewayInbound, GatewayStore, InboundClaim, InboundFinish, InboundIntent, InboundState,
    NewInbound,
};
pub use gateway_replies::{GatewayReply, NewReply, ReplyKind, ReplySettle, ReplyState, ReplyTurn};
pub use gateway_routes::{
    Admission, AdmissionCounts, AdmissionLimits, GatewayRouteStore, GatewaySession, InboundMark,
    NewSession, RequestSettle, RouteCountQuery, RouteCounts, RouteRecord, RouteWrite,
    SessionLookup, SessionStatus,
};
pub use inbox::{
    BatchState, EventKind, EventState, InboxStore, MessageRole, NewBatch, NewEvent, Priority,
    TaskMessage, WorkbenchBatch, WorkbenchEvent,
};
pub use messages::{Answered, AskRecorded, Dismissed, MessageStore, NewAsk};
pub use nodes::{NodeRow, NodeStore};
pub use outbox::{
    Dedup, DeliveryMapping, Enqueued, NewOutbound, Outbound, OutboundState, OutboxStore, Settle,
    SettleBatch, Settled, SettledBatch,
};
pub use receipts::{AnswerScreen, ReceiptStore};
pub use reminders::{
    ChatActivity, Escalation, EscalationReason, NewEscalation, NewReminder, Reminder,
    ReminderCandidate, ReminderStore, SendFailure,
};
pub use reports::{
    ExecutionFact, ItemKind, ItemRef, MessageFact, NewReport, ReportChannel, ReportStore,
    StoredReport, report_of_key, report_part_key,
};
pub use sessions::SessionStore;
pub use settings::SettingsStore;
pub use stats::AnswerHistogram;
pub use stats::{AskTiming, StatsStore, StoreCounts};
pub use stats::{TRANSACTION_BOUNDS, TransactionLatency};
pub use tasks::{NewExecution, NewProject, NewTask, RebootRow, RebootState, TaskStore};
pub use tool_checks::{
    NewToolCheck, NewUngatedFlag, ToolCheckStore, UngatedEvidence, UngatedFlag, UngatedFlagged,
    ungated_push_key,
};
pub use work::{
    AGENT_ACTIONS, DELIVERIES, GATEWAY_REPLIES, INBOX, Kind, KindDef, Lapsed, OUTBOX, Recovered,
    RecoveredAs, WorkStore,
};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A referenced row does not exist (foreign key).
    #[error("referenced {0} does not exist")]
    MissingReference(&'static str),
    /// A uniqueness rule was violated.
    #[error("duplicate {0}")]
    Duplicate(&'static str),
    /// The backend failed (I/O, corruption, pool closed…).
    #[error("database backend error: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A stored value could not be decoded.
    #[error("corrupt stored value in {column}: {value}")]
    Corrupt { column: &'static str, value: String },
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Persistence for the whole Harness domain: every aggregate of one backend.
pub trait Store:
    TaskStore
    + MessageStore
    + SettingsStore
    + DeliveryStore
    + StatsStore
    + InboxStore
    + ChoicesStore
    + OutboxStore
    + ApprovalStore
    + GatewayStore
    + GatewayRouteStore
    + ReminderStore
    + ReportStore
    + SessionStore
    + NodeStore
    + ToolCheckStore
    + AgentActionStore
    + WorkStore
    + AgentStateStore
    + ReceiptStore
{
}

impl<T> Store for T where
    T: TaskStore
        + MessageStore
        + SettingsStore
        + DeliveryStore
        + StatsStore
        + InboxStore
        + ChoicesStore
        + OutboxStore
        + ApprovalStore
        + GatewayStore
        + GatewayRouteStore
        + ReminderStore
        + ReportStore
        + SessionStore
        + NodeStore
        + ToolCheckStore
        + AgentActionStore
        + WorkStore
        + AgentStateStore
        + ReceiptStore
{
}
