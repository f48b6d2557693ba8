//! [`AgentActionStore`](harness_core::store::AgentActionStore) once for
//! both backends: one generic function per method over [`Backend`], and
//! [`agent_action_store!`] that implements the port with them. The
//! statements are [`super::agent_actions`]'; every write is one write
//! transaction ([`Backend::write_tx`]).

use chrono::{DateTime, Utc};
use harness_core::store::{ActionReason, ActionTurn, AgentAction, NewAction, StoreResult};

use super::{
    Bind, SqlRow,
    agent_actions::{
        BY_ID, BY_KEY, CANCEL, CLOSED_COUNT, DONE_SINCE, EXPIRE, INSERT, OF_TASK, OPEN, RELEASE,
        SETTLE, SUPERSEDE, action, claim, count,
    },
    backend::{Backend, execute, fetch, fetch_one, only, read_optional},
    ms,
};

pub(crate) async fn plan_action<S: Backend>(
    store: &S,
    new: NewAction,
    superseded: Option<&str>,
) -> StoreResult<(AgentAction, bool)> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(new.id.clone()),
        Bind::Text(new.task_id),
        Bind::Text(new.execution_id.clone()),
        Bind::OptText(new.node_id),
        Bind::Text(new.action.as_str().to_owned()),
        Bind::Text(new.reason.as_str().to_owned()),
        Bind::OptText(new.text),
        Bind::Int(ms(new.due_at)),
        Bind::Text(new.dedup_key.clone()),
        Bind::Int(ms(new.now)),
    ];
    let created = execute::<S>(&mut tx, INSERT, binds).await? == 1;
    if created && let Some(note) = superseded {
        let binds = vec![
            Bind::Text(new.execution_id),
            Bind::Text(new.id),
            Bind::Text(note.to_owned()),
            Bind::Int(ms(new.now)),
        ];
        execute::<S>(&mut tx, SUPERSEDE.as_str(), binds).await?;
    }
    let binds = vec![Bind::Text(new.dedup_key)];
    let row = action(&fetch_one::<S>(&mut tx, BY_KEY.as_str(), binds).await?)?;
    S::commit(tx).await?;
    Ok((row, created))
}

pub(crate) async fn open_actions<S: Backend>(
    store: &S,
    execution_id: &str,
) -> StoreResult<Vec<AgentAction>> {
    let binds = vec![Bind::Text(execution_id.to_owned())];
    store.read(&OPEN, binds).await?.iter().map(action).collect()
}

/// The count `sql` reads, as the port answers it.
async fn count_of<S: Backend>(store: &S, sql: &str, binds: Vec<Bind>) -> StoreResult<u32> {
    let n: i64 = only(store.read(sql, binds).await?, "COUNT")?.at(0)?;
    Ok(count(n))
}

pub(crate) async fn closed_action_count<S: Backend>(
    store: &S,
    execution_id: &str,
    reason: ActionReason,
) -> StoreResult<u32> {
    let binds = vec![
        Bind::Text(execution_id.to_owned()),
        Bind::Text(reason.as_str().to_owned()),
    ];
    count_of(store, CLOSED_COUNT, binds).await
}

pub(crate) async fn actions_done_since<S: Backend>(
    store: &S,
    task_id: &str,
    reason: ActionReason,
    since: DateTime<Utc>,
) -> StoreResult<u32> {
    let binds = vec![
        Bind::Text(task_id.to_owned()),
        Bind::Text(reason.as_str().to_owned()),
        Bind::Int(ms(since)),
    ];
    count_of(store, DONE_SINCE, binds).await
}

pub(crate) async fn cancel_actions<S: Backend>(
    store: &S,
    task_id: &str,
    execution_id: Option<&str>,
    why: &str,
    now: DateTime<Utc>,
) -> StoreResult<Vec<AgentAction>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(task_id.to_owned()),
        Bind::OptText(execution_id.map(str::to_owned)),
        Bind::Text(why.to_owned()),
        Bind::Int(ms(now)),
    ];
    let rows = fetch::<S>(&mut tx, CANCEL.as_str(), binds).await?;
    let rows = rows.iter().map(action).collect::<StoreResult<Vec<_>>>()?;
    S::commit(tx).await?;
    Ok(rows)
}

