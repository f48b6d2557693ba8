//! The delivery worker (one per process): claims due `deliveries` rows of
//! this node with a lease and hands each to `Terminals::process_delivery`.
//! Rows of one task are done one at a time, in claim order; different tasks
//! in parallel, at most `max_in_flight` at once.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use harness_core::work::Lease;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::terminals::Terminals;

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Fallback poll (rows due after a backoff, rows queued by another process).
    pub poll: Duration,
    pub max_in_flight: usize,
    /// How long a claim or a step holds a row.
    pub lease: Duration,
    /// How long a stopping worker lets rows in flight finish.
    pub drain: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(1),
            max_in_flight: 16,
            lease: Duration::from_secs(60),
            drain: Duration::from_secs(3),
        }
    }
}

type TaskLocks = Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>;

fn task_lock(locks: &TaskLocks, task_id: &str) -> Arc<tokio::sync::Mutex<()>> {
    let mut map = locks.lock().unwrap_or_else(|p| p.into_inner());
    // Forget locks nobody holds any more, so the map stays small.
    map.retain(|_, l| Arc::strong_count(l) > 1);
    map.entry(task_id.to_owned()).or_default().clone()
}

/// Do one leased row in its own task (one row per task at a time).
fn spawn_row(
    rows: &mut JoinSet<()>,
    terminals: &Terminals,
    lease: &Lease,
    in_flight: &Arc<Mutex<HashSet<String>>>,
    locks: &TaskLocks,
    row: harness_core::deliveries::Delivery,
) {
    let (terminals, lease) = (terminals.clone(), lease.clone());
    let (in_flight, lock) = (in_flight.clone(), task_lock(locks, &row.task_id));
    let span = tracing::info_span!("delivery", delivery_id = %row.id, task_id = %row.task_id, kind = ?row.kind);
    rows.spawn(
        async move {
            let id = row.id.clone();
            let _one_per_task = lock.lock().await;
            terminals.process_delivery(row, &lease).await;
            in_flight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
        }
        .instrument(span),
    );
}

/// Run until `cancel`: claim, do, repeat. `owner` is `<node id>:<boot id>`.
pub async fn run(
    terminals: Terminals,
    owner: String,
    config: WorkerConfig,
    cancel: CancellationToken,
) {
    let harness = terminals.harness().clone();
    let wake = harness.waker(harness_core::work::Kind::Deliveries);
    let lease = Lease {
        owner: owner.clone(),
        ttl: config.lease,
    };
    let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
    let locks: TaskLocks = Arc::default();
    let mut rows = JoinSet::new();
    tracing::info!(%owner, "delivery worker started");
    loop {
        while rows.try_join_next().is_some() {}
        // Rows the answering transaction already leased to us (no claim
        // round trip); over the bound they are given back to be claimed.
        for row in harness.take_handed_off() {
            if rows.len() >= config.max_in_flight {
                if let Err(err) = harness.release_delivery(&row.id, &owner).await {
                    tracing::error!(error = ?err, "cannot release a handed-off delivery");
                }
                continue;
            }
            let fresh = in_flight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(row.id.clone());
            if fresh {
                spawn_row(&mut rows, &terminals, &lease, &in_flight, &locks, row);
            }
        }
        let free = config.max_in_flight.saturating_sub(rows.len());
        let mut spawned = 0usize;
        let mut claimed_all = false;
        if free > 0 {
            let limit = u32::try_from(free).unwrap_or(u32::MAX);
            match harness.claim_deliveries(&lease, limit).await {
                Ok(claimed) => {
                    claimed_all = claimed.len() == free;
                    for row in claimed {
                        let fresh = in_flight
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(row.id.clone());
                        if !fresh {
                            continue; // still being done here; the claim renewed its lease
                        }
                        spawned += 1;
                        spawn_row(&mut rows, &terminals, &lease, &in_flight, &locks, row);
                    }
                }
                Err(err) => tracing::error!(error = ?err, "cannot claim deliveries"),
            }
        }
        if claimed_all && spawned > 0 {
            continue; // there may be more due right now
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = wake.notified() => {}
            () = tokio::time::sleep(config.poll) => {}
            Some(_) = rows.join_next(), if !rows.is_empty() => {}
        }
    }
    // Let rows in flight finish briefly; the rest keep their committed step
    // and are released by the next start of this node.
    if tokio::time::timeout(config.drain, async {
        while rows.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        tracing::warn!(
            left = rows.len(),
            "delivery worker stopped with rows in flight"
        );
        rows.abort_all();
    }
    tracing::info!("delivery worker stopped");
}
