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
}

impl HarnessConfig {
    pub const DEFAULT_TTL_DAYS: u64 = 14;

    pub fn new(admin_token_hash: String) -> Self {
        Self {
            pending_ttl: Duration::from_secs(Self::DEFAULT_TTL_DAYS * 24 * 3600),
            sweep_interval: Duration::from_secs(6 * 3600),
            admin_token_hash,
        }
    }
}

#[derive(Clone)]
pub struct Harness {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    events: broadcast::Sender<HarnessEvent>,
    config: HarnessConfig,
}

impl Harness {
    pub fn new(store: Arc<dyn Store>, config: HarnessConfig) -> Self {
        let (events, _) = broadcast::channel(1024);
        Self {
            inner: Arc::new(Inner {
                store,
                events,
                config,
            }),
        }
    }

    pub fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
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
