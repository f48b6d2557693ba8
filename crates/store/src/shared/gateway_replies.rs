//! The statements and the row decoder of gateway replies (migration sqlite
//! 0014 / postgres 0002, `gateway_replies`), shared by both backends; the
//! methods are in [`super::gateway_store`].

use std::sync::LazyLock;

use harness_core::store::{GATEWAY_REPLIES, GatewayReply, ReplyKind, ReplyState, StoreResult};

use super::{SqlRow, enum_col, opt_time, time};

pub(crate) const COLUMNS: &str = "id, inbound_id, kind, content, dedup_key, gateway, platform, \
     chat_id, reply_to_message_id, thread_id, state, attempts, next_attempt_at, lease_owner, \
     lease_expires_at, last_error, platform_message_id, delivered_at, created_at, updated_at";

/// `$1` id, `$2` inbound id, `$3` kind, `$4` content, `$5` dedup key, `$6`
/// now: the destination is the inbound row's, the reply targets its
/// platform message (nothing is written without the inbound row).
pub(crate) const INSERT: &str = "INSERT INTO gateway_replies (id, inbound_id, kind, content, \
     dedup_key, gateway, platform, chat_id, reply_to_message_id, thread_id, state, attempts, \
     next_attempt_at, created_at, updated_at) \
     SELECT $1, i.id, $3, $4, $5, i.gateway, i.platform, i.chat_id, i.platform_message_id, \
       i.thread_id, 'PENDING', 0, $6, $6, $6 FROM gateway_inbound i WHERE i.id = $2 \
     ON CONFLICT (dedup_key) DO NOTHING";

pub(crate) static BY_KEY: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM gateway_replies WHERE dedup_key = $1"));

pub(crate) static BY_ID: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM gateway_replies WHERE id = $1"));

pub(crate) static OF_INBOUND: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {COLUMNS} FROM gateway_replies WHERE inbound_id = $1 ORDER BY created_at, id")
});

/// `$1` id, `$2` state, `$3` next attempt, `$4` error, `$5` platform
/// message id, `$6` now, `$7` lease owner: only a row still SENDING under
/// this owner (a late outcome after a recovery is ignored).
pub(crate) const SETTLE: &str = "UPDATE gateway_replies SET state = $2, next_attempt_at = $3, \
     last_error = $4, platform_message_id = COALESCE($5, platform_message_id), \
     delivered_at = CASE WHEN $2 = 'DELIVERED' THEN $6 ELSE delivered_at END, \
     lease_owner = NULL, lease_expires_at = NULL, updated_at = $6 \
     WHERE id = $1 AND state = 'SENDING' AND lease_owner = $7";

/// `$1` id, `$2` now, `$3` lease owner: back to due now, the claim's
/// attempt undone (the engine's generic release, `shared::work`).
pub(crate) static RELEASE: LazyLock<String> = LazyLock::new(|| {
    use super::work::{Whose, release};
    release(
        &GATEWAY_REPLIES,
        Whose::Owner("$3"),
        Some("($1)"),
        "$2",
        "",
        "id",
    )
    .unwrap_or_default()
});

/// `$1` now: a SENDING row whose lease ended may have been sent (the
/// engine's generic expiry, `shared::work`).
pub(crate) static EXPIRE: LazyLock<String> = LazyLock::new(|| {
    use super::work::{Whose, unverify};
    unverify(&GATEWAY_REPLIES, Whose::Expired("$1"), "$1", "id")
});

/// A person's decision: `$1` id, `$2` the new state, `$3` now, `$4`–`$6`
/// the states it may come from (padded by repeating one).
pub(crate) static DECIDE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE gateway_replies SET state = $2, \
           next_attempt_at = CASE WHEN $2 = 'PENDING' THEN $3 ELSE NULL END, \
           delivered_at = CASE WHEN $2 = 'DELIVERED' THEN $3 ELSE delivered_at END, \
           lease_owner = NULL, lease_expires_at = NULL, updated_at = $3 \
         WHERE id = $1 AND state IN ($4, $5, $6) RETURNING {COLUMNS}"
    )
});

/// `$1` owner, `$2` lease until, `$3` now, `$4` limit: the engine's
/// generic claim (`shared::work`) for `dialect`.
pub(crate) fn claim(dialect: super::Dialect) -> String {
    use super::work::ClaimParams;
    let params = ClaimParams {
        owner: "$1",
        until: "$2",
        now: "$3",
        lease_now: "$3",
        limit: "$4",
        node: None,
        within: "",
        set: "",
    };
    super::work::claim(&GATEWAY_REPLIES, dialect, params, "", "", COLUMNS)
}

pub(crate) fn reply<R: SqlRow>(row: &R) -> StoreResult<GatewayReply> {
    Ok(GatewayReply {
        id: row.col("id")?,
        inbound_id: row.col("inbound_id")?,
        kind: enum_col(row, "kind", ReplyKind::parse)?,
        content: row.col("content")?,
        dedup_key: row.col("dedup_key")?,
        gateway: row.col("gateway")?,
        platform: row.col("platform")?,
        chat_id: row.col("chat_id")?,
        reply_to_message_id: row.col("reply_to_message_id")?,
        thread_id: row.col("thread_id")?,
        state: enum_col(row, "state", ReplyState::parse)?,
        attempts: u32::try_from(row.col::<i64>("attempts")?).unwrap_or(u32::MAX),
        next_attempt_at: opt_time(row.col("next_attempt_at")?)?,
        lease_owner: row.col("lease_owner")?,
        lease_expires_at: opt_time(row.col("lease_expires_at")?)?,
        last_error: row.col("last_error")?,
        platform_message_id: row.col("platform_message_id")?,
        delivered_at: opt_time(row.col("delivered_at")?)?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
    })
}
