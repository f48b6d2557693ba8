//! [`ChoicesStore`] on SQLite: an ask's options, default,
//! deadline and urgency (`ask_choices`, migration 0010), and the deadline's
//! default answer — the same transaction as a person's reply
//! (`messages::finish_answer`), plus the "default after deadline" mark.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{
    inbox::NewEvent,
    options::{ANSWERED_BY_DEFAULT, Choices},
    store::{
        Answered, AskRecorded, ChoicesStore, DeliveryClaim, DueDefault, NewAsk, StoreError,
        StoreResult,
    },
};
use sqlx::{AssertSqlSafe, Row};

use super::{
    SqliteStore,
    messages::{finish_answer, record_from_chat},
    rows::{MESSAGE_COLUMNS, ms, time},
};
use crate::shared::choices::{ANSWER_WITH_OPTIONS, RECORD_ASK_FOR_PARENT, UNDELIVERED_EVENT};
use crate::shared::receipts::ADD_ASK_EVIDENCE;
use crate::{
    error::map,
    shared::{
        choices::{
            CHOICE_COLUMNS, INSERT_CHOICES, READ_COLUMNS, choices, due_default, options_json,
        },
        messages::{RECORD_ASK, answered_from, ask_recorded, insert_evidence},
    },
};

/// The `ask_choices` row of `message_id`, inside the caller's transaction
/// (the outbox's enqueue, an ask that also reaches the parent's inbox);
/// `options`: [`options_json`].
pub(super) async fn insert_choices(
    conn: &mut sqlx::SqliteConnection,
    message_id: &str,
    choices: &Choices,
    options: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(INSERT_CHOICES)
        .bind(message_id)
        .bind(options)
        .bind(i64::from(choices.multi_select))
        .bind(&choices.default)
        .bind(choices.deadline_at.map(ms))
        .bind(choices.urgency.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The screen of ask `message_id` (`NewAsk::evidence`, docs/evidence.md),
/// inside the ask's transaction (a derived task's native
/// question, an approval): nothing without one.
pub(super) async fn insert_ask_screen(
    conn: &mut sqlx::SqliteConnection,
    message_id: &str,
    screen: Option<&str>,
    now: i64,
) -> Result<(), sqlx::Error> {
    if let Some(screen) = screen {
        sqlx::query(ADD_ASK_EVIDENCE)
            .bind(message_id)
            .bind(screen)
            .bind(now)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// A derived task's ask as a HIGH event in its parent's inbox, inside the
/// ask's transaction (`ask_id`: the ask just recorded; the event names its
/// execution). `false`: an event under its dedup key already exists.
pub(super) async fn insert_parent_event(
    conn: &mut sqlx::SqliteConnection,
    event: &NewEvent,
    id: &str,
    payload: &str,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query(RECORD_ASK_FOR_PARENT)
        .bind(&event.id)
        .bind(&event.parent_task_id)
        .bind(&event.source_task_id)
        .bind(id)
        .bind(event.kind.as_str())
        .bind(event.priority.as_str())
        .bind(&event.dedup_key)
        .bind(payload)
        .bind(ms(event.now))
        .execute(&mut *conn)
        .await?
        .rows_affected()
        > 0)
}

#[async_trait]
impl ChoicesStore for SqliteStore {
    async fn record_ask_with_choices(
        &self,
        ask: NewAsk,
        choices: Choices,
    ) -> StoreResult<AskRecorded> {
        let options = serde_json::to_string(&choices.options)
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        let (task_id, id, question, now) = (
            ask.task_id.clone(),
            ask.id.clone(),
            ask.question.clone(),
            ms(ask.now),
        );
        // The ask's own statements, then its choices, in one transaction.
        let key = ask.idempotency_key.clone();
        // $5 is RECORD_ASK's idempotency key; the choices follow it.
        // The screen when it asked, if any, is $11.
        let evidence = ask.evidence.clone();
        let evidence_sql = match &evidence {
            Some(_) => format!("{};", insert_evidence(11)),
            None => String::new(),
        };
        let sql = format!(
            "BEGIN IMMEDIATE; {RECORD_ASK}; \
             INSERT INTO ask_choices ({CHOICE_COLUMNS}) VALUES ($2, $6, $7, $8, $9, $10, NULL) \
               RETURNING 'choices' AS what, message_id AS id, NULL AS execution_id; \
             {evidence_sql} COMMIT"
        );
        let returned = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    let mut query = sqlx::query(AssertSqlSafe(sql))
                        .bind(task_id)
                        .bind(id)
                        .bind(question)
                        .bind(now)
                        .bind(key)
                        .bind(options)
                        .bind(i64::from(choices.multi_select))
                        .bind(choices.default)
                        .bind(choices.deadline_at.map(ms))
                        .bind(choices.urgency.as_str());
                    if let Some(screen) = evidence {
                        query = query.bind(screen);
                    }
                    query.fetch_all(conn).await
                })
            })
            .await?;
        ask_recorded(ask, &returned)
    }

    async fn choices_for(&self, message_ids: &[String]) -> StoreResult<Vec<(String, Choices)>> {
        let mut out = Vec::new();
        for chunk in message_ids.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql =
                format!("SELECT {READ_COLUMNS} FROM ask_choices WHERE message_id IN ({marks})");
            let mut query = sqlx::query(AssertSqlSafe(sql));
            for id in chunk {
                query = query.bind(id);
            }
            for row in query.fetch_all(&self.reader).await.map_err(map)? {
                out.push(choices(&row)?);
            }
        }
        Ok(out)
    }

    async fn due_defaults(&self, now: DateTime<Utc>, limit: u32) -> StoreResult<Vec<DueDefault>> {
        let rows = sqlx::query(
            "SELECT c.message_id, m.task_id, c.default_label, c.deadline_at \
             FROM ask_choices c INDEXED BY ask_choices_due \
             JOIN harness_messages m ON m.id = c.message_id \
             WHERE c.default_label IS NOT NULL AND c.deadline_at IS NOT NULL \
               AND c.answered_by IS NULL AND c.deadline_at <= $1 AND m.state = 'OPEN' \
             ORDER BY c.deadline_at LIMIT +$2",
        )
        .bind(ms(now))
        .bind(i64::from(limit))
        .fetch_all(&self.reader)
        .await
        .map_err(map)?;
        rows.iter().map(due_default).collect()
    }

    async fn next_default_deadline(&self) -> StoreResult<Option<DateTime<Utc>>> {
        let at: Option<i64> = sqlx::query_scalar(
            "SELECT MIN(c.deadline_at) FROM ask_choices c INDEXED BY ask_choices_due \
             JOIN harness_messages m ON m.id = c.message_id \
             WHERE c.default_label IS NOT NULL AND c.deadline_at IS NOT NULL \
               AND c.answered_by IS NULL AND m.state = 'OPEN'",
        )
        .fetch_one(&self.reader)
        .await
        .map_err(map)?;
        at.map(time).transpose()
    }

    async fn answer_with_default(
        &self,
        message_id: &str,
        delivery_text: &str,
        delivery_id: &str,
        claim: Option<&DeliveryClaim>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Answered>> {
        // The conditional OPEN → ANSWERED of this ask (still OPEN, due, with
        // a default) with the default label as the reply text, the mark, then
        // — only if it won — the same second half as a person's reply.
        let answer = format!(
            "BEGIN IMMEDIATE; \
             UPDATE harness_messages AS m SET state = 'ANSWERED', \
               reply_text = (SELECT c.default_label FROM ask_choices c WHERE c.message_id = $1), \
               replied_at = $2 \
             WHERE m.id = $1 AND m.kind = 'ask' AND m.state = 'OPEN' AND EXISTS ( \
               SELECT 1 FROM ask_choices c WHERE c.message_id = $1 AND c.default_label IS NOT NULL \
                 AND c.deadline_at IS NOT NULL AND c.deadline_at <= $2 AND c.answered_by IS NULL) \
             RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        // The default is an option: its index is recorded as the answer's.
        let mark = format!(
            "UPDATE ask_choices SET answered_by = '{ANSWERED_BY_DEFAULT}', \
               answered_options = (SELECT json_array(CAST(j.key AS INTEGER)) \
                 FROM json_each(ask_choices.options) j \
                 WHERE json_extract(j.value, '$.label') = ask_choices.default_label LIMIT 1) \
             WHERE message_id = $1"
        );
        let (message_id, text, now) = (message_id.to_owned(), delivery_text.to_owned(), ms(now));
        let delivery_id = delivery_id.to_owned();
        let handoff = (
            claim.map(|c| c.owner.clone()),
            claim.map(|c| c.node.clone()),
            claim.map(|c| ms(c.until)),
        );
        let done = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    let answered = sqlx::query(AssertSqlSafe(answer))
                        .bind(&message_id)
                        .bind(now)
                        .fetch_all(&mut *conn)
                        .await?;
                    let Some(row) = answered.into_iter().next() else {
                        sqlx::query("ROLLBACK").execute(&mut *conn).await?;
                        return Ok(None);
                    };
                    sqlx::query(AssertSqlSafe(mark))
                        .bind(&message_id)
                        .execute(&mut *conn)
                        .await?;
                    let task_id: String = row.try_get("task_id")?;
                    let after =
                        finish_answer(conn, &row, &task_id, &delivery_id, &text, now, handoff)
                            .await?;
                    Ok(Some((row, after, text)))
                })
            })
            .await?;
        let Some((row, after, text)) = done else {
            return Ok(None);
        };
        answered_from(&row, &after, Some(&text)).map(Some)
    }

    async fn answer_with_options(
        &self,
        message_id: &str,
        text: &str,
        picked: &[usize],
        delivery_id: &str,
        claim: Option<&DeliveryClaim>,
        now: DateTime<Utc>,
        from_chat: bool,
    ) -> StoreResult<Option<Answered>> {
        // The conditional OPEN → ANSWERED of this very ask (the options
        // were read from it), the option(s) recorded, then — only if it
        // won — the same second half as any reply.
        let answer = format!(
            "BEGIN IMMEDIATE; \
             UPDATE harness_messages AS m SET state = 'ANSWERED', reply_text = $2, replied_at = $3 \
             WHERE m.id = $1 AND m.kind = 'ask' AND m.state = 'OPEN' RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        let picked = serde_json::to_string(picked).map_err(|e| StoreError::Backend(Box::new(e)))?;
        let (message_id, text, now) = (message_id.to_owned(), text.to_owned(), ms(now));
        let delivery_id = delivery_id.to_owned();
        let handoff = (
            claim.map(|c| c.owner.clone()),
            claim.map(|c| c.node.clone()),
            claim.map(|c| ms(c.until)),
        );
        let done = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    let answered = sqlx::query(AssertSqlSafe(answer))
                        .bind(&message_id)
                        .bind(&text)
                        .bind(now)
                        .fetch_all(&mut *conn)
                        .await?;
                    let Some(row) = answered.into_iter().next() else {
                        sqlx::query("ROLLBACK").execute(&mut *conn).await?;
                        return Ok(None);
                    };
                    sqlx::query(ANSWER_WITH_OPTIONS)
                        .bind(&picked)
                        .bind(&message_id)
                        .execute(&mut *conn)
                        .await?;
                    record_from_chat(conn, &row, now, from_chat).await?;
                    let task_id: String = row.try_get("task_id")?;
                    let after =
                        finish_answer(conn, &row, &task_id, &delivery_id, &text, now, handoff)
                            .await?;
                    Ok(Some((row, after)))
                })
            })
            .await?;
        let Some((row, after)) = done else {
            return Ok(None);
        };
        answered_from(&row, &after, None).map(Some)
    }

    async fn record_ask_for_parent(
        &self,
        ask: NewAsk,
        choices: Option<Choices>,
        event: NewEvent,
    ) -> StoreResult<(AskRecorded, bool)> {
        let (task_id, id, question, now) = (
            ask.task_id.clone(),
            ask.id.clone(),
            ask.question.clone(),
            ms(ask.now),
        );
        let key = ask.idempotency_key.clone();
        let evidence = ask.evidence.clone();
        let payload = event.payload.to_string();
        let options = choices.as_ref().map(options_json).transpose()?;
        let done = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    let returned =
                        sqlx::query(AssertSqlSafe(format!("BEGIN IMMEDIATE; {RECORD_ASK}")))
                            .bind(&task_id)
                            .bind(&id)
                            .bind(question)
                            .bind(now)
                            .bind(key)
                            .fetch_all(&mut *conn)
                            .await?;
                    if let (Some(choices), Some(options)) = (&choices, &options) {
                        insert_choices(conn, &id, choices, options).await?;
                    }
                    insert_ask_screen(conn, &id, evidence.as_deref(), now).await?;
                    let added = insert_parent_event(conn, &event, &id, &payload).await?;
                    sqlx::query("COMMIT").execute(&mut *conn).await?;
                    Ok((returned, added))
                })
            })
            .await?;
        let (returned, added) = done;
        Ok((ask_recorded(ask, &returned)?, added))
    }

    async fn undelivered_event(&self, dedup_key: &str) -> StoreResult<Option<String>> {
        sqlx::query_scalar(UNDELIVERED_EVENT)
            .bind(dedup_key)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)
    }
}
