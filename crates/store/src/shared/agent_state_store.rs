//! [`AgentStateStore`](harness_core::store::AgentStateStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`agent_state_store!`] that implements the port with them. The
//! statements are [`super::agent_states`]'; the record with its push and
//! its parent's event is one write transaction, the hook note one
//! statement on its own.

use chrono::{DateTime, Utc};
use harness_core::{
    model::AgentStateRecord,
    store::{AgentStateWrite, AgentStateWritten, Dedup, LatestRun, StoreResult},
};

use super::{
    Bind, SqlRow, agent_states as sql,
    backend::{Backend, fetch_one, fetch_optional, read_optional},
    inbox_rows::event,
    inbox_sql::{EVENT_BY_KEY, INSERT_EVENT},
    ms,
    outbox::outbound,
    reminders::{insert_outbound_binds, insert_outbound_sql},
    time,
};

/// The upsert of `r` (`agent_states::upsert`) with its binds.
fn upsert_binds(r: &AgentStateRecord) -> Vec<Bind> {
    let lines = serde_json::to_string(&r.lines).unwrap_or_else(|_| "[]".into());
    let options = serde_json::to_string(&r.dialog_options).unwrap_or_else(|_| "[]".into());
    vec![
        Bind::Text(r.execution_id.clone()),
        Bind::Text(r.task_id.clone()),
        Bind::Text(r.state.as_str().to_owned()),
        Bind::Text(r.reason.clone()),
        Bind::Text(lines),
        Bind::Int(ms(r.since)),
        Bind::OptText(r.error_kind.clone()),
        Bind::OptInt(r.attempt.map(i64::from)),
        Bind::OptInt(r.attempt_of.map(i64::from)),
        Bind::Int(i64::from(r.gave_up)),
        Bind::OptText(r.reset_text.clone()),
        Bind::OptInt(r.reset_at.map(ms)),
        Bind::OptInt(r.exit_code.map(i64::from)),
        Bind::OptInt(r.signal.map(i64::from)),
        Bind::OptInt(r.silent_secs.and_then(|s| i64::try_from(s).ok())),
        Bind::OptText(r.dialog_title.clone()),
        Bind::Text(options),
        Bind::Int(ms(r.updated_at)),
    ]
}

pub(crate) async fn write_agent_state<S: Backend>(
    store: &S,
    w: AgentStateWrite,
) -> StoreResult<AgentStateWritten> {
    let mut out = AgentStateWritten::default();
    let mut tx = store.write_tx().await?;
    if let Some(r) = &w.record {
        let row = fetch_one::<S>(&mut tx, sql::upsert(), upsert_binds(r)).await?;
        out.record = Some(sql::record(&row)?);
    }
    if let Some(o) = &w.push {
        let key = match &o.dedup {
            Dedup::Explicit(k) | Dedup::Implicit(k) => k.clone(),
        };
        let binds = vec![Bind::Text(key.clone())];
        let seen: i64 = fetch_one::<S>(&mut tx, sql::PUSHED, binds).await?.at(0)?;
        if seen == 0 {
            let binds = insert_outbound_binds(o, key, "");
            let row = fetch_one::<S>(&mut tx, insert_outbound_sql(), binds).await?;
            out.push = Some(outbound(&row)?);
        }
    }
    if let Some(ev) = &w.parent_event {
        let binds = vec![Bind::Text(ev.dedup_key.clone())];
        let found = fetch_optional::<S>(&mut tx, EVENT_BY_KEY.as_str(), binds).await?;
        if found.is_none() {
            let binds = vec![
                Bind::Text(ev.id.clone()),
                Bind::Text(ev.parent_task_id.clone()),
                Bind::Text(ev.source_task_id.clone()),
                Bind::OptText(ev.execution_id.clone()),
                Bind::Text(ev.kind.as_str().to_owned()),
                Bind::Text(ev.priority.as_str().to_owned()),
                Bind::Text(ev.dedup_key.clone()),
                Bind::OptText(ev.execution_review_key.clone()),
                Bind::Text(ev.payload.to_string()),
                Bind::Int(ms(ev.now)),
            ];
            let row = fetch_one::<S>(&mut tx, INSERT_EVENT.as_str(), binds).await?;
            out.event = Some(event(&row)?);
        }
    }
    S::commit(tx).await?;
    Ok(out)
}

pub(crate) async fn agent_state<S: Backend>(
    store: &S,
    execution_id: &str,
) -> StoreResult<Option<AgentStateRecord>> {
    let binds = vec![Bind::Text(execution_id.to_owned())];
    read_optional(store, &sql::by_execution(), binds)
        .await?
        .as_ref()
        .map(sql::record)
        .transpose()
}

pub(crate) async fn note_hook<S: Backend>(
    store: &S,
    execution_id: &str,
    hook: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let binds = vec![
        Bind::Text(hook.to_owned()),
        Bind::Int(ms(at)),
        Bind::Text(execution_id.to_owned()),
    ];
    store.write(sql::NOTE_HOOK, binds).await?;
    Ok(())
}

pub(crate) async fn last_hook<S: Backend>(
    store: &S,
    execution_id: &str,
) -> StoreResult<Option<(String, DateTime<Utc>)>> {
    let binds = vec![Bind::Text(execution_id.to_owned())];
    let Some(row) = read_optional(store, sql::LAST_HOOK, binds).await? else {
        return Ok(None);
    };
    Ok(Some((row.at(0)?, time(row.at(1)?)?)))
}

pub(crate) async fn latest_unattended_runs<S: Backend>(store: &S) -> StoreResult<Vec<LatestRun>> {
    store
        .read(sql::LATEST_UNATTENDED_RUNS, Vec::new())
        .await?
        .iter()
        .map(sql::latest_run)
        .collect()
}

/// `impl AgentStateStore for $store` with the functions of this module,
/// each method in its own span.
macro_rules! agent_state_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                model::AgentStateRecord,
                store::{
                    AgentStateStore, AgentStateWrite, AgentStateWritten, LatestRun, StoreResult,
                },
            };
            use $crate::shared::agent_state_store as a;

            #[async_trait::async_trait]
            impl AgentStateStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn write_agent_state(
                    &self,
                    write: AgentStateWrite,
                ) -> StoreResult<AgentStateWritten> {
                    a::write_agent_state(self, write).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn agent_state(
                    &self,
                    execution_id: &str,
                ) -> StoreResult<Option<AgentStateRecord>> {
                    a::agent_state(self, execution_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn note_hook(
                    &self,
                    execution_id: &str,
                    hook: &str,
                    at: DateTime<Utc>,
                ) -> StoreResult<()> {
                    a::note_hook(self, execution_id, hook, at).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn last_hook(
                    &self,
                    execution_id: &str,
                ) -> StoreResult<Option<(String, DateTime<Utc>)>> {
                    a::last_hook(self, execution_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn latest_unattended_runs(&self) -> StoreResult<Vec<LatestRun>> {
                    a::latest_unattended_runs(self).await
                }
            }
        };
    };
}
pub(crate) use agent_state_store;
