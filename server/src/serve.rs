//! The HTTP accept loop with limits (issue 12, finding 4): a slow or idle
//! client cannot hold the server's file descriptors or memory.
//!
//! - at most [`Limits::max_connections`] open connections; past it a new
//!   connection is closed at once and a warning says so (once per second) —
//!   the listener never runs out of descriptors (`accept` errors are logged
//!   and retried after a short pause, never fatal);
//! - a connection must send a complete request head within
//!   [`Limits::header_read_timeout`], and an idle keep-alive connection is
//!   closed after the same time without a new request (hyper's header-read
//!   timer runs from the moment it waits for a head);
//! - long-lived streams are bounded separately ([`StreamLimits`]): live event
//!   streams (SSE) and terminal WebSockets each have their own cap, answered
//!   with 503 past it. An upgraded WebSocket leaves the connection count.

use std::{
    convert::Infallible,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{Router, body::Body, extract::ConnectInfo, http::Request};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    net::TcpListener,
    sync::{OwnedSemaphorePermit, Semaphore},
};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Connection limits of one server.
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    /// Open live-event streams (`/events/harness`) at most.
    pub max_event_streams: usize,
    /// Open terminal WebSockets at most.
    pub max_websockets: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            max_event_streams: 256,
            max_websockets: 256,
        }
    }
}

/// Separate bounds for the long-lived streams (shared through `AppState`).
#[derive(Clone)]
pub struct StreamLimits {
    events: Arc<Semaphore>,
    websockets: Arc<Semaphore>,
}

impl StreamLimits {
    pub fn new(limits: &Limits) -> Self {
        Self {
            events: Arc::new(Semaphore::new(limits.max_event_streams)),
            websockets: Arc::new(Semaphore::new(limits.max_websockets)),
        }
    }

    /// A slot for one event stream, held for as long as it streams.
    pub fn event_stream(&self) -> Option<OwnedSemaphorePermit> {
        let permit = self.events.clone().try_acquire_owned().ok();
        if permit.is_none() {
            tracing::warn!("live event stream limit reached; refusing a new stream");
        }
        permit
    }

    /// A slot for one terminal WebSocket, held for as long as it is open.
    pub fn websocket(&self) -> Option<OwnedSemaphorePermit> {
        let permit = self.websockets.clone().try_acquire_owned().ok();
        if permit.is_none() {
            tracing::warn!("terminal WebSocket limit reached; refusing a new socket");
        }
        permit
    }
}

/// Serves `router` on `listener` until `shutdown`, then waits for the open
/// connections to finish their current request.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let last_warning = AtomicU64::new(0);
    let started = Instant::now();
    let tracker = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(err) => {
                // EMFILE/ENFILE and friends: pause instead of spinning or dying.
                tracing::warn!(%err, "accept error; pausing 50 ms");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            let now = started.elapsed().as_secs();
            if last_warning.swap(now, Ordering::Relaxed) != now {
                tracing::warn!(
                    max = limits.max_connections,
                    %peer,
                    "connection limit reached; closing new connections until some end"
                );
            }
            drop(stream);
            continue;
        };
        // Terminal echo and keystrokes are small writes: without TCP_NODELAY
        // Nagle holds each one until the previous is acknowledged.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(%err, "cannot set TCP_NODELAY");
        }
        let router = router.clone();
        let shutdown = shutdown.clone();
        let header_timeout = limits.header_read_timeout;
        tracker.spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                let router = router.clone();
                async move {
                    let response = router
                        .oneshot(req.map(Body::new))
                        .await
                        .unwrap_or_else(|never: Infallible| match never {});
                    Ok::<_, Infallible>(response)
                }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true);
            let conn = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(err) = result {
                        tracing::debug!(%err, %peer, "connection ended with an error");
                    }
                }
                () = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    if let Err(err) = conn.await {
                        tracing::debug!(%err, %peer, "connection ended with an error");
                    }
                }
            }
        });
    }
    drop(listener);
    tracker.close();
    tracker.wait().await;
    Ok(())
}
