//! `GET /ws/terminal/{taskId}`: the browser terminal's WebSocket.
//!
//! Needs a session (or the admin bearer) and an Origin; same-origin only
//! (`login::require` and `security::same_origin` run before the upgrade). The first
//! binary frame is a screen snapshot (never a raw replay that could start mid
//! escape sequence, never replayed terminal queries); then live output.
//! Flow control: the client acknowledges processed bytes (`ack`, cumulative);
//! the server stops reading the session while more than [`WINDOW`] bytes are
//! unacknowledged, so a stalled client is bounded by its subscription queue
//! and then cut over to a fresh snapshot (`lagged`). Close code 4000 + exit
//! code when the process exits.
//!
//! Another node's agent: the socket is proxied to that node (`node_call`),
//! byte for byte after the upgrade, so everything above holds end to end.
//!
//! Size: each viewer's `resize` is a vote; the PTY takes the widest viewer's
//! (`harness_pty::SizeVote`) and every viewer gets `{"type":"size",…}` first
//! and on every change, so a phone never rewraps a desktop's terminal.

use std::sync::Arc;

use axum::{
    extract::{
        FromRequestParts, Path, State, WebSocketUpgrade,
        ws::{CloseFrame, Message, WebSocket},
    },
    http::StatusCode,
    response::{IntoResponse, Response},
};
use harness_pty::{InjectOptions, OutputEvent, PasteMode, PtySession};
use serde::Deserialize;
use serde_json::json;

use crate::{error::error_body, state::AppState};

/// Unacknowledged bytes allowed in flight per client.
pub const WINDOW: u64 = 1024 * 1024;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum ClientFrame {
    Input { data: String },
    Submit { data: String },
    Resize { rows: u16, cols: u16 },
    Ack { bytes: u64 },
}

/// `GET /ws/terminal/{taskId}` (a browser): the terminal here, or — when
/// the task's agent runs on another live node — that node's terminal,
/// proxied over a node-to-node call (`node_call::ws_proxy`).
pub async fn handler(
    State(state): State<AppState>,
    Path(task_id): Path<String>,
    req: axum::extract::Request,
) -> Response {
    if !harness_core::ids::is_cuid(&task_id) {
        return bad_task_id();
    }
    if state.terminals.session(&task_id).is_none() {
        match state.terminals.placement(&task_id).await {
            Ok(harness_core::cluster::Placement::Node { url, .. }) => {
                return crate::node_call::ws_proxy::proxy(&state, &url, &task_id, req).await;
            }
            Ok(_) => {}
            Err(err) => return crate::error::ApiError::from(err).into_response(),
        }
    }
    let (mut parts, _) = req.into_parts();
    match WebSocketUpgrade::from_request_parts(&mut parts, &state).await {
        Ok(ws) => serve_local(&state, &task_id, ws),
        Err(rejection) => rejection.into_response(),
    }
}

/// `GET /internal/node/ws/terminal/{taskId}` (another node, verified by
/// `node_call::verify`): this node's terminal only.
pub async fn local_handler(
    State(state): State<AppState>,
    Path(task_id): Path<String>,
    ws: WebSocketUpgrade,
) -> Response {
    if !harness_core::ids::is_cuid(&task_id) {
        return bad_task_id();
    }
    serve_local(&state, &task_id, ws)
}

fn bad_task_id() -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(error_body(
            "Invalid taskId format — expected CUID",
            Some("taskId"),
        )),
    )
        .into_response()
}

/// A person typing into the terminal acts first: Harness's own planned
/// actions for the agent are cancelled (at most once per
/// [`PersonTyped::EVERY`], off the socket's loop).
struct PersonTyped {
    harness: harness_core::Harness,
    task_id: String,
    last: Option<std::time::Instant>,
}

impl PersonTyped {
    const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

    fn new(harness: harness_core::Harness, task_id: &str) -> Self {
        Self {
            harness,
            task_id: task_id.to_string(),
            last: None,
        }
    }

    fn typed(&mut self) {
        if self.last.is_some_and(|t| t.elapsed() < Self::EVERY) {
            return;
        }
        self.last = Some(std::time::Instant::now());
        let (h, task_id) = (self.harness.clone(), self.task_id.clone());
        tokio::spawn(async move {
            if let Err(err) = h
                .cancel_agent_actions(&task_id, "a person typed into the terminal")
                .await
            {
                tracing::warn!(%err, task_id, "cannot cancel the automatic actions");
            }
        });
    }
}

