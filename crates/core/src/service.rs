//! The [`Harness`] handle: the store, the event bus and the configuration.
//! Cheap to clone; every adapter holds one.

use std::{
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::sync::broadcast::error::TryRecvError;

use crate::{
    events::{EventBus, EventStream, HarnessEvent, InProcessBus},
    settings::{NOTIFY_TARGETS_KEY, NotifyTarget},
    store::Store,
};

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
    /// The lease owner (`<node id>:<boot id>`) of this process's delivery
    /// worker; `None` when the process runs none (rows are then left to
    /// whoever claims them).
    pub delivery_owner: Option<String>,
    /// How long `push_to_human` waits for the first send attempt (docs/decisions.md D8);
    /// zero when this process runs no outbox worker.
    pub outbox_wait: Duration,
    /// After this many failed attempts an outbound row is DEAD (docs/decisions.md D7).
    pub outbox_max_attempts: u32,
    /// How often one task may ask, notify and push (`rate_limit`).
    pub rate_limits: crate::rate_limit::RateLimits,
    /// The key of signed gateway requests (`secrets/internal-api.key`);
    /// `None`: signed requests are refused with 503.
    pub internal_api_key: Option<Vec<u8>>,
    /// The key of node-to-node calls (`secrets/node.key`, the same on every
    /// node of a cluster, never a gateway's); `None`: they are refused (503).
    pub node_key: Option<Vec<u8>>,
    /// The longest one approval check holds a tool call for a person's
    /// decision (≤ `approvals::flow::MAX_WAIT`). Tests lower it.
    pub approval_wait_max: Duration,
    /// How long a derived task's approval waits for its parent before it
    /// is pushed to the person's chat (the parent first,
    /// as on the escalation ladder). Tests lower it.
    pub approval_parent_step: Duration,
    /// How long after an answer was typed into its agent's terminal the
    /// screen is captured for the question's receipt (`crate::receipt`).
    /// Tests lower it.
    pub answer_capture_after: Duration,
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
            delivery_owner: None,
            outbox_wait: Duration::ZERO,
            outbox_max_attempts: crate::deliveries::MAX_ATTEMPTS,
            rate_limits: crate::rate_limit::RateLimits::default(),
            internal_api_key: None,
            node_key: None,
            approval_wait_max: crate::approvals::flow::MAX_WAIT,
            approval_parent_step: crate::approvals::flow::PARENT_STEP,
            answer_capture_after: crate::receipt::CAPTURE_AFTER,
        }
    }
}

#[derive(Clone)]
pub struct Harness {
    inner: Arc<Inner>,
}

struct Inner {
    targets: TargetsCache,
    runtime: std::sync::OnceLock<Arc<dyn crate::runtime::AgentRuntime>>,
    gateway_secret: std::sync::OnceLock<Arc<dyn crate::auth::GatewaySecret>>,
    store: Arc<dyn Store>,
    bus: Arc<dyn EventBus>,
    /// One wake-up per kind of owed work (`crate::work`).
    wakers: crate::work::Wakers,
    /// Rows leased to this process's worker by the transaction that wrote them.
    handed_off: Mutex<Vec<crate::deliveries::Delivery>>,
    /// Bumped on every `SettingChanged` this process publishes: a cache of
    /// settings compares it instead of listening to every event.
    settings_generation: std::sync::atomic::AtomicU64,
    rate_limiter: crate::rate_limit::RateLimiter,
    /// This node is draining (`crate::drain`): its copy of the registry's flag.
    draining: std::sync::atomic::AtomicBool,
    /// Bumped by every change of this node's drain flag made here: a
    /// heartbeat's re-read that began before one is stale (`crate::drain`).
    drain_epoch: Mutex<u64>,
    config: HarnessConfig,
}

