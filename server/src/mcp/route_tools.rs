//! The gateway's routing tools (docs/tower-messaging.md §4.4, docs/tower-messaging.md §4.5):
//! `route_gateway_message` (OWNER) and `route_gateway_query` (NON_OWNER,
//! read-only), with the reference's camelCase parameters. Thin adapters
//! over `harness_core::gateway::{route, query}`.

use harness_core::gateway::{
    access, context,
    route_input::{self, QueryInput, RouteInput},
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

/// The tool's intents: `DIRECT` is not one (the REST route answers it
/// with `direct_not_supported`).
#[derive(JsonSchema)]
#[schemars(inline)]
#[expect(dead_code, reason = "schema only: the core checks the intent")]
enum Intent {
    #[serde(rename = "TOWER")]
    Tower,
    #[serde(rename = "PROJECT_DISCUSSION")]
    ProjectDiscussion,
    #[serde(rename = "PROJECT_WORK")]
    ProjectWork,
}

#[derive(JsonSchema)]
#[schemars(inline)]
#[expect(dead_code, reason = "schema only: the core checks the action")]
enum SessionAction {
    #[serde(rename = "CONTINUE")]
    Continue,
    #[serde(rename = "NEW")]
    New,
    #[serde(rename = "CLOSE")]
    Close,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct RouteArgs {
    #[schemars(required, with = "Option<GatewayName>")]
    gateway: Option<String>,
    #[schemars(required, length(min = 1, max = context::MAX_PLATFORM_CHARS))]
    platform: Option<String>,
    #[schemars(required, length(min = 1, max = context::MAX_ID_CHARS))]
    chat_id: Option<String>,
    /// This message's platform id: it is routed once per id.
    #[schemars(required, length(min = 1, max = context::MAX_ID_CHARS))]
    platform_message_id: Option<String>,
    /// The verified sender: must be the configured OWNER.
    #[schemars(length(max = context::MAX_ID_CHARS))]
    sender_id: Option<String>,
    /// Display only, never identity.
    #[schemars(length(max = route_input::MAX_CHAT_NAME_CHARS))]
    chat_name: Option<String>,
    #[schemars(length(max = context::MAX_ID_CHARS))]
    thread_id: Option<String>,
    #[schemars(length(max = context::MAX_ID_CHARS))]
    root_message_id: Option<String>,
    #[schemars(length(max = context::MAX_ID_CHARS))]
    reply_to_message_id: Option<String>,
    #[schemars(length(max = context::MAX_QUOTED_CHARS))]
    quoted_text: Option<String>,
    #[schemars(length(max = context::MAX_TASK_ID_CHARS))]
    task_id: Option<String>,
    /// A project id, name or words identifying it.
    #[schemars(length(max = context::MAX_ID_CHARS))]
    project: Option<String>,
    #[schemars(required, with = "Option<Intent>")]
    intent: Option<String>,
    #[schemars(required, length(min = 1, max = route_input::MAX_CONTENT_CHARS))]
    content: Option<String>,
    #[schemars(with = "Option<SessionAction>")]
    session_action: Option<String>,
    /// Only for an explicit "create a new task / start new work".
    start_new_work: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct QueryArgs {
    #[schemars(required, with = "Option<GatewayName>")]
    gateway: Option<String>,
    #[schemars(required, length(min = 1, max = context::MAX_PLATFORM_CHARS))]
    platform: Option<String>,
    #[schemars(required, length(min = 1, max = context::MAX_ID_CHARS))]
    chat_id: Option<String>,
    #[schemars(length(max = context::MAX_ID_CHARS))]
    sender_id: Option<String>,
    #[schemars(length(max = context::MAX_ID_CHARS))]
    project: Option<String>,
    #[schemars(required, length(min = 1, max = route_input::MAX_QUESTION_CHARS))]
    question: Option<String>,
}

#[derive(JsonSchema)]
#[schemars(inline, rename_all = "snake_case")]
#[expect(dead_code, reason = "schema only: the core checks the action")]
enum AccessAction {
    Authorize,
    BindWorkspace,
    BindProjects,
    Unbind,
    Revoke,
    Get,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct AccessArgs {
    #[schemars(required, with = "Option<AccessAction>")]
    action: Option<String>,
    /// The inbound id of the OWNER's message in the chat concerned (from
    /// route_gateway_message): never ask for chat or sender ids.
    #[schemars(required, length(min = 1, max = access::MAX_ID_CHARS))]
    gateway_inbound_id: Option<String>,
    /// bind_workspace: the workspace's id or name.
    #[schemars(length(min = 1, max = access::MAX_QUERY_CHARS))]
    workspace: Option<String>,
    /// bind_projects: project ids or names.
    #[schemars(length(min = 1, max = access::MAX_PROJECTS))]
    projects: Option<Vec<String>>,
    #[schemars(length(min = 1, max = access::MAX_CHAT_NAME_CHARS))]
    chat_name: Option<String>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => Map::from_iter([("result".to_string(), other)]),
    }
}

#[tool_router(router = route_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Route the OWNER's chat message to Harness, once per platformMessageId (a \
             repeat answers in_progress / already_processed with noOp): a reply about a task → \
             task_context; TOWER → tower_mcp (read-only queries); a project discussion or work \
             request → queued for the project's Workbench, which answers in this chat \
             (project_discussion / project_work); no single project → needs_project_selection \
             with candidates. The project is found by the reply, the thread's session, the \
             explicit project, the words, the sender's recent project (7 days) or the chat's \
             default. sessionAction NEW starts afresh, CLOSE ends the conversation's binding."
    )]
    async fn route_gateway_message(
        &self,
        Caller(_who): Caller,
        Parameters(a): Parameters<RouteArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let input = RouteInput {
            gateway: a.gateway,
            platform: a.platform,
            chat_id: a.chat_id,
            platform_message_id: a.platform_message_id,
            sender_id: a.sender_id,
            chat_name: a.chat_name,
            thread_id: a.thread_id,
            root_message_id: a.root_message_id,
            reply_to_message_id: a.reply_to_message_id,
            quoted_text: a.quoted_text,
            task_id: a.task_id,
            project: a.project,
            intent: a.intent,
            content: a.content,
            session_action: a.session_action,
            start_new_work: a.start_new_work,
        };
        Ok(Json(object(
            self.harness.gateway().route_gateway_message(&input).await?,
        )))
    }

    #[tool(
        description = "A question about a project from a chat member who is not the OWNER: \
             answered from a read of the project (its recent tasks) when the chat is authorised \
             for it (channel_access_denied otherwise). Read-only: nothing is recorded, queued or \
             started."
    )]
    async fn route_gateway_query(
        &self,
        Caller(_who): Caller,
        Parameters(a): Parameters<QueryArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let input = QueryInput {
            gateway: a.gateway,
            platform: a.platform,
            chat_id: a.chat_id,
            sender_id: a.sender_id,
            project: a.project,
            question: a.question,
        };
        Ok(Json(object(
            self.harness.gateway().route_gateway_query(&input).await?,
        )))
    }

    #[tool(
        description = "The OWNER manages which chat may ask about projects (route_gateway_query): \
             authorize (every project), bind_workspace / bind_projects (only those), unbind \
             (every project again), revoke, or get the record. The chat is the one of \
             gatewayInboundId, the OWNER's routed message there; once per message (a repeat \
             answers deduped). Several matches → ok: false, needsSelection with candidates."
    )]
    async fn manage_gateway_channel_access(
        &self,
        Caller(_who): Caller,
        Parameters(a): Parameters<AccessArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        let input = harness_core::gateway::access::AccessInput {
            action: a.action,
            gateway_inbound_id: a.gateway_inbound_id,
            workspace: a.workspace,
            projects: a.projects,
            chat_name: a.chat_name,
        };
        Ok(Json(object(
            self.harness
                .gateway()
                .manage_gateway_channel_access(&input)
                .await?,
        )))
    }
}
