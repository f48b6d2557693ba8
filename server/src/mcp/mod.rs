//! `/mcp`: MCP Streamable HTTP (rmcp), stateless JSON mode so a server restart
//! never strands an agent's session. Authentication is per request (bearer
//! token → [`Identity`], put in the request extensions by our middleware).
//!
//! The tools are typed methods on [`HarnessMcp`] collected by rmcp's tool
//! router (`tools.rs`, `outbox_tools.rs`, `workbench_tools.rs`); their input
//! and output schemas are derived from the argument and result types
//! (`args.rs`, `outputs.rs`). They are listed and allowed per identity
//! profile ([`allowed`]). A tool failure is a tool result with
//! `isError: true` and a JSON `{error}` body, never a transport error.

mod approval_tools;
mod args;
mod callback_tools;
mod gateway_tools;
mod outbox_tools;
mod outputs;
mod params;
mod report_tools;
mod route_tools;
#[cfg(test)]
mod schema_tests;
mod tools;
pub mod transport;
mod workbench_tools;

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use harness_core::{Harness, auth::Identity};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    handler::server::tool::{ToolCallContext, ToolRouter},
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    },
};
use tokio_util::sync::CancellationToken;

use self::params::tool_error;
use crate::{error::ApiError, extract::bearer, state::AppState};

/// Tools an agent token may use (the reference's `task` profile subset).
const AGENT_TOOLS: &[&str] = &[
    "ask_human",
    "notify_human",
    "get_task",
    "create_task",
    "set_goal_mode",
    "send_task_terminal_input",
    "ack_workbench_batch",
    "heartbeat_workbench_batch",
    "resolve_workbench_batch",
    "list_notify_targets",
    "push_to_human",
    "confirm_gateway_task_created",
    "complete_gateway_discussion",
    "complete_gateway_work",
    "get_report",
];

/// Tools a gateway credential may use: the reference's `gateway` profile
/// (docs/tower-messaging.md §4.1) as far as Harness has its tools.
pub const GATEWAY_TOOLS: &[&str] = &[
    "reply_to_ask",
    "relay_channel_reply",
    "resolve_gateway_task_context",
    "continue_bound_task",
    "route_gateway_message",
    "route_gateway_query",
    "manage_gateway_channel_access",
    "get_report",
];

/// Whether `identity`'s profile includes the tool `name`.
fn allowed(identity: &Identity, name: &str) -> bool {
    match identity {
        Identity::Admin => true,
        // The approval tools never to an agent or a gateway (an agent is
        // never a person), whatever the lists above say.
        Identity::Agent { .. } => {
            AGENT_TOOLS.contains(&name) && !approval_tools::APPROVAL_TOOLS.contains(&name)
        }
        Identity::Gateway => {
            GATEWAY_TOOLS.contains(&name) && !approval_tools::APPROVAL_TOOLS.contains(&name)
        }
        Identity::Browser => false,
    }
}

#[derive(Clone)]
pub struct HarnessMcp {
    harness: Harness,
    terminals: crate::terminals::Terminals,
    tools: Arc<ToolRouter<HarnessMcp>>,
}

pub type McpService = StreamableHttpService<HarnessMcp, NeverSessionManager>;

pub fn service(
    harness: Harness,
    terminals: crate::terminals::Terminals,
    cancel: CancellationToken,
) -> McpService {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_cancellation_token(cancel)
        .with_max_request_body_bytes(transport::MAX_BODY)
        // Host and Origin are checked by our own middleware (security.rs).
        .disable_allowed_hosts();
    let tools = Arc::new(tools::router());
    StreamableHttpService::new(
        move || {
            Ok(HarnessMcp {
                harness: harness.clone(),
                terminals: terminals.clone(),
                tools: tools.clone(),
            })
        },
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// Middleware on `/mcp`: resolve the bearer token to an identity or answer 401.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let identity = match bearer(&parts) {
        Some(token) => state.harness.access().authenticate(token).await,
        None => Err(harness_core::CoreError::Unauthorized(
            "missing credential: send Authorization: Bearer <token>".into(),
        )),
    };
    match identity {
        Ok(identity) => {
            parts.extensions.insert(identity);
            req = Request::from_parts(parts, body);
            next.run(req).await
        }
        Err(err) => ApiError::from(err).into_response(),
    }
}

fn identity_of(ctx: &RequestContext<RoleServer>) -> Option<Identity> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Identity>())
        .cloned()
}

impl ServerHandler for HarnessMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("harness", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Harness relay tools. When blocked, ask_human records your question and parks \
                 your task: end your turn and wait; the reply is typed into your terminal. \
                 notify_human is for FYIs: send it and continue.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let identity = identity_of(&ctx);
        // The agent's start-up hook waits for this (`terminals::mcp_ready`).
        if let Some(Identity::Agent {
            task_id,
            execution_id,
            ..
        }) = &identity
        {
            self.terminals.tools_listed(task_id, execution_id);
        }
        let visible = match identity {
            Some(identity) => self
                .tools
                .list_all()
                .into_iter()
                .filter(|t| allowed(&identity, &t.name))
                .collect(),
            None => Vec::new(),
        };
        Ok(ListToolsResult::with_all_items(visible))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(identity) = identity_of(&ctx) else {
            return Ok(tool_error("unauthenticated").into());
        };
        let name = request.name.to_string();
        if !self.tools.has_route(&name) {
            return Ok(tool_error(format!("unknown tool {name:?}")).into());
        }
        if !allowed(&identity, &name) {
            return Ok(
                tool_error(format!("tool {name:?} is not available to this credential")).into(),
            );
        }
        // What the router answers as a protocol error (arguments that do not
        // parse, a result that does not serialise) is this call's failure.
        match self
            .tools
            .call(ToolCallContext::new(self, request, ctx))
            .await
        {
            Ok(response) => Ok(response),
            Err(err) => Ok(tool_error(err.message).into()),
        }
    }
}
