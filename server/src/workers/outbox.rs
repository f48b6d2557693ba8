//! The outbox worker (one per process): claims due `harness_outbound` rows
//! with a lease (one statement), runs the gateway CLI for each and records
//! the outcome (`Outbox::settle_and_claim`: DELIVERED / SENT_UNVERIFIED with the
//! activation, or FAILED with backoff / DEAD, batched with the next lease). Woken in-process
//! on enqueue; polls as the fallback; recovers SENDING rows of an earlier
//! boot of this node at start and expired leases periodically, by the
//! "really started" evidence each send commits just before its spawn
//! (`started_attempt`, in the database so any node can read it). Any node may send any row (no PTY is
//! involved). The loop itself — turns, rows leased ahead of a free slot,
//! the stop — is the worker skeleton (`engine.rs`); this module has its
//! configuration, the start-up recovery and one send (`send_one`).

use std::{future::Future, sync::Arc, time::Duration};

use harness_core::{
    CoreResult, Harness,
    outbox::{self, Outbound, RunEnd, SendOutcome, Unsent, destination, gateway},
    work::{Kind, Scope},
};
use tokio_util::sync::CancellationToken;

use super::{
    engine::{self, Queue, Worker},
    gateway_cli,
    start_marks::{Marked, StartMarks},
};

/// Rows leased ahead of a free slot, per slot.
const LEASE_AHEAD: usize = 3;
/// A queued row starts only if its lease outlasts a whole CLI run by this.
const LEASE_SLACK: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct OutboxConfig {
    /// Fallback poll (rows due after a backoff, rows queued by another process).
    pub poll: Duration,
    /// Gateway processes run at once (`$HARNESS_OUTBOX_CONCURRENCY`,
    /// default [`DEFAULT_CONCURRENCY`], 1…64; 0, only in code: this process
    /// does not send). Each row is still leased and
    /// settled on its own, so concurrency never changes the state machine.
    pub max_in_flight: usize,
    /// How long a claim holds a row (longer than the CLI timeout).
    pub lease: Duration,
    /// The gateway CLI's timeout; then its process group is killed.
    pub cli_timeout: Duration,
    /// How often SENDING rows with an expired lease are recovered.
    pub recover_every: Duration,
    /// How long a stopping worker lets sends in flight finish.
    pub drain: Duration,
    /// Failed attempts before a row is DEAD (docs/decisions.md D7, default 20).
    pub max_attempts: u32,
}

/// Gateway processes at once unless configured.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// `$HARNESS_OUTBOX_CONCURRENCY` (1…64), else [`DEFAULT_CONCURRENCY`].
pub fn concurrency_from_env() -> usize {
    std::env::var("HARNESS_OUTBOX_CONCURRENCY")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(DEFAULT_CONCURRENCY, |n| n.clamp(1, 64))
}

impl Default for OutboxConfig {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(1),
            max_in_flight: concurrency_from_env(),
            lease: outbox::CLAIM_LEASE,
            cli_timeout: outbox::CLI_TIMEOUT,
            recover_every: Duration::from_secs(10),
            drain: Duration::from_secs(3),
            max_attempts: harness_core::deliveries::MAX_ATTEMPTS,
        }
    }
}

/// The row with its destination resolved (docs/tower-messaging.md §6.2): the
/// value the CLI gets is in `requested_to` (`None`: the home channel).
async fn resolve_row(
    harness: &Harness,
    row: &Outbound,
    settings: &gateway::GatewaySettings,
    destinations: &[destination::Destination],
    bin: &str,
) -> Result<Outbound, String> {
    let hermes = settings.hermes_directory(row.profile.as_deref());
    let lookup = gateway_cli::CliDirectory {
        bin: bin.to_string(),
        env: settings.env.clone(),
    };
    let req = destination::Request {
        gateway: &row.gateway,
        platform: row.downstream.as_deref(),
        scope: &row.scope,
        requested: row.requested_to.as_deref().or(row.dest.as_deref()),
    };
    let resolution = harness
        .outbox()
        .resolve_destination_in(destinations, &req, &hermes, &lookup)
        .await?;
    tracing::debug!(via = ?resolution.via, dest = ?resolution.dest, "destination resolved");
    let mut out = row.clone();
    out.dest = None;
    out.requested_to = match resolution.via {
        // Hermes builds its home route from the platform itself.
        destination::Via::HomeRoute => None,
        _ => resolution.dest,
    };
    Ok(out)
}

/// What every send reads: the gateway settings and the destination aliases.
struct SendSettings {
    gateway: gateway::GatewayConfig,
    destinations: Vec<destination::Destination>,
}

