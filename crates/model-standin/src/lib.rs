//! Small, honest stand-ins for the two model APIs the agent CLIs talk to —
//! the Anthropic Messages API (`POST /v1/messages`, Claude Code) and the
//! OpenAI Responses API (`POST /v1/responses`, Codex) — for tests that run
//! the REAL CLIs without a network or a model.
//!
//! They do not pretend to be a model: they replay a script of turns (call a
//! tool, say a text), one turn per request of the agent's main conversation,
//! and record every request so the test can read what the agent sent (for
//! example that a human's reply reached the model in its next request).
//! A request is part of the main conversation when it offers the
//! `ask_human` tool or a CLI's native question tool (`AskUserQuestion`,
//! `request_user_input`); any other request (titles, summaries, probes)
//! gets a short fixed text. A gateway's agent (OpenClaw) offers neither:
//! [`StandIn::start_marked`] names the tools that mark its conversation.

#![forbid(unsafe_code)]

mod anthropic;
mod openai;

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{
    Json, Router,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde_json::{Value, json};

/// The tool whose presence marks the main conversation (MCP-namespaced).
pub const MAIN_TOOL: &str = "ask_human";
/// Native tools that also mark it (the agent's MCP tools may load later).
pub const NATIVE_TOOLS: [&str; 2] = ["AskUserQuestion", "request_user_input"];

/// One scripted model turn.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Call a tool: the offered tool named `tool`, or one whose name ends in
    /// `__<tool>` (MCP tools are namespaced, e.g. `mcp__harness__ask_human`).
    /// A tool that is not offered is called by its plain name. For Codex, an
    /// argument `"{session_id}"` becomes the number of the last terminal
    /// session Codex reported open (to script a `write_stdin` into it).
    Call { tool: String, input: Value },
    /// End the turn with this text; `{last_user}` is replaced by the text of
    /// the last user message of the request (so the test can see the agent
    /// forwarded it).
    Say(String),
    /// Answer with an HTTP error instead of a turn: `status`, the JSON
    /// `body` and extra `headers` (rate-limit headers, `retry-after`).
    Fail {
        status: u16,
        body: Value,
        headers: Vec<(String, String)>,
    },
    /// Start a streamed answer (status 200, its first event) and then drop
    /// the connection: a stream cut in the middle.
    Drop,
    /// Serve the inner turn for this request and every later one (it is
    /// never taken off the script): how a CLI's retries all meet the same
    /// failure.
    Always(Box<Turn>),
}

impl Turn {
    pub fn call(tool: &str, input: Value) -> Self {
        Self::Call {
            tool: tool.to_string(),
            input,
        }
    }

    pub fn say(text: &str) -> Self {
        Self::Say(text.to_string())
    }

    /// An HTTP error answer (see [`Turn::Fail`]).
    pub fn fail(status: u16, body: Value, headers: &[(&str, &str)]) -> Self {
        Self::Fail {
            status,
            body,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// This turn for every request from now on (see [`Turn::Always`]).
    pub fn always(self) -> Self {
        Self::Always(Box::new(self))
    }
}

/// A request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub body: Value,
    /// Part of the main conversation (see the crate docs).
    pub main: bool,
    /// The scripted turn it was answered with (`None` for side requests).
    pub turn: Option<usize>,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Turn>>,
    served: Mutex<usize>,
    log: Mutex<Vec<Recorded>>,
    /// Further tool names that mark the main conversation.
    markers: Vec<String>,
}

/// A running stand-in (both APIs on one port).
pub struct StandIn {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StandIn {
    /// Serve `turns` on a free loopback port.
    pub async fn start(turns: Vec<Turn>) -> std::io::Result<Self> {
        Self::start_marked(turns, &[]).await
    }

