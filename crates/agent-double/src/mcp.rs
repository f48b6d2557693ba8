//! A minimal MCP Streamable-HTTP client: `initialize`,
//! `notifications/initialized`, then `tools/call`, as JSON-RPC over POST.

use std::time::Duration;

use serde_json::{Value, json};

use crate::settings::Endpoint;

/// The protocol version the double announces.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// A connected (initialized lazily) MCP client.
pub struct McpClient {
    endpoint: Endpoint,
    agent: ureq::Agent,
    session: Option<String>,
    initialized: bool,
    next_id: u64,
}

impl McpClient {
    /// A client for `endpoint`.
    pub fn new(endpoint: Endpoint) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Self {
            endpoint,
            agent,
            session: None,
            initialized: false,
            next_id: 1,
        }
    }

    fn post(&mut self, body: &Value) -> Result<(u16, Option<Value>), String> {
        let mut req = self
            .agent
            .post(&self.endpoint.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", PROTOCOL_VERSION);
        if let Some(session) = &self.session {
            req = req.header("Mcp-Session-Id", session);
        }
        for (k, v) in &self.endpoint.headers {
            req = req.header(k, v);
        }
        let mut resp = req.send(body.to_string()).map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(id.to_owned());
        }
        let is_sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        let text = resp
            .body_mut()
            .read_to_string()
            .map_err(|e| e.to_string())?;
        let json = if is_sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|v| v.get("id").is_some())
        } else if text.trim().is_empty() {
            None
        } else {
            serde_json::from_str(&text).ok()
        };
        Ok((status, json))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, json) = self.post(&body)?;
        let json = json.ok_or_else(|| format!("HTTP {status} without a JSON-RPC answer"))?;
        if let Some(err) = json.get("error") {
            return Err(format!(
                "HTTP {status}: {}",
                err["message"].as_str().unwrap_or("JSON-RPC error")
            ));
        }
        if !(200..300).contains(&status) {
            return Err(format!("HTTP {status}: {json}"));
        }
        Ok(json["result"].clone())
    }

    fn ensure_initialized(&mut self) -> Result<(), String> {
        if self.initialized {
            return Ok(());
        }
        self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "harness-agent-double", "version": env!("CARGO_PKG_VERSION")}
            }),
        )?;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post(&note)?;
        self.initialized = true;
        Ok(())
    }

    /// Calls a tool; returns `(is_error, text of the content)`.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<(bool, String), String> {
        self.ensure_initialized()?;
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}))?;
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Ok((result["isError"].as_bool().unwrap_or(false), text))
    }
}
