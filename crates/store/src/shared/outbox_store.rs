//! [`OutboxStore`](harness_core::store::OutboxStore) once for both
//! backends: the enqueue batch (its statements the backend's own,
//! [`OutboxBackend::enqueue_sql`]: the dedup rule's spelling differs), the
//! turn ([`super::outbox_settle`]), the started marks, a person's retry and
//! mark, and the reads. One generic function per method over
//! [`OutboxBackend`], and [`outbox_store!`] that implements the port with
//! them.

use chrono::{DateTime, Utc};
use harness_core::{
    outbox::{Outbound, OutboundState},
    store::{Dedup, Enqueued, NewOutbound, StoreError, StoreResult},
    work::{ManualAction, ManualActions},
};

use super::{
    Bind, SqlRow,
    backend::{Backend, fetch_optional},
    choices::options_json,
    marks, ms,
    outbox::{COLUMNS, mark_started, message_state, outbound, returning},
    outbox_settle::OutboxBackend,
    quoted_list,
};

/// The binds of the enqueue batch (`$1` explicit key or NULL, `$2`
/// implicit base or NULL, `$3` task, `$4` outbound id, `$5` message id,
/// `$6` expect reply, `$7` text, `$8` now, `$9`…`$15` the row's fields,
/// `$16`…`$20` the ask's choices: options JSON or NULL, multi-select,
/// default, deadline, urgency).
fn enqueue_binds(n: &NewOutbound) -> StoreResult<Vec<Bind>> {
    let (explicit, base) = match &n.dedup {
        Dedup::Explicit(k) => (Some(k.clone()), None),
        Dedup::Implicit(b) => (None, Some(b.clone())),
    };
    let choices = n.choices.as_ref();
    Ok(vec![
        Bind::OptText(explicit),
        Bind::OptText(base),
        Bind::OptText(n.task_id.clone()),
        Bind::Text(n.id.clone()),
        Bind::OptText(n.task_id.clone().and(n.message_id.clone())),
        Bind::Int(i64::from(n.expect_reply)),
        Bind::Text(n.message.clone()),
        Bind::Int(ms(n.now)),
        Bind::Text(n.gateway.clone()),
        Bind::OptText(n.downstream.clone()),
        Bind::OptText(n.dest.clone()),
        Bind::OptText(n.requested_to.clone()),
        Bind::OptText(n.profile.clone()),
        Bind::Text(n.scope.clone()),
        Bind::OptText(n.presentation.clone()),
        Bind::OptText(choices.map(options_json).transpose()?),
        Bind::Int(i64::from(choices.is_some_and(|c| c.multi_select))),
        Bind::OptText(choices.and_then(|c| c.default.clone())),
        Bind::OptInt(choices.and_then(|c| c.deadline_at).map(ms)),
        Bind::OptText(choices.map(|c| c.urgency.as_str().to_owned())),
    ])
}

/// The dedup rule, the message and the outbound row in one batch
/// ([`OutboxBackend::enqueue_sql`]).
async fn enqueue_once<S: OutboxBackend>(store: &S, new: &NewOutbound) -> StoreResult<Enqueued> {
    let rows = store
        .run_batch(store.enqueue_sql(), enqueue_binds(new)?)
        .await?;
    let Some(r) = rows.last() else {
        return Err(StoreError::MissingReference("task"));
    };
    let inserted: bool = r.col("inserted")?;
    Ok(Enqueued {
        row: outbound(r)?,
        deduped: !inserted,
        message_state: message_state(r.col("message_state")?)?,
    })
}

pub(crate) async fn enqueue_outbound<S: OutboxBackend>(
    store: &S,
    new: NewOutbound,
) -> StoreResult<Enqueued> {
    match enqueue_once(store, &new).await {
        // A concurrent writer (another backend or process) inserted the
        // same key first: the dedup rule runs again and finds its row.
        Err(StoreError::Duplicate(_)) => enqueue_once(store, &new).await,
        other => other,
    }
}

pub(crate) async fn mark_outbound_started<S: Backend>(
    store: &S,
    owner: &str,
    marks: &[(String, u32)],
) -> StoreResult<Vec<String>> {
    if marks.is_empty() {
        return Ok(Vec::new());
    }
    // One statement on its own (on PostgreSQL not under the store's write
    // lock: the statement is conditional on each row's lease by itself,
    // and the marks of several nodes must not queue on one lock).
    let (sql, binds) = mark_started(owner, marks);
    let rows = store.write_rows(&sql, binds).await?;
    rows.iter().map(|row| row.col::<String>("id")).collect()
}

