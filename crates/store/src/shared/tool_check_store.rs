//! [`ToolCheckStore`](harness_core::store::ToolCheckStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`tool_check_store!`] that implements the port with them. The
//! statements are [`super::tool_checks`]'; a check is one statement on its
//! own, a flag with its notice and push one write transaction.

use chrono::{DateTime, Utc};
use harness_core::{
    model::Execution,
    store::{
        NewToolCheck, NewUngatedFlag, StoreResult, UngatedFlag, UngatedFlagged, ungated_push_key,
    },
};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch_one, fetch_optional},
    ms,
    outbox::outbound,
    reminders::{insert_outbound_binds, insert_outbound_sql},
    rows, tool_checks as sql,
};

pub(crate) async fn record_tool_check<S: Backend>(store: &S, c: NewToolCheck) -> StoreResult<()> {
    let binds = vec![
        Bind::Text(c.task_id),
        Bind::Text(c.call_key),
        Bind::OptText(c.execution_id),
        Bind::Text(c.tool),
        Bind::Int(ms(c.now)),
    ];
    store.write(sql::RECORD, binds).await?;
    Ok(())
}

pub(crate) async fn checked_calls<S: Backend>(
    store: &S,
    task_id: &str,
    keys: &[String],
) -> StoreResult<Vec<String>> {
    let mut out = Vec::new();
    for chunk in keys.chunks(sql::KEYS_PER_QUERY) {
        let mut binds = vec![Bind::Text(task_id.to_owned())];
        binds.extend(chunk.iter().cloned().map(Bind::Text));
        for row in store.read(&sql::checked(chunk.len()), binds).await? {
            out.push(row.at(0)?);
        }
    }
    Ok(out)
}

pub(crate) async fn flag_ungated<S: Backend>(
    store: &S,
    f: NewUngatedFlag,
) -> StoreResult<UngatedFlagged> {
    let mut tx = store.write_tx().await?;
    let now = ms(f.now);
    let binds = vec![
        Bind::Text(f.execution_id.clone()),
        Bind::Text(f.task_id.clone()),
        Bind::Text(f.tool.clone()),
        Bind::Text(f.call_key.clone()),
        Bind::Text(f.evidence.as_str().to_owned()),
        Bind::Text(f.detail.clone()),
        Bind::Text(f.message_id.clone()),
        Bind::OptText(f.push.as_ref().map(|p| p.id.clone())),
        Bind::Int(now),
    ];
    let inserted: Option<String> = fetch_optional::<S>(&mut tx, sql::insert_flag(), binds)
        .await?
        .map(|r| r.at(0))
        .transpose()?;
    let mut push = None;
    if inserted.is_some() {
        let binds = vec![
            Bind::Text(f.message_id.clone()),
            Bind::Text(f.task_id.clone()),
            Bind::Text(f.execution_id.clone()),
            Bind::Text(f.message.clone()),
            Bind::Int(now),
        ];
        execute::<S>(&mut tx, sql::INSERT_NOTICE, binds).await?;
        if let Some(o) = &f.push {
            let binds = insert_outbound_binds(o, ungated_push_key(&f.execution_id), &f.message_id);
            let row = fetch_one::<S>(&mut tx, insert_outbound_sql(), binds).await?;
            push = Some(outbound(&row)?);
        }
    }
    let binds = vec![Bind::Text(f.execution_id.clone())];
    let flag = sql::flag(&fetch_one::<S>(&mut tx, sql::flag_by_execution(), binds).await?)?;
    S::commit(tx).await?;
    Ok(UngatedFlagged {
        flag,
        created: inserted.is_some(),
        push,
    })
}

pub(crate) async fn ungated_flags<S: Backend>(
    store: &S,
    task_id: &str,
) -> StoreResult<Vec<UngatedFlag>> {
    let binds = vec![Bind::Text(task_id.to_owned())];
    let rows = store.read(&sql::flags_of_task(), binds).await?;
    rows.iter().map(sql::flag).collect()
}

pub(crate) async fn watched_executions<S: Backend>(
    store: &S,
    node_id: &str,
    ended_after: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<Execution>> {
    let binds = vec![
        Bind::Text(node_id.to_owned()),
        Bind::Int(ms(ended_after)),
        Bind::Int(i64::from(limit)),
    ];
    let rows = store.read(sql::WATCHED, binds).await?;
    rows.iter().map(rows::execution).collect()
}

/// `impl ToolCheckStore for $store` with the functions of this module,
/// each method in its own span.
macro_rules! tool_check_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                model::Execution,
                store::{
                    NewToolCheck, NewUngatedFlag, StoreResult, ToolCheckStore, UngatedFlag,
                    UngatedFlagged,
                },
            };
            use $crate::shared::tool_check_store as t;

            #[async_trait::async_trait]
            impl ToolCheckStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_tool_check(&self, c: NewToolCheck) -> StoreResult<()> {
                    t::record_tool_check(self, c).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn checked_calls(
                    &self,
                    task_id: &str,
                    keys: &[String],
                ) -> StoreResult<Vec<String>> {
                    t::checked_calls(self, task_id, keys).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn flag_ungated(&self, f: NewUngatedFlag) -> StoreResult<UngatedFlagged> {
                    t::flag_ungated(self, f).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn ungated_flags(&self, task_id: &str) -> StoreResult<Vec<UngatedFlag>> {
                    t::ungated_flags(self, task_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn watched_executions(
                    &self,
                    node_id: &str,
                    ended_after: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<Execution>> {
                    t::watched_executions(self, node_id, ended_after, limit).await
                }
            }
        };
    };
}
pub(crate) use tool_check_store;
