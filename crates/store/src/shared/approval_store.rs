//! [`ApprovalStore`](harness_core::store::ApprovalStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`approval_store!`] that implements the port with them. The SQL is
//! [`super::approvals_sql`]'s. An approval asked is one batch with its ask
//! (the ask's own statements, [`AskSql::record_ask`](super::backend::AskSql),
//! then the shared steps of `crate::shared::choices`); every other write is
//! one write transaction ([`Backend::write_tx`]).

use chrono::{DateTime, Utc};
use harness_core::{
    inbox::NewEvent,
    options::Choices,
    store::{
        Approval, ApprovalAsked, ApprovalDecided, ApprovalDecision, ApprovalQuery, ApprovalState,
        NewApproval, NewAsk, Outbound, StoreError, StoreResult, approval_push_key,
    },
};

use super::approvals_sql as sql;
use super::{
    Bind, SqlRow,
    backend::{Backend, Step, execute, fetch, fetch_one, fetch_optional, read_optional},
    choices::{insert_ask_screen, insert_choices, insert_parent_event, options_json},
    deliveries::{DELIVERY_COLUMNS, delivery},
    escalations::RECORD_GATEWAY_ANSWER,
    messages::{ask_binds, ask_recorded},
    ms, opt_time,
    outbox::outbound,
    reminders::{insert_outbound_binds, insert_outbound_sql},
    time,
};

fn row<R: SqlRow>(r: &R) -> StoreResult<Approval> {
    let state: String = r.col("state")?;
    Ok(Approval {
        id: r.col("id")?,
        task_id: r.col("task_id")?,
        execution_id: r.col("execution_id")?,
        request_id: r.col("request_id")?,
        tool: r.col("tool")?,
        input: r.col("input")?,
        input_hash: r.col("input_hash")?,
        cwd: r.col("cwd")?,
        rule: r.col("rule")?,
        state: ApprovalState::parse(&state).ok_or(StoreError::Corrupt {
            column: "approvals.state",
            value: state.clone(),
        })?,
        parked: r.col::<i64>("parked")? != 0,
        decided_by: r.col("decided_by")?,
        decided_via: r.col("decided_via")?,
        decided_at: opt_time(r.col("decided_at")?)?,
        reason: r.col("reason")?,
        consumed_at: opt_time(r.col("consumed_at")?)?,
        outcome: r.col("outcome")?,
        created_at: time(r.col("created_at")?)?,
    })
}

/// The approval's insert with its binds.
fn insert_step(a: &NewApproval) -> Step {
    Step::new(
        sql::insert(),
        vec![
            Bind::Text(a.id.clone()),
            Bind::Text(a.task_id.clone()),
            Bind::OptText(a.execution_id.clone()),
            Bind::Text(a.request_id.clone()),
            Bind::Text(a.tool.clone()),
            Bind::Text(a.input.clone()),
            Bind::Text(a.input_hash.clone()),
            Bind::OptText(a.cwd.clone()),
            Bind::Text(a.rule.clone()),
            Bind::Int(ms(a.now)),
        ],
    )
}

/// The first row of `step` on `conn`, inside a batch; none is the driver's
/// "no row" error.
async fn first_row<S: Backend>(conn: &mut S::Conn, step: Step) -> Result<S::Row, sqlx::Error> {
    S::run_step(conn, step)
        .await?
        .into_iter()
        .next()
        .ok_or(sqlx::Error::RowNotFound)
}

/// The approval's push to chat (`approval.push`), inside the caller's
/// batch: the reminder's outbound insert (no message of its own; the
/// execution is the ask's).
async fn push_in<S: Backend>(
    conn: &mut S::Conn,
    a: &NewApproval,
) -> Result<Option<S::Row>, sqlx::Error> {
    let Some(o) = &a.push else {
        return Ok(None);
    };
    let binds = insert_outbound_binds(o, approval_push_key(&a.id), &a.request_id);
    let row = first_row::<S>(conn, Step::new(insert_outbound_sql(), binds)).await?;
    let Some(due) = a.push_not_before else {
        return Ok(Some(row));
    };
    // A derived task's: due after the parent's step.
    let binds = vec![Bind::Text(o.id.clone()), Bind::Int(ms(due))];
    first_row::<S>(conn, Step::new(sql::defer_push(), binds))
        .await
        .map(Some)
}

pub(crate) async fn insert_approval<S: Backend>(
    store: &S,
    a: NewApproval,
) -> StoreResult<Approval> {
    let mut tx = store.write_tx().await?;
    let step = insert_step(&a);
    let r = fetch_one::<S>(&mut tx, step.sql, step.binds).await?;
    let out = row(&r)?;
    S::commit(tx).await?;
    Ok(out)
}

