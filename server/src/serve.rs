//! The HTTP accept loop with limits: a slow or idle
//! client cannot hold the server's file descriptors or memory.
//!
//! - at most [`Limits::max_connections`] open connections; past it the
//!   oldest connection that never sent a request (an idle or slow-header
//!   flood) is closed to make room, else the new one is, and a warning says
//!   so (once per second) — the listener never runs out of descriptors (`accept` errors are logged
//!   and retried after a short pause, never fatal);
//! - a connection must send a complete request head within
//!   [`Limits::header_read_timeout`], and an idle keep-alive connection is
//!   closed after the same time without a new request (hyper's header-read
//!   timer runs from the moment it waits for a head);
//! - a request body must arrive within [`Limits::body_read_timeout`] of its
//!   head (a head and then one byte every few seconds
//!   held a slot for as long as the client liked); past it the body ends in
//!   an error, the handler answers, and the connection is closed. While a
//!   connection is still waiting for a body it counts as silent: at the cap
//!   it is closed to make room like one that never sent a request;
//! - long-lived streams are bounded separately ([`StreamLimits`]): live event
//!   streams (SSE) and terminal WebSockets each have their own cap, answered
//!   with 503 past it. An upgraded WebSocket leaves the connection count.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    task::{Context, Poll},
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
    /// A request's whole body must arrive within this time of its head.
    pub body_read_timeout: Duration,
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
            body_read_timeout: Duration::from_secs(30),
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
    caps: (usize, usize),
}

impl StreamLimits {
    pub fn new(limits: &Limits) -> Self {
        Self {
            events: Arc::new(Semaphore::new(limits.max_event_streams)),
            websockets: Arc::new(Semaphore::new(limits.max_websockets)),
            caps: (limits.max_event_streams, limits.max_websockets),
        }
    }

    /// Event streams and terminal WebSockets open now (for `/metrics`).
    pub fn in_use(&self) -> (usize, usize) {
        (
            self.caps.0.saturating_sub(self.events.available_permits()),
            self.caps
                .1
                .saturating_sub(self.websockets.available_permits()),
        )
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

/// How long a connection may finish its current response after shutdown.
const SHUTDOWN_DRAIN: Duration = Duration::from_secs(5);
/// How long a connection whose body timed out may take to send its answer.
const OVERDUE_GRACE: Duration = Duration::from_secs(1);

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
    let registry = Arc::new(Registry::default());
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
        let permit = match connections.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            // At the cap: a connection that never sent a request (idle or
            // slow-header flood) makes room for the new one.
            Err(_) => {
                let evicted = registry.evict_oldest_silent();
                let now = started.elapsed().as_secs();
                if last_warning.swap(now, Ordering::Relaxed) != now {
                    tracing::warn!(
                        max = limits.max_connections,
                        %peer,
                        evicted,
                        "connection limit reached; closing the oldest connection that sent no request, \
                         or the new one"
                    );
                }
                if evicted {
                    tokio::time::timeout(
                        Duration::from_millis(100),
                        connections.clone().acquire_owned(),
                    )
                    .await
                    .ok()
                    .and_then(Result::ok)
                } else {
                    None
                }
            }
        };
        let Some(permit) = permit else {
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
        let body_timeout = limits.body_read_timeout;
        let (id, conn_state) = registry.add();
        let registry = registry.clone();
        tracker.spawn(async move {
            let _permit = permit;
            let seen = conn_state.clone();
            let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                seen.requests.fetch_add(1, Ordering::Relaxed);
                req.extensions_mut().insert(ConnectInfo(peer));
                let router = router.clone();
                let body_state = seen.clone();
                async move {
                    let response = router
                        .oneshot(req.map(|body| TimedBody::wrap(body, body_timeout, body_state)))
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
                () = conn_state.evict.notified() => {
                    tracing::debug!(%peer, "closed a connection that sent no request or no whole body (limit reached)");
                }
                () = conn_state.overdue.notified() => {
                    // The handler answers the timed-out body; the connection
                    // is closed after that answer (or a moment later).
                    if tokio::time::timeout(OVERDUE_GRACE, conn.as_mut()).await.is_err() {
                        tracing::debug!(%peer, "closed a connection whose request body did not arrive in time");
                    }
                }
                () = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    // Bounded: a response that never ends (a stream, a stuck
                    // handler) cannot hold the shutdown forever.
                    match tokio::time::timeout(SHUTDOWN_DRAIN, conn.as_mut()).await {
                        Ok(Ok(())) => {}
                        Ok(Err(err)) => {
                            tracing::debug!(%err, %peer, "connection ended with an error");
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "connection still busy after the shutdown drain; closed");
                        }
                    }
                }
            }
            registry.remove(id);
        });
    }
    drop(listener);
    tracker.close();
    tracker.wait().await;
    Ok(())
}

