//! `GET /metrics`: Prometheus text format (the `prometheus-client` crate).
//!
//! Two kinds of series:
//! - counted as they happen, in this process: HTTP requests by route
//!   template, method and status, with a latency histogram; build info;
//! - read at scrape time from the database (the truth, so they survive
//!   restarts) and the live terminal layer: messages by kind and state, the
//!   time from a question to its answer (histogram over the asks of the last
//!   7 days, bucket counts computed in SQL), deliveries and outbox rows by state with attempts, executions by status, live
//!   and parked PTYs, agents by state (`harness_agents{state}`, every state
//!   name always present, counted by this node's agent watcher), browser
//!   terminal viewers and live event streams.
//!
//! Label sets are bounded: route templates (never a concrete path or id),
//! states from fixed enums. Authorised by the admin token or the read-only
//! token in `<data-dir>/secrets/metrics.token` (for a Prometheus server).

use std::{sync::Arc, time::Instant};

use axum::{
    extract::{MatchedPath, Request, State},
    http::{HeaderMap, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use prometheus_client::{
    encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet, text::encode},
    metrics::{
        MetricType,
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
        info::Info,
    },
    registry::Registry,
};

use harness_core::ids::secure_eq;

use crate::{error::ApiError, state::AppState};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindState {
    kind: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 1 ms … ~33 s
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// The process-lifetime series and the scrape credential.
#[derive(Clone)]
pub struct Metrics {
    requests: Family<HttpLabels, Counter>,
    latency: HistogramFamily<RouteLabels>,
    /// sha256 of the read-only metrics token.
    token_hash: Arc<String>,
}

impl Metrics {
    pub fn new(metrics_token: &str) -> Self {
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            token_hash: Arc::new(harness_core::ids::token_hash(metrics_token)),
        }
    }

    fn observe(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&HttpLabels {
                route: route.to_string(),
                method: method.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_string(),
                method: method.to_string(),
            })
            .observe(seconds);
    }
}

/// Route layer: counts every matched request by its route template.
pub async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = bounded_method(req.method().as_str());
    let started = Instant::now();
    let response = next.run(req).await;
    state.metrics.observe(
        &route,
        method,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

fn bounded_method(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    }
}

fn authorised(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(token) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
    else {
        return false;
    };
    let hash = harness_core::ids::token_hash(token);
    secure_eq(hash.as_bytes(), state.metrics.token_hash.as_bytes())
        || secure_eq(
            hash.as_bytes(),
            state.harness.config().admin_token_hash.as_bytes(),
        )
}

/// `GET /metrics`
pub async fn scrape(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if !authorised(&state, &headers) {
        return ApiError::from(harness_core::CoreError::Unauthorized(
            "send Authorization: Bearer <admin token or secrets/metrics.token>".into(),
        ))
        .into_response();
    }
    match render(&state).await {
        Ok(text) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(err) => err.into_response(),
    }
}

