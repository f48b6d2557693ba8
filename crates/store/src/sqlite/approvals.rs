//! [`ApprovalStore`] on SQLite (statements in `crate::approvals_sql`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{
    inbox::NewEvent,
    options::Choices,
    store::{
        Approval, ApprovalAsked, ApprovalDecided, ApprovalDecision, ApprovalState, ApprovalStore,
        NewApproval, NewAsk, StoreError, StoreResult,
    },
};
use sqlx::{AssertSqlSafe, Row, sqlite::SqliteRow};

use super::{
    SqliteStore,
    choices::{insert_choices, insert_parent_event, options_json},
    deliveries::{DELIVERY_COLUMNS, delivery},
    messages::{RECORD_ASK, ask_recorded},
    rows::{ms, time},
};
use crate::{approvals_sql as q, error::map};

fn sql(s: &str) -> AssertSqlSafe<String> {
    AssertSqlSafe(q::sqlite(s))
}

fn row(r: &SqliteRow) -> StoreResult<Approval> {
    let state: String = r.try_get("state").map_err(map)?;
    let opt_time = |c: &str| -> StoreResult<Option<DateTime<Utc>>> {
        r.try_get::<Option<i64>, _>(c)
            .map_err(map)?
            .map(time)
            .transpose()
    };
    Ok(Approval {
        id: r.try_get("id").map_err(map)?,
        task_id: r.try_get("task_id").map_err(map)?,
        execution_id: r.try_get("execution_id").map_err(map)?,
        request_id: r.try_get("request_id").map_err(map)?,
        tool: r.try_get("tool").map_err(map)?,
        input: r.try_get("input").map_err(map)?,
        input_hash: r.try_get("input_hash").map_err(map)?,
        cwd: r.try_get("cwd").map_err(map)?,
        rule: r.try_get("rule").map_err(map)?,
        state: ApprovalState::parse(&state).ok_or(StoreError::Corrupt {
            column: "approvals.state",
            value: state.clone(),
        })?,
        parked: r.try_get::<i64, _>("parked").map_err(map)? != 0,
        decided_by: r.try_get("decided_by").map_err(map)?,
        decided_via: r.try_get("decided_via").map_err(map)?,
        decided_at: opt_time("decided_at")?,
        reason: r.try_get("reason").map_err(map)?,
        consumed_at: opt_time("consumed_at")?,
        outcome: r.try_get("outcome").map_err(map)?,
        created_at: time(r.try_get("created_at").map_err(map)?)?,
    })
}

/// The approval row, inside the caller's transaction.
async fn insert_in(
    conn: &mut sqlx::SqliteConnection,
    a: &NewApproval,
) -> Result<SqliteRow, sqlx::Error> {
    sqlx::query(sql(&q::insert()))
        .bind(&a.id)
        .bind(&a.task_id)
        .bind(&a.execution_id)
        .bind(&a.request_id)
        .bind(&a.tool)
        .bind(&a.input)
        .bind(&a.input_hash)
        .bind(&a.cwd)
        .bind(&a.rule)
        .bind(ms(a.now))
        .fetch_one(&mut *conn)
        .await
}

#[async_trait]
impl ApprovalStore for SqliteStore {
    async fn insert_approval(&self, a: NewApproval) -> StoreResult<Approval> {
        let mut tx = self.write_tx().await?;
        let r = insert_in(&mut tx, &a).await.map_err(map)?;
        let out = row(&r)?;
        tx.commit().await.map_err(map)?;
        Ok(out)
    }

