//! The outbox worker (one per process): claims due `harness_outbound` rows
//! with a lease (one statement), runs the gateway CLI for each and records
//! the outcome (`Harness::finish_send`: DELIVERED / SENT_UNVERIFIED with the
//! activation transaction, or FAILED with backoff / DEAD). Woken in-process
//! on enqueue; polls as the fallback; recovers SENDING rows of an earlier
//! boot of this node at start and expired leases periodically. Any node may
//! send any row (no PTY is involved).

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono::Utc;
use harness_core::{
    Harness,
    outbox::{self, Outbound, RunEnd, SendOutcome, destination, gateway},
};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::gateway_cli;

#[derive(Debug, Clone)]
pub struct OutboxConfig {
    /// Fallback poll (rows due after a backoff, rows queued by another process).
    pub poll: Duration,
    /// Gateway processes run at once (`$HARNESS_OUTBOX_CONCURRENCY`,
    /// default [`DEFAULT_CONCURRENCY`], 1…64). Each row is still leased and
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
    /// Failed attempts before a row is DEAD (D7, default 20).
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

/// The row with its destination resolved (tower-messaging.md §6.2): the
/// value the CLI gets is in `requested_to` (`None`: the home channel).
async fn resolve_row(
    harness: &Harness,
    row: &Outbound,
    settings: &gateway::GatewaySettings,
    destinations: &[destination::Destination],
    bin: &str,
) -> Result<Outbound, String> {
    let var = |name: &str| {
        settings
            .env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.trim().is_empty())
    };
    let hermes = destination::HermesDirectory {
        home: var("HOME").map(std::path::PathBuf::from),
        profile: row
            .profile
            .clone()
            .or_else(|| settings.profile.clone())
            .or_else(|| var("HERMES_PROFILE")),
    };
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

/// [`SendSettings`] read once and shared by the sends until one of the two
/// settings changes (a `SettingChanged` event of this process) or
/// [`SETTINGS_TTL`] passed (another process may have written them).
#[derive(Default)]
struct SettingsCache {
    current: Option<(tokio::time::Instant, Arc<SendSettings>)>,
    dirty: Arc<std::sync::atomic::AtomicBool>,
}

const SETTINGS_TTL: Duration = Duration::from_secs(1);

impl SettingsCache {
    async fn get(&mut self, harness: &Harness) -> harness_core::CoreResult<Arc<SendSettings>> {
        let dirty = self.dirty.swap(false, std::sync::atomic::Ordering::AcqRel);
        if let Some((at, s)) = &self.current
            && !dirty
            && at.elapsed() < SETTINGS_TTL
        {
            return Ok(s.clone());
        }
        let fresh = Arc::new(SendSettings {
            gateway: harness.gateway_config().await?,
            destinations: harness.destinations().await?,
        });
        self.current = Some((tokio::time::Instant::now(), fresh.clone()));
        Ok(fresh)
    }

    /// Mark the cache dirty on every change of the two settings.
    fn watch(&self, harness: &Harness, cancel: CancellationToken) {
        let (dirty, mut events) = (self.dirty.clone(), harness.subscribe());
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    () = cancel.cancelled() => return,
                    e = events.recv() => e,
                };
                use tokio::sync::broadcast::error::RecvError;
                let stale = match event {
                    Ok(harness_core::events::HarnessEvent::SettingChanged { key }) => {
                        key == gateway::GATEWAY_CONFIG_KEY || key == destination::DESTINATIONS_KEY
                    }
                    Ok(_) => false,
                    Err(RecvError::Lagged(_)) => true,
                    Err(RecvError::Closed) => return,
                };
                if stale {
                    dirty.store(true, std::sync::atomic::Ordering::Release);
                }
            }
        });
    }
}

