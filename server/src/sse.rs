//! Live updates for the web UI: server-sent events fed by the core's event
//! bus (`Harness::subscribe`). Owned by the notification-center work.
//!
//! `GET /events/harness` (a session, and the Host/Origin policy of every route)
//! streams one `change` event per core event (`data:` = the event as JSON),
//! a comment every 15 s as a heartbeat, and a `reload` event when this
//! client fell behind the bounded bus (`RecvError::Lagged`) or the bus lost
//! the other nodes' events for a while (`HarnessEvent::Resync`) — the page
//! then reloads instead of showing a stale state. Other nodes' events come
//! through the same bus (PostgreSQL LISTEN/NOTIFY). The stream ends on shutdown.

use std::time::Duration;

use axum::{
    Router,
    body::Body,
    extract::State,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use harness_core::HarnessEvent;
use tokio::{
    io::{AsyncWriteExt, DuplexStream},
    sync::broadcast::{Receiver, error::RecvError},
};
use tokio_util::{io::ReaderStream, sync::CancellationToken};

use crate::{error::error_body, state::AppState};

pub const PATH: &str = "/events/harness";
const HEARTBEAT: Duration = Duration::from_secs(15);

/// Routes for live events (mounted at the root by `launch::build_router`).
/// Streams end on SIGINT/SIGTERM; prefer [`routes_until`] with the server's
/// cancellation token so in-process shutdowns end them too.
pub fn routes() -> Router<AppState> {
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            os_shutdown_signal().await;
            on_signal.cancel();
        });
    }
    routes_until(cancel)
}

/// Routes for live events whose streams end when `cancel` fires.
pub fn routes_until(cancel: CancellationToken) -> Router<AppState> {
    Router::new().route(
        PATH,
        get(move |state: State<AppState>| events(state, cancel.clone())),
    )
}

async fn events(State(state): State<AppState>, cancel: CancellationToken) -> Response {
    // Streams are counted apart from connections and capped (`serve.rs`).
    let Some(slot) = state.streams.event_stream() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(error_body("too many live event streams", None)),
        )
            .into_response();
    };
    let events = state.harness.subscribe();
    // The writer task feeds a small in-memory pipe; the response body reads
    // it. When the client goes away the pipe breaks and the task ends.
    let (reader, writer) = tokio::io::duplex(16 * 1024);
    tokio::spawn(async move {
        let _slot = slot;
        pump(events, writer, cancel).await;
    });
    let mut response = Body::from_stream(ReaderStream::new(reader)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The SSE text of one core event.
pub fn frame(event: &HarnessEvent) -> String {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".into());
    format!("event: change\ndata: {data}\n\n")
}

async fn pump(
    mut events: Receiver<HarnessEvent>,
    mut out: DuplexStream,
    cancel: CancellationToken,
) {
    if out
        .write_all(b"retry: 1000\n: connected\n\n")
        .await
        .is_err()
    {
        return;
    }
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    heartbeat.tick().await;
    loop {
        let chunk = tokio::select! {
            () = cancel.cancelled() => break,
            _ = heartbeat.tick() => ": heartbeat\n\n".to_string(),
            received = events.recv() => match received {
                // Another node's wake-up is no change to show.
                Ok(HarnessEvent::WorkQueued { .. }) => continue,
                // Other nodes' events were missed: as after a lag.
                Ok(HarnessEvent::Resync) => {
                    let _ = out.write_all(b"event: reload\ndata: {}\n\n").await;
                    break;
                }
                Ok(event) => frame(&event),
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "event stream lagged; asking the client to reload");
                    let _ = out.write_all(b"event: reload\ndata: {}\n\n").await;
                    break;
                }
                Err(RecvError::Closed) => break,
            },
        };
        if out.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = out.shutdown().await;
}

async fn os_shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_single_sse_events() {
        let f = frame(&HarnessEvent::MessageChanged {
            id: "c1".into(),
            task_id: "c2".into(),
        });
        assert!(f.starts_with("event: change\ndata: {"));
        assert!(f.ends_with("\n\n"));
        assert_eq!(f.matches("\n\n").count(), 1);
        assert!(f.contains("\"type\":\"messageChanged\""));
    }
}