pub(crate) async fn record_approval_ask<S: Backend>(
    store: &S,
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
    let (id, now) = (ask.id.clone(), ms(ask.now));
    // The ask's own statements, opening the batch's transaction where the
    // backend's batch does not run in one already.
    let mut first = Step::new(S::ASKS.record_ask, ask_binds(&ask));
    if let Some(begin) = S::BEGIN {
        first.sql = format!("{begin}; {}", first.sql);
    }
    let evidence = ask.evidence.clone();
    let payload = event
        .as_ref()
        .map(|e| e.payload.to_string())
        .unwrap_or_default();
    let options = options_json(&choices)?;
    let (returned, event_added, approved, pushed) = store
        .batch(move |conn| {
            Box::pin(async move {
                let returned = S::run_step(&mut *conn, first).await?;
                S::run_step(&mut *conn, insert_choices(&id, &choices, &options)).await?;
                if let Some(screen) = &evidence {
                    S::run_step(&mut *conn, insert_ask_screen(&id, screen, now)).await?;
                }
                let added = match &event {
                    Some(event) => {
                        let added = insert_parent_event(event, &id, &payload);
                        !S::run_step(&mut *conn, added).await?.is_empty()
                    }
                    None => false,
                };
                let approved = first_row::<S>(&mut *conn, insert_step(&approval)).await?;
                let pushed = push_in::<S>(&mut *conn, &approval).await?;
                if let Some(commit) = S::COMMIT {
                    S::run_step(&mut *conn, Step::new(commit, Vec::new())).await?;
                }
                Ok((returned, added, approved, pushed))
            })
        })
        .await?;
    Ok(ApprovalAsked {
        recorded: ask_recorded(ask, &returned)?,
        event_added,
        approval: row(&approved)?,
        push: pushed.as_ref().map(outbound).transpose()?,
    })
}

/// The approval `sql` (one `$1`) reads, if any.
async fn read_one<S: Backend>(store: &S, sql: &str, value: &str) -> StoreResult<Option<Approval>> {
    read_optional(store, sql, vec![Bind::Text(value.to_owned())])
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

pub(crate) async fn get_approval<S: Backend>(store: &S, id: &str) -> StoreResult<Option<Approval>> {
    read_one(store, &sql::by_id(), id).await
}

pub(crate) async fn approval_for_request<S: Backend>(
    store: &S,
    request_id: &str,
) -> StoreResult<Option<Approval>> {
    read_one(store, &sql::by_request(), request_id).await
}

pub(crate) async fn pending_approval_for_call<S: Backend>(
    store: &S,
    task_id: &str,
    input_hash: &str,
) -> StoreResult<Option<Approval>> {
    let binds = vec![
        Bind::Text(task_id.to_owned()),
        Bind::Text(input_hash.to_owned()),
    ];
    read_optional(store, &sql::pending_for_call(), binds)
        .await?
        .as_ref()
        .map(row)
        .transpose()
}

pub(crate) async fn list_approvals<S: Backend>(
    store: &S,
    q: &ApprovalQuery,
) -> StoreResult<Vec<Approval>> {
    let binds = vec![
        Bind::OptText(q.task_id.clone()),
        Bind::OptInt(q.since.map(ms)),
        Bind::OptInt(q.until.map(ms)),
        Bind::OptText(q.before.clone()),
        Bind::Int(i64::from(q.limit)),
    ];
    store
        .read(&sql::list(), binds)
        .await?
        .iter()
        .map(row)
        .collect()
}

pub(crate) async fn decide_approval<S: Backend>(
    store: &S,
    id: &str,
    d: &ApprovalDecision,
) -> StoreResult<Option<ApprovalDecided>> {
    let mut tx = store.write_tx().await?;
    let state = if d.approve {
        ApprovalState::Approved
    } else {
        ApprovalState::Denied
    };
    let binds = vec![
        Bind::Text(id.to_owned()),
        Bind::Text(state.as_str().to_owned()),
        Bind::Text(d.by.clone()),
        Bind::Text(d.via.clone()),
        Bind::Int(ms(d.now)),
        Bind::OptText(d.reason.clone()),
    ];
    let Some(r) = fetch_optional::<S>(&mut tx, sql::decide(), binds).await? else {
        return Ok(None);
    };
    let decided = row(&r)?;
    let binds = vec![
        Bind::Text(decided.request_id.clone()),
        Bind::Text(d.reply_text.clone()),
        Bind::Int(ms(d.now)),
    ];
    execute::<S>(&mut tx, sql::ANSWER_ASK, binds).await?;
    if d.from_chat {
        // Answered through a gateway, with the decision.
        let binds = vec![Bind::Text(decided.request_id.clone()), Bind::Int(ms(d.now))];
        execute::<S>(&mut tx, RECORD_GATEWAY_ANSWER, binds).await?;
    }
    let binds = vec![Bind::Text(decided.task_id.clone())];
    execute::<S>(&mut tx, sql::RESUME, binds).await?;
    let delivery = match (&d.typed, decided.parked) {
        (Some(input), true) => {
            let binds = vec![
                Bind::Text(input.id.clone()),
                Bind::Text(decided.task_id.clone()),
                Bind::OptText(input.node_id.clone()),
                Bind::Text(input.text.clone()),
                Bind::Text(input.dedup_key.clone()),
                Bind::Int(ms(input.now)),
                Bind::Int(i64::from(input.resume)),
            ];
            let inserted =
                fetch_optional::<S>(&mut tx, sql::typed(DELIVERY_COLUMNS), binds).await?;
            Some(match inserted {
                Some(r) => (delivery(&r)?, true),
                None => {
                    let binds = vec![
                        Bind::Text(decided.task_id.clone()),
                        Bind::Text(input.dedup_key.clone()),
                    ];
                    let existing = sql::typed_existing(DELIVERY_COLUMNS);
                    let r = fetch_one::<S>(&mut tx, existing, binds).await?;
                    (delivery(&r)?, false)
                }
            })
        }
        _ => None,
    };
    let binds = vec![
        Bind::Text(approval_push_key(&decided.id)),
        Bind::Int(ms(d.now)),
        Bind::Text(decided.request_id.clone()),
    ];
    let dropped = fetch::<S>(&mut tx, sql::drop_push(), binds)
        .await?
        .iter()
        .map(outbound)
        .collect::<StoreResult<Vec<Outbound>>>()?;
    S::commit(tx).await?;
    Ok(Some(ApprovalDecided {
        approval: decided,
        delivery,
        dropped,
    }))
}

pub(crate) async fn park_approval<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<Approval>> {
    let mut tx = store.write_tx().await?;
    execute::<S>(&mut tx, sql::PARK, vec![Bind::Text(id.to_owned())]).await?;
    let r = fetch_optional::<S>(&mut tx, sql::by_id(), vec![Bind::Text(id.to_owned())]).await?;
    S::commit(tx).await?;
    r.as_ref().map(row).transpose()
}

pub(crate) async fn consume_approval<S: Backend>(
    store: &S,
    task_id: &str,
    input_hash: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<Approval>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Text(task_id.to_owned()), Bind::Int(ms(now))];
    execute::<S>(&mut tx, sql::EXPIRE_UNUSED, binds).await?;
    let binds = vec![
        Bind::Text(task_id.to_owned()),
        Bind::Text(input_hash.to_owned()),
        Bind::Int(ms(now)),
    ];
    let r = fetch_optional::<S>(&mut tx, sql::consume(), binds).await?;
    S::commit(tx).await?;
    r.as_ref().map(row).transpose()
}

