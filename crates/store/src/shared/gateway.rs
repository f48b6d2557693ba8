//! [`harness_core::store::GatewayStore`] once for both backends (migration
//! sqlite 0014 / postgres 0002): the statements, the row decoders and the
//! `impl` expanded per backend ([`gateway_store`]).

use std::sync::LazyLock;

use harness_core::store::{
    DeliveryMapping, GatewayInbound, InboundIntent, InboundState, StoreResult,
};

use super::{SqlRow, enum_col, opt_time, time};

/// Candidates of one platform message id, every chat (the core keeps its
/// chat's); `''` is the gateway of rows mapped before it was recorded.
pub(crate) const DELIVERY_MAPPINGS: &str = "SELECT id, gateway, harness_message_id, task_id, \
     outbound_id, platform, chat_id, platform_message_id, scope, expect_reply, created_at \
     FROM harness_delivery_map \
     WHERE platform = $2 AND platform_message_id = $3 AND gateway IN ($1, '') \
     ORDER BY created_at DESC, id DESC LIMIT 50";

pub(crate) const FORGET_EXPIRED_NONCES: &str = "DELETE FROM gateway_nonces WHERE expires_at <= $1";
pub(crate) const REMEMBER_NONCE: &str =
    "INSERT INTO gateway_nonces (nonce, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING";

pub(crate) const INBOUND_COLUMNS: &str = "id, dedup_key, session_id, created_task_id, gateway, platform, chat_id, sender_id, \
     platform_message_id, thread_id, root_message_id, reply_to_message_id, intent, content, state, \
     response, attempts, last_error, processed_at, created_at, updated_at, lease_owner, \
     lease_expires_at";

pub(crate) const INSERT_INBOUND: &str = "INSERT INTO gateway_inbound (id, dedup_key, gateway, \
     platform, chat_id, sender_id, platform_message_id, thread_id, root_message_id, \
     reply_to_message_id, intent, content, state, attempts, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'RECEIVED', 0, $13, $13) \
     ON CONFLICT (dedup_key) DO NOTHING";

pub(crate) static INBOUND_BY_KEY: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {INBOUND_COLUMNS} FROM gateway_inbound WHERE dedup_key = $1"));

pub(crate) static INBOUND_BY_ID: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {INBOUND_COLUMNS} FROM gateway_inbound WHERE id = $1"));

/// `$1` id, `$2` seen state, `$3` seen response (NULL: none), `$4` seen
/// updated_at, `$5` the new response, `$6` now, `$7` the lease's owner,
/// `$8` its end.
pub(crate) static CLAIM_INBOUND: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE gateway_inbound SET state = 'PROCESSING', response = $5, attempts = attempts + 1, \
         last_error = NULL, processed_at = NULL, updated_at = $6, lease_owner = $7, \
         lease_expires_at = $8 \
         WHERE id = $1 AND state = $2 AND updated_at = $4 \
           AND (response = $3 OR (response IS NULL AND $3 IS NULL)) \
         RETURNING {INBOUND_COLUMNS}"
    )
});

/// `$1` id, `$2` state, `$3` response, `$4` last error, `$5` now.
pub(crate) static FINISH_INBOUND: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE gateway_inbound SET state = $2, response = $3, last_error = $4, \
         processed_at = CASE WHEN $2 = 'PROCESSED' THEN $5 ELSE processed_at END, updated_at = $5, \
         lease_owner = NULL, lease_expires_at = NULL \
         WHERE id = $1 RETURNING {INBOUND_COLUMNS}"
    )
});

