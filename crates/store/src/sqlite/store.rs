//! `Store` on SQLite. Each writing method is one `BEGIN IMMEDIATE` transaction
//! on the single writer connection.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{
    model::{Execution, Message, MessageQuery, MessageRow, MessageView, Project, TaskView},
    store::{
        Answered, AskRecorded, Dismissed, NewAsk, NewExecution, NewProject, NewTask, Store,
        StoreError, StoreResult,
    },
};
use sqlx::{AssertSqlSafe, Row, Sqlite, Transaction};

use super::{
    SqliteStore,
    rows::{self, MESSAGE_COLUMNS, MESSAGE_ROW_SELECT, PROJECT_SELECT, TASK_VIEW_SELECT, ms},
};
use crate::error::map;

/// The future of one batch on the writer connection.
pub(super) type BatchFuture<'c, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, sqlx::Error>> + Send + 'c>>;

impl SqliteStore {
    pub(super) async fn write_tx(&self) -> StoreResult<Transaction<'static, Sqlite>> {
        self.writer.begin_with("BEGIN IMMEDIATE").await.map_err(map)
    }

    /// Runs a batch that holds a whole transaction (`BEGIN IMMEDIATE; …;
    /// COMMIT`) as one command on the writer connection: one round trip to
    /// SQLite's thread instead of one per statement, which is most of the
    /// cost of a write here. The batch runs in its own task so a caller that
    /// goes away (a dropped HTTP request) cannot stop it half-way; if any
    /// statement fails the transaction is rolled back before the connection
    /// is reused, and a connection that cannot roll back is discarded.
    pub(super) async fn batch_tx<T, F>(&self, batch: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut sqlx::SqliteConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        let writer = self.writer.clone();
        let job = tokio::spawn(async move {
            let mut conn = writer.acquire().await.map_err(map)?;
            match batch(&mut conn).await {
                Ok(value) => Ok(value),
                Err(err) => {
                    if let Err(rollback) = sqlx::query("ROLLBACK").execute(&mut *conn).await
                        && !rollback.to_string().contains("no transaction is active")
                    {
                        tracing::warn!(%rollback, "rollback after a failed batch failed; dropping the connection");
                        drop(conn.detach());
                    }
                    Err(map(err))
                }
            }
        });
        job.await
            .map_err(|join| StoreError::Backend(Box::new(join)))?
    }

    async fn message_by_id(&self, id: &str) -> StoreResult<Option<Message>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM harness_messages m WHERE m.id = ?");
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
             WHERE m.task_id = ? AND m.kind = 'ask' {filter} \
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
    tx: &mut Transaction<'static, Sqlite>,
    task_id: &str,
) -> StoreResult<(Vec<String>, bool)> {
    let resumed: Vec<String> = sqlx::query_scalar(
        "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
         WHERE task_id = ? AND status = 'PAUSED' RETURNING id",
    )
    .bind(task_id)
    .fetch_all(&mut **tx)
    .await
    .map_err(map)?;
    let running = if resumed.is_empty() {
        sqlx::query_scalar::<_, i64>(
            "SELECT EXISTS (SELECT 1 FROM executions WHERE task_id = ? AND status = 'RUNNING')",
        )
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

#[async_trait]
impl Store for SqliteStore {
    async fn ensure_workspace(
        &self,
        id: &str,
        name: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<String> {
        let mut tx = self.write_tx().await?;
        sqlx::query("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING")
            .bind(id)
            .bind(name)
            .bind(ms(now))
            .execute(&mut *tx)
            .await
            .map_err(map)?;
        let id: String = sqlx::query_scalar("SELECT id FROM workspaces WHERE name = ?")
            .bind(name)
            .fetch_one(&mut *tx)
            .await
            .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(id)
    }

    async fn create_project(&self, p: NewProject) -> StoreResult<Project> {
        let mut tx = self.write_tx().await?;
        sqlx::query("INSERT INTO projects (id, workspace_id, name, path, created_at) VALUES (?, ?, ?, ?, ?)")
            .bind(&p.id)
            .bind(&p.workspace_id)
            .bind(&p.name)
            .bind(&p.path)
            .bind(ms(p.now))
            .execute(&mut *tx)
            .await
            .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(Project {
            id: p.id,
            name: p.name,
            path: p.path,
            workspace: p.workspace_name,
            workspace_id: p.workspace_id,
            created_at: rows::time(ms(p.now))?,
        })
    }

    async fn list_projects(&self) -> StoreResult<Vec<Project>> {
        let sql = format!("{PROJECT_SELECT} ORDER BY w.name, p.name");
        sqlx::query(AssertSqlSafe(sql))
            .fetch_all(&self.reader)
            .await
            .map_err(map)?
            .iter()
            .map(rows::project)
            .collect()
    }

    async fn create_task(&self, t: NewTask) -> StoreResult<TaskView> {
        let agent =
            serde_json::to_string(&t.agent).map_err(|e| StoreError::Backend(Box::new(e)))?;
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO tasks (id, project_id, title, description, parent_task_id, status, unattended, \
             agent_config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'TODO', 0, ?, ?, ?)",
        )
        .bind(&t.id)
        .bind(&t.project_id)
        .bind(&t.title)
        .bind(&t.description)
        .bind(&t.parent_task_id)
        .bind(&agent)
        .bind(ms(t.now))
        .bind(ms(t.now))
        .execute(&mut *tx)
        .await
        .map_err(map)?;
        let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = ?");
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(&t.id)
            .fetch_one(&mut *tx)
            .await
            .map_err(map)?;
        let view = rows::task_view(&row)?;
        tx.commit().await.map_err(map)?;
        Ok(view)
    }

    async fn get_task(&self, id: &str) -> StoreResult<Option<TaskView>> {
        let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = ?");
        sqlx::query(AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?
            .as_ref()
            .map(rows::task_view)
            .transpose()
    }

    async fn list_tasks(&self, limit: u32) -> StoreResult<Vec<TaskView>> {
        let sql = format!("{TASK_VIEW_SELECT} ORDER BY t.created_at DESC, t.id DESC LIMIT ?");
        sqlx::query(AssertSqlSafe(sql))
            .bind(i64::from(limit))
            .fetch_all(&self.reader)
            .await
            .map_err(map)?
            .iter()
            .map(rows::task_view)
            .collect()
    }

    async fn set_unattended(
        &self,
        task_id: &str,
        on: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<TaskView>> {
        let mut tx = self.write_tx().await?;
        let updated = sqlx::query("UPDATE tasks SET unattended = ?, updated_at = ? WHERE id = ?")
            .bind(i64::from(on))
            .bind(ms(now))
            .bind(task_id)
            .execute(&mut *tx)
            .await
            .map_err(map)?
            .rows_affected();
        if updated == 0 {
            return Ok(None);
        }
        let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = ?");
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(task_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(map)?;
        let view = rows::task_view(&row)?;
        tx.commit().await.map_err(map)?;
        Ok(Some(view))
    }

    async fn unattended_task_ids(&self) -> StoreResult<Vec<String>> {
        sqlx::query_scalar("SELECT id FROM tasks WHERE unattended = 1 ORDER BY id")
            .fetch_all(&self.reader)
            .await
            .map_err(map)
    }

    async fn set_session_id(
        &self,
        execution_id: &str,
        session_id: &str,
    ) -> StoreResult<Option<String>> {
        let mut tx = self.write_tx().await?;
        sqlx::query("UPDATE executions SET session_id = ? WHERE id = ? AND session_id IS NULL")
            .bind(session_id)
            .bind(execution_id)
            .execute(&mut *tx)
            .await
            .map_err(map)?;
        let stored: Option<Option<String>> =
            sqlx::query_scalar("SELECT session_id FROM executions WHERE id = ?")
                .bind(execution_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(stored.flatten())
    }

    async fn finish_execution(
        &self,
        execution_id: &str,
        status: harness_core::model::ExecutionStatus,
        exit_code: Option<i64>,
        reason: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let mut tx = self.write_tx().await?;
        let n = sqlx::query(
            "UPDATE executions SET status = ?, exit_code = ?, end_reason = ?, ended_at = ? \
             WHERE id = ? AND status IN ('RUNNING', 'PAUSED')",
        )
        .bind(status.as_str())
        .bind(exit_code)
        .bind(reason)
        .bind(ms(now))
        .bind(execution_id)
        .execute(&mut *tx)
        .await
        .map_err(map)?
        .rows_affected();
        tx.commit().await.map_err(map)?;
        Ok(n > 0)
    }

    async fn interrupt_live_executions(
        &self,
        node: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<String>> {
        let mut tx = self.write_tx().await?;
        let ids: Vec<String> = sqlx::query_scalar(
            "UPDATE executions SET status = 'FAILED', end_reason = 'interrupted', ended_at = ? \
             WHERE status IN ('RUNNING', 'PAUSED') AND (node_id IS NULL OR node_id = ?) \
             RETURNING task_id",
        )
        .bind(ms(now))
        .bind(node)
        .fetch_all(&mut *tx)
        .await
        .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(ids)
    }

    async fn live_execution(&self, task_id: &str) -> StoreResult<Option<Execution>> {
        sqlx::query(
            "SELECT id, task_id, status, session_id, exit_code, created_at, ended_at FROM executions \
             WHERE task_id = ? AND status IN ('RUNNING', 'PAUSED') ORDER BY created_at DESC, id DESC LIMIT 1",
        )
        .bind(task_id)
        .fetch_optional(&self.reader)
        .await
        .map_err(map)?
        .as_ref()
        .map(rows::execution)
        .transpose()
    }

    async fn create_execution(&self, e: NewExecution) -> StoreResult<Execution> {
        let mut tx = self.write_tx().await?;
        let row = sqlx::query(
            "INSERT INTO executions (id, task_id, status, token_hash, created_at, node_id) \
             VALUES (?, ?, ?, ?, ?, ?) \
             RETURNING id, task_id, status, session_id, exit_code, created_at, ended_at",
        )
        .bind(&e.id)
        .bind(&e.task_id)
        .bind(e.status.as_str())
        .bind(&e.token_hash)
        .bind(ms(e.now))
        .bind(&e.node_id)
        .fetch_one(&mut *tx)
        .await
        .map_err(map)?;
        let execution = rows::execution(&row)?;
        tx.commit().await.map_err(map)?;
        Ok(execution)
    }

    async fn execution_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<Execution>> {
        sqlx::query(
            "SELECT id, task_id, status, session_id, exit_code, created_at, ended_at \
             FROM executions WHERE token_hash = ?",
        )
        .bind(token_hash)
        .fetch_optional(&self.reader)
        .await
        .map_err(map)?
        .as_ref()
        .map(rows::execution)
        .transpose()
    }

    async fn record_ask(&self, ask: NewAsk) -> StoreResult<AskRecorded> {
        // Insert the ask bound to the task's newest RUNNING execution,
        // supersede its other OPEN asks, park its RUNNING executions — one
        // transaction sent to the writer as one batch (see `batch_tx`). Every
        // statement answers rows of the same shape.
        let task_id = ask.task_id.clone();
        let id = ask.id.clone();
        let question = ask.question.clone();
        let now = ms(ask.now);
        let returned = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    sqlx::query(
                        "BEGIN IMMEDIATE; \
                         INSERT INTO harness_messages (id, task_id, execution_id, kind, state, content, created_at) \
                           VALUES (?2, ?1, (SELECT x.id FROM executions x WHERE x.task_id = ?1 AND x.status = 'RUNNING' \
                             ORDER BY x.created_at DESC, x.id DESC LIMIT 1), 'ask', 'OPEN', ?3, ?4) \
                           RETURNING 'asked' AS what, id, execution_id; \
                         UPDATE harness_messages SET state = 'CANCELLED' \
                           WHERE task_id = ?1 AND kind = 'ask' AND state = 'OPEN' AND id <> ?2 \
                           RETURNING 'cancelled' AS what, id, NULL AS execution_id; \
                         UPDATE executions SET status = 'PAUSED' WHERE task_id = ?1 AND status = 'RUNNING' \
                           RETURNING 'paused' AS what, id, NULL AS execution_id; \
                         COMMIT",
                    )
                    .bind(task_id)
                    .bind(id)
                    .bind(question)
                    .bind(now)
                    .fetch_all(conn)
                    .await
                })
            })
            .await?;
        let mut cancelled = Vec::new();
        let mut paused = Vec::new();
        let mut execution_id: Option<String> = None;
        let mut inserted = false;
        for row in &returned {
            let what: String = row.try_get("what").map_err(map)?;
            let id: String = row.try_get("id").map_err(map)?;
            match what.as_str() {
                "cancelled" => cancelled.push(id),
                "paused" => paused.push(id),
                _ => {
                    execution_id = row.try_get("execution_id").map_err(map)?;
                    inserted = true;
                }
            }
        }
        if !inserted {
            return Err(StoreError::Backend("ask insert returned no row".into()));
        }
        Ok(AskRecorded {
            message: Message {
                id: ask.id,
                task_id: ask.task_id,
                execution_id,
                kind: harness_core::model::MessageKind::Ask,
                state: harness_core::model::MessageState::Open,
                content: ask.question,
                reply_text: None,
                replied_at: None,
                created_at: rows::time(now)?,
            },
            cancelled,
            paused,
        })
    }

    async fn record_notify(&self, n: NewAsk) -> StoreResult<Message> {
        let mut tx = self.write_tx().await?;
        let sql = format!(
            "INSERT INTO harness_messages AS m (id, task_id, execution_id, kind, state, content, created_at) \
             VALUES (?, ?, (SELECT x.id FROM executions x WHERE x.task_id = ? AND x.status = 'RUNNING' \
             ORDER BY x.created_at DESC LIMIT 1), 'notify', 'CLOSED', ?, ?) RETURNING {}",
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
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Answered>> {
        // Two round trips in one transaction (see `batch_tx`): the
        // conditional OPEN → ANSWERED, then — only if it won — the resume
        // and the commit. A reply that finds no OPEN ask writes nothing.
        let answer = format!(
            "BEGIN IMMEDIATE; \
             UPDATE harness_messages AS m SET state = 'ANSWERED', reply_text = ?2, replied_at = ?3 \
             WHERE m.id = (SELECT o.id FROM harness_messages o WHERE o.task_id = ?1 AND o.kind = 'ask' \
               AND o.state = 'OPEN' ORDER BY o.created_at DESC, o.id DESC LIMIT 1) \
             AND m.state = 'OPEN' RETURNING {}",
            MESSAGE_COLUMNS.replace("m.", "")
        );
        let (task_id, text, now) = (task_id.to_owned(), text.to_owned(), ms(now));
        let delivery_id = delivery_id.to_owned();
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
                    // The reply's delivery row is part of the same
                    // transaction (issue 10): answered ⇔ owed to the agent.
                    let ask_id: String = row.try_get("id")?;
                    let question: String = row.try_get("content")?;
                    let sql = format!(
                        "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
                           WHERE task_id = ?1 AND status = 'PAUSED' \
                           RETURNING 'resumed' AS what, id, NULL AS node_id; \
                         SELECT 'running' AS what, id, NULL AS node_id FROM executions \
                           WHERE task_id = ?1 AND status = 'RUNNING' LIMIT 1; \
                         {}; \
                         COMMIT",
                        super::deliveries::INSERT_REPLY_DELIVERY
                    );
                    let resumed = sqlx::query(AssertSqlSafe(sql))
                        .bind(&task_id)
                        .bind(&delivery_id)
                        .bind(&ask_id)
                        .bind(&text)
                        .bind(&question)
                        .bind(now)
                        .fetch_all(&mut *conn)
                        .await?;
                    Ok(Some((row, resumed)))
                })
            })
            .await?;
        let Some((row, rows_after)) = done else {
            return Ok(None);
        };
        let message = rows::message(&row)?;
        let mut resumed = Vec::new();
        let mut running = false;
        let mut delivery = None;
        for r in &rows_after {
            let what: String = r.try_get("what").map_err(map)?;
            match what.as_str() {
                "resumed" => resumed.push(r.try_get("id").map_err(map)?),
                "delivery" => {
                    delivery = Some(
                        super::deliveries::ReplyRow {
                            id: r.try_get("id").map_err(map)?,
                            task_id: message.task_id.clone(),
                            message_id: message.id.clone(),
                            node_id: r.try_get("node_id").map_err(map)?,
                            text: message.reply_text.clone().unwrap_or_default(),
                            question: message.content.clone(),
                            now: ms(message.replied_at.unwrap_or(message.created_at)),
                        }
                        .into_delivery()?,
                    );
                }
                _ => running = true,
            }
        }
        Ok(Some(Answered {
            message,
            resumed,
            running,
            delivery,
        }))
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
            "UPDATE harness_messages AS m SET state = 'IGNORED' WHERE m.id = ? AND m.kind = 'ask' \
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
            "DELETE FROM harness_messages AS m WHERE m.id = ? AND m.kind <> 'ask' RETURNING {}",
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
                let exists: i64 = sqlx::query_scalar(
                    "SELECT EXISTS (SELECT 1 FROM harness_messages WHERE id = ?)",
                )
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
        let ids: Vec<String> = sqlx::query_scalar(
            "UPDATE harness_messages SET state = 'CANCELLED' \
             WHERE task_id = ? AND kind = 'ask' AND state = 'OPEN' RETURNING id",
        )
        .bind(task_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(ids)
    }

    async fn expire_asks_before(&self, cutoff: DateTime<Utc>) -> StoreResult<Vec<String>> {
        let mut tx = self.write_tx().await?;
        let ids: Vec<String> = sqlx::query_scalar(
            "UPDATE harness_messages SET state = 'EXPIRED' \
             WHERE kind = 'ask' AND state = 'OPEN' AND created_at < ? RETURNING id",
        )
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
                " AND (t.title LIKE ?1s ESCAPE '\\' OR m.content LIKE ?1s ESCAPE '\\' \
                 OR m.reply_text LIKE ?1s ESCAPE '\\')",
            );
        }
        sql.push_str(" ORDER BY m.created_at DESC, m.id DESC LIMIT ?");
        // Positional binds in the order the clauses were appended.
        let sql = sql.replace("?1s", "?");
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

    async fn get_setting(&self, key: &str) -> StoreResult<Option<serde_json::Value>> {
        let value: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?;
        value
            .map(|v| {
                serde_json::from_str(&v).map_err(|_| StoreError::Corrupt {
                    column: "settings.value",
                    value: v,
                })
            })
            .transpose()
    }

    async fn put_setting(
        &self,
        key: &str,
        value: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(value.to_string())
        .bind(ms(now))
        .execute(&mut *tx)
        .await
        .map_err(map)?;
        tx.commit().await.map_err(map)?;
        Ok(())
    }
}
