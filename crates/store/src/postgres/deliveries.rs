//! `DeliveryStore` on PostgreSQL: the durable delivery queue (migration 0004).
//! Claiming is one `BEGIN IMMEDIATE` batch on the single writer (expired
//! WRITING rows → UNVERIFIED, then lease due rows); PostgreSQL will run the
//! same statements with `FOR UPDATE SKIP LOCKED` in the sub-select.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{
    deliveries::{Claimed, Delivery, DeliveryKind, DeliveryState, DeliveryStore, NewInput},
    store::{StoreError, StoreResult},
};
use sqlx::{AssertSqlSafe, Row, postgres::PgRow};

use super::{
    PgStore,
    batch::{self, args},
    rows::time,
};
use crate::error::map;

pub(crate) const DELIVERY_COLUMNS: &str = "id, task_id, kind, message_id, node_id, text, question, \
     submit, dedup_key, state, attempts, next_attempt_at, lease_owner, lease_expires_at, \
     last_error, created_at, updated_at, done_at, resume";

/// States a worker may claim (due rows only).
const CLAIMABLE: &str = "('QUEUED', 'WAITING_BOUNDARY', 'RESUMING', 'FAILED')";

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn opt_time(v: Option<i64>) -> StoreResult<Option<DateTime<Utc>>> {
    v.map(time).transpose()
}

pub(crate) fn delivery(row: &PgRow) -> StoreResult<Delivery> {
    let kind: String = row.try_get("kind").map_err(map)?;
    let state: String = row.try_get("state").map_err(map)?;
    let attempts: i64 = row.try_get("attempts").map_err(map)?;
    Ok(Delivery {
        id: row.try_get("id").map_err(map)?,
        task_id: row.try_get("task_id").map_err(map)?,
        kind: DeliveryKind::parse(&kind).ok_or(StoreError::Corrupt {
            column: "deliveries.kind",
            value: kind.clone(),
        })?,
        message_id: row.try_get("message_id").map_err(map)?,
        node_id: row.try_get("node_id").map_err(map)?,
        text: row.try_get("text").map_err(map)?,
        question: row.try_get("question").map_err(map)?,
        submit: row.try_get::<i64, _>("submit").map_err(map)? != 0,
        dedup_key: row.try_get("dedup_key").map_err(map)?,
        state: DeliveryState::parse(&state).ok_or(StoreError::Corrupt {
            column: "deliveries.state",
            value: state.clone(),
        })?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        next_attempt_at: opt_time(row.try_get("next_attempt_at").map_err(map)?)?,
        lease_owner: row.try_get("lease_owner").map_err(map)?,
        lease_expires_at: opt_time(row.try_get("lease_expires_at").map_err(map)?)?,
        last_error: row.try_get("last_error").map_err(map)?,
        created_at: time(row.try_get("created_at").map_err(map)?)?,
        updated_at: time(row.try_get("updated_at").map_err(map)?)?,
        done_at: opt_time(row.try_get("done_at").map_err(map)?)?,
        resume: row.try_get::<i64, _>("resume").map_err(map)? != 0,
    })
}

impl PgStore {
    /// One conditional UPDATE … RETURNING in its own transaction.
    async fn update_one(&self, sql: String, binds: Vec<Bind>) -> StoreResult<Option<Delivery>> {
        let mut tx = self.write_tx().await?;
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for b in binds {
            query = match b {
                Bind::Text(t) => query.bind(t),
                Bind::Int(i) => query.bind(i),
                Bind::OptInt(i) => query.bind(i),
            };
        }
        let row = query.fetch_optional(&mut *tx).await.map_err(map)?;
        let out = row.as_ref().map(delivery).transpose()?;
        tx.commit().await.map_err(map)?;
        Ok(out)
    }

    async fn read_one(&self, filter: &str, value: &str) -> StoreResult<Option<Delivery>> {
        let sql = format!("SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE {filter} = $1");
        sqlx::query(AssertSqlSafe(sql))
            .bind(value)
            .fetch_optional(&self.pool)
            .await
            .map_err(map)?
            .as_ref()
            .map(delivery)
            .transpose()
    }
}

