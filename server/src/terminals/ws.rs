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

use axum::body::Bytes;
use axum::{
    extract::{
        FromRequestParts, Path, State, WebSocketUpgrade,
        ws::{CloseFrame, Message, WebSocket},
    },
    http::StatusCode,
    response::{IntoResponse, Response},
};
use harness_pty::{InjectOptions, OutputEvent, PasteMode, PtySession, Subscription};
use serde::Deserialize;
use serde_json::json;

use crate::{error::error_body, state::AppState};

/// Unacknowledged bytes allowed in flight per client.
pub const WINDOW: u64 = 1024 * 1024;
/// Largest WebSocket message of output: chunks already queued when one is
/// sent are joined up to this, so a flood costs one message (one write, one
/// browser event) per this many bytes rather than one per PTY read.
pub const JOIN_MAX: usize = 256 * 1024;

/// `first` and the chunks queued behind it, joined into one message while
/// it is under [`JOIN_MAX`] bytes and under `room` (what the client's window
/// still takes); the last chunk joined may pass either by its own size.
fn join_queued(first: Bytes, sub: &mut Subscription, room: u64) -> Bytes {
    let limit = JOIN_MAX.min(usize::try_from(room).unwrap_or(JOIN_MAX));
    if first.len() >= limit {
        return first;
    }
    let Some(next) = sub.try_recv_data() else {
        return first;
    };
    // Sized for what is known to be queued: a burst of two small chunks
    // (typing echo) must not cost a 256 KiB allocation.
    let mut joined = Vec::with_capacity(first.len() + next.len());
    joined.extend_from_slice(&first);
    joined.extend_from_slice(&next);
    while joined.len() < limit {
        let Some(chunk) = sub.try_recv_data() else {
            break;
        };
        joined.extend_from_slice(&chunk);
    }
    Bytes::from(joined)
}

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
                .agents()
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
                    let bytes = join_queued(bytes, &mut sub, WINDOW.saturating_sub(sent.saturating_sub(acked)));
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use harness_pty::{PtySession, SpawnSpec};

    use super::*;

    /// A session whose whole output is queued for `sub` before the test
    /// looks: `bursts` bursts of `lines` numbered lines, 50 ms apart, so
    /// the subscription holds several chunks.
    async fn queued(bursts: usize, lines: usize) -> (Arc<PtySession>, Subscription) {
        let script = format!(
            "read go; n=0; b=0; while [ $b -lt {bursts} ]; do i=0; \
             while [ $i -lt {lines} ]; do echo \"line $n\"; i=$((i+1)); n=$((n+1)); done; \
             b=$((b+1)); sleep 0.05; done"
        );
        let spec = SpawnSpec::new(["/bin/sh", "-c", script.as_str()], std::env::temp_dir());
        let session = PtySession::spawn(spec).await.expect("spawn");
        let sub = session.subscribe();
        session.write(b"go\r").await.expect("write");
        tokio::time::timeout(Duration::from_secs(10), session.wait_exit())
            .await
            .expect("exits")
            .expect("status");
        (session, sub)
    }

    fn text(b: &[u8]) -> String {
        String::from_utf8_lossy(b).into_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_output_is_one_message_in_order() {
        let (_s, mut sub) = queued(10, 300).await;
        let OutputEvent::Data(first) = sub.recv().await else {
            panic!("output first")
        };
        let joined = join_queued(first.clone(), &mut sub, WINDOW);
        assert!(
            joined.len() > first.len(),
            "the chunks behind the first were joined"
        );
        let all = text(&joined);
        assert!(
            all.contains("line 0\r\n") && all.contains("line 2999\r\n"),
            "{}",
            all.len()
        );
        assert!(all.find("line 2998\r\n") < all.find("line 2999\r\n"));
        // Nothing left but the end.
        assert!(matches!(sub.recv().await, OutputEvent::Exited(_)));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_join_stops_at_the_open_window_and_the_rest_follows() {
        let (_s, mut sub) = queued(10, 1000).await;
        let OutputEvent::Data(first) = sub.recv().await else {
            panic!("output first")
        };
        let room = first.len() as u64 + 1;
        let joined = join_queued(first.clone(), &mut sub, room);
        // One chunk more at most: the window is respected to within a chunk.
        assert!(joined.len() as u64 >= room && joined.len() < first.len() + 70 * 1024);
        let mut rest = joined.to_vec();
        loop {
            match sub.recv().await {
                OutputEvent::Data(b) => {
                    let b = join_queued(b, &mut sub, WINDOW);
                    assert!(b.len() <= JOIN_MAX + 70 * 1024, "{}", b.len());
                    rest.extend_from_slice(&b);
                }
                OutputEvent::Exited(_) => break,
                other => panic!("{other:?}"),
            }
        }
        let all = text(&rest);
        assert!(all.contains("line 0\r\n") && all.contains("line 9999\r\n"));
        assert_eq!(all.matches("line ").count(), 10_000);
    }
}