/// One open connection: how many requests it started; whether a request
/// body is still being received; ways to close it.
#[derive(Default)]
struct ConnState {
    requests: AtomicU64,
    reading_body: AtomicBool,
    evict: tokio::sync::Notify,
    /// A request body did not arrive in time.
    overdue: tokio::sync::Notify,
}

impl ConnState {
    /// Never sent a request, or still sending a request's body.
    fn silent(&self) -> bool {
        self.requests.load(Ordering::Relaxed) == 0 || self.reading_body.load(Ordering::Relaxed)
    }
}

/// A request body with a deadline for the whole of it (counted from the
/// head); it marks its connection as "reading a body" until it ends.
struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    conn: Option<Arc<ConnState>>,
}

impl TimedBody {
    fn wrap(inner: Incoming, timeout: Duration, conn: Arc<ConnState>) -> Body {
        use hyper::body::Body as _;
        if inner.is_end_stream() {
            return Body::new(inner);
        }
        conn.reading_body.store(true, Ordering::Relaxed);
        Body::new(TimedBody {
            inner,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            conn: Some(conn),
        })
    }

    fn done(&mut self) {
        if let Some(conn) = self.conn.take() {
            conn.reading_body.store(false, Ordering::Relaxed);
        }
    }
}

impl Drop for TimedBody {
    fn drop(&mut self) {
        self.done();
    }
}

impl hyper::body::Body for TimedBody {
    type Data = hyper::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        if this.conn.is_none() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.done();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(err))) => {
                this.done();
                Poll::Ready(Some(Err(Box::new(err))))
            }
            Poll::Ready(Some(Ok(frame))) => {
                if this.inner.is_end_stream() {
                    this.done();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    if let Some(conn) = this.conn.take() {
                        conn.reading_body.store(false, Ordering::Relaxed);
                        conn.overdue.notify_one();
                    }
                    tracing::debug!("request body not received in time");
                    Poll::Ready(Some(Err(Box::new(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the request body did not arrive in time",
                    )))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.conn.is_none() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The open connections, oldest first (ids grow).
#[derive(Default)]
struct Registry {
    next: AtomicU64,
    open: std::sync::Mutex<std::collections::BTreeMap<u64, Arc<ConnState>>>,
}

impl Registry {
    fn add(&self) -> (u64, Arc<ConnState>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState::default());
        if let Ok(mut open) = self.open.lock() {
            open.insert(id, state.clone());
        }
        (id, state)
    }

    fn remove(&self, id: u64) {
        if let Ok(mut open) = self.open.lock() {
            open.remove(&id);
        }
    }

    /// Closes the oldest connection that has not sent a request (or not the
    /// whole body of one); false when every open connection is in use.
    fn evict_oldest_silent(&self) -> bool {
        let Ok(mut open) = self.open.lock() else {
            return false;
        };
        // Oldest first: one that never sent a request, else one still
        // trickling a request body.
        let victim = open
            .iter()
            .find(|(_, c)| c.requests.load(Ordering::Relaxed) == 0)
            .or_else(|| open.iter().find(|(_, c)| c.silent()))
            .map(|(id, c)| (*id, c.clone()));
        match victim {
            Some((id, conn)) => {
                open.remove(&id);
                conn.evict.notify_one();
                true
            }
            None => false,
        }
    }
}
