//! [`MessageStore`] on PostgreSQL: asks, notifies, replies, the notification
//! center's queries. An ask and a reply also park / resume the task's
//! executions in the same transaction.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{
    model::{Message, MessageQuery, MessageRow, MessageView},
    store::{Answered, AskRecorded, Dismissed, MessageStore, NewAsk, StoreResult},
};
use sqlx::{AssertSqlSafe, Row};

use super::{
    PgStore,
    batch::{self, args},
    rows::{self, MESSAGE_COLUMNS, MESSAGE_ROW_SELECT, ms},
};
use crate::shared::messages::{
    ANY_RUNNING, ASK_BY_KEY, ASK_EVIDENCE, CANCEL_OPEN_ASKS, DISMISS_MESSAGE, EXPIRE_ASKS_BEFORE,
    MESSAGE_BY_ID, RESUME_PAUSED,
};
use crate::{
    error::map,
    shared::messages::{HandoffBinds, answered_from, ask_recorded, insert_evidence},
};

impl PgStore {
    async fn message_by_id(&self, id: &str) -> StoreResult<Option<Message>> {
        let sql = MESSAGE_BY_ID.to_string();
        sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::message)
            .transpose()
    }

    async fn newest_ask(&self, task_id: &str, open_only: bool) -> StoreResult<Option<Message>> {
        let filter = if open_only {
            "AND m.state = 'OPEN'"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM harness_messages m \
             WHERE m.task_id = $1 AND m.kind = 'ask' {filter} \
             ORDER BY m.created_at DESC, m.id DESC LIMIT 1"
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(task_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::message)
            .transpose()
    }
}

/// PAUSED → RUNNING inside `tx`; returns (resumed ids, whether any is running now).
async fn resume_in(tx: &mut super::tx::TimedTx, task_id: &str) -> StoreResult<(Vec<String>, bool)> {
    let resumed: Vec<String> = sqlx::query_scalar(RESUME_PAUSED)
        .bind(task_id)
        .fetch_all(&mut **tx)
        .await
        .map_err(map)?;
    let running = if resumed.is_empty() {
        sqlx::query_scalar::<_, bool>(ANY_RUNNING)
            .bind(task_id)
            .fetch_one(&mut **tx)
            .await
            .map_err(map)?
    } else {
        true
    };
    Ok((resumed, running))
}