/// [`SendSettings`] read once and shared by the sends until a setting
/// changed in this process ([`Harness::settings_generation`]) or
/// [`SETTINGS_TTL`] passed (another process may have written them).
#[derive(Default)]
struct SettingsCache {
    current: Option<(tokio::time::Instant, u64, Arc<SendSettings>)>,
}

const SETTINGS_TTL: Duration = Duration::from_secs(1);

impl SettingsCache {
    async fn get(&mut self, harness: &Harness) -> harness_core::CoreResult<Arc<SendSettings>> {
        // Read before the settings: a change racing the read makes the next
        // call read again.
        let generation = harness.settings_generation();
        if let Some((at, seen, s)) = &self.current
            && *seen == generation
            && at.elapsed() < SETTINGS_TTL
        {
            return Ok(s.clone());
        }
        let fresh = Arc::new(SendSettings {
            gateway: harness.outbox().gateway_config().await?,
            destinations: harness.outbox().destinations().await?,
        });
        self.current = Some((tokio::time::Instant::now(), generation, fresh.clone()));
        Ok(fresh)
    }
}

/// Run the gateway CLI for one row leased to this sender (its started mark
/// committed through `marks` first): how the attempt ended.
async fn send_one(
    harness: &Harness,
    row: &Outbound,
    marks: &StartMarks,
    timeout: Duration,
    settings: harness_core::CoreResult<Arc<SendSettings>>,
) -> SendOutcome {
    let all = match settings {
        Err(err) => {
            tracing::error!(error = ?err, "cannot read the gateway config; the attempt counts as failed");
            return Unsent::Settings.into();
        }
        Ok(all) => all,
    };
    let settings = all.gateway.get(&row.gateway);
    let bin = gateway::binary(&row.gateway, &settings);
    let resolved = match resolve_row(harness, row, &settings, &all.destinations, &bin).await {
        Err(why) => return Unsent::Destination(why).into(),
        Ok(resolved) => resolved,
    };
    let args = match gateway::argv(&resolved, &settings) {
        Err(why) => return Unsent::Command(why).into(),
        Ok(args) => args,
    };
    // The evidence first, committed: a crash after it leaves the row
    // SENT_UNVERIFIED (it may have been sent), a crash before it leaves a
    // row that is released and sent again — by any node. Marks of sends
    // starting together share one commit (`start_marks`).
    match marks.mark(row).await {
        Marked::Started => {}
        Marked::LeaseGone => {
            // The lease is gone (recovered by another node): not spawned; the
            // outcome is ignored by the settle (not SENDING under this lease).
            tracing::warn!(outbound_id = %row.id, "lease lost before the send started; not sent");
            return Unsent::NotMarked("the lease ended before the send started".into()).into();
        }
        Marked::Failed(err) => {
            // Not spawned: the attempt fails (counted, backoff), so evidence
            // that cannot be written never hides a real send.
            tracing::error!(error = %err, "cannot record the start of the send; the attempt counts as failed");
            return Unsent::NotMarked("cannot record the start of the send".into()).into();
        }
    }
    let run = gateway_cli::run(&bin, &args, &settings.env, timeout).await;
    if matches!(run.end, RunEnd::TimedOut) {
        tracing::warn!(bin, "gateway CLI timed out; its process group was killed");
    }
    outbox::receipt::classify(&run.end, &run.stdout, &run.stderr)
}

/// The outbox kind on the worker skeleton: its turn is
/// [`Outbox::settle_and_claim`](harness_core::outbox::Outbox::settle_and_claim)
/// (one transaction), its runner the gateway CLI ([`send_one`]), its upkeep
/// the recovery of expired leases.
struct OutboxQueue {
    harness: Harness,
    owner: String,
    lease: chrono::Duration,
    cli_timeout: Duration,
    /// Settings read once and shared by the sends (see [`SettingsCache`]).
    settings: Arc<tokio::sync::Mutex<SettingsCache>>,
    /// The started marks' group commit.
    marks: StartMarks,
}

impl Queue for OutboxQueue {
    type Row = Outbound;
    type Outcome = SendOutcome;
    const NAME: &'static str = "outbox";

    fn id(row: &Outbound) -> &str {
        &row.id
    }

    /// Any node can send it: a draining node leaves it to the others.
    fn takes_new_work(&self) -> bool {
        !self.harness.cluster().draining()
    }