/// Notify targets, read on every ask: cached after a read, and invalidated
/// through the event bus (a `SettingChanged` for their key, whoever wrote
/// it: this process or, with a shared bus, another one). The bus is drained
/// before the store is read, so a write seen as an event is visible to the
/// read that follows; a lagged or closed bus also invalidates.
struct TargetsCache {
    value: Mutex<Option<Vec<NotifyTarget>>>,
    changes: Mutex<EventStream>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TargetsCache {
    fn get(&self) -> Option<Vec<NotifyTarget>> {
        let mut stale = false;
        {
            let mut changes = lock(&self.changes);
            loop {
                match changes.try_recv() {
                    Ok(HarnessEvent::SettingChanged { key }) if key == NOTIFY_TARGETS_KEY => {
                        stale = true;
                    }
                    Ok(HarnessEvent::Resync) => stale = true,
                    Ok(_) => {}
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Lagged(_)) => stale = true,
                    Err(TryRecvError::Closed) => {
                        stale = true;
                        break;
                    }
                }
            }
        }
        let mut value = lock(&self.value);
        if stale {
            *value = None;
        }
        value.clone()
    }

    fn put(&self, targets: Vec<NotifyTarget>) {
        *lock(&self.value) = Some(targets);
    }
}

impl Harness {
    /// A harness on the in-process event bus.
    pub fn new(store: Arc<dyn Store>, config: HarnessConfig) -> Self {
        Self::with_bus(store, Arc::new(InProcessBus::default()), config)
    }

    /// A harness on the given event bus.
    pub fn with_bus(store: Arc<dyn Store>, bus: Arc<dyn EventBus>, config: HarnessConfig) -> Self {
        let targets = TargetsCache {
            value: Mutex::new(None),
            changes: Mutex::new(bus.subscribe()),
        };
        Self {
            inner: Arc::new(Inner {
                targets,
                runtime: std::sync::OnceLock::new(),
                gateway_secret: std::sync::OnceLock::new(),
                store,
                bus,
                wakers: crate::work::Wakers::default(),
                handed_off: Mutex::new(Vec::new()),
                settings_generation: std::sync::atomic::AtomicU64::new(0),
                rate_limiter: crate::rate_limit::RateLimiter::default(),
                draining: std::sync::atomic::AtomicBool::new(false),
                drain_epoch: Mutex::new(0),
                config,
            }),
        }
    }

    /// The store port. The adapters (`server`, `app`) never see it: every
    /// rule and every write goes through a core method; the
    /// store's and the server's own tests reach it with `test-support`.
    #[cfg(any(test, feature = "test-support"))]
    pub fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    #[cfg(not(any(test, feature = "test-support")))]
    pub(crate) fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    /// Attach the agent runtime (once, at start-up). Without one, replies are
    /// recorded and resume the execution state only (`injected: false`).
    pub fn attach_runtime(&self, runtime: Arc<dyn crate::runtime::AgentRuntime>) -> bool {
        self.inner.runtime.set(runtime).is_ok()
    }

    /// Attach where the gateway token comes from (once, at start-up);
    /// without one no bearer token is a gateway's.
    pub fn attach_gateway_secret(&self, secret: Arc<dyn crate::auth::GatewaySecret>) -> bool {
        self.inner.gateway_secret.set(secret).is_ok()
    }

    pub(crate) fn gateway_secret(&self) -> Option<&Arc<dyn crate::auth::GatewaySecret>> {
        self.inner.gateway_secret.get()
    }

    pub(crate) fn runtime(&self) -> Option<&Arc<dyn crate::runtime::AgentRuntime>> {
        self.inner.runtime.get()
    }

    pub(crate) fn cached_targets(&self) -> Option<Vec<NotifyTarget>> {
        self.inner.targets.get()
    }

    pub(crate) fn cache_targets(&self, targets: Vec<NotifyTarget>) {
        self.inner.targets.put(targets);
    }

    pub(crate) fn wakers(&self) -> &crate::work::Wakers {
        &self.inner.wakers
    }

    pub(crate) fn hand_off(&self, row: crate::deliveries::Delivery) {
        lock(&self.inner.handed_off).push(row);
    }

    /// The rows handed to this process's worker since the last call (already
    /// leased to it).
    pub fn take_handed_off(&self) -> Vec<crate::deliveries::Delivery> {
        std::mem::take(&mut *lock(&self.inner.handed_off))
    }

    pub(crate) fn draining_flag(&self) -> &std::sync::atomic::AtomicBool {
        &self.inner.draining
    }