enum Bind {
    Text(String),
    Int(i64),
    OptInt(Option<i64>),
}

fn state_list(states: &[DeliveryState]) -> String {
    let quoted: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
    format!("({})", quoted.join(", "))
}

#[async_trait]
impl DeliveryStore for PgStore {
    async fn enqueue_input(&self, input: NewInput) -> StoreResult<(Delivery, bool)> {
        let mut tx = self.write_tx().await?;
        let sql = format!(
            "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
             attempts, next_attempt_at, created_at, updated_at, resume) \
             VALUES ($1, $2, 'input', $3, $4, $5, $6, 'QUEUED', 0, $7, $7, $7, $8) \
             ON CONFLICT (task_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING \
             RETURNING {DELIVERY_COLUMNS}"
        );
        let inserted = sqlx::query(AssertSqlSafe(sql))
            .bind(&input.id)
            .bind(&input.task_id)
            .bind(&input.node_id)
            .bind(&input.text)
            .bind(i64::from(input.submit))
            .bind(&input.dedup_key)
            .bind(ms(input.now))
            .bind(i64::from(input.resume))
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?;
        let out = match inserted {
            Some(row) => (delivery(&row)?, true),
            None => {
                let sql = format!(
                    "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE task_id = $1 AND dedup_key = $2"
                );
                let row = sqlx::query(AssertSqlSafe(sql))
                    .bind(&input.task_id)
                    .bind(&input.dedup_key)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(map)?;
                (delivery(&row)?, false)
            }
        };
        tx.commit().await.map_err(map)?;
        Ok(out)
    }