pub(crate) async fn settle_and_claim_actions<S: Backend>(
    store: &S,
    turn: ActionTurn,
) -> StoreResult<Vec<AgentAction>> {
    // Leases on the database's clock (`lease_clock`).
    let clock = store.lease_clock(turn.now, turn.lease_until).await?;
    let (now, lease_until) = (clock.now, clock.until);
    let mut tx = store.write_tx().await?;
    for s in turn.settles {
        let binds = vec![
            Bind::Text(s.id),
            Bind::Text(s.state.as_str().to_owned()),
            Bind::OptInt(s.next_attempt_at.map(ms)),
            Bind::OptText(s.last_error),
            Bind::OptText(s.result),
            Bind::OptText(s.delivery_id),
            Bind::OptText(s.started_execution_id),
            Bind::Int(now),
            Bind::Text(turn.owner.clone()),
        ];
        execute::<S>(&mut tx, SETTLE, binds).await?;
    }
    for id in turn.released {
        let binds = vec![
            Bind::Text(id),
            Bind::Int(now),
            Bind::Text(turn.owner.clone()),
        ];
        execute::<S>(&mut tx, RELEASE.as_str(), binds).await?;
    }
    execute::<S>(&mut tx, EXPIRE.as_str(), vec![Bind::Int(clock.lease_now)]).await?;
    let rows = if turn.limit > 0 {
        let binds = vec![
            Bind::Text(turn.owner),
            Bind::Int(lease_until),
            Bind::Int(now),
            Bind::Int(i64::from(turn.limit)),
            Bind::Text(turn.node),
        ];
        fetch::<S>(&mut tx, claim(S::DIALECT), binds).await?
    } else {
        Vec::new()
    };
    let mut claimed = rows.iter().map(action).collect::<StoreResult<Vec<_>>>()?;
    S::commit(tx).await?;
    claimed.sort_by(|a, b| (a.due_at, &a.id).cmp(&(b.due_at, &b.id)));
    Ok(claimed)
}

pub(crate) async fn task_actions<S: Backend>(
    store: &S,
    task_id: &str,
    limit: u32,
) -> StoreResult<Vec<AgentAction>> {
    let binds = vec![Bind::Text(task_id.to_owned()), Bind::Int(i64::from(limit))];
    store
        .read(&OF_TASK, binds)
        .await?
        .iter()
        .map(action)
        .collect()
}

pub(crate) async fn get_action<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<AgentAction>> {
    read_optional(store, &BY_ID, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(action)
        .transpose()
}

/// `impl AgentActionStore for $store` with the functions of this module,
/// each method in its own span.
macro_rules! agent_action_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{
                ActionReason, ActionTurn, AgentAction, AgentActionStore, NewAction, StoreResult,
            };
            use $crate::shared::agent_action_store as a;

            #[async_trait::async_trait]
            impl AgentActionStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn plan_action(
                    &self,
                    new: NewAction,
                    superseded: Option<&str>,
                ) -> StoreResult<(AgentAction, bool)> {
                    a::plan_action(self, new, superseded).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn open_actions(&self, execution_id: &str) -> StoreResult<Vec<AgentAction>> {
                    a::open_actions(self, execution_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn closed_action_count(
                    &self,
                    execution_id: &str,
                    reason: ActionReason,
                ) -> StoreResult<u32> {
                    a::closed_action_count(self, execution_id, reason).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn actions_done_since(
                    &self,
                    task_id: &str,
                    reason: ActionReason,
                    since: DateTime<Utc>,
                ) -> StoreResult<u32> {
                    a::actions_done_since(self, task_id, reason, since).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn cancel_actions(
                    &self,
                    task_id: &str,
                    execution_id: Option<&str>,
                    why: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<AgentAction>> {
                    a::cancel_actions(self, task_id, execution_id, why, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn settle_and_claim_actions(
                    &self,
                    turn: ActionTurn,
                ) -> StoreResult<Vec<AgentAction>> {
                    a::settle_and_claim_actions(self, turn).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn task_actions(
                    &self,
                    task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<AgentAction>> {
                    a::task_actions(self, task_id, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_action(&self, id: &str) -> StoreResult<Option<AgentAction>> {
                    a::get_action(self, id).await
                }
            }
        };
    };
}
pub(crate) use agent_action_store;
