//! The background sweep of stale OPEN asks: once at start-up, then every
//! `sweep_interval`. Bounded (one sweep at a time), cancellable, restart-safe
//! (it keeps no state; a missed tick is caught by the next one or the next start).

use tokio_util::sync::CancellationToken;

use crate::Harness;

pub async fn run(harness: Harness, cancel: CancellationToken) {
    let interval = harness.config().sweep_interval;
    loop {
        if let Err(err) = harness.asks().sweep_expired().await {
            tracing::warn!(%err, "ask sweep failed; retrying at the next tick");
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = tokio::time::sleep(interval) => {}
        }
    }
    tracing::debug!("ask sweeper stopped");
}
