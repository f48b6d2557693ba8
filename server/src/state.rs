use axum::extract::FromRef;
use harness_core::Harness;
use leptos::config::LeptosOptions;

use crate::{security::OriginPolicy, terminals::Terminals};

/// Shared state of every route.
#[derive(Clone)]
pub struct AppState {
    pub harness: Harness,
    pub leptos: LeptosOptions,
    pub origin: OriginPolicy,
    pub terminals: Terminals,
    /// Browser sessions and the login throttle (`login.rs`).
    pub login: crate::login::Login,
    /// Separate caps for event streams and terminal sockets (`serve.rs`).
    pub streams: crate::serve::StreamLimits,
    /// Request counters and the `/metrics` credential (`metrics.rs`).
    pub metrics: crate::metrics::Metrics,
    /// The data directory (its `secrets/gateway.token` is rotated by REST).
    pub data_root: std::path::PathBuf,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

impl FromRef<AppState> for Harness {
    fn from_ref(state: &AppState) -> Self {
        state.harness.clone()
    }
}
