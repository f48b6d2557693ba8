//! [`GatewayStore`](harness_core::store::GatewayStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`gateway_store!`] that implements the port with them. The statements
//! and decoders are [`super::gateway`]'s and [`super::gateway_replies`]';
//! every write is one write transaction ([`Backend::write_tx`]).

use chrono::{DateTime, Utc};
use harness_core::store::{
    DeliveryMapping, GatewayInbound, GatewayReply, InboundClaim, InboundFinish, NewInbound,
    NewReply, ReplyState, ReplyTurn, StoreResult,
};

use super::{
    Bind,
    backend::{Backend, execute, fetch, fetch_one, fetch_optional, read_optional},
    gateway::{
        CLAIM_INBOUND, DELIVERY_MAPPINGS, FINISH_INBOUND, FORGET_EXPIRED_NONCES, INBOUND_BY_ID,
        INBOUND_BY_KEY, INSERT_INBOUND, REMEMBER_NONCE, delivery_mapping, inbound,
    },
    gateway_replies as replies, ms,
};

pub(crate) async fn delivery_mappings<S: Backend>(
    store: &S,
    gateway: &str,
    platform: &str,
    platform_message_id: &str,
) -> StoreResult<Vec<DeliveryMapping>> {
    let binds = vec![
        Bind::Text(gateway.to_owned()),
        Bind::Text(platform.to_owned()),
        Bind::Text(platform_message_id.to_owned()),
    ];
    let rows = store.read(DELIVERY_MAPPINGS, binds).await?;
    rows.iter().map(delivery_mapping).collect()
}

pub(crate) async fn remember_nonce<S: Backend>(
    store: &S,
    nonce: &str,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let mut tx = store.write_tx().await?;
    execute::<S>(&mut tx, FORGET_EXPIRED_NONCES, vec![Bind::Int(ms(now))]).await?;
    let binds = vec![Bind::Text(nonce.to_owned()), Bind::Int(ms(expires_at))];
    let fresh = execute::<S>(&mut tx, REMEMBER_NONCE, binds).await? == 1;
    S::commit(tx).await?;
    Ok(fresh)
}

pub(crate) async fn create_inbound<S: Backend>(
    store: &S,
    new: NewInbound,
) -> StoreResult<(GatewayInbound, bool)> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(new.id),
        Bind::Text(new.dedup_key.clone()),
        Bind::Text(new.gateway),
        Bind::Text(new.platform),
        Bind::Text(new.chat_id),
        Bind::OptText(new.sender_id),
        Bind::Text(new.platform_message_id),
        Bind::OptText(new.thread_id),
        Bind::OptText(new.root_message_id),
        Bind::OptText(new.reply_to_message_id),
        Bind::Text(new.intent.as_str().to_owned()),
        Bind::Text(new.content),
        Bind::Int(ms(new.now)),
    ];
    let created = execute::<S>(&mut tx, INSERT_INBOUND, binds).await? == 1;
    let binds = vec![Bind::Text(new.dedup_key)];
    let row = fetch_one::<S>(&mut tx, INBOUND_BY_KEY.as_str(), binds).await?;
    let row = inbound(&row)?;
    S::commit(tx).await?;
    Ok((row, created))
}

pub(crate) async fn get_inbound<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<GatewayInbound>> {
    read_optional(store, &INBOUND_BY_ID, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(inbound)
        .transpose()
}

pub(crate) async fn claim_inbound<S: Backend>(
    store: &S,
    claim: InboundClaim,
) -> StoreResult<Option<GatewayInbound>> {
    // The lease is judged by the database's clock.
    let until = store.lease_clock(claim.now, claim.lease_until).await?.until;
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(claim.id),
        Bind::Text(claim.seen_state.as_str().to_owned()),
        Bind::OptText(claim.seen_response),
        Bind::Int(ms(claim.seen_updated_at)),
        Bind::Text(claim.response),
        Bind::Int(ms(claim.now)),
        Bind::Text(claim.owner),
        Bind::Int(until),
    ];
    let row = fetch_optional::<S>(&mut tx, CLAIM_INBOUND.as_str(), binds).await?;
    let row = row.as_ref().map(inbound).transpose()?;
    S::commit(tx).await?;
    Ok(row)
}