/// A person's `action` on one row (`$1` now, `$2` its id), only from the
/// states the core's rule lets it accept.
fn decide_sql(action: ManualAction) -> String {
    let set = match action {
        ManualAction::Retry => "state = 'PENDING', next_attempt_at = $1",
        ManualAction::MarkDelivered => "state = 'DELIVERED', delivered_at = $1",
    };
    let from = quoted_list(
        OutboundState::accepted_by(action)
            .iter()
            .map(|s| s.as_str()),
    );
    format!(
        "UPDATE harness_outbound SET {set}, updated_at = $1 \
         WHERE id = $2 AND state IN {from} RETURNING {}",
        returning()
    )
}

/// A person's `action` on row `id`, in its own write transaction.
pub(crate) async fn decide_outbound<S: Backend>(
    store: &S,
    action: ManualAction,
    id: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<Outbound>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Int(ms(now)), Bind::Text(id.to_owned())];
    let row = fetch_optional::<S>(&mut tx, decide_sql(action), binds).await?;
    let out = row.as_ref().map(outbound).transpose()?;
    S::commit(tx).await?;
    Ok(out)
}

/// The rows `filter` (then `tail`) selects.
async fn read_outbound<S: Backend>(
    store: &S,
    filter: &str,
    binds: Vec<Bind>,
    tail: &str,
) -> StoreResult<Vec<Outbound>> {
    let sql = format!("SELECT {COLUMNS} FROM harness_outbound o WHERE {filter} {tail}");
    store
        .read(&sql, binds)
        .await?
        .iter()
        .map(outbound)
        .collect()
}

pub(crate) async fn get_outbound<S: Backend>(store: &S, id: &str) -> StoreResult<Option<Outbound>> {
    let rows = read_outbound(store, "o.id = $1", vec![Bind::Text(id.into())], "").await?;
    Ok(rows.into_iter().next())
}

pub(crate) async fn outbound_for_messages<S: Backend>(
    store: &S,
    message_ids: &[String],
) -> StoreResult<Vec<Outbound>> {
    if message_ids.is_empty() {
        return Ok(Vec::new());
    }
    let filter = format!("o.harness_message_id IN ({})", marks(1, message_ids.len()));
    let binds = message_ids.iter().cloned().map(Bind::Text).collect();
    read_outbound(store, &filter, binds, "").await
}

pub(crate) async fn list_outbound<S: Backend>(
    store: &S,
    task_id: Option<&str>,
    limit: u32,
) -> StoreResult<Vec<Outbound>> {
    let limit = Bind::Int(i64::from(limit));
    match task_id {
        Some(t) => {
            let binds = vec![Bind::Text(t.into()), limit];
            let tail = "ORDER BY o.created_at DESC, o.id DESC LIMIT +$2";
            read_outbound(store, "o.task_id = $1", binds, tail).await
        }
        None => {
            let tail = "ORDER BY o.created_at DESC, o.id DESC LIMIT +$1";
            read_outbound(store, "1 = 1", vec![limit], tail).await
        }
    }
}

/// `impl OutboxStore for $store` with the functions of this module (and
/// the turn's, [`super::outbox_settle::settle_and_claim`]), each method in
/// its own span.
macro_rules! outbox_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                outbox::Outbound,
                store::{
                    Enqueued, NewOutbound, OutboxStore, SettleBatch, SettledBatch, StoreResult,
                },
                work::ManualAction,
            };
            use $crate::shared::{outbox_settle::settle_and_claim, outbox_store as o};

            #[async_trait::async_trait]
            impl OutboxStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn enqueue_outbound(&self, new: NewOutbound) -> StoreResult<Enqueued> {
                    o::enqueue_outbound(self, new).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn settle_and_claim_outbound(
                    &self,
                    batch: SettleBatch,
                ) -> StoreResult<SettledBatch> {
                    settle_and_claim(self, batch).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn mark_outbound_started(
                    &self,
                    owner: &str,
                    marks: &[(String, u32)],
                ) -> StoreResult<Vec<String>> {
                    o::mark_outbound_started(self, owner, marks).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn retry_outbound(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Outbound>> {
                    o::decide_outbound(self, ManualAction::Retry, id, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn mark_outbound_delivered(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Outbound>> {
                    o::decide_outbound(self, ManualAction::MarkDelivered, id, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_outbound(&self, id: &str) -> StoreResult<Option<Outbound>> {
                    o::get_outbound(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn outbound_for_messages(
                    &self,
                    message_ids: &[String],
                ) -> StoreResult<Vec<Outbound>> {
                    o::outbound_for_messages(self, message_ids).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_outbound(
                    &self,
                    task_id: Option<&str>,
                    limit: u32,
                ) -> StoreResult<Vec<Outbound>> {
                    o::list_outbound(self, task_id, limit).await
                }
            }
        };
    };
}
pub(crate) use outbox_store;
