//! The one recovery pass of owed work: rows whose lease lapsed — their
//! worker's process stopped, its node was declared dead, or the lease simply
//! ended — are taken back the same way for every kind
//! ([`crate::store::WorkStore::recover_work`]): a started attempt becomes
//! the kind's unverified state (never done twice: a person decides), a row
//! leased and never started is due again. A kind whose settle has side
//! effects (the outbox opens the ask it sent) settles its started rows
//! itself, through that settle.

use crate::cluster::Cluster;
use chrono::Utc;

use super::{Kind, Lapsed, RecoveredAs};
use crate::CoreResult;

/// Whose leases a recovery pass takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// At start-up: this node's earlier boots (`owner`: this boot's
    /// `<node>:<boot>`, whose rows are left alone).
    Boot(&'a str),
    /// Every boot of a node declared dead (fenced first).
    DeadNode(&'a str),
    /// Leases that ended before the database's clock (a worker's upkeep).
    Expired,
}

/// What one kind's recovery did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Rows now unverified (their attempt had started).
    pub unverified: usize,
    /// Rows due again (leased, never started).
    pub released: usize,
}

impl Cluster<'_> {
    /// Take back `kind`'s rows under lapsed leases of `scope`. Publishes
    /// each changed row and wakes the kind's worker when a row is due again.
    pub async fn recover_work(&self, kind: Kind, scope: Scope<'_>) -> CoreResult<Recovery> {
        let def = kind.def();
        let node_id = self.h.config().node_id.clone();
        let lapsed = match scope {
            Scope::Boot(owner) => Lapsed::Node {
                node: &node_id,
                current_owner: owner,
            },
            Scope::DeadNode(node) => Lapsed::Node {
                node,
                current_owner: "",
            },
            Scope::Expired => Lapsed::Expired,
        };
        let now = Utc::now();
        let rows = self.h.store().recover_work(def, lapsed, now).await?;
        let mut done = Recovery::default();
        for row in rows {
            let changed = match row.what {
                RecoveredAs::Unverified => {
                    tracing::error!(?kind, id = %row.id, owner = ?row.lease_owner,
                        "found in flight with a lapsed lease: {}", def.unverified);
                    done.unverified += 1;
                    true
                }
                RecoveredAs::Released => {
                    tracing::warn!(?kind, id = %row.id, owner = ?row.lease_owner,
                        "leased and never started by a stopped worker: due again");
                    done.released += 1;
                    true
                }
                RecoveredAs::ToSettle => {
                    let owner = row.lease_owner.clone().unwrap_or_default();
                    let expired_before = (scope == Scope::Expired).then_some(now);
                    let settled = self
                        .settle_lost(kind, &row.id, &owner, expired_before)
                        .await?;
                    done.unverified += usize::from(settled);
                    // The settle published its own change.
                    false
                }
            };
            if changed {
                self.work_changed(kind, &row.id).await?;
            }
        }
        if done.released > 0 {
            self.h.wake(kind);
        }
        Ok(done)
    }

    /// [`Self::recover_work`] for every kind on the engine, in one pass
    /// (start-up).
    pub async fn recover_all_work(&self, scope: Scope<'_>) -> CoreResult<Vec<(Kind, Recovery)>> {
        let mut out = Vec::with_capacity(Kind::ALL.len());
        for kind in Kind::ALL {
            out.push((kind, self.recover_work(kind, scope).await?));
        }
        Ok(out)
    }

    /// Settle a started row of a kind with a settle hook as unverified,
    /// through that hook. False: the lease was no longer the one seen.
    async fn settle_lost(
        &self,
        kind: Kind,
        id: &str,
        owner: &str,
        expired_before: Option<chrono::DateTime<Utc>>,
    ) -> CoreResult<bool> {
        match kind {
            Kind::Outbox => {
                self.h
                    .outbox()
                    .settle_lost_outbound(id, owner, expired_before)
                    .await
            }
            // A batched inbox claim is its batch's: the batch's delivery
            // settles it (`maintain_inbox`), never the recovery.
            Kind::Inbox => Ok(false),
            Kind::Deliveries | Kind::GatewayReplies | Kind::AgentActions => Ok(false),
        }
    }

    /// Publish a recovered row's change (re-read: recoveries are rare).
    async fn work_changed(&self, kind: Kind, id: &str) -> CoreResult<()> {
        match kind {
            Kind::Deliveries => {
                if let Some(d) = self.h.store().get_delivery(id).await? {
                    self.h.deliveries().delivery_changed(&d);
                }
            }
            Kind::Outbox => {
                if let Some(o) = self.h.store().get_outbound(id).await? {
                    self.h.outbox().outbound_changed(&o);
                }
            }
            Kind::AgentActions => {
                if let Some(a) = self.h.store().get_action(id).await? {
                    self.h.agents().action_changed(&a);
                }
            }
            // Replies and the inbox's events publish no change of their rows.
            Kind::GatewayReplies | Kind::Inbox => {}
        }
        Ok(())
    }
}
