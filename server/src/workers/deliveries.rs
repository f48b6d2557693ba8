//! Deliveries into terminals on the worker skeleton (`engine.rs`): rows of
//! this node are leased (or handed over, already leased, by the answering
//! transaction), each attempt is the PTY typer
//! (`Terminals::attempt_delivery`), and the core records the outcome with
//! the next turn. Rows of one task are done one at a time, in lease order;
//! different tasks in parallel, at most `max_in_flight` at once. The rows
//! this node left at its last stop are recovered at start-up, before the
//! worker runs (`launch.rs`: `Cluster::recover_all_work`).

use std::{future::Future, time::Duration};

use harness_core::{
    CoreResult,
    deliveries::Delivery,
    work::{Kind, Lease, Outcome},
};
use tokio_util::sync::CancellationToken;

use super::engine::{self, Queue, Worker};
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

/// The delivery kind: its turn and its runner.
struct DeliveryQueue {
    terminals: Terminals,
    lease: Lease,
}

impl Queue for DeliveryQueue {
    type Row = Delivery;
    type Outcome = Outcome;
    const NAME: &'static str = "deliveries";

    fn id(row: &Delivery) -> &str {
        &row.id
    }

    fn serial_key(row: &Delivery) -> Option<&str> {
        Some(&row.task_id)
    }

    fn lease_until(row: &Delivery) -> Option<chrono::DateTime<chrono::Utc>> {
        row.lease_expires_at
    }

    fn span(row: &Delivery) -> tracing::Span {
        tracing::info_span!("delivery", delivery_id = %row.id, task_id = %row.task_id, kind = ?row.kind)
    }

    fn handed_off(&self) -> Vec<Delivery> {
        self.terminals.harness().take_handed_off()
    }

    fn turn(
        &self,
        done: Vec<(Delivery, Outcome)>,
        released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<Delivery>>> + Send + 'static {
        let (harness, lease) = (self.terminals.harness().clone(), self.lease.clone());
        async move {
            harness
                .deliveries()
                .settle_and_claim_deliveries(&lease, done, released, limit)
                .await
        }
    }

    fn attempt(&self, row: Delivery) -> impl Future<Output = Option<Outcome>> + Send + 'static {
        let (terminals, lease) = (self.terminals.clone(), self.lease.clone());
        async move { terminals.attempt_delivery(&row, &lease).await }
    }
}

/// Run until `cancel`. `owner` is `<node id>:<boot id>`.
pub async fn run(
    terminals: Terminals,
    owner: String,
    config: WorkerConfig,
    cancel: CancellationToken,
) {
    let wake = terminals.harness().waker(Kind::Deliveries);
    tracing::info!(%owner, "delivery worker starting");
    let queue = DeliveryQueue {
        terminals,
        lease: Lease {
            owner,
            ttl: config.lease,
        },
    };
    let skeleton = engine::WorkerConfig {
        poll: config.poll,
        max_in_flight: config.max_in_flight,
        // Rows are leased only for a free slot: a leased row never started
        // is simply due again after a crash (its step says so).
        ahead_per_slot: 0,
        start_margin: config.lease / 4,
        drain: config.drain,
        ..engine::WorkerConfig::default()
    };
    Worker::new(queue, skeleton).run(wake, cancel).await;
}
