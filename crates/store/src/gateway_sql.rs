//! The SQL of [`harness_core::store::GatewayStore`], written once for both
//! backends: statements use PostgreSQL's `$N` parameters and SQLite runs
//! them as `?N` ([`sqlite_text`], converted once per statement); rows are
//! decoded by one function generic over `sqlx::Row`.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use harness_core::store::{
    DeliveryMapping, GatewayInbound, InboundIntent, InboundState, StoreError, StoreResult,
};
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::error::map;

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

const INBOUND_COLUMNS: &str = "id, dedup_key, gateway, platform, chat_id, sender_id, \
     platform_message_id, thread_id, root_message_id, reply_to_message_id, intent, content, state, \
     response, attempts, last_error, processed_at, created_at, updated_at";

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
/// updated_at, `$5` the new response, `$6` now.
pub(crate) static CLAIM_INBOUND: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE gateway_inbound SET state = 'PROCESSING', response = $5, attempts = attempts + 1, \
         last_error = NULL, processed_at = NULL, updated_at = $6 \
         WHERE id = $1 AND state = $2 AND updated_at = $4 \
           AND (response = $3 OR (response IS NULL AND $3 IS NULL)) \
         RETURNING {INBOUND_COLUMNS}"
    )
});

/// `$1` id, `$2` state, `$3` response, `$4` last error, `$5` now.
pub(crate) static FINISH_INBOUND: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE gateway_inbound SET state = $2, response = $3, last_error = $4, \
         processed_at = CASE WHEN $2 = 'PROCESSED' THEN $5 ELSE processed_at END, updated_at = $5 \
         WHERE id = $1 RETURNING {INBOUND_COLUMNS}"
    )
});