/// A reply's insert (`gateway_replies::INSERT`) with its binds.
pub(crate) fn reply_binds(reply: &NewReply) -> Vec<Bind> {
    vec![
        Bind::Text(reply.id.clone()),
        Bind::Text(reply.inbound_id.clone()),
        Bind::Text(reply.kind.as_str().to_owned()),
        Bind::Text(reply.content.clone()),
        Bind::Text(reply.dedup_key.clone()),
        Bind::Int(ms(reply.now)),
    ]
}

pub(crate) async fn finish_inbound<S: Backend>(
    store: &S,
    finish: InboundFinish,
) -> StoreResult<Option<GatewayInbound>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(finish.id),
        Bind::Text(finish.state.as_str().to_owned()),
        Bind::Text(finish.response),
        Bind::OptText(finish.last_error),
        Bind::Int(ms(finish.now)),
    ];
    let row = fetch_optional::<S>(&mut tx, FINISH_INBOUND.as_str(), binds).await?;
    let row = row.as_ref().map(inbound).transpose()?;
    if let (Some(_), Some(reply)) = (&row, finish.reply) {
        execute::<S>(&mut tx, replies::INSERT, reply_binds(&reply)).await?;
    }
    S::commit(tx).await?;
    Ok(row)
}

pub(crate) async fn enqueue_reply<S: Backend>(
    store: &S,
    new: NewReply,
) -> StoreResult<Option<(GatewayReply, bool)>> {
    let mut tx = store.write_tx().await?;
    let created = execute::<S>(&mut tx, replies::INSERT, reply_binds(&new)).await? == 1;
    let binds = vec![Bind::Text(new.dedup_key)];
    let row = fetch_optional::<S>(&mut tx, replies::BY_KEY.as_str(), binds).await?;
    let row = row.as_ref().map(replies::reply).transpose()?;
    S::commit(tx).await?;
    Ok(row.map(|r| (r, created)))
}

pub(crate) async fn settle_and_claim_replies<S: Backend>(
    store: &S,
    turn: ReplyTurn,
) -> StoreResult<Vec<GatewayReply>> {
    // Leases on the database's clock (`lease_clock`).
    let clock = store.lease_clock(turn.now, turn.lease_until).await?;
    let (now, lease_until) = (clock.now, clock.until);
    let mut tx = store.write_tx().await?;
    for s in turn.settles {
        let binds = vec![
            Bind::Text(s.id),
            Bind::Text(s.state.as_str().to_owned()),
            Bind::OptInt(s.next_attempt_at.map(ms)),
            Bind::OptText(s.last_error),
            Bind::OptText(s.platform_message_id),
            Bind::Int(now),
            Bind::Text(turn.owner.clone()),
        ];
        execute::<S>(&mut tx, replies::SETTLE, binds).await?;
    }
    for id in turn.released {
        let binds = vec![
            Bind::Text(id),
            Bind::Int(now),
            Bind::Text(turn.owner.clone()),
        ];
        execute::<S>(&mut tx, replies::RELEASE.as_str(), binds).await?;
    }
    let binds = vec![Bind::Int(clock.lease_now)];
    execute::<S>(&mut tx, replies::EXPIRE.as_str(), binds).await?;
    let rows = if turn.limit > 0 {
        let binds = vec![
            Bind::Text(turn.owner),
            Bind::Int(lease_until),
            Bind::Int(now),
            Bind::Int(i64::from(turn.limit)),
        ];
        fetch::<S>(&mut tx, replies::claim(S::DIALECT), binds).await?
    } else {
        Vec::new()
    };
    let mut claimed = rows
        .iter()
        .map(replies::reply)
        .collect::<StoreResult<Vec<_>>>()?;
    S::commit(tx).await?;
    claimed.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(claimed)
}

