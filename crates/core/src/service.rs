//! The [`Harness`] handle: the store, the event bus and the configuration.
//! Cheap to clone; every adapter holds one.

use std::{sync::Arc, time::Duration};

use tokio::sync::broadcast;

use crate::{events::HarnessEvent, store::Store};

#[derive(Debug, Clone)]
pub struct HarnessConfig {
    /// OPEN asks older than this are swept to EXPIRED.
    pub pending_ttl: Duration,
    /// How often the sweep runs after the start-up sweep.
    pub sweep_interval: Duration,
    /// SHA-256 hex of the admin token.
    pub admin_token_hash: String,
    /// Where unattended-mode signal files are mirrored (`TOWER_SIGNAL_DIR`).
    pub signal_dir: Option<std::path::PathBuf>,
    /// This process's node id (stable in its data directory): recorded on
    /// the executions it spawns and on the deliveries only it can do.
    pub node_id: String,
    /// How long `reply` / keyed input wait for the delivery to finish before
    /// answering `queued` (the row is committed either way).
    pub delivery_wait: Duration,
}

impl HarnessConfig {
    pub const DEFAULT_TTL_DAYS: u64 = 14;

    pub fn new(admin_token_hash: String) -> Self {
        Self {
            pending_ttl: Duration::from_secs(Self::DEFAULT_TTL_DAYS * 24 * 3600),
            sweep_interval: Duration::from_secs(6 * 3600),
            admin_token_hash,
            signal_dir: None,
            node_id: "local".into(),
            delivery_wait: Duration::from_secs(2),
        }
    }
}

#[derive(Clone)]
pub struct Harness {
    inner: Arc<Inner>,
}

struct Inner {
    /// Notify targets, read on every ask: cached after the first read and
    /// replaced on every write (this process is the only writer).
    targets: std::sync::RwLock<Option<Vec<crate::settings::NotifyTarget>>>,
    runtime: std::sync::OnceLock<Arc<dyn crate::runtime::AgentRuntime>>,
    store: Arc<dyn Store>,
    events: broadcast::Sender<HarnessEvent>,
    /// Wakes the delivery worker when a row is queued.
    deliveries_wake: Arc<tokio::sync::Notify>,
    config: HarnessConfig,
}

impl Harness {
    pub fn new(store: Arc<dyn Store>, config: HarnessConfig) -> Self {
        let (events, _) = broadcast::channel(1024);
        Self {
            inner: Arc::new(Inner {
                targets: std::sync::RwLock::new(None),
                runtime: std::sync::OnceLock::new(),
                store,
                events,
                deliveries_wake: Arc::new(tokio::sync::Notify::new()),
                config,
            }),
        }
    }

    pub fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    /// Attach the agent runtime (once, at start-up). Without one, replies are
    /// recorded and resume the execution state only (`injected: false`).
    pub fn attach_runtime(&self, runtime: Arc<dyn crate::runtime::AgentRuntime>) -> bool {
        self.inner.runtime.set(runtime).is_ok()
    }

    pub(crate) fn runtime(&self) -> Option<&Arc<dyn crate::runtime::AgentRuntime>> {
        self.inner.runtime.get()
    }

    pub(crate) fn cached_targets(&self) -> Option<Vec<crate::settings::NotifyTarget>> {
        self.inner.targets.read().ok().and_then(|t| t.clone())
    }

    pub(crate) fn cache_targets(&self, targets: Vec<crate::settings::NotifyTarget>) {
        if let Ok(mut slot) = self.inner.targets.write() {
            *slot = Some(targets);
        }
    }

    /// The delivery worker's wake-up (in-process; polling is the fallback).
    pub fn deliveries_wake(&self) -> Arc<tokio::sync::Notify> {
        self.inner.deliveries_wake.clone()
    }

    pub fn config(&self) -> &HarnessConfig {
        &self.inner.config
    }

    /// Subscribe to change events. A lagging subscriber loses old events (it
    /// gets `RecvError::Lagged`) and should reload; the bus never grows.
    pub fn subscribe(&self) -> broadcast::Receiver<HarnessEvent> {
        self.inner.events.subscribe()
    }

    pub(crate) fn publish(&self, event: HarnessEvent) {
        // No subscribers is fine: events are hints, the database is the truth.
        let _ = self.inner.events.send(event);
    }
}