    /// The drain flag's epoch, locked (`crate::drain`).
    pub(crate) fn drain_epoch(&self) -> std::sync::MutexGuard<'_, u64> {
        lock(&self.inner.drain_epoch)
    }

    pub(crate) fn rate_limiter(&self) -> &crate::rate_limit::RateLimiter {
        &self.inner.rate_limiter
    }

    pub fn config(&self) -> &HarnessConfig {
        &self.inner.config
    }

    /// Subscribe to change events. A lagging subscriber loses old events (it
    /// gets `RecvError::Lagged`) and should reload; the bus never grows.
    pub fn subscribe(&self) -> EventStream {
        self.inner.bus.subscribe()
    }

    /// Changes of any setting seen by this process so far: its own (bumped
    /// as they are published) and the other nodes' (bumped when their event
    /// arrives, `crate::cluster`).
    pub fn settings_generation(&self) -> u64 {
        self.inner
            .settings_generation
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// A setting changed elsewhere (or changes may have been missed).
    pub(crate) fn bump_settings_generation(&self) {
        self.inner
            .settings_generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// The other nodes' workers of `kind` should look for work.
    pub(crate) fn wake_others(&self, kind: crate::work::Kind) {
        self.inner.bus.wake_others(kind);
    }

    pub(crate) fn publish(&self, event: HarnessEvent) {
        if matches!(event, HarnessEvent::SettingChanged { .. }) {
            self.inner
                .settings_generation
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        // Events are hints, the database is the truth.
        self.inner.bus.publish(event);
    }
}

/// The services: one borrowed view per aggregate, each owning that
/// aggregate's methods in its own module.
impl Harness {
    /// Gateway inbound and the replies owed to gateways (`crate::gateway`).
    pub fn gateway(&self) -> crate::gateway::Gateway<'_> {
        crate::gateway::Gateway { h: self }
    }

    /// Approvals of tool calls and the runs no check reached
    /// (`crate::approvals`, `crate::ungated`).
    pub fn approvals(&self) -> crate::approvals::Approvals<'_> {
        crate::approvals::Approvals { h: self }
    }

    /// Reports, receipts and analytics (`crate::report`, `crate::receipt`,
    /// `crate::analytics`).
    pub fn reports(&self) -> crate::report::Reports<'_> {
        crate::report::Reports { h: self }
    }

    /// Projects, tasks, executions, their control and the Workbench
    /// (`crate::tasks` and the modules it lists).
    pub fn tasks(&self) -> crate::tasks::Tasks<'_> {
        crate::tasks::Tasks { h: self }
    }

    /// Nodes, node-to-node calls, draining and the recovery of work left in
    /// flight (`crate::cluster` and the modules it lists).
    pub fn cluster(&self) -> crate::cluster::Cluster<'_> {
        crate::cluster::Cluster { h: self }
    }

    /// Notify targets, the system directive and list settings
    /// (`crate::settings`, `crate::setting_lists`).
    pub fn settings(&self) -> crate::settings::Settings<'_> {
        crate::settings::Settings { h: self }
    }

    /// Pushes to a person, their outbound rows and sending them, the
    /// gateway configuration, destinations and notify targets
    /// (`crate::outbox` and its modules).
    pub fn outbox(&self) -> crate::outbox::Outbox<'_> {
        crate::outbox::Outbox { h: self }
    }

    /// Who a bearer token is and what it may do to which task
    /// (`crate::auth`, `crate::access`).
    pub fn access(&self) -> crate::auth::Access<'_> {
        crate::auth::Access { h: self }
    }

    /// Agents' recovery actions, their recorded states and the resumes
    /// after a reboot (`crate::agent_actions`, `crate::agent_states`,
    /// `crate::reboot`).
    pub fn agents(&self) -> crate::agent_actions::Agents<'_> {
        crate::agent_actions::Agents { h: self }
    }

    /// Deliveries into agents' terminals and the parent's inbox
    /// (`crate::deliveries` and the modules it lists).
    pub fn deliveries(&self) -> crate::deliveries::Deliveries<'_> {
        crate::deliveries::Deliveries { h: self }
    }

    /// Asks and notes to a person, their answers, deadlines, reminders and
    /// escalation (`crate::asks` lists the modules).
    pub fn asks(&self) -> crate::asks::Asks<'_> {
        crate::asks::Asks { h: self }
    }
}
