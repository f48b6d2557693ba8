//! The statements and row decoders of
//! [`harness_core::store::GatewayStore`] (migration sqlite 0014 / postgres
//! 0002), shared by both backends; the methods are
//! [`super::gateway_store`]'s.

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
