//! [`harness_core::store::ApprovalStore`] written once for both
//! backends: the SQL with `$n` parameters (both run it as is: sqlx-sqlite
//! binds `$n` like `?n`) and the implementation ([`approval_store`],
//! expanded per backend as `crate::shared`'s stores are). Both backends serialise writers (SQLite's one writer,
//! PostgreSQL's store-wide advisory lock), so each conditional statement
//! below has exactly one winner.

pub(crate) const COLS: &str = "id, task_id, execution_id, request_id, tool, input, input_hash, \
    cwd, rule, state, parked, decided_by, decided_via, decided_at, reason, consumed_at, outcome, \
    created_at";

pub(crate) fn insert() -> String {
    format!(
        "INSERT INTO approvals (id, task_id, execution_id, request_id, tool, input, input_hash, \
         cwd, rule, state, parked, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', 0, $10) RETURNING {COLS}"
    )
}

pub(crate) fn by_id() -> String {
    format!("SELECT {COLS} FROM approvals WHERE id = $1")
}

pub(crate) fn by_request() -> String {
    format!("SELECT {COLS} FROM approvals WHERE request_id = $1")
}

pub(crate) fn pending_for_call() -> String {
    format!(
        "SELECT {COLS} FROM approvals WHERE task_id = $1 AND input_hash = $2 \
         AND state = 'PENDING' ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

/// The audit page ($1 task, $2 since ms, $3 until ms, $4 before id, $5
/// limit; NULL = no filter). The cursor is a keyset on (created_at, id):
/// an unknown id matches nothing (the core checks it exists first).
pub(crate) fn list() -> String {
    format!(
        "SELECT {COLS} FROM approvals a WHERE (CAST($1 AS TEXT) IS NULL OR a.task_id = $1) \
         AND (CAST($2 AS BIGINT) IS NULL OR a.created_at >= $2) \
         AND (CAST($3 AS BIGINT) IS NULL OR a.created_at < $3) \
         AND (CAST($4 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM approvals c WHERE c.id = $4 \
           AND (a.created_at < c.created_at OR (a.created_at = c.created_at AND a.id < c.id)))) \
         ORDER BY a.created_at DESC, a.id DESC LIMIT $5"
    )
}

/// The conditional decision ($1 id, $2 state, $3 by, $4 via, $5 at, $6 reason).
pub(crate) fn decide() -> String {
    format!(
        "UPDATE approvals SET state = $2, decided_by = $3, decided_via = $4, decided_at = $5, \
         reason = $6 WHERE id = $1 AND state = 'PENDING' RETURNING {COLS}"
    )
}

/// The carrying ask answered with the decision's label ($1 id, $2 text, $3 at).
pub(crate) const ANSWER_ASK: &str = "UPDATE harness_messages SET state = 'ANSWERED', \
    reply_text = $2, replied_at = $3 WHERE id = $1 AND state = 'OPEN'";

/// The task's parked executions run again ($1 task).
pub(crate) const RESUME: &str = "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
    WHERE task_id = $1 AND status = 'PAUSED'";

/// A parked approval's typed decision, keyed: owed once ($1 id, $2 task,
/// $3 node, $4 text, $5 key, $6 now, $7 resume: the agent is restarted from
/// its session to read it when its terminal is gone, e.g. after a server
/// restart). Followed by [`typed_existing`] when the key was taken.
pub(crate) fn typed(columns: &str) -> String {
    format!(
        "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
         attempts, next_attempt_at, created_at, updated_at, resume) \
         VALUES ($1, $2, 'input', $3, $4, 1, $5, 'QUEUED', 0, $6, $6, $6, $7) \
         ON CONFLICT (task_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING \
         RETURNING {columns}"
    )
}

/// The delivery already under the key ($1 task, $2 key).
pub(crate) fn typed_existing(columns: &str) -> String {
    format!("SELECT {columns} FROM deliveries WHERE task_id = $1 AND dedup_key = $2")
}

pub(crate) const PARK: &str = "UPDATE approvals SET parked = 1, outcome = 'told-to-wait' \
    WHERE id = $1 AND state = 'PENDING'";

/// A decided approval's push to chat and its ask's reminders and
/// escalations not sent yet are dropped ($1 key `approval:<id>`, $2 now,
/// $3 the ask): nobody needs to answer them any more.
pub(crate) fn drop_push() -> String {
    format!(
        "UPDATE harness_outbound SET state = 'DEAD', \
           last_error = 'not sent: the approval was decided first', \
           next_attempt_at = NULL, updated_at = $2 \
         WHERE state IN ('PENDING', 'FAILED') AND (dedup_key = $1 \
           OR id IN (SELECT r.outbound_id FROM ask_reminders r WHERE r.message_id = $3 \
             UNION ALL SELECT e.outbound_id FROM ask_escalations e WHERE e.message_id = $3)) \
         RETURNING {}",
        crate::shared::outbox::returning()
    )
}

/// Decisions of the task never used that went stale ($1 task, $2 at): the
/// task asked something newer since (an ask created after the decision,
/// other than the approval's own), or the execution that asked ended after
/// the decision (not by a restart's interruption: that agent is resumed
/// and reads the decision). Closed as used, outcome `unused`, so a grant
/// never outlives the turn it was for.
pub(crate) const EXPIRE_UNUSED: &str = "UPDATE approvals SET consumed_at = $2, outcome = 'unused' \
    WHERE task_id = $1 AND state IN ('APPROVED', 'DENIED') AND consumed_at IS NULL AND ( \
      EXISTS (SELECT 1 FROM harness_messages m WHERE m.task_id = $1 AND m.kind = 'ask' \
        AND m.id <> approvals.request_id AND m.created_at > approvals.decided_at) \
      OR EXISTS (SELECT 1 FROM executions e WHERE e.id = approvals.execution_id \
        AND e.ended_at IS NOT NULL AND e.ended_at >= approvals.decided_at \
        AND COALESCE(e.end_reason, '') <> 'interrupted'))";

/// A derived task's approval push, due later ($1 id, $2 due ms): the
/// parent is asked first (the escalation ladder's step).
pub(crate) fn defer_push() -> String {
    format!(
        "UPDATE harness_outbound SET next_attempt_at = $2 WHERE id = $1 RETURNING {}",
        crate::shared::outbox::returning()
    )
}

/// Use the oldest unused decision of a call once ($1 task, $2 hash, $3 at).
pub(crate) fn consume() -> String {
    format!(
        "UPDATE approvals SET consumed_at = $3, \
           outcome = CASE state WHEN 'APPROVED' THEN 'ran' ELSE 'held' END \
         WHERE id = (SELECT a.id FROM approvals a WHERE a.task_id = $1 AND a.input_hash = $2 \
           AND a.state IN ('APPROVED', 'DENIED') AND a.consumed_at IS NULL \
           ORDER BY a.created_at, a.id LIMIT 1) \
         AND consumed_at IS NULL RETURNING {COLS}"
    )
}

/// `impl ApprovalStore for $store`, once for both backends: reads on
/// `self.$read`, writes in `self.write_tx()` / `self.batch_tx(…)`; `$row`
/// and `$conn` are the backend's row and connection; the `$n` text above
/// runs as is on both (sqlx-sqlite binds `$n` like `?n`). Expanded in the backend's `approvals`
/// module, next to the two things that differ per backend:
/// `begin_ask(conn, task, ask id, question, now ms, key)` (opens the
/// batch's transaction where the backend needs it and runs the ask's own
/// statements, `RECORD_ASK`) and `end_batch(conn)` (commits where the
/// backend's batch does not). The ask's other statements are the shared
/// steps (`crate::shared::choices`), run with the backend's
/// `Backend::run_step`.
macro_rules! approval_store {
    ($store:ty, $read:ident, $row:ty, $conn:ty) => {
        const _: () = {
            use async_trait::async_trait;
            use chrono::{DateTime, Utc};
            use harness_core::{
                inbox::NewEvent,
                options::Choices,
                store::{
                    Approval, ApprovalAsked, ApprovalDecided, ApprovalDecision, ApprovalQuery,
                    ApprovalState, ApprovalStore, NewApproval, NewAsk, Outbound, StoreError,
                    StoreResult, approval_push_key,
                },
            };
            use sqlx::{AssertSqlSafe, Row};

            use super::rows::{ms, time};
            use $crate::error::map;
            use $crate::shared::{
                backend::{Backend, Step},
                choices::{insert_ask_screen, insert_choices, insert_parent_event, options_json},
                deliveries::{DELIVERY_COLUMNS, delivery},
                messages::ask_recorded,
                outbox::outbound,
            };

            /// One step of the ask's batch on `conn`.
            async fn step(conn: &mut $conn, step: Step) -> Result<Vec<$row>, sqlx::Error> {
                <$store as Backend>::run_step(conn, step).await
            }

            fn sql(s: &str) -> AssertSqlSafe<String> {
                AssertSqlSafe(s.to_owned())
            }

            fn row(r: &$row) -> StoreResult<Approval> {
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
            async fn insert_in(conn: &mut $conn, a: &NewApproval) -> Result<$row, sqlx::Error> {
                sqlx::query(sql(&$crate::approvals_sql::insert()))
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

            /// The approval's push to chat (`approval.push`), inside the
            /// caller's transaction: the reminder's outbound insert (no
            /// message of its own; the execution is the ask's).
            async fn push_in(
                conn: &mut $conn,
                a: &NewApproval,
            ) -> Result<Option<$row>, sqlx::Error> {
                let Some(o) = &a.push else {
                    return Ok(None);
                };
                let row = $crate::shared::reminders::insert_outbound(
                    o,
                    approval_push_key(&a.id),
                    &a.request_id,
                )
                .fetch_one(&mut *conn)
                .await?;
                let Some(due) = a.push_not_before else {
                    return Ok(Some(row));
                };
                // A derived task's: due after the parent's step.
                sqlx::query(sql(&$crate::approvals_sql::defer_push()))
                    .bind(&o.id)
                    .bind(ms(due))
                    .fetch_one(&mut *conn)
                    .await
                    .map(Some)
            }

            #[async_trait]
            impl ApprovalStore for $store {
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
                    let evidence = ask.evidence.clone();
                    let payload = event
                        .as_ref()
                        .map(|e| e.payload.to_string())
                        .unwrap_or_default();
                    let options = options_json(&choices)?;
                    let returned = self
                        .batch_tx(move |conn| {
                            Box::pin(async move {
                                let returned =
                                    begin_ask(conn, &task_id, &id, question, now, key).await?;
                                step(conn, insert_choices(&id, &choices, &options)).await?;
                                if let Some(screen) = &evidence {
                                    step(conn, insert_ask_screen(&id, screen, now)).await?;
                                }
                                let added = match &event {
                                    Some(event) => {
                                        let added = insert_parent_event(event, &id, &payload);
                                        !step(conn, added).await?.is_empty()
                                    }
                                    None => false,
                                };
                                let approved = insert_in(conn, &approval).await?;
                                let pushed = push_in(conn, &approval).await?;
                                end_batch(conn).await?;
                                Ok((returned, added, approved, pushed))
                            })
                        })
                        .await?;
                    let (returned, event_added, approved, pushed) = returned;
                    Ok(ApprovalAsked {
                        recorded: ask_recorded(ask, &returned)?,
                        event_added,
                        approval: row(&approved)?,
                        push: pushed.as_ref().map(outbound).transpose()?,
                    })
                }

                async fn get_approval(&self, id: &str) -> StoreResult<Option<Approval>> {
                    let r = sqlx::query(sql(&$crate::approvals_sql::by_id()))
                        .bind(id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?;
                    r.as_ref().map(row).transpose()
                }

                async fn approval_for_request(
                    &self,
                    request_id: &str,
                ) -> StoreResult<Option<Approval>> {
                    let r = sqlx::query(sql(&$crate::approvals_sql::by_request()))
                        .bind(request_id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?;
                    r.as_ref().map(row).transpose()
                }

                async fn pending_approval_for_call(
                    &self,
                    task_id: &str,
                    input_hash: &str,
                ) -> StoreResult<Option<Approval>> {
                    let r = sqlx::query(sql(&$crate::approvals_sql::pending_for_call()))
                        .bind(task_id)
                        .bind(input_hash)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?;
                    r.as_ref().map(row).transpose()
                }

                async fn list_approvals(&self, q: &ApprovalQuery) -> StoreResult<Vec<Approval>> {
                    let rows = sqlx::query(sql(&$crate::approvals_sql::list()))
                        .bind(q.task_id.as_deref())
                        .bind(q.since.map(ms))
                        .bind(q.until.map(ms))
                        .bind(q.before.as_deref())
                        .bind(i64::from(q.limit))
                        .fetch_all(&self.$read)
                        .await
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
                    let Some(r) = sqlx::query(sql(&$crate::approvals_sql::decide()))
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
                    sqlx::query(sql($crate::approvals_sql::ANSWER_ASK))
                        .bind(&decided.request_id)
                        .bind(&d.reply_text)
                        .bind(ms(d.now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    if d.from_chat {
                        // Answered through a gateway, with the decision.
                        sqlx::query($crate::shared::escalations::RECORD_GATEWAY_ANSWER)
                            .bind(&decided.request_id)
                            .bind(ms(d.now))
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?;
                    }
                    sqlx::query(sql($crate::approvals_sql::RESUME))
                        .bind(&decided.task_id)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    let delivery = match (&d.typed, decided.parked) {
                        (Some(input), true) => {
                            let inserted =
                                sqlx::query(sql(&$crate::approvals_sql::typed(DELIVERY_COLUMNS)))
                                    .bind(&input.id)
                                    .bind(&decided.task_id)
                                    .bind(&input.node_id)
                                    .bind(&input.text)
                                    .bind(&input.dedup_key)
                                    .bind(ms(input.now))
                                    .bind(i64::from(input.resume))
                                    .fetch_optional(&mut *tx)
                                    .await
                                    .map_err(map)?;
                            Some(match inserted {
                                Some(r) => (delivery(&r)?, true),
                                None => {
                                    let r = sqlx::query(sql(
                                        &$crate::approvals_sql::typed_existing(DELIVERY_COLUMNS),
                                    ))
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
                    let dropped = sqlx::query(sql(&$crate::approvals_sql::drop_push()))
                        .bind(approval_push_key(&decided.id))
                        .bind(ms(d.now))
                        .bind(&decided.request_id)
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(outbound)
                        .collect::<StoreResult<Vec<Outbound>>>()?;
                    tx.commit().await.map_err(map)?;
                    Ok(Some(ApprovalDecided {
                        approval: decided,
                        delivery,
                        dropped,
                    }))
                }

                async fn park_approval(
                    &self,
                    id: &str,
                    _now: DateTime<Utc>,
                ) -> StoreResult<Option<Approval>> {
                    let mut tx = self.write_tx().await?;
                    sqlx::query(sql($crate::approvals_sql::PARK))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    let r = sqlx::query(sql(&$crate::approvals_sql::by_id()))
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
                    sqlx::query(sql($crate::approvals_sql::EXPIRE_UNUSED))
                        .bind(task_id)
                        .bind(ms(now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    let r = sqlx::query(sql(&$crate::approvals_sql::consume()))
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
        };
    };
}
pub(crate) use approval_store;
