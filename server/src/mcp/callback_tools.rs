//! The Workbench's callbacks for gateway requests (docs/tower-messaging.md
//! docs/tower-messaging.md §4.6): `confirm_gateway_task_created`, `complete_gateway_discussion`,
//! `complete_gateway_work` — in the agent profile, but only the bound
//! Workbench's own credential is accepted (the core's rule,
//! `harness_core::gateway::workbench_callbacks`).

use harness_core::gateway::workbench_callbacks::{self as cb, Callback, CallbackInput};
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    HarnessMcp,
    args::absent_not_null,
    params::{Caller, Parameters, ToolError},
};

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct TaskCreatedArgs {
    #[schemars(required, length(min = 1, max = cb::MAX_ID_CHARS))]
    inbound_id: Option<String>,
    #[schemars(required, length(min = 1, max = cb::MAX_ID_CHARS))]
    task_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct DiscussionArgs {
    #[schemars(required, length(min = 1, max = cb::MAX_ID_CHARS))]
    inbound_id: Option<String>,
    /// The answer the person gets in the chat.
    #[schemars(required, length(min = 1, max = cb::MAX_RESPONSE_CHARS))]
    response: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct WorkArgs {
    #[schemars(required, length(min = 1, max = cb::MAX_ID_CHARS))]
    inbound_id: Option<String>,
    #[schemars(required, length(min = 1, max = cb::MAX_ID_CHARS))]
    task_id: Option<String>,
    #[schemars(length(min = 1, max = cb::MAX_SUMMARY_CHARS))]
    result_summary: Option<String>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => Map::from_iter([("result".to_string(), other)]),
    }
}

#[tool_router(router = callback_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Workbench only: confirm the task you created (create_task with \
             gatewayInboundId) for a gateway work request; the person is told once."
    )]
    async fn confirm_gateway_task_created(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<TaskCreatedArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let input = CallbackInput {
            inbound_id: a.inbound_id,
            task_id: a.task_id,
            ..Default::default()
        };
        Ok(Json(object(
            self.harness
                .gateway()
                .gateway_callback(&who, Callback::TaskCreated, &input)
                .await?,
        )))
    }

    #[tool(
        description = "Workbench only: answer a gateway project discussion; the answer is sent \
             once as a reply to the person's message."
    )]
    async fn complete_gateway_discussion(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<DiscussionArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let input = CallbackInput {
            inbound_id: a.inbound_id,
            response: a.response,
            ..Default::default()
        };
        Ok(Json(object(
            self.harness
                .gateway()
                .gateway_callback(&who, Callback::Discussion, &input)
                .await?,
        )))
    }

    #[tool(
        description = "Workbench only: report the reviewed result of a gateway work request's \
             task (stopped, confirmed first); sent once as a reply to the person's message."
    )]
    async fn complete_gateway_work(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<WorkArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let input = CallbackInput {
            inbound_id: a.inbound_id,
            task_id: a.task_id,
            result_summary: a.result_summary,
            ..Default::default()
        };
        Ok(Json(object(
            self.harness
                .gateway()
                .gateway_callback(&who, Callback::Final, &input)
                .await?,
        )))
    }
}