/// `impl ApprovalStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! approval_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                inbox::NewEvent,
                options::Choices,
                store::{
                    Approval, ApprovalAsked, ApprovalDecided, ApprovalDecision, ApprovalQuery,
                    ApprovalStore, NewApproval, NewAsk, StoreResult,
                },
            };
            use $crate::shared::approval_store as a;

            #[async_trait::async_trait]
            impl ApprovalStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn insert_approval(&self, approval: NewApproval) -> StoreResult<Approval> {
                    a::insert_approval(self, approval).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_approval_ask(
                    &self,
                    ask: NewAsk,
                    choices: Choices,
                    event: Option<NewEvent>,
                    approval: NewApproval,
                ) -> StoreResult<ApprovalAsked> {
                    a::record_approval_ask(self, ask, choices, event, approval).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_approval(&self, id: &str) -> StoreResult<Option<Approval>> {
                    a::get_approval(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn approval_for_request(
                    &self,
                    request_id: &str,
                ) -> StoreResult<Option<Approval>> {
                    a::approval_for_request(self, request_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn pending_approval_for_call(
                    &self,
                    task_id: &str,
                    input_hash: &str,
                ) -> StoreResult<Option<Approval>> {
                    a::pending_approval_for_call(self, task_id, input_hash).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_approvals(&self, q: &ApprovalQuery) -> StoreResult<Vec<Approval>> {
                    a::list_approvals(self, q).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn decide_approval(
                    &self,
                    id: &str,
                    d: &ApprovalDecision,
                ) -> StoreResult<Option<ApprovalDecided>> {
                    a::decide_approval(self, id, d).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn park_approval(
                    &self,
                    id: &str,
                    _now: DateTime<Utc>,
                ) -> StoreResult<Option<Approval>> {
                    a::park_approval(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn consume_approval(
                    &self,
                    task_id: &str,
                    input_hash: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Approval>> {
                    a::consume_approval(self, task_id, input_hash, now).await
                }
            }
        };
    };
}
pub(crate) use approval_store;
