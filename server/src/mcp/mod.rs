//! `/mcp`: MCP Streamable HTTP (rmcp), stateless JSON mode so a server restart
//! never strands an agent's session. Authentication is per request (bearer
//! token → [`Identity`], put in the request extensions by our middleware);
//! tools are listed and allowed per identity profile. A tool failure is a tool
//! result with `isError: true` and a JSON `{error}` body, never a transport error.

mod outbox_tools;
mod outputs;
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
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    },
};
use tokio_util::sync::CancellationToken;

use crate::{error::ApiError, extract::bearer, state::AppState};

#[derive(Clone)]
pub struct HarnessMcp {
    harness: Harness,
    terminals: crate::terminals::Terminals,
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
        .with_max_request_body_bytes(1024 * 1024)
        // Host and Origin are checked by our own middleware (security.rs).
        .disable_allowed_hosts();
    StreamableHttpService::new(
        move || {
            Ok(HarnessMcp {
                harness: harness.clone(),
                terminals: terminals.clone(),
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
        Some(token) => state.harness.authenticate(token).await,
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

pub(crate) fn tool_error(message: impl Into<String>) -> CallToolResult {
    let body = serde_json::json!({ "error": message.into() });
    CallToolResult::error(vec![ContentBlock::text(body.to_string())])
}

/// A successful result: the JSON as text and as `structuredContent`
/// (described by the tool's `outputSchema`, `outputs.rs`).
pub(crate) fn tool_ok(value: serde_json::Value) -> CallToolResult {
    CallToolResult::structured(value)
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
        Ok(ListToolsResult::with_all_items(tools::visible(
            identity.as_ref(),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(identity) = identity_of(&ctx) else {
            return Ok(tool_error("unauthenticated").into());
        };
        let args = request.arguments.unwrap_or_default();
        let result = tools::call(
            &self.harness,
            &self.terminals,
            &identity,
            &request.name,
            args,
        )
        .await;
        Ok(result.into())
    }
}