/// `impl GatewayStore` for a backend, written once: `$store` the backend
/// type, `$reader` the pool reads use (a field). Writes use the backend's
/// `write_tx` (SQLite: `BEGIN IMMEDIATE` on the writer; PostgreSQL: the
/// store's write lock).
macro_rules! gateway_store {
    ($store:ty, $reader:ident, $dialect:expr) => {
        #[async_trait::async_trait]
        impl harness_core::store::GatewayStore for $store {
            async fn delivery_mappings(
                &self,
                gateway: &str,
                platform: &str,
                platform_message_id: &str,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::DeliveryMapping>> {
                let rows = sqlx::query($crate::shared::gateway::DELIVERY_MAPPINGS)
                    .bind(gateway)
                    .bind(platform)
                    .bind(platform_message_id)
                    .fetch_all(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                rows.iter()
                    .map(|r| $crate::shared::gateway::delivery_mapping(r))
                    .collect()
            }

            async fn remember_nonce(
                &self,
                nonce: &str,
                expires_at: chrono::DateTime<chrono::Utc>,
                now: chrono::DateTime<chrono::Utc>,
            ) -> harness_core::store::StoreResult<bool> {
                use $crate::shared::ms;
                let mut tx = self.write_tx().await?;
                sqlx::query($crate::shared::gateway::FORGET_EXPIRED_NONCES)
                    .bind(ms(now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let fresh = sqlx::query($crate::shared::gateway::REMEMBER_NONCE)
                    .bind(nonce)
                    .bind(ms(expires_at))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(fresh)
            }

            async fn create_inbound(
                &self,
                new: harness_core::store::NewInbound,
            ) -> harness_core::store::StoreResult<(harness_core::store::GatewayInbound, bool)> {
                let mut tx = self.write_tx().await?;
                let created = sqlx::query($crate::shared::gateway::INSERT_INBOUND)
                    .bind(&new.id)
                    .bind(&new.dedup_key)
                    .bind(&new.gateway)
                    .bind(&new.platform)
                    .bind(&new.chat_id)
                    .bind(&new.sender_id)
                    .bind(&new.platform_message_id)
                    .bind(&new.thread_id)
                    .bind(&new.root_message_id)
                    .bind(&new.reply_to_message_id)
                    .bind(new.intent.as_str())
                    .bind(&new.content)
                    .bind($crate::shared::ms(new.now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                let row = sqlx::query($crate::shared::gateway::INBOUND_BY_KEY.as_str())
                    .bind(&new.dedup_key)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = $crate::shared::gateway::inbound(&row)?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok((row, created))
            }

            async fn get_inbound(
                &self,
                id: &str,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                let row = sqlx::query($crate::shared::gateway::INBOUND_BY_ID.as_str())
                    .bind(id)
                    .fetch_optional(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                row.map(|r| $crate::shared::gateway::inbound(&r))
                    .transpose()
            }

            async fn claim_inbound(
                &self,
                claim: harness_core::store::InboundClaim,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                use $crate::shared::ms;
                // The lease is judged by the database's clock.
                let until = self.lease_clock(claim.now, claim.lease_until).await?.until;
                let mut tx = self.write_tx().await?;
                let row = sqlx::query($crate::shared::gateway::CLAIM_INBOUND.as_str())
                    .bind(&claim.id)
                    .bind(claim.seen_state.as_str())
                    .bind(&claim.seen_response)
                    .bind(ms(claim.seen_updated_at))
                    .bind(&claim.response)
                    .bind(ms(claim.now))
                    .bind(&claim.owner)
                    .bind(until)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = row
                    .map(|r| $crate::shared::gateway::inbound(&r))
                    .transpose()?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(row)
            }

            async fn finish_inbound(
                &self,
                finish: harness_core::store::InboundFinish,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query($crate::shared::gateway::FINISH_INBOUND.as_str())
                    .bind(&finish.id)
                    .bind(finish.state.as_str())
                    .bind(&finish.response)
                    .bind(&finish.last_error)
                    .bind($crate::shared::ms(finish.now))
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = row
                    .map(|r| $crate::shared::gateway::inbound(&r))
                    .transpose()?;
                if let (Some(_), Some(reply)) = (&row, finish.reply) {
                    sqlx::query($crate::shared::gateway_replies::INSERT)
                        .bind(&reply.id)
                        .bind(&reply.inbound_id)
                        .bind(reply.kind.as_str())
                        .bind(&reply.content)
                        .bind(&reply.dedup_key)
                        .bind($crate::shared::ms(reply.now))
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                tx.commit().await.map_err($crate::error::map)?;
                Ok(row)
            }

            async fn enqueue_reply(
                &self,
                new: harness_core::store::NewReply,
            ) -> harness_core::store::StoreResult<Option<(harness_core::store::GatewayReply, bool)>>
            {
                use $crate::shared::gateway_replies as sql;
                let mut tx = self.write_tx().await?;
                let created = sqlx::query(sql::INSERT)
                    .bind(&new.id)
                    .bind(&new.inbound_id)
                    .bind(new.kind.as_str())
                    .bind(&new.content)
                    .bind(&new.dedup_key)
                    .bind($crate::shared::ms(new.now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                let row = sqlx::query(sql::BY_KEY.as_str())
                    .bind(&new.dedup_key)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = row.map(|r| sql::reply(&r)).transpose()?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(row.map(|r| (r, created)))
            }

            async fn settle_and_claim_replies(
                &self,
                turn: harness_core::store::ReplyTurn,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::GatewayReply>> {
                use $crate::shared::{gateway_replies as sql, ms};
                // Leases on the database's clock (`lease_clock`).
                let clock = self.lease_clock(turn.now, turn.lease_until).await?;
                let (now, lease_until) = (clock.now, clock.until);
                let mut tx = self.write_tx().await?;
                for s in &turn.settles {
                    sqlx::query(sql::SETTLE)
                        .bind(&s.id)
                        .bind(s.state.as_str())
                        .bind(s.next_attempt_at.map(ms))
                        .bind(&s.last_error)
                        .bind(&s.platform_message_id)
                        .bind(now)
                        .bind(&turn.owner)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                for id in &turn.released {
                    sqlx::query(sql::RELEASE.as_str())
                        .bind(id)
                        .bind(now)
                        .bind(&turn.owner)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                sqlx::query(sql::EXPIRE.as_str())
                    .bind(clock.lease_now)
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let rows = if turn.limit > 0 {
                    sqlx::query(sqlx::AssertSqlSafe(sql::claim($dialect)))
                        .bind(&turn.owner)
                        .bind(lease_until)
                        .bind(now)
                        .bind(i64::from(turn.limit))
                        .fetch_all(&mut *tx)
                        .await
                        .map_err($crate::error::map)?
                } else {
                    Vec::new()
                };
                let mut claimed = rows
                    .iter()
                    .map(|r| sql::reply(r))
                    .collect::<harness_core::store::StoreResult<Vec<_>>>()?;
                tx.commit().await.map_err($crate::error::map)?;
                claimed.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
                Ok(claimed)
            }

            async fn replies_for_inbound(
                &self,
                inbound_id: &str,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::GatewayReply>> {
                let rows = sqlx::query($crate::shared::gateway_replies::OF_INBOUND.as_str())
                    .bind(inbound_id)
                    .fetch_all(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                rows.iter()
                    .map(|r| $crate::shared::gateway_replies::reply(r))
                    .collect()
            }

            async fn get_reply(
                &self,
                id: &str,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayReply>> {
                let row = sqlx::query($crate::shared::gateway_replies::BY_ID.as_str())
                    .bind(id)
                    .fetch_optional(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                row.map(|r| $crate::shared::gateway_replies::reply(&r))
                    .transpose()
            }

            async fn decide_reply(
                &self,
                id: &str,
                from: &[harness_core::store::ReplyState],
                to: harness_core::store::ReplyState,
                now: chrono::DateTime<chrono::Utc>,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayReply>> {
                let Some(first) = from.first() else {
                    return Ok(None);
                };
                let state = |i: usize| from.get(i).unwrap_or(first).as_str();
                let mut tx = self.write_tx().await?;
                let row = sqlx::query($crate::shared::gateway_replies::DECIDE.as_str())
                    .bind(id)
                    .bind(to.as_str())
                    .bind($crate::shared::ms(now))
                    .bind(state(0))
                    .bind(state(1))
                    .bind(state(2))
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = row
                    .map(|r| $crate::shared::gateway_replies::reply(&r))
                    .transpose()?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(row)
            }
        }
    };
}
pub(crate) use gateway_store;

pub(crate) fn delivery_mapping<R: SqlRow>(row: &R) -> StoreResult<DeliveryMapping> {
    Ok(DeliveryMapping {
        id: row.col("id")?,
        gateway: row.col("gateway")?,
        harness_message_id: row.col("harness_message_id")?,
        task_id: row.col("task_id")?,
        outbound_id: row.col("outbound_id")?,
        platform: row.col("platform")?,
        chat_id: row.col("chat_id")?,
        platform_message_id: row.col("platform_message_id")?,
        scope: row.col("scope")?,
        expect_reply: row.col::<i64>("expect_reply")? != 0,
        created_at: time(row.col("created_at")?)?,
    })
}

pub(crate) fn inbound<R: SqlRow>(row: &R) -> StoreResult<GatewayInbound> {
    Ok(GatewayInbound {
        id: row.col("id")?,
        dedup_key: row.col("dedup_key")?,
        session_id: row.col("session_id")?,
        created_task_id: row.col("created_task_id")?,
        gateway: row.col("gateway")?,
        platform: row.col("platform")?,
        chat_id: row.col("chat_id")?,
        sender_id: row.col("sender_id")?,
        platform_message_id: row.col("platform_message_id")?,
        thread_id: row.col("thread_id")?,
        root_message_id: row.col("root_message_id")?,
        reply_to_message_id: row.col("reply_to_message_id")?,
        intent: enum_col(row, "intent", InboundIntent::parse)?,
        content: row.col("content")?,
        state: enum_col(row, "state", InboundState::parse)?,
        response: row.col("response")?,
        attempts: u32::try_from(row.col::<i64>("attempts")?).unwrap_or(u32::MAX),
        last_error: row.col("last_error")?,
        processed_at: opt_time(row.col("processed_at")?)?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
        lease_owner: row.col("lease_owner")?,
        lease_expires_at: opt_time(row.col("lease_expires_at")?)?,
    })
}