    async fn record_approval_ask(
        &self,
        ask: NewAsk,
        choices: Choices,
        event: Option<NewEvent>,
        approval: NewApproval,
    ) -> StoreResult<ApprovalAsked> {
        if approval.request_id != ask.id {
            return Err(StoreError::Backend(
                "an approval's request id must be its ask's id".into(),
            ));
        }
        let (task_id, id, question, now) = (
            ask.task_id.clone(),
            ask.id.clone(),
            ask.question.clone(),
            ms(ask.now),
        );
        let key = ask.idempotency_key.clone();
        let payload = event
            .as_ref()
            .map(|e| e.payload.to_string())
            .unwrap_or_default();
        let options = options_json(&choices)?;
        let returned = self
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
                    insert_choices(conn, &id, &choices, &options).await?;
                    let added = match &event {
                        Some(event) => insert_parent_event(conn, event, &id, &payload).await?,
                        None => false,
                    };
                    let approved = insert_in(conn, &approval).await?;
                    sqlx::query("COMMIT").execute(&mut *conn).await?;
                    Ok((returned, added, approved))
                })
            })
            .await?;
        let (returned, event_added, approved) = returned;
        Ok(ApprovalAsked {
            recorded: ask_recorded(ask, &returned)?,
            event_added,
            approval: row(&approved)?,
        })
    }

    async fn get_approval(&self, id: &str) -> StoreResult<Option<Approval>> {
        let r = sqlx::query(sql(&q::by_id()))
            .bind(id)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?;
        r.as_ref().map(row).transpose()
    }

    async fn approval_for_request(&self, request_id: &str) -> StoreResult<Option<Approval>> {
        let r = sqlx::query(sql(&q::by_request()))
            .bind(request_id)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?;
        r.as_ref().map(row).transpose()
    }

    async fn pending_approval_for_call(
        &self,
        task_id: &str,
        input_hash: &str,
    ) -> StoreResult<Option<Approval>> {
        let r = sqlx::query(sql(&q::pending_for_call()))
            .bind(task_id)
            .bind(input_hash)
            .fetch_optional(&self.reader)
            .await
            .map_err(map)?;
        r.as_ref().map(row).transpose()
    }

    async fn list_approvals(
        &self,
        task_id: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<Approval>> {
        let rows = match task_id {
            Some(t) => {
                sqlx::query(sql(&q::list_task()))
                    .bind(t)
                    .bind(i64::from(limit))
                    .fetch_all(&self.reader)
                    .await
            }
            None => {
                sqlx::query(sql(&q::list_all()))
                    .bind(i64::from(limit))
                    .fetch_all(&self.reader)
                    .await
            }
        }
        .map_err(map)?;
        rows.iter().map(row).collect()
    }

    async fn decide_approval(
        &self,
        id: &str,
        d: &ApprovalDecision,
    ) -> StoreResult<Option<ApprovalDecided>> {
        let mut tx = self.write_tx().await?;
        let state = if d.approve {
            ApprovalState::Approved
        } else {
            ApprovalState::Denied
        };
        let Some(r) = sqlx::query(sql(&q::decide()))
            .bind(id)
            .bind(state.as_str())
            .bind(&d.by)
            .bind(&d.via)
            .bind(ms(d.now))
            .bind(&d.reason)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?
        else {
            return Ok(None);
        };
        let decided = row(&r)?;
        sqlx::query(sql(q::ANSWER_ASK))
            .bind(&decided.request_id)
            .bind(&d.reply_text)
            .bind(ms(d.now))
            .execute(&mut *tx)
            .await
            .map_err(map)?;
        sqlx::query(sql(q::RESUME))
            .bind(&decided.task_id)
            .execute(&mut *tx)
            .await
            .map_err(map)?;
        let delivery = match (&d.typed, decided.parked) {
            (Some(input), true) => {
                let inserted = sqlx::query(sql(&q::typed(DELIVERY_COLUMNS)))
                    .bind(&input.id)
                    .bind(&decided.task_id)
                    .bind(&input.node_id)
                    .bind(&input.text)
                    .bind(&input.dedup_key)
                    .bind(ms(input.now))
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(map)?;
                Some(match inserted {
                    Some(r) => (delivery(&r)?, true),
                    None => {
                        let r = sqlx::query(sql(&q::typed_existing(DELIVERY_COLUMNS)))
                            .bind(&decided.task_id)
                            .bind(&input.dedup_key)
                            .fetch_one(&mut *tx)
                            .await
                            .map_err(map)?;
                        (delivery(&r)?, false)
                    }
                })
            }
            _ => None,
        };
        tx.commit().await.map_err(map)?;
        Ok(Some(ApprovalDecided {
            approval: decided,
            delivery,
        }))
    }

    async fn park_approval(&self, id: &str, _now: DateTime<Utc>) -> StoreResult<Option<Approval>> {
        let mut tx = self.write_tx().await?;
        sqlx::query(sql(q::PARK))
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(map)?;
        let r = sqlx::query(sql(&q::by_id()))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?;
        tx.commit().await.map_err(map)?;
        r.as_ref().map(row).transpose()
    }

    async fn consume_approval(
        &self,
        task_id: &str,
        input_hash: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Approval>> {
        let mut tx = self.write_tx().await?;
        let r = sqlx::query(sql(&q::consume()))
            .bind(task_id)
            .bind(input_hash)
            .bind(ms(now))
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?;
        tx.commit().await.map_err(map)?;
        r.as_ref().map(row).transpose()
    }
}