    async fn claim_deliveries(
        &self,
        owner: &str,
        node: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Claimed> {
        let sql = format!(
            "\
             UPDATE deliveries SET state = 'UNVERIFIED', next_attempt_at = NULL, lease_owner = NULL, \
               lease_expires_at = NULL, updated_at = $3, \
               last_error = 'the process died while writing; the text may or may not have arrived' \
             WHERE state = 'WRITING' AND lease_expires_at < $3 \
             RETURNING 'unverified' AS what, {DELIVERY_COLUMNS}; \
             UPDATE deliveries SET lease_owner = $1, lease_expires_at = $2, updated_at = $3 \
             WHERE id IN (SELECT d.id FROM deliveries d WHERE d.next_attempt_at <= $3 \
               AND d.state IN {CLAIMABLE} \
               AND (d.lease_expires_at IS NULL OR d.lease_expires_at < $3) \
               AND (d.node_id IS NULL OR d.node_id = $4) \
               ORDER BY d.next_attempt_at, d.id LIMIT $5 FOR UPDATE SKIP LOCKED) \
             RETURNING 'claimed' AS what, {DELIVERY_COLUMNS}"
        );
        let (owner, node) = (owner.to_owned(), node.to_owned());
        let (now, until) = (ms(now), ms(lease_until));
        let rows = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    batch::run(
                        conn,
                        &sql,
                        &args!(owner, until, now, node, i64::from(limit)),
                    )
                    .await
                })
            })
            .await?;
        let mut claimed = Claimed::default();
        for row in &rows {
            let what: String = row.try_get("what").map_err(map)?;
            let d = delivery(row)?;
            if what == "claimed" {
                claimed.rows.push(d);
            } else {
                claimed.unverified.push(d);
            }
        }
        claimed
            .rows
            .sort_by(|a, b| (a.next_attempt_at, &a.id).cmp(&(b.next_attempt_at, &b.id)));
        Ok(claimed)
    }

    async fn recover_node_deliveries(
        &self,
        node: &str,
        owner: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<Delivery>> {
        let sql = format!(
            "\
             UPDATE deliveries SET state = 'UNVERIFIED', next_attempt_at = NULL, lease_owner = NULL, \
               lease_expires_at = NULL, updated_at = $3, \
               last_error = 'the server stopped while writing; the text may or may not have arrived' \
             WHERE state = 'WRITING' AND substr(lease_owner, 1, length($1) + 1) = $1 || ':' \
               AND lease_owner <> $2 \
             RETURNING {DELIVERY_COLUMNS}; \
             UPDATE deliveries SET lease_owner = NULL, lease_expires_at = NULL, updated_at = $3, \
               next_attempt_at = LEAST(COALESCE(next_attempt_at, $3), $3) \
             WHERE state IN {CLAIMABLE} AND next_attempt_at IS NOT NULL \
               AND substr(lease_owner, 1, length($1) + 1) = $1 || ':' AND lease_owner <> $2 \
             RETURNING {DELIVERY_COLUMNS}"
        );
        let (node, owner, now) = (node.to_owned(), owner.to_owned(), ms(now));
        let rows = self
            .batch_tx(move |conn| {
                Box::pin(async move { batch::run(conn, &sql, &args!(node, owner, now)).await })
            })
            .await?;
        rows.iter().map(delivery).collect()
    }

    async fn advance_delivery(
        &self,
        id: &str,
        owner: &str,
        state: DeliveryState,
        lease_until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let sql = format!(
            "UPDATE deliveries SET state = $1, lease_expires_at = $2, updated_at = $3 \
             WHERE id = $4 AND lease_owner = $5 AND state IN {CLAIMABLE} \
             RETURNING {DELIVERY_COLUMNS}"
        );
        self.update_one(
            sql,
            vec![
                Bind::Text(state.as_str().into()),
                Bind::Int(ms(lease_until)),
                Bind::Int(ms(now)),
                Bind::Text(id.into()),
                Bind::Text(owner.into()),
            ],
        )
        .await
    }

    async fn complete_delivery(
        &self,
        id: &str,
        owner: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let sql = format!(
            "UPDATE deliveries SET state = 'DELIVERED', next_attempt_at = NULL, lease_owner = NULL, \
               lease_expires_at = NULL, last_error = NULL, updated_at = $1, done_at = $1 \
             WHERE id = $2 AND lease_owner = $3 AND state = 'WRITING' \
             RETURNING {DELIVERY_COLUMNS}"
        );
        self.update_one(
            sql,
            vec![
                Bind::Int(ms(now)),
                Bind::Text(id.into()),
                Bind::Text(owner.into()),
            ],
        )
        .await
    }

    async fn fail_delivery(
        &self,
        id: &str,
        owner: &str,
        error: &str,
        next: Option<DateTime<Utc>>,
        unverified: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let (state, from) = if unverified {
            ("UNVERIFIED", "('WRITING')")
        } else {
            ("FAILED", CLAIMABLE)
        };
        let sql = format!(
            "UPDATE deliveries SET state = '{state}', attempts = attempts + 1, \
               next_attempt_at = $1, lease_owner = NULL, lease_expires_at = NULL, \
               last_error = $2, updated_at = $3 \
             WHERE id = $4 AND lease_owner = $5 AND state IN {from} \
             RETURNING {DELIVERY_COLUMNS}"
        );
        let next = if unverified { None } else { next.map(ms) };
        self.update_one(
            sql,
            vec![
                Bind::OptInt(next),
                Bind::Text(error.chars().take(2000).collect()),
                Bind::Int(ms(now)),
                Bind::Text(id.into()),
                Bind::Text(owner.into()),
            ],
        )
        .await
    }

    async fn release_delivery(&self, id: &str, owner: &str) -> StoreResult<()> {
        let sql = format!(
            "UPDATE deliveries SET lease_owner = NULL, lease_expires_at = NULL \
             WHERE id = $1 AND lease_owner = $2 AND state IN {CLAIMABLE} \
             RETURNING {DELIVERY_COLUMNS}"
        );
        self.update_one(sql, vec![Bind::Text(id.into()), Bind::Text(owner.into())])
            .await
            .map(|_| ())
    }

    async fn requeue_delivery(
        &self,
        id: &str,
        from: &[DeliveryState],
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        if from.is_empty() {
            return Ok(None);
        }
        let sql = format!(
            "UPDATE deliveries SET state = 'QUEUED', next_attempt_at = $1, lease_owner = NULL, \
               lease_expires_at = NULL, updated_at = $1 \
             WHERE id = $2 AND state IN {} RETURNING {DELIVERY_COLUMNS}",
            state_list(from)
        );
        self.update_one(sql, vec![Bind::Int(ms(now)), Bind::Text(id.into())])
            .await
    }

    async fn mark_delivery_delivered(
        &self,
        id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let sql = format!(
            "UPDATE deliveries SET state = 'DELIVERED', next_attempt_at = NULL, lease_owner = NULL, \
               lease_expires_at = NULL, updated_at = $1, done_at = $1 \
             WHERE id = $2 AND state = 'UNVERIFIED' RETURNING {DELIVERY_COLUMNS}"
        );
        self.update_one(sql, vec![Bind::Int(ms(now)), Bind::Text(id.into())])
            .await
    }

    async fn get_delivery(&self, id: &str) -> StoreResult<Option<Delivery>> {
        self.read_one("id", id).await
    }

    async fn delivery_for_message(&self, message_id: &str) -> StoreResult<Option<Delivery>> {
        self.read_one("message_id", message_id).await
    }

    async fn deliveries_for_messages(&self, message_ids: &[String]) -> StoreResult<Vec<Delivery>> {
        if message_ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = batch::marks(1, message_ids.len());
        let sql = format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries \
             WHERE message_id IN ({marks})"
        );
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for id in message_ids {
            query = query.bind(id);
        }
        query
            .fetch_all(&self.pool)
            .await
            .map_err(map)?
            .iter()
            .map(delivery)
            .collect()
    }

    async fn task_deliveries(&self, task_id: &str, limit: u32) -> StoreResult<Vec<Delivery>> {
        let sql = format!(
            "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE task_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2"
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(task_id)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map)?
            .iter()
            .map(delivery)
            .collect()
    }
}