async fn render(state: &AppState) -> Result<String, ApiError> {
    let harness = &state.harness;
    let counts = harness.reports().store_counts().await?;
    let now = chrono::Utc::now();
    // Bucket counts come from the database (one grouped query), never the rows.
    let bounds = answer_bounds();
    let answers = harness
        .reports()
        .answer_histogram(now - chrono::Duration::days(7), &bounds)
        .await?;

    let mut registry = Registry::with_prefix("harness");
    registry.register(
        "build",
        "Build information",
        Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]),
    );
    registry.register(
        "http_requests",
        "HTTP requests by route template, method and status",
        state.metrics.requests.clone(),
    );
    registry.register(
        "http_request_duration_seconds",
        "HTTP request latency by route template and method",
        state.metrics.latency.clone(),
    );

    let messages = Family::<KindState, Gauge>::default();
    for (kind, st, n) in &counts.messages {
        messages
            .get_or_create(&KindState {
                kind: kind.clone(),
                state: st.clone(),
            })
            .set(*n);
    }
    registry.register(
        "messages",
        "Asks and notifies stored, by kind and state (outcome)",
        messages,
    );
    let answer = ConstHistogram::new(&bounds, &answers);
    registry.register(
        "ask_answer_seconds",
        "Time from a question to its answer (questions of the last 7 days)",
        answer,
    );
    let txn = harness.reports().transaction_latency();
    let txn = ConstHistogram::new(
        &harness_core::store::TRANSACTION_BOUNDS,
        &harness_core::store::AnswerHistogram {
            counts: txn.counts,
            sum_seconds: txn.sum_seconds,
        },
    );
    registry.register(
        "store_transaction_seconds",
        "Store write transactions, from asking for the single writer to the commit",
        txn,
    );
    let deliveries = Family::<StateLabel, Gauge>::default();
    let attempts = Family::<StateLabel, Gauge>::default();
    for (st, n, tries) in &counts.deliveries {
        let label = StateLabel { state: st.clone() };
        deliveries.get_or_create(&label).set(*n);
        attempts.get_or_create(&label).set(*tries);
    }
    registry.register(
        "deliveries",
        "Deliveries into agents' terminals by state",
        deliveries,
    );
    registry.register(
        "delivery_attempts",
        "Delivery attempts summed, by the deliveries' state",
        attempts,
    );
    let executions = Family::<StateLabel, Gauge>::default();
    for (st, n) in &counts.executions {
        executions
            .get_or_create(&StateLabel { state: st.clone() })
            .set(*n);
    }
    registry.register("executions", "Agent executions by status", executions);
    let outbound = Family::<StateLabel, Gauge>::default();
    let outbound_attempts = Family::<StateLabel, Gauge>::default();
    for (st, n, tries) in &counts.outbound {
        let label = StateLabel { state: st.clone() };
        outbound.get_or_create(&label).set(*n);
        outbound_attempts.get_or_create(&label).set(*tries);
    }
    registry.register(
        "outbound",
        "Outbox rows (messages to people through gateways) by state",
        outbound,
    );
    registry.register(
        "outbound_attempts",
        "Outbox send attempts summed, by the rows' state",
        outbound_attempts,
    );
    let (live, parked) = state.terminals.pty_counts();
    let gauge = |v: usize| {
        let g = Gauge::<i64>::default();
        g.set(i64::try_from(v).unwrap_or(i64::MAX));
        g
    };
    registry.register("live_ptys", "Agent terminals (PTYs) alive", gauge(live));
    registry.register(
        "parked_ptys",
        "Agent terminals kept alive while their agent waits for an answer",
        gauge(parked),
    );
    // Every state name, zero included: the agents this node watches (live,
    // or exited with their terminal still shown).
    let agents = Family::<StateLabel, Gauge>::default();
    for (name, n) in state.terminals.agent_state_counts() {
        agents
            .get_or_create(&StateLabel {
                state: name.to_string(),
            })
            .set(n);
    }
    registry.register(
        "agents",
        "Agents of this node by state (working, waiting_for_person, idle, usage_limited, \
         erroring, logged_out, stalled, exited, crashed)",
        agents,
    );
    // What watching costs: looks at a screen that printed, their wall time
    // and their CPU time (scaled from the sampled looks).
    let cost = state.terminals.watch_cost();
    let look_count = Gauge::<i64>::default();
    look_count.set(i64::try_from(cost.looks).unwrap_or(i64::MAX));
    registry.register(
        "agent_watch_looks",
        "Looks of the agent watcher at a screen that printed (screen text, recogniser, state) since the start",
        look_count,
    );
    let look_secs = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    look_secs.set(cost.wall.as_secs_f64());
    registry.register(
        "agent_watch_look_seconds",
        "Wall time the agent watcher's looks took since the start",
        look_secs,
    );
    let look_cpu = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    look_cpu.set(cost.cpu().unwrap_or_default().as_secs_f64());
    registry.register(
        "agent_watch_look_cpu_seconds",
        "CPU time the agent watcher's looks used since the start (measured on one look in eight, \
         scaled to all)",
        look_cpu,
    );
    let (sse, sockets) = state.streams.in_use();
    registry.register("sse_clients", "Live event streams (SSE) open", gauge(sse));
    registry.register(
        "terminal_viewers",
        "Browser terminal WebSockets open",
        gauge(sockets),
    );
    let mut text = String::new();
    encode(&mut text, &registry).map_err(|e| {
        harness_core::CoreError::Store(harness_core::store::StoreError::Backend(Box::new(e)))
    })?;
    Ok(text)
}

/// Upper bounds of the answer-time buckets: 1 s … ~6 days.
fn answer_bounds() -> Vec<f64> {
    exponential_buckets(1.0, 2.0, 20).collect()
}

/// A histogram whose bucket counts were computed elsewhere (by the store).
#[derive(Debug)]
struct ConstHistogram {
    sum: f64,
    count: u64,
    /// `(upper bound, count in this bucket)`, the last bound `f64::MAX` (+Inf).
    buckets: Vec<(f64, u64)>,
}

impl ConstHistogram {
    fn new(bounds: &[f64], h: &harness_core::store::AnswerHistogram) -> Self {
        let buckets = bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::MAX))
            .zip(h.counts.iter().copied().chain(std::iter::repeat(0)))
            .collect();
        Self {
            sum: h.sum_seconds,
            count: h.total(),
            buckets,
        }
    }
}

impl EncodeMetric for ConstHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_histogram::<NoLabelSet>(self.sum, self.count, &self.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}
