//! The outbox worker (one per process): claims due `harness_outbound` rows
//! with a lease (one statement), runs the gateway CLI for each and records
//! the outcome (`Harness::settle_and_claim`: DELIVERED / SENT_UNVERIFIED with the
//! activation, or FAILED with backoff / DEAD, batched with the next lease). Woken in-process
//! on enqueue; polls as the fallback; recovers SENDING rows of an earlier
//! boot of this node at start and expired leases periodically. Any node may
//! send any row (no PTY is involved).

use std::{sync::Arc, time::Duration};

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
            gateway: harness.gateway_config().await?,
            destinations: harness.destinations().await?,
        });
        self.current = Some((tokio::time::Instant::now(), generation, fresh.clone()));
        Ok(fresh)
    }
}

/// Run the gateway CLI for one leased row: how the attempt ended.
async fn send_one(
    harness: &Harness,
    row: &Outbound,
    timeout: Duration,
    settings: harness_core::CoreResult<Arc<SendSettings>>,
) -> SendOutcome {
    let all = match settings {
        Err(err) => {
            tracing::error!(error = ?err, "cannot read the gateway config; the attempt counts as failed");
            return SendOutcome::Failed("cannot read the gateway settings".into());
        }
        Ok(all) => all,
    };
    let settings = all.gateway.get(&row.gateway);
    let bin = gateway::binary(&row.gateway, &settings);
    let resolved = match resolve_row(harness, row, &settings, &all.destinations, &bin).await {
        Err(why) => return SendOutcome::Failed(why),
        Ok(resolved) => resolved,
    };
    let args = match gateway::argv(&resolved, &settings) {
        Err(why) => return SendOutcome::Failed(why),
        Ok(args) => args,
    };
    let run = gateway_cli::run(&bin, &args, &settings.env, timeout).await;
    if matches!(run.end, RunEnd::TimedOut) {
        tracing::warn!(bin, "gateway CLI timed out; its process group was killed");
    }
    outbox::receipt::classify(&run.end, &run.stdout, &run.stderr)
}

/// An attempt that ended, waiting to be recorded with the sender's next turn.
type Done = (Outbound, SendOutcome);

/// Keep a finished send's outcome (a send task that panicked leaves its row
/// SENDING: lease recovery makes it SENT_UNVERIFIED, never a blind resend).
fn collect(joined: Result<Done, tokio::task::JoinError>, done: &mut Vec<Done>) {
    match joined {
        Ok(d) => done.push(d),
        Err(err) => tracing::error!(error = %err, "an outbound send task failed"),
    }
}

/// Failed writes of one turn's outcomes before they are left to lease recovery.
const SETTLE_RETRIES: u32 = 5;

/// Run until `cancel`. `owner` is `<node id>:<boot id>`.
///
/// One loop owns every write of the sender: each turn records the attempts
/// that ended since the last turn and leases rows for the free slots in one
/// transaction ([`Harness::settle_and_claim`]), so under load the writes
/// per message fall below one while the CLI processes keep running.
pub async fn run(harness: Harness, owner: String, config: OutboxConfig, cancel: CancellationToken) {
    if config.max_in_flight == 0 {
        // A process that does not send (benchmarks start their own sender):
        // it must not take the in-process wake-ups either.
        tracing::info!(%owner, "outbox sending is off in this process");
        cancel.cancelled().await;
        return;
    }
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
    let mut rows: JoinSet<Done> = JoinSet::new();
    let mut done: Vec<Done> = Vec::new();
    // Rows may be due: at start, after a wake-up or a poll, and while the
    // last lease filled every free slot.
    let mut due = true;
    let mut failures = 0u32;
    let mut next_recovery = tokio::time::Instant::now();
    // The poll is a deadline, not a quiet period: a steady stream of
    // finished sends must not keep rows due after a backoff waiting.
    let mut next_poll = tokio::time::Instant::now() + config.poll;
    tracing::info!(%owner, "outbox worker started");
    loop {
        while let Some(joined) = rows.try_join_next() {
            collect(joined, &mut done);
        }
        if tokio::time::Instant::now() >= next_poll {
            next_poll = tokio::time::Instant::now() + config.poll;
            due = true;
        }
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
        let limit = if due { free } else { 0 };
        if !done.is_empty() || limit > 0 {
            let turn = std::mem::take(&mut done);
            let kept = turn.clone();
            let limit = u32::try_from(limit).unwrap_or(u32::MAX);
            match harness.settle_and_claim(&owner, turn, lease, limit).await {
                Ok(claimed) => {
                    failures = 0;
                    if limit > 0 {
                        due = claimed.len() == limit as usize;
                    }
                    // Read once per turn (cached), only when there is something to send.
                    let settings = if claimed.is_empty() {
                        None
                    } else {
                        Some(cache.get(&harness).await)
                    };
                    for row in claimed {
                        let settings = match &settings {
                            Some(Err(err)) => {
                                Err(harness_core::CoreError::Conflict(err.to_string()))
                            }
                            Some(Ok(s)) => Ok(s.clone()),
                            None => Err(harness_core::CoreError::Conflict(
                                "no gateway settings were read".into(),
                            )),
                        };
                        let span = tracing::info_span!("outbound", outbound_id = %row.id, gateway = %row.gateway, attempt = row.attempts);
                        let (h, timeout) = (harness.clone(), config.cli_timeout);
                        rows.spawn(
                            async move {
                                let outcome = send_one(&h, &row, timeout, settings).await;
                                (row, outcome)
                            }
                            .instrument(span),
                        );
                    }
                }
                Err(err) => {
                    failures += 1;
                    tracing::error!(error = ?err, failures, "cannot record outbound attempts / lease rows");
                    if failures <= SETTLE_RETRIES {
                        done = kept;
                    } else {
                        // Left SENDING under our lease: recovery makes them
                        // SENT_UNVERIFIED once it expires (never a blind resend).
                        tracing::error!(
                            rows = kept.len(),
                            "giving up recording these outbound attempts"
                        );
                        failures = 0;
                    }
                    let pause = Duration::from_millis(100) * failures.max(1);
                    tokio::select! {
                        () = cancel.cancelled() => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
            }
            if !done.is_empty() {
                continue;
            }
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = wake.notified() => due = true,
            () = tokio::time::sleep_until(next_poll) => {}
            Some(joined) = rows.join_next(), if !rows.is_empty() => collect(joined, &mut done),
        }
    }
    // Let sends in flight finish (bounded) and record what ended.
    let drained = tokio::time::timeout(config.drain, async {
        while let Some(joined) = rows.join_next().await {
            collect(joined, &mut done);
        }
    })
    .await;
    if drained.is_err() {
        // Rows still SENDING keep their lease: the next start of this node
        // makes them SENT_UNVERIFIED (they may have been sent).
        tracing::warn!(
            left = rows.len(),
            "outbox worker stopped with sends in flight"
        );
        rows.abort_all();
    }
    if !done.is_empty()
        && let Err(err) = harness.settle_and_claim(&owner, done, lease, 0).await
    {
        tracing::error!(error = ?err, "cannot record the last outbound attempts");
    }
    tracing::info!("outbox worker stopped");
}