/// The reply's delivery row, built from what `answer_open_ask` inserted.
pub(crate) struct ReplyRow {
    pub id: String,
    pub task_id: String,
    pub message_id: String,
    pub node_id: Option<String>,
    pub text: String,
    pub question: String,
    pub now: i64,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<i64>,
}

impl ReplyRow {
    pub(crate) fn into_delivery(self) -> StoreResult<Delivery> {
        let at = time(self.now)?;
        Ok(Delivery {
            id: self.id,
            task_id: self.task_id,
            kind: DeliveryKind::Reply,
            message_id: Some(self.message_id),
            node_id: self.node_id,
            text: self.text,
            question: Some(self.question),
            submit: true,
            dedup_key: None,
            state: DeliveryState::Queued,
            attempts: 0,
            next_attempt_at: Some(at),
            lease_owner: self.lease_owner,
            lease_expires_at: opt_time(self.lease_expires_at)?,
            last_error: None,
            created_at: at,
            updated_at: at,
            done_at: None,
            resume: false,
        })
    }
}

/// The INSERT of a reply's delivery, run inside the answering transaction
/// (`?1` task, `?2` delivery id, `?3` ask id, `?4` reply text, `?5` question,
/// `?6` now; the hand-off lease `?7` owner, `?8` its node, `?9` until — taken
/// only when the row's node is that node or none). Only when the task's
/// agent ever ran; bound to the node of its live execution, if any.
pub(crate) const INSERT_REPLY_DELIVERY: &str = "INSERT INTO deliveries (id, task_id, kind, message_id, node_id, text, question, \
       submit, state, attempts, next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at) \
     SELECT $2, $1, 'reply', $3, n.node_id, $4, $5, 1, 'QUEUED', 0, $6, $6, $6, \
       CASE WHEN n.node_id IS NULL OR n.node_id = $8 THEN $7 END, \
       CASE WHEN $7 IS NOT NULL AND (n.node_id IS NULL OR n.node_id = $8) THEN $9 END \
     FROM (SELECT (SELECT x.node_id FROM executions x WHERE x.task_id = $1 \
       AND x.status IN ('RUNNING', 'PAUSED') ORDER BY x.created_at DESC, x.id DESC LIMIT 1) AS node_id) AS n \
     WHERE EXISTS (SELECT 1 FROM executions e WHERE e.task_id = $1) \
     RETURNING 'delivery' AS what, id, node_id, lease_owner, lease_expires_at";
