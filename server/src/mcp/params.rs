//! What a tool method receives and returns, besides its own types: the
//! caller's [`Identity`] ([`Caller`]), its arguments ([`Parameters`]) and the
//! failure every tool answers with ([`ToolError`]).
//!
//! [`Parameters`] replaces rmcp's wrapper of the same name (the `#[tool]`
//! macro finds the input type by that name): it names the path of the
//! argument that did not parse, so a client reads *which* argument was wrong
//! (`invalid arguments at question: …`).

use std::borrow::Cow;

use harness_core::{CoreError, auth::Identity};
use rmcp::{
    ErrorData,
    handler::server::{
        common::{AsRequestContext, FromContextPart},
        tool::{IntoCallToolResult, ToolCallContext},
    },
    model::{CallToolResponse, CallToolResult, ContentBlock},
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// The arguments of a tool call, parsed into `P`; `P`'s schema is the tool's
/// `inputSchema`.
pub struct Parameters<P>(pub P);

impl<P: JsonSchema> JsonSchema for Parameters<P> {
    fn schema_name() -> Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<S, P: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<P> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        serde_path_to_error::deserialize(serde_json::Value::Object(arguments))
            .map(Parameters)
            .map_err(|e| {
                // Answered as a tool error by `HarnessMcp::call_tool`.
                ErrorData::invalid_params(
                    format!("invalid arguments at {}: {}", e.path(), e.inner()),
                    None,
                )
            })
    }
}

/// The authenticated caller (put in the request by `mcp::authenticate`).
pub struct Caller(pub Identity);

impl<C: AsRequestContext> FromContextPart<C> for Caller {
    fn from_context_part(context: &mut C) -> Result<Self, ErrorData> {
        super::identity_of(context.as_request_context())
            .map(Caller)
            .ok_or_else(|| ErrorData::invalid_request("unauthenticated", None))
    }
}

/// A tool failure: a result with `isError: true` and the text `{"error": …}`.
#[derive(Debug)]
pub struct ToolError(pub String);

impl From<CoreError> for ToolError {
    fn from(err: CoreError) -> Self {
        if err.http_status() >= 500 {
            tracing::error!(error = ?err, "MCP tool failed");
        }
        Self(err.client_message())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(tool_error(self.0).into())
    }
}

/// The result of a failed call (docs/contract.md §5: never a transport error).
pub fn tool_error(message: impl Into<String>) -> CallToolResult {
    let body = serde_json::json!({ "error": message.into() });
    CallToolResult::error(vec![ContentBlock::text(body.to_string())])
}