/// `$N` → `?N` (SQLite's numbered parameters), outside string literals.
pub(crate) fn sqlite_text(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut in_literal = false;
    for c in sql.chars() {
        match c {
            '\'' => in_literal = !in_literal,
            '$' if !in_literal => {
                out.push('?');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// The SQLite form of a statement, converted once per statement (the
/// statements are the constants of this file: a bounded set).
pub(crate) fn for_sqlite(sql: &'static str) -> &'static str {
    static CONVERTED: LazyLock<
        std::sync::Mutex<std::collections::HashMap<&'static str, &'static str>>,
    > = LazyLock::new(Default::default);
    let mut cache = CONVERTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .entry(sql)
        .or_insert_with(|| Box::leak(sqlite_text(sql).into_boxed_str()))
}

/// PostgreSQL runs the text as written.
pub(crate) fn for_postgres(sql: &'static str) -> &'static str {
    sql
}

/// `impl GatewayStore` for a backend, written once: `$store` the backend
/// type, `$reader` the pool reads use (a field), `$sql` its text function
/// ([`for_sqlite`] / [`for_postgres`]). Writes use the backend's
/// `write_tx` (SQLite: `BEGIN IMMEDIATE` on the writer; PostgreSQL: the
/// store's write lock).
macro_rules! gateway_store {
    ($store:ty, $reader:ident, $sql:path) => {
        #[async_trait::async_trait]
        impl harness_core::store::GatewayStore for $store {
            async fn delivery_mappings(
                &self,
                gateway: &str,
                platform: &str,
                platform_message_id: &str,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::DeliveryMapping>> {
                let rows = sqlx::query($sql($crate::gateway_sql::DELIVERY_MAPPINGS))
                    .bind(gateway)
                    .bind(platform)
                    .bind(platform_message_id)
                    .fetch_all(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                rows.iter()
                    .map(|r| $crate::gateway_sql::delivery_mapping(r))
                    .collect()
            }

            async fn remember_nonce(
                &self,
                nonce: &str,
                expires_at: chrono::DateTime<chrono::Utc>,
                now: chrono::DateTime<chrono::Utc>,
            ) -> harness_core::store::StoreResult<bool> {
                use $crate::gateway_sql::ms;
                let mut tx = self.write_tx().await?;
                sqlx::query($sql($crate::gateway_sql::FORGET_EXPIRED_NONCES))
                    .bind(ms(now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let fresh = sqlx::query($sql($crate::gateway_sql::REMEMBER_NONCE))
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
                let created = sqlx::query($sql($crate::gateway_sql::INSERT_INBOUND))
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
                    .bind($crate::gateway_sql::ms(new.now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                let row = sqlx::query($sql($crate::gateway_sql::INBOUND_BY_KEY.as_str()))
                    .bind(&new.dedup_key)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = $crate::gateway_sql::inbound(&row)?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok((row, created))
            }

            async fn get_inbound(
                &self,
                id: &str,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                let row = sqlx::query($sql($crate::gateway_sql::INBOUND_BY_ID.as_str()))
                    .bind(id)
                    .fetch_optional(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                row.map(|r| $crate::gateway_sql::inbound(&r)).transpose()
            }

            async fn claim_inbound(
                &self,
                claim: harness_core::store::InboundClaim,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                use $crate::gateway_sql::ms;
                let mut tx = self.write_tx().await?;
                let row = sqlx::query($sql($crate::gateway_sql::CLAIM_INBOUND.as_str()))
                    .bind(&claim.id)
                    .bind(claim.seen_state.as_str())
                    .bind(&claim.seen_response)
                    .bind(ms(claim.seen_updated_at))
                    .bind(&claim.response)
                    .bind(ms(claim.now))
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = row.map(|r| $crate::gateway_sql::inbound(&r)).transpose()?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(row)
            }

            async fn finish_inbound(
                &self,
                finish: harness_core::store::InboundFinish,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query($sql($crate::gateway_sql::FINISH_INBOUND.as_str()))
                    .bind(&finish.id)
                    .bind(finish.state.as_str())
                    .bind(&finish.response)
                    .bind(&finish.last_error)
                    .bind($crate::gateway_sql::ms(finish.now))
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = row.map(|r| $crate::gateway_sql::inbound(&r)).transpose()?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(row)
            }
        }
    };
}
pub(crate) use gateway_store;

pub(crate) fn time(ms: i64) -> StoreResult<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms).ok_or(StoreError::Corrupt {
        column: "timestamp",
        value: ms.to_string(),
    })
}

pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn get<'r, R, T>(row: &'r R, column: &str) -> StoreResult<T>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    T: Decode<'r, R::Database> + Type<R::Database>,
{
    row.try_get(column).map_err(map)
}

fn parsed<'r, R, T>(
    row: &'r R,
    column: &'static str,
    parse: fn(&str) -> Option<T>,
) -> StoreResult<T>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    let text: String = get(row, column)?;
    parse(&text).ok_or(StoreError::Corrupt {
        column,
        value: text,
    })
}

pub(crate) fn delivery_mapping<'r, R>(row: &'r R) -> StoreResult<DeliveryMapping>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    String: Decode<'r, R::Database> + Type<R::Database>,
    Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(DeliveryMapping {
        id: get(row, "id")?,
        gateway: get(row, "gateway")?,
        harness_message_id: get(row, "harness_message_id")?,
        task_id: get(row, "task_id")?,
        outbound_id: get(row, "outbound_id")?,
        platform: get(row, "platform")?,
        chat_id: get(row, "chat_id")?,
        platform_message_id: get(row, "platform_message_id")?,
        scope: get(row, "scope")?,
        expect_reply: get::<R, i64>(row, "expect_reply")? != 0,
        created_at: time(get(row, "created_at")?)?,
    })
}

pub(crate) fn inbound<'r, R>(row: &'r R) -> StoreResult<GatewayInbound>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    String: Decode<'r, R::Database> + Type<R::Database>,
    Option<String>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    Option<i64>: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(GatewayInbound {
        id: get(row, "id")?,
        dedup_key: get(row, "dedup_key")?,
        gateway: get(row, "gateway")?,
        platform: get(row, "platform")?,
        chat_id: get(row, "chat_id")?,
        sender_id: get(row, "sender_id")?,
        platform_message_id: get(row, "platform_message_id")?,
        thread_id: get(row, "thread_id")?,
        root_message_id: get(row, "root_message_id")?,
        reply_to_message_id: get(row, "reply_to_message_id")?,
        intent: parsed(row, "intent", InboundIntent::parse)?,
        content: get(row, "content")?,
        state: parsed(row, "state", InboundState::parse)?,
        response: get(row, "response")?,
        attempts: u32::try_from(get::<R, i64>(row, "attempts")?).unwrap_or(u32::MAX),
        last_error: get(row, "last_error")?,
        processed_at: get::<R, Option<i64>>(row, "processed_at")?
            .map(time)
            .transpose()?,
        created_at: time(get(row, "created_at")?)?,
        updated_at: time(get(row, "updated_at")?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_numbered_question_marks_outside_literals() {
        assert_eq!(
            sqlite_text("SELECT '$1' WHERE a = $1 AND b IN ($2, '')"),
            "SELECT '$1' WHERE a = ?1 AND b IN (?2, '')"
        );
    }
}
