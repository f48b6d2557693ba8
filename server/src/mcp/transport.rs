//! The transport edge of `/mcp`, in front of rmcp: every rejection has a
//! JSON body, and requests rmcp would misreport are answered here.
//!
//! - a body that is not JSON → 400 with JSON-RPC `-32700` (Parse error);
//! - `tools/call` without a string `name`, or with `arguments` that are not
//!   an object → JSON-RPC `-32602` (Invalid params) for that request id;
//! - rmcp's own plain-text rejections (400/405/406/415) → the same status
//!   with a JSON-RPC error body (`id: null`) carrying rmcp's message.

use axum::{
    Json,
    body::{Body, to_bytes},
    extract::Request,
    http::{Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

/// Same cap as rmcp's (`mcp::service`): 1 MiB.
pub const MAX_BODY: usize = 1024 * 1024;
/// The longest rmcp rejection text carried over.
const MAX_REJECTION: usize = 4096;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error response.
pub fn rpc_error(status: StatusCode, id: Value, code: i64, message: impl Into<String>) -> Response {
    (
        status,
        Json(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}}),
        ),
    )
        .into_response()
}

fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim())
        .is_some_and(|v| v.eq_ignore_ascii_case("application/json"))
}

/// A `tools/call` whose params rmcp cannot take: the message for -32602.
pub fn invalid_tool_call(message: &Value) -> Option<String> {
    if message["method"] != "tools/call" {
        return None;
    }
    let params = &message["params"];
    if !params.is_object() {
        return Some("tools/call needs params {name, arguments?}".into());
    }
    match params.get("name") {
        Some(Value::String(n)) if !n.trim().is_empty() => {}
        Some(_) => return Some("tools/call: name must be a non-empty string".into()),
        None => return Some("tools/call: name is required".into()),
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(_) => Some("tools/call: arguments must be an object".into()),
    }
}

/// Middleware on `/mcp` (inside authentication).
pub async fn guard(req: Request, next: Next) -> Response {
    let req = if req.method() == Method::POST && is_json(&req) {
        let (parts, body) = req.into_parts();
        let bytes = match to_bytes(body, MAX_BODY).await {
            Ok(b) => b,
            Err(_) => {
                return rpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Value::Null,
                    INVALID_REQUEST,
                    format!("request body is larger than {MAX_BODY} bytes"),
                );
            }
        };
        match serde_json::from_slice::<Value>(&bytes) {
            Err(err) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Value::Null,
                    PARSE_ERROR,
                    format!("Parse error: {err}"),
                );
            }
            Ok(message) => {
                if let Some(problem) = invalid_tool_call(&message) {
                    let id = message.get("id").cloned().unwrap_or(Value::Null);
                    return rpc_error(StatusCode::OK, id, INVALID_PARAMS, problem);
                }
            }
        }
        Request::from_parts(parts, Body::from(bytes))
    } else {
        req
    };
    let response = next.run(req).await;
    json_rejection(response).await
}

/// rmcp answers transport errors in plain text: give them a JSON body.
async fn json_rejection(response: Response) -> Response {
    let status = response.status();
    if !matches!(
        status,
        StatusCode::BAD_REQUEST
            | StatusCode::METHOD_NOT_ALLOWED
            | StatusCode::NOT_ACCEPTABLE
            | StatusCode::UNSUPPORTED_MEDIA_TYPE
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::NOT_FOUND
    ) {
        return response;
    }
    let is_json_body = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if is_json_body {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = match to_bytes(body, MAX_REJECTION).await {
        Ok(b) => String::from_utf8_lossy(&b).trim().to_string(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("rejected").to_string()
    } else {
        text
    };
    let mut out = rpc_error(status, Value::Null, INVALID_REQUEST, message);
    // Keep headers that matter to the client (e.g. `Allow` on 405).
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_params() {
        let call = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        assert!(invalid_tool_call(&call(json!({"name": "ask_human", "arguments": {}}))).is_none());
        assert!(invalid_tool_call(&call(json!({"name": "ask_human"}))).is_none());
        assert!(invalid_tool_call(&call(json!({"name": "x", "arguments": null}))).is_none());
        for bad in [
            json!({}),
            json!({"name": ""}),
            json!({"name": 3}),
            json!({"name": "ask_human", "arguments": []}),
            json!({"name": "ask_human", "arguments": "q"}),
            json!([1]),
        ] {
            assert!(invalid_tool_call(&call(bad.clone())).is_some(), "{bad}");
        }
        assert!(invalid_tool_call(&json!({"method": "tools/list"})).is_none());
    }
}
