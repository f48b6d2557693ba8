//! The gateway's MCP tools (docs/tower-messaging.md §4.4; the gateway profile,
//! `GATEWAY_TOOLS`): `resolve_gateway_task_context`, `continue_bound_task`
//! and `relay_channel_reply`, with the reference's camelCase parameters.
//! Thin adapters over `harness_core::gateway`.

use harness_core::gateway::{
    context::{self, TaskContextInput},
    continuation::{self, ContinueInput},
    relay::RelayInput,
};
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    HarnessMcp,
    args::absent_not_null,
    params::{Caller, Parameters, ToolError},
};

#[derive(JsonSchema)]
#[schemars(inline, rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only: the core checks the gateway")]
enum GatewayName {
    Hermes,
    Openclaw,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct ContextArgs {
    #[schemars(required, with = "Option<GatewayName>")]
    gateway: Option<String>,
    #[schemars(required, length(min = 1, max = context::MAX_PLATFORM_CHARS))]
    platform: Option<String>,
    #[schemars(required, length(min = 1, max = context::MAX_ID_CHARS))]
    chat_id: Option<String>,
    /// The platform id of the message being replied to.
    #[schemars(length(max = context::MAX_ID_CHARS))]
    reply_to_message_id: Option<String>,
    #[schemars(length(max = context::MAX_QUOTED_CHARS))]
    quoted_text: Option<String>,
    #[schemars(length(max = context::MAX_TASK_ID_CHARS))]
    task_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct ContinueArgs {
    #[serde(flatten)]
    context: ContextArgs,
    /// This message's platform id: the continuation happens once per id.
    #[schemars(required, length(min = 1, max = context::MAX_ID_CHARS))]
    platform_message_id: Option<String>,
    /// The verified sender: must be the configured OWNER.
    #[schemars(length(max = context::MAX_ID_CHARS))]
    sender_id: Option<String>,
    #[schemars(required, length(min = 1, max = continuation::MAX_CONTENT_CHARS))]
    content: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct RelayArgs {
    #[schemars(required, length(min = 1, max = harness_core::validate::MAX_REPLY_CHARS))]
    text: Option<String>,
    #[schemars(length(max = context::MAX_TASK_ID_CHARS))]
    task_id: Option<String>,
    #[schemars(with = "Option<GatewayName>")]
    gateway: Option<String>,
    #[schemars(length(max = context::MAX_PLATFORM_CHARS))]
    platform: Option<String>,
    #[schemars(length(max = context::MAX_ID_CHARS))]
    chat_id: Option<String>,
    /// The id of the Harness message being replied to.
    #[schemars(length(max = context::MAX_ID_CHARS))]
    platform_message_id: Option<String>,
    #[schemars(length(max = context::MAX_QUOTED_CHARS))]
    quoted_text: Option<String>,
    /// The verified sender of the reply: recorded as who decided when it
    /// decides an approval.
    #[schemars(length(max = harness_core::validate::MAX_SENDER_ID_CHARS))]
    sender_id: Option<String>,
}

impl From<ContextArgs> for TaskContextInput {
    fn from(a: ContextArgs) -> Self {
        Self {
            gateway: a.gateway,
            platform: a.platform,
            chat_id: a.chat_id,
            reply_to_message_id: a.reply_to_message_id,
            quoted_text: a.quoted_text,
            task_id: a.task_id,
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => Map::from_iter([("result".to_string(), other)]),
    }
}

#[tool_router(router = gateway_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Which Harness task a chat message refers to (the reply-to message sent into \
             this chat, an explicit taskId, or the [[tower:task=<id>]] token in the quoted text): \
             the task's status, whether it has an OPEN question, its project and latest run. \
             Read-only: nothing is recorded, resumed or typed. One of replyToMessageId, quotedText \
             or taskId is required."
    )]
    async fn resolve_gateway_task_context(
        &self,
        Caller(_who): Caller,
        Parameters(a): Parameters<ContextArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let out = self
            .harness
            .gateway()
            .resolve_gateway_task_context(&a.into())
            .await?;
        Ok(Json(object(serde_json::to_value(out).unwrap_or_default())))
    }

    #[tool(
        description = "The OWNER's explicit continuation (\"continue\", \"fix it from this failure\", \
             \"rerun\") of the task the message is bound to: typed into the task's terminal once \
             per platformMessageId (a repeat answers deduped/noOp). Refused for a task with an \
             OPEN question — answer that with reply_to_ask."
    )]
    async fn continue_bound_task(
        &self,
        Caller(_who): Caller,
        Parameters(a): Parameters<ContinueArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let c = a.context;
        let input = ContinueInput {
            gateway: c.gateway,
            platform: c.platform,
            chat_id: c.chat_id,
            platform_message_id: a.platform_message_id,
            sender_id: a.sender_id,
            reply_to_message_id: c.reply_to_message_id,
            quoted_text: c.quoted_text,
            task_id: c.task_id,
            content: a.content,
        };
        Ok(Json(object(
            self.harness.gateway().continue_bound_task(&input).await?,
        )))
    }

    #[tool(
        description = "Compatibility: relay a chat reply to a Harness task. It answers the task's \
             question only when the reply is owed to an OPEN ask; an ordinary reply returns the \
             task's context (mode task_context) and is never typed into the task."
    )]
    async fn relay_channel_reply(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<RelayArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let person = self.harness.gateway().gateway_person(&who, None).await?;
        let input = RelayInput {
            text: a.text,
            task_id: a.task_id,
            gateway: a.gateway,
            platform: a.platform,
            chat_id: a.chat_id,
            platform_message_id: a.platform_message_id,
            quoted_text: a.quoted_text,
            sender_id: a.sender_id,
        };
        Ok(Json(object(
            self.harness
                .gateway()
                .relay_channel_reply(&person, &input)
                .await?,
        )))
    }
}
