//! The results of the tools: each type is what a successful call returns as
//! `structuredContent` (and as its text) and the source of that tool's
//! `outputSchema`. Error results (`isError: true`) carry only the text
//! `{error}` and are not bound by these schemas.
//!
//! Results the adapter builds are plain structs. Results the core returns
//! (the task view, the outbox's answers) are passed through unchanged by a
//! transparent wrapper whose schema is a `…Shape`: the documented part of
//! that result (more fields may be present).

use std::borrow::Cow;

use harness_core::{
    model::TaskView,
    outbox::{PushOutcome, targets::TargetsAnswer},
};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

/// A core result passed through as it serialises, described by `Shape`.
macro_rules! described_by {
    ($name:ident($inner:ty), $shape:ty) => {
        #[derive(Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                <$shape>::schema_name()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                <$shape>::json_schema(generator)
            }
        }
    };
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskOut {
    pub parked: bool,
    pub request_id: String,
    pub deduped: bool,
    pub message: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_channel_configured: bool,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotifyOut {
    pub ok: bool,
    pub message_id: String,
}

/// `reply_to_ask`: the reply's outcome, or `{no_pending: true, taskId}` when
/// the task has no open question.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyOut {
    pub task_id: String,
    #[serde(flatten)]
    pub replied: Option<Replied>,
    #[serde(rename = "no_pending", skip_serializing_if = "std::ops::Not::not")]
    pub no_pending: bool,
    /// The task's approval was decided before this answer (the first
    /// answer wins): who decided it, and when. Tell the person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_decided: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Replied {
    pub ok: bool,
    #[schemars(with = "String")]
    pub mode: harness_core::messaging::ResumeMode,
    pub injected: bool,
    pub deduped: bool,
    pub delivery_id: Option<String>,
    pub delivery: &'static str,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GoalOut {
    pub ok: bool,
    pub task_id: String,
    pub goal_mode: bool,
    pub authorization_granted: bool,
}

described_by!(TaskOut(TaskView), TaskShape);
described_by!(TargetsOut(TargetsAnswer), TargetsShape);
described_by!(PushOut(PushOutcome), PushShape);

/// A Workbench batch transition's answer (`Deliveries::batch_transition`).
pub use harness_core::inbox::BatchTransition as BatchOut;

// The shapes: schema only, never built. A field the result may omit is
// marked `skip_serializing_if` (an output schema describes what is written).

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[expect(dead_code, reason = "schema only")]
pub struct TaskShape {
    id: String,
    title: String,
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unattended: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    open_ask: bool,
    /// The state of the latest execution's agent as last recorded: `state`
    /// (working, waiting_for_person, idle, usage_limited, erroring,
    /// logged_out, stalled, exited, crashed), `reason` in words, `lines`
    /// (the screen lines that show it), `since`, and its details.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_state: Option<Map<String, Value>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[expect(dead_code, reason = "schema only")]
pub struct TargetsShape {
    scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    active: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    no_channel_configured: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    capability_unavailable: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    error: String,
    instructions: String,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[expect(dead_code, reason = "schema only")]
pub struct PushShape {
    ok: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    scope: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    expect_reply: bool,
    outbound_id: String,
    state: String,
    deduped: bool,
    sent: bool,
    parked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    platform_message_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_error: Option<String>,
}