/// Send one leased row and record what happened.
async fn send_one(
    harness: Harness,
    row: Outbound,
    owner: String,
    timeout: Duration,
    settings: harness_core::CoreResult<Arc<SendSettings>>,
) {
    let outcome = match settings {
        Err(err) => {
            tracing::error!(error = ?err, "cannot read the gateway config; the attempt counts as failed");
            SendOutcome::Failed("cannot read the gateway settings".into())
        }
        Ok(all) => {
            let settings = all.gateway.get(&row.gateway);
            let bin = gateway::binary(&row.gateway, &settings);
            match resolve_row(&harness, &row, &settings, &all.destinations, &bin).await {
                Err(why) => SendOutcome::Failed(why),
                Ok(resolved) => match gateway::argv(&resolved, &settings) {
                    Err(why) => SendOutcome::Failed(why),
                    Ok(args) => {
                        let run = gateway_cli::run(&bin, &args, &settings.env, timeout).await;
                        if matches!(run.end, RunEnd::TimedOut) {
                            tracing::warn!(
                                bin,
                                "gateway CLI timed out; its process group was killed"
                            );
                        }
                        outbox::receipt::classify(&run.end, &run.stdout, &run.stderr)
                    }
                },
            }
        }
    };
    if let Err(err) = harness.finish_send(&row, &owner, outcome).await {
        // The row stays SENDING under our lease: recovery makes it
        // SENT_UNVERIFIED when the lease expires (never a blind resend).
        tracing::error!(error = ?err, "cannot record the outcome of a send");
    }
}

/// Run until `cancel`. `owner` is `<node id>:<boot id>`.
pub async fn run(harness: Harness, owner: String, config: OutboxConfig, cancel: CancellationToken) {
    let wake = harness.outbox_wake();
    let lease =
        chrono::Duration::from_std(config.lease).unwrap_or_else(|_| chrono::Duration::seconds(120));
    match harness.recover_boot_outbound(&owner).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(
            count = n,
            "outbound messages caught mid-send by the last stop: SENT_UNVERIFIED"
        ),
        Err(err) => {
            tracing::error!(error = ?err, "cannot recover the last run's outbound messages")
        }
    }
    let mut cache = SettingsCache::default();
    cache.watch(&harness, cancel.clone());
    let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut rows = JoinSet::new();
    let mut next_recovery = tokio::time::Instant::now();
    tracing::info!(%owner, "outbox worker started");
    loop {
        while rows.try_join_next().is_some() {}
        if tokio::time::Instant::now() >= next_recovery {
            next_recovery = tokio::time::Instant::now() + config.recover_every;
            match harness.recover_expired_outbound().await {
                Ok(0) => {}
                Ok(n) => tracing::warn!(
                    count = n,
                    "outbound sends with an expired lease: SENT_UNVERIFIED"
                ),
                Err(err) => tracing::error!(error = ?err, "cannot recover expired outbound leases"),
            }
        }
        let free = config.max_in_flight.saturating_sub(rows.len());
        let mut claimed_all = false;
        if free > 0 {
            let now = Utc::now();
            match harness
                .store()
                .claim_outbound(&owner, now, now + lease, free as u32)
                .await
            {
                Ok(claimed) => {
                    claimed_all = !claimed.is_empty() && claimed.len() == free;
                    let settings = if claimed.is_empty() {
                        None
                    } else {
                        Some(cache.get(&harness).await)
                    };
                    for row in claimed {
                        harness.outbound_changed(&row);
                        let fresh = in_flight
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(row.id.clone());
                        if !fresh {
                            continue;
                        }
                        let span = tracing::info_span!("outbound", outbound_id = %row.id, gateway = %row.gateway, attempt = row.attempts);
                        let (h, o, f) = (harness.clone(), owner.clone(), in_flight.clone());
                        let timeout = config.cli_timeout;
                        let settings = match &settings {
                            Some(Ok(s)) => Ok(s.clone()),
                            Some(Err(err)) => {
                                Err(harness_core::CoreError::Conflict(err.to_string()))
                            }
                            None => continue,
                        };
                        rows.spawn(
                            async move {
                                let id = row.id.clone();
                                send_one(h, row, o, timeout, settings).await;
                                f.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                            }
                            .instrument(span),
                        );
                    }
                }
                Err(err) => tracing::error!(error = ?err, "cannot claim outbound messages"),
            }
        }
        if claimed_all {
            continue;
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = wake.notified() => {}
            () = tokio::time::sleep(config.poll) => {}
            Some(_) = rows.join_next(), if !rows.is_empty() => {}
        }
    }
    if tokio::time::timeout(config.drain, async {
        while rows.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        // Rows still SENDING keep their lease: the next start of this node
        // makes them SENT_UNVERIFIED (they may have been sent).
        tracing::warn!(
            left = rows.len(),
            "outbox worker stopped with sends in flight"
        );
        rows.abort_all();
    }
    tracing::info!("outbox worker stopped");
}
