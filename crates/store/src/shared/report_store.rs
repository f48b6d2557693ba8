//! [`ReportStore`](harness_core::store::ReportStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`report_store!`] that implements the port with them. The statements
//! are [`super::reports`]'; a report with its items and parts is one write
//! transaction.

use chrono::{DateTime, Utc};
use harness_core::store::{
    Dedup, ExecutionFact, MessageFact, NewReport, Outbound, ReportChannel, StoreResult,
    StoredReport,
};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch_one, only, read_optional},
    ms, opt_time,
    outbox::outbound,
    reminders::{insert_outbound_binds, insert_outbound_sql},
    reports as sql,
};

/// The window's binds: `$1` since, `$2` until, `$3` limit.
fn window(since: DateTime<Utc>, until: DateTime<Utc>, limit: u32) -> Vec<Bind> {
    vec![
        Bind::Int(ms(since)),
        Bind::Int(ms(until)),
        Bind::Int(i64::from(limit)),
    ]
}

pub(crate) async fn report_executions<S: Backend>(
    store: &S,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<ExecutionFact>> {
    let rows = store
        .read(sql::EXECUTIONS, window(since, until, limit))
        .await?;
    rows.iter().map(sql::execution_fact).collect()
}

pub(crate) async fn report_messages<S: Backend>(
    store: &S,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<MessageFact>> {
    let rows = store
        .read(sql::MESSAGES, window(since, until, limit))
        .await?;
    rows.iter().map(sql::message_fact).collect()
}

pub(crate) async fn report_approval_ids<S: Backend>(
    store: &S,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<String>> {
    let rows = store
        .read(sql::APPROVAL_IDS, window(since, until, limit))
        .await?;
    rows.iter().map(|r| r.at(0)).collect()
}

pub(crate) async fn record_report<S: Backend>(
    store: &S,
    r: NewReport,
) -> StoreResult<Vec<Outbound>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(r.id.clone()),
        Bind::Text(r.channel.as_str().to_owned()),
        Bind::Text(r.scope.clone()),
        Bind::Int(ms(r.since)),
        Bind::Int(ms(r.until)),
        Bind::Text(r.content.clone()),
        Bind::Int(ms(r.now)),
    ];
    execute::<S>(&mut tx, sql::INSERT_REPORT, binds).await?;
    for item in &r.items {
        let binds = vec![
            Bind::Text(r.id.clone()),
            Bind::Int(i64::from(item.number)),
            Bind::Text(item.kind.as_str().to_owned()),
            Bind::Text(item.ref_id.clone()),
            Bind::Text(item.task_id.clone()),
        ];
        execute::<S>(&mut tx, sql::INSERT_ITEM, binds).await?;
    }
    let mut written = Vec::new();
    for o in &r.parts {
        let key = match &o.dedup {
            Dedup::Explicit(k) | Dedup::Implicit(k) => k.clone(),
        };
        let binds = insert_outbound_binds(o, key, "");
        let row = fetch_one::<S>(&mut tx, insert_outbound_sql(), binds).await?;
        written.push(outbound(&row)?);
    }
    S::commit(tx).await?;
    Ok(written)
}

pub(crate) async fn get_report<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<StoredReport>> {
    let Some(row) = read_optional(store, sql::REPORT, vec![Bind::Text(id.to_owned())]).await?
    else {
        return Ok(None);
    };
    let items = store
        .read(sql::ITEMS, vec![Bind::Text(id.to_owned())])
        .await?
        .iter()
        .map(sql::item)
        .collect::<StoreResult<Vec<_>>>()?;
    sql::report(&row, items).map(Some)
}

pub(crate) async fn last_report_until<S: Backend>(
    store: &S,
    channel: ReportChannel,
    scope: &str,
) -> StoreResult<Option<DateTime<Utc>>> {
    let binds = vec![
        Bind::Text(channel.as_str().to_owned()),
        Bind::Text(scope.to_owned()),
    ];
    let at: Option<i64> = only(store.read(sql::LAST_UNTIL, binds).await?, "MAX")?.at(0)?;
    opt_time(at)
}

/// `impl ReportStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! report_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{
                ExecutionFact, MessageFact, NewReport, Outbound, ReportChannel, ReportStore,
                StoreResult, StoredReport,
            };
            use $crate::shared::report_store as r;

            #[async_trait::async_trait]
            impl ReportStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn report_executions(
                    &self,
                    since: DateTime<Utc>,
                    until: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<ExecutionFact>> {
                    r::report_executions(self, since, until, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn report_messages(
                    &self,
                    since: DateTime<Utc>,
                    until: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<MessageFact>> {
                    r::report_messages(self, since, until, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn report_approval_ids(
                    &self,
                    since: DateTime<Utc>,
                    until: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<String>> {
                    r::report_approval_ids(self, since, until, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_report(&self, report: NewReport) -> StoreResult<Vec<Outbound>> {
                    r::record_report(self, report).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_report(&self, id: &str) -> StoreResult<Option<StoredReport>> {
                    r::get_report(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn last_report_until(
                    &self,
                    channel: ReportChannel,
                    scope: &str,
                ) -> StoreResult<Option<DateTime<Utc>>> {
                    r::last_report_until(self, channel, scope).await
                }
            }
        };
    };
}
pub(crate) use report_store;
