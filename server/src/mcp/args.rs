//! The arguments of the tools: each struct is what a call is parsed into and
//! the source of that tool's `inputSchema`. Fields are as lenient as the core
//! wants them (`Option`, raw JSON for the choices), so the core rejects bad
//! values with the same messages on every surface (REST, hooks, MCP); the
//! limits shown are the core's validation constants.
//!
//! `#[schemars(required)]` on an `Option` field: the schema requires it while
//! the parse leaves a missing value to the core's "… required" message.

use std::{borrow::Cow, collections::BTreeMap};

use harness_core::{
    HarnessConfig,
    options::{self, ChoicesInput},
    tasks::{AgentInput, CreateTask},
    validate,
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::Value;

/// The description of every `taskId`.
pub const TASK_ID: &str = "Task id (CUID). Defaults to this terminal's TOWER_TASK_ID.";

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct TaskArg {
    #[schemars(description = TASK_ID)]
    pub task_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct AskArgs {
    #[schemars(description = TASK_ID)]
    pub task_id: Option<String>,
    #[schemars(required, length(min = 1, max = validate::MAX_QUESTION_CHARS))]
    pub question: Option<String>,
    /// Optional: a retry with the same key returns the ask recorded before instead of asking again.
    #[schemars(length(max = validate::MAX_IDEMPOTENCY_KEY_CHARS))]
    pub idempotency_key: Option<String>,
    #[serde(flatten)]
    pub choices: AskChoices,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct NotifyArgs {
    #[schemars(description = TASK_ID)]
    pub task_id: Option<String>,
    #[schemars(required, length(min = 1, max = validate::MAX_NOTIFY_CHARS))]
    pub message: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct ReplyArgs {
    #[schemars(description = TASK_ID)]
    pub task_id: Option<String>,
    #[schemars(required, length(min = 1, max = validate::MAX_REPLY_CHARS))]
    pub text: Option<String>,
    /// The gateway's verified sender of a reply from chat: recorded as who
    /// decided when the reply decides an approval.
    #[schemars(length(max = validate::MAX_SENDER_ID_CHARS))]
    pub sender_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct GoalArgs {
    #[schemars(description = TASK_ID)]
    pub task_id: Option<String>,
    #[schemars(required)]
    pub on: Option<bool>,
    /// Accepted so it is refused with a reason (no scheduled wake-ups in this
    /// version); not advertised.
    #[schemars(skip)]
    pub wake_after_seconds: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct InputArgs {
    #[schemars(required, description = TASK_ID)]
    pub task_id: Option<String>,
    #[schemars(required, length(min = 1, max = validate::MAX_TERMINAL_INPUT_CHARS))]
    pub text: Option<String>,
    #[schemars(extend("default" = true))]
    pub submit: Option<bool>,
    #[schemars(length(min = 1, max = validate::MAX_INPUT_KEY_CHARS))]
    pub idempotency_key: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct CreateTaskArgs {
    #[schemars(required, length(min = 1, max = validate::MAX_TITLE_CHARS))]
    pub title: Option<String>,
    pub description: Option<String>,
    pub project_id: Option<String>,
    pub parent_task_id: Option<String>,
    pub agent: Option<AgentArgs>,
    /// The gateway work request (inboundId) this task is created for: the
    /// bound Workbench only; a retry returns the same task.
    pub gateway_inbound_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(inline, transform = absent_not_null)]
pub struct AgentArgs {
    #[schemars(with = "Option<ProviderName>")]
    pub provider: Option<String>,
    pub command: Option<Vec<String>>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Provider `command` only: start it again after a reboot interrupted
    /// it, when its task is unattended (default false).
    pub restart_on_interrupt: Option<bool>,
}

// The providers `create_task` accepts (`harness_core::model::Provider`).
#[derive(JsonSchema)]
#[schemars(inline, rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only: the core parses the provider")]
enum ProviderName {
    Claude,
    Codex,
    Command,
}

impl From<CreateTaskArgs> for CreateTask {
    fn from(a: CreateTaskArgs) -> Self {
        CreateTask {
            title: a.title,
            description: a.description,
            project_id: a.project_id,
            parent_task_id: a.parent_task_id,
            agent: a.agent.map(|agent| AgentInput {
                provider: agent.provider,
                command: agent.command,
                cwd: agent.cwd,
                env: agent.env,
                restart_on_interrupt: agent.restart_on_interrupt,
                recovery: None,
            }),
            gateway_inbound_id: a.gateway_inbound_id,
        }
    }
}

// One option of a structured question (`harness_core::options::AskOption`).
#[derive(JsonSchema)]
#[schemars(inline, transform = absent_not_null)]
#[expect(dead_code, reason = "schema only: the core validates the options")]
pub struct OptionShape {
    #[schemars(length(min = 1, max = options::MAX_LABEL_CHARS))]
    label: String,
    #[schemars(length(max = options::MAX_OPTION_DESCRIPTION_CHARS))]
    description: Option<String>,
}

// The urgencies an ask accepts (`harness_core::options::Urgency`).
#[derive(JsonSchema)]
#[schemars(inline, rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only: the core parses the urgency")]
pub enum UrgencyName {
    Low,
    Normal,
    High,
}

/// `deadline`: seconds from now or an RFC 3339 time (schema only).
pub struct SecondsOrTime;

impl JsonSchema for SecondsOrTime {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "SecondsOrTime".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["integer", "string"]})
    }
}

/// Optional arguments are omitted, not `null`: the `null` schemars adds for
/// an `Option` is dropped from each property (as the schemas always said; the
/// parse still reads a `null` as absent).
pub fn absent_not_null(schema: &mut Schema) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for property in properties.values_mut().filter_map(Value::as_object_mut) {
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|t| t != "null");
            if let [single] = types.as_slice() {
                let single = single.clone();
                property.insert("type".into(), single);
            }
        }
        if let Some(Value::Array(values)) = property.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
    }
}

/// The deadline's bounds, as the core checks them (`options::validate`).
pub fn deadline_bounds() -> String {
    format!(
        "Seconds from now, or an RFC 3339 time; at least {} s, at most the ask TTL ({} days).",
        options::MIN_DEADLINE_SECS,
        HarnessConfig::DEFAULT_TTL_DAYS
    )
}

/// The structured part of a question in one tool's words: the
/// fields of [`ChoicesInput`], raw JSON for the core to validate (a missing
/// or `null` field is none).
macro_rules! choices {
    ($name:ident, options = $options:expr, deadline = $deadline:expr) => {
        #[derive(Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase")]
        #[schemars(transform = absent_not_null)]
        pub struct $name {
            #[schemars(
                                                                with = "Option<Vec<OptionShape>>",
                                                                length(max = options::MAX_OPTIONS),
                                                                description = $options
                                                            )]
            pub options: Option<Value>,
            /// Several options may be chosen.
            #[schemars(with = "Option<bool>")]
            pub multi_select: Option<Value>,
            /// The option label you will take if nobody answers by the deadline (needs a deadline).
            #[schemars(with = "Option<String>")]
            pub default: Option<Value>,
            #[schemars(with = "Option<SecondsOrTime>", description = $deadline)]
            pub deadline: Option<Value>,
            #[schemars(with = "Option<UrgencyName>")]
            pub urgency: Option<Value>,
        }

        impl From<$name> for ChoicesInput {
            fn from(c: $name) -> Self {
                ChoicesInput {
                    options: c.options,
                    multi_select: c.multi_select,
                    default: c.default,
                    deadline: c.deadline,
                    urgency: c.urgency,
                }
            }
        }
    };
}

choices!(
    AskChoices,
    options = "The choices (AskUserQuestion's shape); the human answers in one click.",
    deadline = format!(
        "{} With a default, that label is your answer when it passes.",
        deadline_bounds()
    )
);

choices!(
    PushChoices,
    options = "The choices (AskUserQuestion's shape); the chat message lists them numbered and \
               a reply of `2` or a label picks one. Makes the message a question (expectReply).",
    deadline = deadline_bounds()
);
