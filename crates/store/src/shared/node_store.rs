//! [`NodeStore`](harness_core::store::NodeStore) once for both backends:
//! one generic function per method over [`Backend`], and [`node_store!`]
//! that implements the port with them. The statements are
//! [`super::nodes`]'; every time is the database's clock
//! ([`Dialect::now_ms`](super::Dialect)), the heartbeat goes on its own
//! connection ([`Backend::beat`]), the other writes are one statement on
//! their own, except a dead node's release (one write transaction).

use chrono::{DateTime, Utc};
use harness_core::store::{NodeRow, StoreResult};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch, only, read_optional},
    ms, nodes, time,
};

fn dead_after_ms<S: Backend>(store: &S) -> i64 {
    i64::try_from(store.node_dead_after().as_millis()).unwrap_or(i64::MAX / 4)
}

/// A conditional write about a dead node's boot (`$1` the dead-after, `$2`
/// id, `$3` boot): whether it wrote a row.
async fn on_dead_boot<S: Backend>(store: &S, sql: &str, id: &str, boot: &str) -> StoreResult<bool> {
    let binds = vec![
        Bind::Int(dead_after_ms(store)),
        Bind::Text(id.to_owned()),
        Bind::Text(boot.to_owned()),
    ];
    Ok(store.write(sql, binds).await? > 0)
}

pub(crate) async fn node_heartbeat<S: Backend>(
    store: &S,
    id: &str,
    boot: &str,
    url: Option<&str>,
    name: Option<&str>,
) -> StoreResult<bool> {
    let binds = vec![
        Bind::Text(id.to_owned()),
        Bind::Text(boot.to_owned()),
        Bind::OptText(url.map(str::to_owned)),
        Bind::OptText(name.map(str::to_owned)),
    ];
    Ok(store
        .beat(&nodes::heartbeat(S::DIALECT.now_ms), binds)
        .await?
        > 0)
}

pub(crate) async fn fence_node<S: Backend>(store: &S, id: &str, boot: &str) -> StoreResult<bool> {
    on_dead_boot(store, &nodes::fence(S::DIALECT.now_ms), id, boot).await
}

/// The nodes matching `filter` (`$1` the dead-after, then `more`).
async fn select<S: Backend>(store: &S, filter: &str, more: Vec<Bind>) -> StoreResult<Vec<NodeRow>> {
    let mut binds = vec![Bind::Int(dead_after_ms(store))];
    binds.extend(more);
    let rows = store
        .read(&nodes::select(S::DIALECT.now_ms, filter), binds)
        .await?;
    rows.iter().map(nodes::node).collect()
}

pub(crate) async fn list_nodes<S: Backend>(store: &S) -> StoreResult<Vec<NodeRow>> {
    select(store, "1 = 1", Vec::new()).await
}

pub(crate) async fn get_node<S: Backend>(store: &S, id: &str) -> StoreResult<Option<NodeRow>> {
    let binds = vec![Bind::Int(dead_after_ms(store)), Bind::Text(id.to_owned())];
    read_optional(store, &nodes::select(S::DIALECT.now_ms, "id = $2"), binds)
        .await?
        .as_ref()
        .map(nodes::node)
        .transpose()
}

pub(crate) async fn set_node_draining<S: Backend>(
    store: &S,
    id: &str,
    draining: bool,
) -> StoreResult<bool> {
    let binds = vec![Bind::Int(i64::from(draining)), Bind::Text(id.to_owned())];
    Ok(store.write(nodes::SET_DRAINING, binds).await? > 0)
}

pub(crate) async fn node_live_runs<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Vec<(String, String)>> {
    let rows = store
        .read(nodes::LIVE_RUNS, vec![Bind::Text(id.to_owned())])
        .await?;
    rows.iter().map(|r| Ok((r.at(0)?, r.at(1)?))).collect()
}

pub(crate) async fn unbind_node_deliveries<S: Backend>(
    store: &S,
    id: &str,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    let binds = vec![Bind::Int(ms(now)), Bind::Text(id.to_owned())];
    store.write(&nodes::unbind(), binds).await
}

pub(crate) async fn nodes_to_recover<S: Backend>(store: &S) -> StoreResult<Vec<NodeRow>> {
    let filter = format!(
        "heartbeat_at <= {} - $1 AND (recovered_boot IS NULL OR recovered_boot <> boot)",
        S::DIALECT.now_ms
    );
    select(store, &filter, Vec::new()).await
}

pub(crate) async fn mark_node_recovered<S: Backend>(
    store: &S,
    id: &str,
    boot: &str,
) -> StoreResult<bool> {
    on_dead_boot(store, &nodes::mark_recovered(S::DIALECT.now_ms), id, boot).await
}

pub(crate) async fn release_dead_node<S: Backend>(
    store: &S,
    id: &str,
    boot: &str,
    now: DateTime<Utc>,
) -> StoreResult<(Vec<String>, u64)> {
    let now = ms(now);
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Int(now),
        Bind::Text(id.to_owned()),
        Bind::Text(boot.to_owned()),
    ];
    let tasks = fetch::<S>(&mut tx, nodes::INTERRUPT, binds)
        .await?
        .iter()
        .map(|r| r.at(0))
        .collect::<StoreResult<Vec<String>>>()?;
    let binds = vec![Bind::Int(now), Bind::Text(id.to_owned())];
    let unbound = execute::<S>(&mut tx, nodes::unbind(), binds).await?;
    S::commit(tx).await?;
    Ok((tasks, unbound))
}

pub(crate) async fn db_now<S: Backend>(store: &S) -> StoreResult<DateTime<Utc>> {
    let sql = format!("SELECT {}", S::DIALECT.now_ms);
    let now: i64 = only(store.read(&sql, Vec::new()).await?, "the clock")?.at(0)?;
    time(now)
}

/// `impl NodeStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! node_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{NodeRow, NodeStore, StoreResult};
            use $crate::shared::node_store as n;

            #[async_trait::async_trait]
            impl NodeStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn node_heartbeat(
                    &self,
                    id: &str,
                    boot: &str,
                    url: Option<&str>,
                    name: Option<&str>,
                ) -> StoreResult<bool> {
                    n::node_heartbeat(self, id, boot, url, name).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn fence_node(&self, id: &str, boot: &str) -> StoreResult<bool> {
                    n::fence_node(self, id, boot).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_nodes(&self) -> StoreResult<Vec<NodeRow>> {
                    n::list_nodes(self).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_node(&self, id: &str) -> StoreResult<Option<NodeRow>> {
                    n::get_node(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn set_node_draining(&self, id: &str, draining: bool) -> StoreResult<bool> {
                    n::set_node_draining(self, id, draining).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn node_live_runs(&self, id: &str) -> StoreResult<Vec<(String, String)>> {
                    n::node_live_runs(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn unbind_node_deliveries(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<u64> {
                    n::unbind_node_deliveries(self, id, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn nodes_to_recover(&self) -> StoreResult<Vec<NodeRow>> {
                    n::nodes_to_recover(self).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn mark_node_recovered(&self, id: &str, boot: &str) -> StoreResult<bool> {
                    n::mark_node_recovered(self, id, boot).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn release_dead_node(
                    &self,
                    id: &str,
                    boot: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<(Vec<String>, u64)> {
                    n::release_dead_node(self, id, boot, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn db_now(&self) -> StoreResult<DateTime<Utc>> {
                    n::db_now(self).await
                }
            }
        };
    };
}
pub(crate) use node_store;