    fn lease_until(row: &Outbound) -> Option<chrono::DateTime<chrono::Utc>> {
        // A row without a lease end cannot be known to be covered.
        Some(
            row.lease_expires_at
                .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC),
        )
    }

    fn span(row: &Outbound) -> tracing::Span {
        tracing::info_span!("outbound", outbound_id = %row.id, gateway = %row.gateway, attempt = row.attempts)
    }

    fn turn(
        &self,
        done: Vec<(Outbound, SendOutcome)>,
        released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<Outbound>>> + Send + 'static {
        let (h, owner, lease) = (self.harness.clone(), self.owner.clone(), self.lease);
        async move {
            h.outbox()
                .settle_and_claim(&owner, done, released, lease, limit)
                .await
        }
    }

    fn attempt(&self, row: Outbound) -> impl Future<Output = Option<SendOutcome>> + Send + 'static {
        let (h, timeout) = (self.harness.clone(), self.cli_timeout);
        let (marks, cache) = (self.marks.clone(), self.settings.clone());
        async move {
            // A reminder leased ahead while its ask was answered: not sent
            // (before the started mark, so it never counts as started).
            if let Some(why) = h.asks().skip_before_send(&row).await {
                tracing::info!(outbound_id = %row.id, "outbound skipped: {why}");
                return Some(SendOutcome::Skipped(why));
            }
            let settings = cache.lock().await.get(&h).await;
            Some(send_one(&h, &row, &marks, timeout, settings).await)
        }
    }

    fn maintain(&self) -> impl Future<Output = ()> + Send + 'static {
        let h = self.harness.clone();
        async move {
            match h.cluster().recover_work(Kind::Outbox, Scope::Expired).await {
                Ok(done) if done.unverified == 0 => {}
                Ok(done) => tracing::warn!(
                    count = done.unverified,
                    "outbound sends with an expired lease: SENT_UNVERIFIED"
                ),
                Err(err) => tracing::error!(error = ?err, "cannot recover expired outbound leases"),
            }
        }
    }
}

/// Run until `cancel`. `owner` is `<node id>:<boot id>`.
///
/// At start, SENDING rows of an earlier boot of this node are recovered
/// (`Cluster::recover_work`: started → SENT_UNVERIFIED, never started → due
/// again); then the skeleton sends. Rows are leased [`LEASE_AHEAD`] per slot ahead of a free slot — a
/// queued row's CLI is spawned only after its started mark is committed
/// (`send_one`) and only while its lease still covers a whole CLI run;
/// otherwise, and at a stop, it is released.
pub async fn run(harness: Harness, owner: String, config: OutboxConfig, cancel: CancellationToken) {
    if config.max_in_flight == 0 {
        // A process that does not send (benchmarks start their own sender):
        // it must not take the in-process wake-ups either.
        tracing::info!(%owner, "outbox sending is off in this process");
        cancel.cancelled().await;
        return;
    }
    // This node's earlier boots' sends (the engine's one recovery pass):
    // started → SENT_UNVERIFIED, never started → due again.
    match harness
        .cluster()
        .recover_work(Kind::Outbox, Scope::Boot(&owner))
        .await
    {
        Ok(done) => {
            if done.unverified > 0 {
                tracing::warn!(
                    count = done.unverified,
                    "outbound messages caught mid-send by the last stop: SENT_UNVERIFIED"
                );
            }
            if done.released > 0 {
                tracing::info!(
                    count = done.released,
                    "outbound messages leased but never started by the last run: due again"
                );
            }
        }
        Err(err) => {
            tracing::error!(error = ?err, "cannot recover the last run's outbound messages")
        }
    }
    tracing::info!(%owner, "outbox worker starting");
    let skeleton = engine::WorkerConfig {
        poll: config.poll,
        max_in_flight: config.max_in_flight,
        ahead_per_slot: LEASE_AHEAD,
        // A queued row starts only if its lease outlasts a whole CLI run
        // with a slack (a lease configured shorter than that needs half of
        // itself left, so a row leased for a free slot always starts).
        start_margin: (config.cli_timeout + LEASE_SLACK).min(config.lease / 2),
        maintain_every: config.recover_every,
        drain: config.drain,
        ..engine::WorkerConfig::default()
    };
    let queue = OutboxQueue {
        lease: chrono::Duration::from_std(config.lease)
            .unwrap_or_else(|_| chrono::Duration::seconds(120)),
        harness: harness.clone(),
        marks: StartMarks::spawn(harness.clone(), owner.clone()),
        owner,
        cli_timeout: config.cli_timeout,
        settings: Arc::default(),
    };
    Worker::new(queue, skeleton)
        .run(harness.waker(Kind::Outbox), cancel)
        .await;
}
