//! [`MessageStore`] on SQLite: asks, notifies, replies, the notification
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
    SqliteStore,
    rows::{self, MESSAGE_COLUMNS, MESSAGE_ROW_SELECT, ms},
};
use crate::shared::messages::{
    ANY_RUNNING, ASK_BY_KEY, CANCEL_OPEN_ASKS, DISMISS_MESSAGE, EXPIRE_ASKS_BEFORE, MESSAGE_BY_ID,
    RESUME_PAUSED,
};
use crate::{
    error::map,
    shared::messages::{
        ASK_EVIDENCE, HandoffBinds, RECORD_ASK, answered_from, ask_recorded, insert_evidence,
    },
};

impl SqliteStore {
    async fn message_by_id(&self, id: &str) -> StoreResult<Option<Message>> {
        let sql = MESSAGE_BY_ID.to_string();
        sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.reader)
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
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::message)
            .transpose()
    }
}

/// PAUSED → RUNNING inside `tx`; returns (resumed ids, whether any is running now).
async fn resume_in(
    tx: &mut super::latency::TimedTx,
    task_id: &str,
) -> StoreResult<(Vec<String>, bool)> {
    let resumed: Vec<String> = sqlx::query_scalar(RESUME_PAUSED)
        .bind(task_id)
        .fetch_all(&mut **tx)
        .await
        .map_err(map)?;
    let running = if resumed.is_empty() {
        sqlx::query_scalar::<_, i64>(ANY_RUNNING)
            .bind(task_id)
            .fetch_one(&mut **tx)
            .await
            .map_err(map)?
            != 0
    } else {
        true
    };
    Ok((resumed, running))
}

/// With `from_chat`: the ask answered in `answered` (its row) was
/// answered through a gateway at `now` (once per ask), in the answer's
/// transaction (before [`finish_answer`]).
pub(super) async fn record_from_chat(
    conn: &mut sqlx::SqliteConnection,
    answered: &sqlx::sqlite::SqliteRow,
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
/// delivery row with `delivery_text`, COMMIT. Shared by a person's reply and
/// the deadline's default, so both owe the agent exactly the same row.
pub(super) async fn finish_answer(
    conn: &mut sqlx::SqliteConnection,
    answered: &sqlx::sqlite::SqliteRow,
    task_id: &str,
    delivery_id: &str,
    delivery_text: &str,
    now: i64,
    (claim_owner, claim_node, claim_until): HandoffBinds,
) -> Result<Vec<sqlx::sqlite::SqliteRow>, sqlx::Error> {
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
         {}; \
         COMMIT",
        crate::shared::deliveries::INSERT_REPLY_DELIVERY
    );
    sqlx::query(AssertSqlSafe(sql))
        .bind(task_id)
        .bind(delivery_id)
        .bind(&ask_id)
        .bind(delivery_text)
        .bind(&question)
        .bind(now)
        .bind(claim_owner)
        .bind(claim_node)
        .bind(claim_until)
        .fetch_all(&mut *conn)
        .await
}

#[async_trait]
impl MessageStore for SqliteStore {
    async fn record_ask(&self, ask: NewAsk) -> StoreResult<AskRecorded> {
        // Supersede the task's other OPEN asks (first: at most one OPEN ask
        // per task is a unique index), insert the ask bound to its newest
        // RUNNING execution, park its RUNNING executions — one
        // transaction sent to the writer as one batch (see `batch_tx`). Every
        // statement answers rows of the same shape.
        let task_id = ask.task_id.clone();
        let id = ask.id.clone();
        let question = ask.question.clone();
        let now = ms(ask.now);
        // The key is a column of the insert: a second ask with the key of an
        // existing one breaks the unique index and rolls the whole ask back.
        let key = ask.idempotency_key.clone();
        // The screen when it asked, if any: $6, in the same transaction.
        let evidence = ask.evidence.clone();
        let sql = match &evidence {
            Some(_) => format!(
                "BEGIN IMMEDIATE; {RECORD_ASK}; {}; COMMIT",
                insert_evidence(6)
            ),
            None => format!("BEGIN IMMEDIATE; {RECORD_ASK}; COMMIT"),
        };
        let returned = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    let mut query = sqlx::query(AssertSqlSafe(sql))
                        .bind(task_id)
                        .bind(id)
                        .bind(question)
                        .bind(now)
                        .bind(key);
                    if let Some(screen) = evidence {
                        query = query.bind(screen);
                    }
                    query.fetch_all(conn).await
                })
            })
            .await?;
        ask_recorded(ask, &returned)
    }

    async fn ask_evidence(&self, message_id: &str) -> StoreResult<Option<String>> {
        sqlx::query_scalar(ASK_EVIDENCE)
            .bind(message_id)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)
    }

    async fn ask_by_key(&self, task_id: &str, key: &str) -> StoreResult<Option<Message>> {
        let sql = ASK_BY_KEY.to_string();
        sqlx::query(AssertSqlSafe(sql))
            .bind(task_id)
            .bind(key)
            .fetch_optional(&self.reader)
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
            "BEGIN IMMEDIATE; \
             UPDATE harness_messages AS m SET state = 'ANSWERED', reply_text = $2, replied_at = $3 \
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
                        sqlx::query("ROLLBACK").execute(&mut *conn).await?;
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
                let exists: i64 = sqlx::query_scalar(DISMISS_MESSAGE)
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(map)?;
                if exists != 0 {
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
        if q.task_id.is_some() {
            sql.push_str(" AND m.task_id = ?");
        }
        if q.from_children {
            sql.push_str(" AND t.parent_task_id IS NOT NULL");
        }
        if q.cursor.is_some() {
            sql.push_str(" AND (m.created_at, m.id) < (?, ?)");
        }
        let pattern = q.search.as_ref().map(|s| {
            let escaped = s
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        });
        if pattern.is_some() {
            sql.push_str(
                " AND (t.title LIKE $1s ESCAPE '\\' OR m.content LIKE $1s ESCAPE '\\' \
                 OR m.reply_text LIKE $1s ESCAPE '\\')",
            );
        }
        sql.push_str(" ORDER BY m.created_at DESC, m.id DESC LIMIT +?");
        // Positional binds in the order the clauses were appended.
        let sql = sql.replace("$1s", "?");
        let mut query = sqlx::query(AssertSqlSafe(sql));
        if let Some(task_id) = &q.task_id {
            query = query.bind(task_id);
        }
        if let Some(cursor) = &q.cursor {
            query = query.bind(cursor.created_at_ms).bind(&cursor.id);
        }
        if let Some(p) = &pattern {
            query = query.bind(p).bind(p).bind(p);
        }
        query
            .bind(i64::from(q.limit))
            .fetch_all(&self.reader)
            .await
            .map_err(map)?
            .iter()
            .map(rows::message_row)
            .collect()
    }

    async fn message_row(&self, id: &str) -> StoreResult<Option<MessageRow>> {
        let sql = format!("{MESSAGE_ROW_SELECT} WHERE m.id = ?");
        sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::message_row)
            .transpose()
    }

    async fn pending_count(&self) -> StoreResult<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM harness_messages INDEXED BY harness_messages_open_asks \
             WHERE kind = 'ask' AND state = 'OPEN'",
        )
        .fetch_one(&self.reader)
        .await
        .map_err(map)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