    /// Serve `turns`; a request offering one of `markers` (exact names) is
    /// part of the main conversation too.
    pub async fn start_marked(turns: Vec<Turn>, markers: &[&str]) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            script: Mutex::new(turns.into()),
            markers: markers.iter().map(|m| m.to_string()).collect(),
            ..Default::default()
        });
        let app = Router::new()
            .route("/v1/messages", post(anthropic::messages))
            .route("/v1/messages/count_tokens", post(anthropic::count_tokens))
            .route("/v1/responses", post(openai::responses))
            .route("/v1/models", get(models))
            .fallback(unknown)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, app).await {
                tracing::error!(%err, "model stand-in stopped");
            }
        });
        Ok(Self {
            addr,
            shared,
            server,
        })
    }

    /// `http://127.0.0.1:<port>` (Claude Code: ANTHROPIC_BASE_URL).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.log).clone()
    }

    /// The bodies of the main-conversation requests.
    pub fn main_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.main)
            .map(|r| r.body)
            .collect()
    }

    /// Append turns to the script (a test that learns their input later,
    /// such as a task id, after the agent has started).
    pub fn push(&self, turns: impl IntoIterator<Item = Turn>) {
        lock(&self.shared.script).extend(turns);
    }

    /// Replace the turns still to serve (an `Always` failure that should
    /// end, say when a usage limit resets).
    pub fn set_script(&self, turns: impl IntoIterator<Item = Turn>) {
        *lock(&self.shared.script) = turns.into_iter().collect();
    }

    /// How many scripted turns were served.
    pub fn turns_served(&self) -> usize {
        *lock(&self.shared.served)
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// What one request gets: the next scripted turn, or a side answer.
pub(crate) enum Answer {
    Turn(Turn),
    Side,
}

impl Shared {
    fn answer(&self, method: &str, path: &str, body: &Value, tools: &[String]) -> Answer {
        let main = tools.iter().any(|t| {
            t == MAIN_TOOL
                || t.ends_with(&format!("__{MAIN_TOOL}"))
                || NATIVE_TOOLS.contains(&t.as_str())
                || self.markers.contains(t)
        });
        let (answer, turn) = if main {
            let next = {
                let mut script = lock(&self.script);
                match script.front() {
                    Some(Turn::Always(inner)) => Some((**inner).clone()),
                    _ => script.pop_front(),
                }
            };
            let mut served = lock(&self.served);
            let index = *served;
            *served += 1;
            let turn = next.unwrap_or_else(|| Turn::say("(the script has no more turns)"));
            (Answer::Turn(turn), Some(index))
        } else {
            (Answer::Side, None)
        };
        lock(&self.log).push(Recorded {
            method: method.to_string(),
            path: path.to_string(),
            body: body.clone(),
            main,
            turn,
        });
        answer
    }

    fn record_other(&self, method: &str, path: &str) {
        lock(&self.log).push(Recorded {
            method: method.to_string(),
            path: path.to_string(),
            body: Value::Null,
            main: false,
            turn: None,
        });
    }
}

/// The name to call for `tool` given the offered tool names.
pub(crate) fn resolve_tool(tool: &str, offered: &[String]) -> String {
    let suffix = format!("__{tool}");
    offered
        .iter()
        .find(|t| *t == tool)
        .or_else(|| offered.iter().find(|t| t.ends_with(&suffix)))
        .cloned()
        .unwrap_or_else(|| tool.to_string())
}

/// `{last_user}` substitution.
pub(crate) fn render(text: &str, last_user: &str) -> String {
    text.replace("{last_user}", last_user)
}

/// A server-sent event.
pub(crate) fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// The response of a [`Turn::Fail`] or [`Turn::Drop`] answer (`first`:
/// the first event of the API's stream, sent before a drop); `None` for a
/// turn that is a real answer.
pub(crate) fn failure(answer: &Answer, first: String) -> Option<Response> {
    match answer {
        Answer::Turn(Turn::Fail {
            status,
            body,
            headers,
        }) => {
            let mut response = (
                StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                Json(body.clone()),
            )
                .into_response();
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    axum::http::HeaderName::from_bytes(name.as_bytes()),
                    axum::http::HeaderValue::from_str(value),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            Some(response)
        }
        Answer::Turn(Turn::Drop) => {
            let chunks: Vec<Result<String, std::io::Error>> = vec![
                Ok(first),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "the stand-in drops the stream",
                )),
            ];
            Some(
                (
                    [
                        ("content-type", "text/event-stream"),
                        ("cache-control", "no-cache"),
                    ],
                    axum::body::Body::from_stream(futures_iter(chunks)),
                )
                    .into_response(),
            )
        }
        _ => None,
    }
}

/// A stream of the items of `items`, the last one after a short pause (the
/// client has read the first event before the connection goes).
fn futures_iter(
    items: Vec<Result<String, std::io::Error>>,
) -> impl futures_core::Stream<Item = Result<String, std::io::Error>> {
    let (tx, rx) = tokio::sync::mpsc::channel(items.len().max(1));
    tokio::spawn(async move {
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            if tx.send(item).await.is_err() {
                return;
            }
        }
    });
    ReceiverStream(rx)
}

/// `tokio::sync::mpsc::Receiver` as a stream.
struct ReceiverStream<T>(tokio::sync::mpsc::Receiver<T>);

impl<T> futures_core::Stream for ReceiverStream<T> {
    type Item = T;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<T>> {
        self.0.poll_recv(cx)
    }
}

pub(crate) fn event_stream(events: String) -> Response {
    (
        [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
        ],
        events,
    )
        .into_response()
}

async fn models(State(shared): State<Arc<Shared>>) -> Json<Value> {
    shared.record_other("GET", "/v1/models");
    Json(json!({"object": "list", "data": [], "models": []}))
}

async fn unknown(
    State(shared): State<Arc<Shared>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Response {
    shared.record_other(method.as_str(), uri.path());
    (
        StatusCode::NOT_FOUND,
        Json(json!({"type": "error", "error": {"type": "not_found_error", "message": format!("the stand-in does not serve {}", uri.path())}})),
    )
        .into_response()
}