pub(crate) async fn replies_for_inbound<S: Backend>(
    store: &S,
    inbound_id: &str,
) -> StoreResult<Vec<GatewayReply>> {
    let binds = vec![Bind::Text(inbound_id.to_owned())];
    let rows = store.read(&replies::OF_INBOUND, binds).await?;
    rows.iter().map(replies::reply).collect()
}

pub(crate) async fn get_reply<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<GatewayReply>> {
    read_optional(store, &replies::BY_ID, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(replies::reply)
        .transpose()
}

pub(crate) async fn decide_reply<S: Backend>(
    store: &S,
    id: &str,
    from: &[ReplyState],
    to: ReplyState,
    now: DateTime<Utc>,
) -> StoreResult<Option<GatewayReply>> {
    let Some(first) = from.first() else {
        return Ok(None);
    };
    let state = |i: usize| Bind::Text(from.get(i).unwrap_or(first).as_str().to_owned());
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(id.to_owned()),
        Bind::Text(to.as_str().to_owned()),
        Bind::Int(ms(now)),
        state(0),
        state(1),
        state(2),
    ];
    let row = fetch_optional::<S>(&mut tx, replies::DECIDE.as_str(), binds).await?;
    let row = row.as_ref().map(replies::reply).transpose()?;
    S::commit(tx).await?;
    Ok(row)
}

/// `impl GatewayStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! gateway_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{
                DeliveryMapping, GatewayInbound, GatewayReply, GatewayStore, InboundClaim,
                InboundFinish, NewInbound, NewReply, ReplyState, ReplyTurn, StoreResult,
            };
            use $crate::shared::gateway_store as g;

            #[async_trait::async_trait]
            impl GatewayStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn delivery_mappings(
                    &self,
                    gateway: &str,
                    platform: &str,
                    platform_message_id: &str,
                ) -> StoreResult<Vec<DeliveryMapping>> {
                    g::delivery_mappings(self, gateway, platform, platform_message_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn remember_nonce(
                    &self,
                    nonce: &str,
                    expires_at: DateTime<Utc>,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    g::remember_nonce(self, nonce, expires_at, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn create_inbound(
                    &self,
                    new: NewInbound,
                ) -> StoreResult<(GatewayInbound, bool)> {
                    g::create_inbound(self, new).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_inbound(&self, id: &str) -> StoreResult<Option<GatewayInbound>> {
                    g::get_inbound(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn claim_inbound(
                    &self,
                    claim: InboundClaim,
                ) -> StoreResult<Option<GatewayInbound>> {
                    g::claim_inbound(self, claim).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn finish_inbound(
                    &self,
                    finish: InboundFinish,
                ) -> StoreResult<Option<GatewayInbound>> {
                    g::finish_inbound(self, finish).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn enqueue_reply(
                    &self,
                    new: NewReply,
                ) -> StoreResult<Option<(GatewayReply, bool)>> {
                    g::enqueue_reply(self, new).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn settle_and_claim_replies(
                    &self,
                    turn: ReplyTurn,
                ) -> StoreResult<Vec<GatewayReply>> {
                    g::settle_and_claim_replies(self, turn).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn replies_for_inbound(
                    &self,
                    inbound_id: &str,
                ) -> StoreResult<Vec<GatewayReply>> {
                    g::replies_for_inbound(self, inbound_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_reply(&self, id: &str) -> StoreResult<Option<GatewayReply>> {
                    g::get_reply(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn decide_reply(
                    &self,
                    id: &str,
                    from: &[ReplyState],
                    to: ReplyState,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<GatewayReply>> {
                    g::decide_reply(self, id, from, to, now).await
                }
            }
        };
    };
}
pub(crate) use gateway_store;
