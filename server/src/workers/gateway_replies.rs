//! Gateway replies on the worker skeleton (`engine.rs`): due
//! `gateway_replies` rows are leased, each attempt runs the gateway CLI once
//! (`harness_core::gateway::replies::argv`: a native reply with
//! `--reply-to` / `--thread-id` where the gateway has it, through the same
//! runner as the outbox, `gateway_cli.rs`), and the core records the
//! outcome with the next turn (`Gateway::settle_and_claim_replies`). Rows
//! are leased only for a free slot, so a leased row counts as started: the
//! rows an earlier boot of this node left SENDING, and rows whose lease
//! ended, become SENT_UNVERIFIED (at start-up and in the upkeep) — never
//! sent twice automatically (docs/decisions.md D7/docs/decisions.md D9).

use std::{future::Future, time::Duration};

use harness_core::{
    CoreResult, Harness,
    gateway::replies::{self, ReplyOutcome},
    outbox::{self, RunEnd, Unsent, gateway},
    store::GatewayReply,
    work::{Kind, Scope},
};
use tokio_util::sync::CancellationToken;

use super::{
    engine::{self, Queue, Worker},
    gateway_cli,
    outbox::OutboxConfig,
};

/// One attempt: read the gateway's settings, run its CLI, classify the
/// receipt.
async fn send_one(harness: &Harness, row: &GatewayReply, timeout: Duration) -> ReplyOutcome {
    let config = match harness.outbox().gateway_config().await {
        Ok(c) => c,
        Err(err) => {
            tracing::error!(error = ?err, "cannot read the gateway config; the attempt counts as failed");
            return outbox::SendOutcome::from(Unsent::Settings).into();
        }
    };
    let settings = config.get(&row.gateway);
    let bin = gateway::binary(&row.gateway, &settings);
    let args = match replies::argv(row, &settings) {
        Ok(args) => args,
        Err(why) => return outbox::SendOutcome::from(Unsent::Command(why)).into(),
    };
    let run = gateway_cli::run(&bin, &args, &settings.env, timeout).await;
    if matches!(run.end, RunEnd::TimedOut) {
        tracing::warn!(bin, "gateway CLI timed out; its process group was killed");
    }
    outbox::receipt::classify(&run.end, &run.stdout, &run.stderr).into()
}

struct ReplyQueue {
    harness: Harness,
    owner: String,
    lease: chrono::Duration,
    cli_timeout: Duration,
}

impl Queue for ReplyQueue {
    type Row = GatewayReply;
    type Outcome = ReplyOutcome;
    const NAME: &'static str = "gateway_replies";

    fn id(row: &GatewayReply) -> &str {
        &row.id
    }

    /// Any node can send it: a draining node leaves it to the others.
    fn takes_new_work(&self) -> bool {
        !self.harness.cluster().draining()
    }

    fn lease_until(row: &GatewayReply) -> Option<chrono::DateTime<chrono::Utc>> {
        Some(
            row.lease_expires_at
                .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC),
        )
    }

    fn span(row: &GatewayReply) -> tracing::Span {
        tracing::info_span!("gateway_reply", reply_id = %row.id, inbound_id = %row.inbound_id,
            gateway = %row.gateway, attempt = row.attempts)
    }

    fn turn(
        &self,
        done: Vec<(GatewayReply, ReplyOutcome)>,
        released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<GatewayReply>>> + Send + 'static {
        let (h, owner, lease) = (self.harness.clone(), self.owner.clone(), self.lease);
        async move {
            h.gateway()
                .settle_and_claim_replies(&owner, done, released, lease, limit)
                .await
        }
    }

    fn attempt(
        &self,
        row: GatewayReply,
    ) -> impl Future<Output = Option<ReplyOutcome>> + Send + 'static {
        let (h, timeout) = (self.harness.clone(), self.cli_timeout);
        async move { Some(send_one(&h, &row, timeout).await) }
    }

    fn maintain(&self) -> impl Future<Output = ()> + Send + 'static {
        let h = self.harness.clone();
        async move {
            match h
                .cluster()
                .recover_work(Kind::GatewayReplies, Scope::Expired)
                .await
            {
                Ok(done) if done.unverified == 0 => {}
                Ok(done) => tracing::warn!(
                    count = done.unverified,
                    "gateway replies with an ended lease: SENT_UNVERIFIED"
                ),
                Err(err) => tracing::error!(error = ?err, "cannot recover gateway replies"),
            }
        }
    }
}

/// Run until `cancel` (`owner` = `<node id>:<boot id>`), with the outbox's
/// poll, concurrency, lease and CLI timeout.
pub async fn run(harness: Harness, owner: String, config: OutboxConfig, cancel: CancellationToken) {
    if config.max_in_flight == 0 {
        cancel.cancelled().await;
        return;
    }
    match harness
        .cluster()
        .recover_work(Kind::GatewayReplies, Scope::Boot(&owner))
        .await
    {
        Ok(done) if done.unverified == 0 => {}
        Ok(done) => tracing::warn!(
            count = done.unverified,
            "gateway replies caught mid-send by the last stop: SENT_UNVERIFIED"
        ),
        Err(err) => tracing::error!(error = ?err, "cannot recover the last run's gateway replies"),
    }
    let skeleton = engine::WorkerConfig {
        poll: config.poll,
        max_in_flight: config.max_in_flight,
        ahead_per_slot: 0,
        start_margin: (config.cli_timeout + Duration::from_secs(10)).min(config.lease / 2),
        maintain_every: config.recover_every,
        drain: config.drain,
        ..engine::WorkerConfig::default()
    };
    let queue = ReplyQueue {
        lease: chrono::Duration::from_std(config.lease)
            .unwrap_or_else(|_| chrono::Duration::seconds(120)),
        harness: harness.clone(),
        owner,
        cli_timeout: config.cli_timeout,
    };
    Worker::new(queue, skeleton)
        .run(harness.waker(Kind::GatewayReplies), cancel)
        .await;
}