/// With `from_chat`: the ask answered in `answered` (its row) was
/// answered through a gateway at `now` (once per ask), in the answer's
/// transaction (before [`finish_answer`]).
pub(super) async fn record_from_chat(
    conn: &mut sqlx::PgConnection,
    answered: &sqlx::postgres::PgRow,
    now: i64,
    from_chat: bool,
) -> Result<(), sqlx::Error> {
    if !from_chat {
        return Ok(());
    }
    let ask_id: String = answered.try_get("id")?;
    sqlx::query(crate::shared::escalations::RECORD_GATEWAY_ANSWER)
        .bind(ask_id)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The second half of an answer, after the conditional OPEN → ANSWERED
/// returned `answered` (the ask's row): PAUSED → RUNNING, the reply's
/// delivery row with `delivery_text` (the caller commits). Shared by a person's reply and
/// the deadline's default, so both owe the agent exactly the same row.
pub(super) async fn finish_answer(
    conn: &mut sqlx::PgConnection,
    answered: &sqlx::postgres::PgRow,
    task_id: &str,
    delivery_id: &str,
    delivery_text: &str,
    now: i64,
    (claim_owner, claim_node, claim_until): HandoffBinds,
) -> Result<Vec<sqlx::postgres::PgRow>, sqlx::Error> {
    let ask_id: String = answered.try_get("id")?;
    let question: String = answered.try_get("content")?;
    let sql = format!(
        "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
           WHERE task_id = $1 AND status = 'PAUSED' \
           RETURNING 'resumed' AS what, id, NULL AS node_id, \
             NULL AS lease_owner, NULL AS lease_expires_at; \
         SELECT 'running' AS what, id, NULL AS node_id, NULL AS lease_owner, \
           NULL AS lease_expires_at FROM executions \
           WHERE task_id = $1 AND status = 'RUNNING' LIMIT 1; \
         {}",
        crate::shared::deliveries::INSERT_REPLY_DELIVERY
    );
    let args = args!(
        task_id,
        delivery_id,
        &ask_id,
        delivery_text,
        &question,
        now,
        claim_owner,
        claim_node,
        claim_until
    );
    batch::run(conn, &sql, &args).await
}

#[async_trait]
impl MessageStore for PgStore {
    async fn record_ask(&self, ask: NewAsk) -> StoreResult<AskRecorded> {
        // Supersede the task's other OPEN asks (first: at most one OPEN ask
        // per task is a unique index), insert the ask bound to its newest
        // RUNNING execution, park its RUNNING executions: one call of
        // `harness_record_ask`, which takes the write lock itself (migration
        // 0022), as one statement in its own transaction — one round trip.
        // The key is a column of the insert: a second ask with the key of an
        // existing one breaks the unique index and rolls the whole ask back.
        let args = (|| {
            Ok::<_, sqlx::Error>(args!(
                ask.task_id.clone(),
                ask.id.clone(),
                ask.question.clone(),
                ms(ask.now),
                ask.idempotency_key.clone()
            ))
        })()
        .map_err(map)?;
        // With the screen when it asked: the call and the evidence's insert
        // ($6) in one transaction.
        if let Some(screen) = ask.evidence.clone() {
            let sql = format!("{}; {}", super::RECORD_ASK_CALL, insert_evidence(6));
            let mut args = args;
            sqlx::Arguments::add(&mut args, screen)
                .map_err(sqlx::Error::Encode)
                .map_err(map)?;
            let returned = self
                .batch_tx(move |conn| Box::pin(async move { batch::run(conn, &sql, &args).await }))
                .await?;
            return ask_recorded(ask, &returned);
        }
        let returned = self.locked_call(super::RECORD_ASK_CALL, args).await?;
        ask_recorded(ask, &returned)
    }

    async fn ask_evidence(&self, message_id: &str) -> StoreResult<Option<String>> {
        sqlx::query_scalar(ASK_EVIDENCE)
            .bind(message_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map)
    }

    async fn ask_by_key(&self, task_id: &str, key: &str) -> StoreResult<Option<Message>> {
        let sql = ASK_BY_KEY.to_string();
        sqlx::query(AssertSqlSafe(sql))
            .bind(task_id)
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::message)
            .transpose()
    }

    async fn record_notify(&self, n: NewAsk) -> StoreResult<Message> {
        let mut tx = self.write_tx().await?;
        let sql = format!(
            "INSERT INTO harness_messages AS m (id, task_id, execution_id, kind, state, content, created_at) \
             VALUES ($1, $2, (SELECT x.id FROM executions x WHERE x.task_id = $3 AND x.status = 'RUNNING' \
             ORDER BY x.created_at DESC LIMIT 1), 'notify', 'CLOSED', $4, $5) RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(&n.id)
            .bind(&n.task_id)
            .bind(&n.task_id)
            .bind(&n.question)
            .bind(ms(n.now))
            .fetch_one(&mut *tx)
            .await
            .map_err(map)?;
        let message = rows::message(&row)?;
        tx.commit().await.map_err(map)?;
        Ok(message)
    }

    async fn answer_open_ask(
        &self,
        task_id: &str,
        text: &str,
        delivery_id: &str,
        claim: Option<&harness_core::store::DeliveryClaim>,
        now: DateTime<Utc>,
        from_chat: bool,
    ) -> StoreResult<Option<Answered>> {
        // Two round trips in one transaction (see `batch_tx`): the
        // conditional OPEN → ANSWERED, then — only if it won — the resume
        // and the commit. A reply that finds no OPEN ask writes nothing.
        let answer = format!(
            "UPDATE harness_messages AS m SET state = 'ANSWERED', reply_text = $2, replied_at = $3 \
             WHERE m.id = (SELECT o.id FROM harness_messages o WHERE o.task_id = $1 AND o.kind = 'ask' \
               AND o.state = 'OPEN' ORDER BY o.created_at DESC, o.id DESC LIMIT 1) \
             AND m.state = 'OPEN' RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        let (task_id, text, now) = (task_id.to_owned(), text.to_owned(), ms(now));
        let delivery_id = delivery_id.to_owned();
        let claim_owner = claim.map(|c| c.owner.clone());
        let claim_node = claim.map(|c| c.node.clone());
        let claim_until = claim.map(|c| ms(c.until));
        let done = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    let answered = sqlx::query(AssertSqlSafe(answer))
                        .bind(&task_id)
                        .bind(&text)
                        .bind(now)
                        .fetch_all(&mut *conn)
                        .await?;
                    let Some(row) = answered.into_iter().next() else {
                        return Ok(None);
                    };
                    record_from_chat(conn, &row, now, from_chat).await?;
                    // The reply's delivery row is part of the same
                    // transaction: answered ⇔ owed to the agent.
                    let resumed = finish_answer(
                        conn,
                        &row,
                        &task_id,
                        &delivery_id,
                        &text,
                        now,
                        (claim_owner, claim_node, claim_until),
                    )
                    .await?;
                    Ok(Some((row, resumed)))
                })
            })
            .await?;
        let Some((row, rows_after)) = done else {
            return Ok(None);
        };
        answered_from(&row, &rows_after, None).map(Some)
    }

    async fn resume_executions(&self, task_id: &str) -> StoreResult<(Vec<String>, bool)> {
        let mut tx = self.write_tx().await?;
        let out = resume_in(&mut tx, task_id).await?;
        tx.commit().await.map_err(map)?;
        Ok(out)
    }

    async fn open_ask(&self, task_id: &str) -> StoreResult<Option<Message>> {
        self.newest_ask(task_id, true).await
    }

    async fn latest_ask(&self, task_id: &str) -> StoreResult<Option<Message>> {
        self.newest_ask(task_id, false).await
    }

    async fn get_message(&self, id: &str) -> StoreResult<Option<Message>> {
        self.message_by_id(id).await
    }

    async fn ignore_ask(&self, id: &str) -> StoreResult<Option<Message>> {
        let mut tx = self.write_tx().await?;
        let sql = format!(
            "UPDATE harness_messages AS m SET state = 'IGNORED' WHERE m.id = $1 AND m.kind = 'ask' \
             AND m.state = 'OPEN' RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?;
        let message = row.as_ref().map(rows::message).transpose()?;
        tx.commit().await.map_err(map)?;
        Ok(message)
    }

    async fn dismiss_message(&self, id: &str) -> StoreResult<Dismissed> {
        let mut tx = self.write_tx().await?;
        let sql = format!(
            "DELETE FROM harness_messages AS m WHERE m.id = $1 AND m.kind <> 'ask' RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?;
        let outcome = match row {
            Some(row) => Dismissed::Deleted(rows::message(&row)?),
            None => {
                let exists: bool = sqlx::query_scalar(DISMISS_MESSAGE)
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(map)?;
                if exists {
                    Dismissed::IsAsk
                } else {
                    Dismissed::NotFound
                }
            }
        };
        tx.commit().await.map_err(map)?;
        Ok(outcome)
    }

    async fn cancel_open_asks(&self, task_id: &str) -> StoreResult<Vec<String>> {
        let mut tx = self.write_tx().await?;
        let ids: Vec<String> = sqlx::query_scalar(CANCEL_OPEN_ASKS)
            .bind(task_id)
            .fetch_all(&mut *tx)
            .await
            .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(ids)
    }

    async fn expire_asks_before(&self, cutoff: DateTime<Utc>) -> StoreResult<Vec<String>> {
        let mut tx = self.write_tx().await?;
        let ids: Vec<String> = sqlx::query_scalar(EXPIRE_ASKS_BEFORE)
            .bind(ms(cutoff))
            .fetch_all(&mut *tx)
            .await
            .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(ids)
    }

    async fn list_messages(&self, q: &MessageQuery) -> StoreResult<Vec<MessageRow>> {
        let mut sql = format!("{MESSAGE_ROW_SELECT} WHERE 1 = 1");
        match q.view {
            MessageView::Pending => sql.push_str(" AND m.kind = 'ask' AND m.state = 'OPEN'"),
            MessageView::Answered => sql.push_str(" AND m.kind = 'ask' AND m.state = 'ANSWERED'"),
            MessageView::All => {}
        }
        let mut n = 0;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        if q.task_id.is_some() {
            sql.push_str(&format!(" AND m.task_id = {}", next()));
        }
        if q.from_children {
            sql.push_str(" AND t.parent_task_id IS NOT NULL");
        }
        if q.cursor.is_some() {
            sql.push_str(&format!(
                " AND (m.created_at, m.id) < ({}, {})",
                next(),
                next()
            ));
        }
        let pattern = q.search.as_ref().map(|s| {
            let escaped = s
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        });
        if pattern.is_some() {
            // ILIKE: SQLite's LIKE ignores ASCII case.
            let p = next();
            sql.push_str(&format!(
                " AND (t.title ILIKE {p} ESCAPE '\\' OR m.content ILIKE {p} ESCAPE '\\' \
                 OR m.reply_text ILIKE {p} ESCAPE '\\')"
            ));
        }
        sql.push_str(&format!(
            " ORDER BY m.created_at DESC, m.id DESC LIMIT {}",
            next()
        ));
        let mut query = sqlx::query(AssertSqlSafe(sql));
        if let Some(task_id) = &q.task_id {
            query = query.bind(task_id);
        }
        if let Some(cursor) = &q.cursor {
            query = query.bind(cursor.created_at_ms).bind(&cursor.id);
        }
        if let Some(p) = &pattern {
            query = query.bind(p);
        }
        query
            .bind(i64::from(q.limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map)?
            .iter()
            .map(rows::message_row)
            .collect()
    }

    async fn message_row(&self, id: &str) -> StoreResult<Option<MessageRow>> {
        let sql = format!("{MESSAGE_ROW_SELECT} WHERE m.id = $1");
        sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::message_row)
            .transpose()
    }

    async fn pending_count(&self) -> StoreResult<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM harness_messages \
             WHERE kind = 'ask' AND state = 'OPEN'",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(map)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