fn serve_local(state: &AppState, task_id: &str, ws: WebSocketUpgrade) -> Response {
    let Some(session) = state.terminals.session(task_id) else {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(error_body("No active terminal session for this task", None)),
        )
            .into_response();
    };
    // Sockets are counted apart from connections and capped (`serve.rs`).
    let Some(slot) = state.streams.websocket() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(error_body("too many terminal connections", None)),
        )
            .into_response();
    };
    let typed = PersonTyped::new(state.harness.clone(), task_id);
    ws.max_message_size(256 * 1024)
        .on_upgrade(move |socket| async move {
            let _slot = slot;
            serve(socket, session, typed).await;
        })
}

async fn serve(mut socket: WebSocket, session: Arc<PtySession>, mut typed: PersonTyped) {
    // Sizing rule (largest active viewer, `harness_pty` `sizing`): this
    // viewer's vote is withdrawn when the socket ends.
    let vote = session.size_vote();
    let mut size = session.size_watch();
    let mut sub = session.subscribe();
    let first = *size.borrow_and_update();
    if socket.send(size_frame(first)).await.is_err() {
        return;
    }
    let snapshot = sub.take_snapshot();
    let mut sent = snapshot.len() as u64;
    let mut acked = 0u64;
    if socket.send(Message::Binary(snapshot.into())).await.is_err() {
        return;
    }
    loop {
        let open_window = sent.saturating_sub(acked) < WINDOW;
        tokio::select! {
            changed = size.changed() => {
                if changed.is_err() {
                    break;
                }
                let now = *size.borrow_and_update();
                if socket.send(size_frame(now)).await.is_err() {
                    break;
                }
            }
            event = sub.recv(), if open_window => match event {
                OutputEvent::Data(bytes) => {
                    sent += bytes.len() as u64;
                    if socket.send(Message::Binary(bytes)).await.is_err() {
                        break;
                    }
                }
                OutputEvent::Lagged => {
                    // Fell behind: start over from a fresh snapshot.
                    sub = session.subscribe();
                    let snapshot = sub.take_snapshot();
                    sent += snapshot.len() as u64;
                    let lagged = json!({"type": "lagged"}).to_string();
                    if socket.send(Message::Text(lagged.into())).await.is_err()
                        || socket.send(Message::Binary(snapshot.into())).await.is_err()
                    {
                        break;
                    }
                }
                OutputEvent::Exited(status) => {
                    let exit = json!({"type": "exit", "code": status.code}).to_string();
                    let _ = socket.send(Message::Text(exit.into())).await;
                    let _ = socket
                        .send(Message::Close(Some(CloseFrame {
                            code: status.ws_close_code(),
                            reason: "process exited".into(),
                        })))
                        .await;
                    break;
                }
                OutputEvent::Closed => break,
            },
            message = socket.recv() => match message {
                Some(Ok(Message::Text(text))) => {
                    match serde_json::from_str::<ClientFrame>(&text) {
                        Ok(ClientFrame::Ack { bytes }) => acked = bytes.min(sent),
                        Ok(ClientFrame::Input { data }) => {
                            typed.typed();
                            if session.write(data.as_bytes()).await.is_err() {
                                break;
                            }
                        }
                        Ok(ClientFrame::Submit { data }) => {
                            typed.typed();
                            let opts = InjectOptions { submit: true, paste: PasteMode::Auto, ..InjectOptions::default() };
                            if session.send_input(&data, opts).await.is_err() {
                                break;
                            }
                        }
                        Ok(ClientFrame::Resize { rows, cols }) => {
                            if let Err(err) = vote.set(rows, cols) {
                                tracing::debug!(%err, "terminal resize failed");
                            }
                        }
                        Err(err) => {
                            let msg = json!({"type": "error", "message": format!("bad frame: {err}")}).to_string();
                            if socket.send(Message::Text(msg.into())).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// `{"type":"size","rows":R,"cols":C}`: the PTY's size, which every viewer
/// draws (a smaller viewer scrolls).
fn size_frame((rows, cols): (u16, u16)) -> Message {
    Message::Text(
        json!({"type": "size", "rows": rows, "cols": cols})
            .to_string()
            .into(),
    )
}
