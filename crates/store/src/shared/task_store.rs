//! [`TaskStore`](harness_core::store::TaskStore) once for both backends:
//! workspaces, projects, tasks, executions, tokens. One generic function
//! per method over [`Backend`], and [`task_store!`] that implements the
//! port with them; each writing method is one write transaction
//! ([`Backend::write_tx`]).

use chrono::{DateTime, Utc};
use harness_core::{
    model::{Execution, ExecutionStatus, Project, TaskView},
    store::{
        Dedup, NewExecution, NewOutbound, NewProject, NewTask, Outbound, RebootRow, StoreError,
        StoreResult,
    },
};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch, fetch_one, fetch_optional, read_optional},
    outbox::outbound,
    reminders::{insert_outbound_binds, insert_outbound_sql},
    rows::{self, PROJECT_SELECT, TASK_VIEW_SELECT, ms},
    tasks::{
        CLAIM_LEFT_REBOOT, CLAIM_PENDING_REBOOT, FINISH_REBOOT, INSERT_TASK, reboot_row,
        reboot_rows_sql,
    },
};

/// An execution's columns (`rows::execution`).
const EXECUTION_COLUMNS: &str =
    "id, task_id, status, session_id, exit_code, created_at, ended_at, node_id";

pub(crate) async fn ensure_workspace<S: Backend>(
    store: &S,
    id: &str,
    name: &str,
    now: DateTime<Utc>,
) -> StoreResult<String> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(id.to_owned()),
        Bind::Text(name.to_owned()),
        Bind::Int(ms(now)),
    ];
    execute::<S>(
        &mut tx,
        "INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING",
        binds,
    )
    .await?;
    let binds = vec![Bind::Text(name.to_owned())];
    let row = fetch_one::<S>(&mut tx, "SELECT id FROM workspaces WHERE name = $1", binds).await?;
    let id: String = row.at(0)?;
    S::commit(tx).await?;
    Ok(id)
}

pub(crate) async fn create_project<S: Backend>(store: &S, p: NewProject) -> StoreResult<Project> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(p.id.clone()),
        Bind::Text(p.workspace_id.clone()),
        Bind::Text(p.name.clone()),
        Bind::Text(p.path.clone()),
        Bind::Int(ms(p.now)),
    ];
    execute::<S>(
        &mut tx,
        "INSERT INTO projects (id, workspace_id, name, path, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
        binds,
    )
    .await?;
    S::commit(tx).await?;
    Ok(Project {
        id: p.id,
        name: p.name,
        path: p.path,
        workspace: p.workspace_name,
        workspace_id: p.workspace_id,
        created_at: rows::time(ms(p.now))?,
    })
}

pub(crate) async fn list_projects<S: Backend>(store: &S) -> StoreResult<Vec<Project>> {
    let sql = format!("{PROJECT_SELECT} ORDER BY w.name, p.name");
    store
        .read(&sql, Vec::new())
        .await?
        .iter()
        .map(rows::project)
        .collect()
}

pub(crate) async fn get_project<S: Backend>(store: &S, id: &str) -> StoreResult<Option<Project>> {
    let sql = format!("{PROJECT_SELECT} WHERE p.id = $1");
    read_optional(store, &sql, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(rows::project)
        .transpose()
}

pub(crate) async fn update_project<S: Backend>(
    store: &S,
    id: &str,
    name: &str,
    path: &str,
) -> StoreResult<Option<Project>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(name.to_owned()),
        Bind::Text(path.to_owned()),
        Bind::Text(id.to_owned()),
    ];
    let sql = "UPDATE projects SET name = $1, path = $2 WHERE id = $3";
    if execute::<S>(&mut tx, sql, binds).await? == 0 {
        return Ok(None);
    }
    let sql = format!("{PROJECT_SELECT} WHERE p.id = $1");
    let row = fetch_optional::<S>(&mut tx, sql, vec![Bind::Text(id.to_owned())]).await?;
    S::commit(tx).await?;
    row.as_ref().map(rows::project).transpose()
}

/// The task view of `id`, inside the caller's transaction.
async fn task_view_in<S: Backend>(conn: &mut S::Conn, id: &str) -> StoreResult<TaskView> {
    let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = $1");
    let row = fetch_one::<S>(conn, sql, vec![Bind::Text(id.to_owned())]).await?;
    rows::task_view(&row)
}

pub(crate) async fn create_task<S: Backend>(store: &S, t: NewTask) -> StoreResult<TaskView> {
    let agent = serde_json::to_string(&t.agent).map_err(|e| StoreError::Backend(Box::new(e)))?;
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(t.id.clone()),
        Bind::OptText(t.project_id),
        Bind::Text(t.title),
        Bind::OptText(t.description),
        Bind::OptText(t.parent_task_id),
        Bind::Text(agent),
        Bind::Int(ms(t.now)),
        Bind::Int(ms(t.now)),
    ];
    execute::<S>(&mut tx, INSERT_TASK, binds).await?;
    let view = task_view_in::<S>(&mut tx, &t.id).await?;
    S::commit(tx).await?;
    Ok(view)
}

pub(crate) async fn get_task<S: Backend>(store: &S, id: &str) -> StoreResult<Option<TaskView>> {
    let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = $1");
    read_optional(store, &sql, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(rows::task_view)
        .transpose()
}

pub(crate) async fn list_tasks<S: Backend>(store: &S, limit: u32) -> StoreResult<Vec<TaskView>> {
    let sql = format!("{TASK_VIEW_SELECT} ORDER BY t.created_at DESC, t.id DESC LIMIT +$1");
    store
        .read(&sql, vec![Bind::Int(i64::from(limit))])
        .await?
        .iter()
        .map(rows::task_view)
        .collect()
}

pub(crate) async fn set_unattended<S: Backend>(
    store: &S,
    task_id: &str,
    on: bool,
    now: DateTime<Utc>,
) -> StoreResult<Option<TaskView>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Int(i64::from(on)),
        Bind::Int(ms(now)),
        Bind::Text(task_id.to_owned()),
    ];
    let sql = "UPDATE tasks SET unattended = $1, updated_at = $2 WHERE id = $3";
    if execute::<S>(&mut tx, sql, binds).await? == 0 {
        return Ok(None);
    }
    let view = task_view_in::<S>(&mut tx, task_id).await?;
    S::commit(tx).await?;
    Ok(Some(view))
}

pub(crate) async fn unattended_task_ids<S: Backend>(store: &S) -> StoreResult<Vec<String>> {
    let sql = "SELECT id FROM tasks WHERE unattended = 1 ORDER BY id";
    store
        .read(sql, Vec::new())
        .await?
        .iter()
        .map(|r| r.at(0))
        .collect()
}

pub(crate) async fn set_session_id<S: Backend>(
    store: &S,
    execution_id: &str,
    session_id: &str,
) -> StoreResult<Option<String>> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(session_id.to_owned()),
        Bind::Text(execution_id.to_owned()),
    ];
    let sql = "UPDATE executions SET session_id = $1 WHERE id = $2 AND session_id IS NULL";
    execute::<S>(&mut tx, sql, binds).await?;
    let sql = "SELECT session_id FROM executions WHERE id = $1";
    let binds = vec![Bind::Text(execution_id.to_owned())];
    let stored = fetch_optional::<S>(&mut tx, sql, binds).await?;
    let stored: Option<String> = match stored {
        Some(row) => row.at(0)?,
        None => None,
    };
    S::commit(tx).await?;
    Ok(stored)
}

pub(crate) async fn finish_execution<S: Backend>(
    store: &S,
    execution_id: &str,
    status: ExecutionStatus,
    exit_code: Option<i64>,
    reason: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(status.as_str().to_owned()),
        Bind::OptInt(exit_code),
        Bind::Text(reason.to_owned()),
        Bind::Int(ms(now)),
        Bind::Text(execution_id.to_owned()),
    ];
    let n = execute::<S>(
        &mut tx,
        "UPDATE executions SET status = $1, exit_code = $2, end_reason = $3, ended_at = $4 \
         WHERE id = $5 AND status IN ('RUNNING', 'PAUSED')",
        binds,
    )
    .await?;
    S::commit(tx).await?;
    Ok(n > 0)
}

pub(crate) async fn interrupt_live_executions<S: Backend>(
    store: &S,
    node: &str,
    keep: &[String],
    now: DateTime<Utc>,
) -> StoreResult<Vec<String>> {
    let mut tx = store.write_tx().await?;
    let live = fetch::<S>(
        &mut tx,
        "SELECT id, task_id FROM executions \
         WHERE status IN ('RUNNING', 'PAUSED') AND (node_id IS NULL OR node_id = $1)",
        vec![Bind::Text(node.to_owned())],
    )
    .await?;
    let live = live
        .iter()
        .map(|r| Ok((r.col::<String>("id")?, r.col::<String>("task_id")?)))
        .collect::<StoreResult<Vec<_>>>()?;
    let mut tasks = Vec::new();
    for (id, task_id) in live.into_iter().filter(|(id, _)| !keep.contains(id)) {
        execute::<S>(
            &mut tx,
            "UPDATE executions SET status = 'FAILED', end_reason = 'interrupted', ended_at = $1, \
               reboot_state = 'PENDING' \
             WHERE id = $2 AND status IN ('RUNNING', 'PAUSED')",
            vec![Bind::Int(ms(now)), Bind::Text(id)],
        )
        .await?;
        tasks.push(task_id);
    }
    S::commit(tx).await?;
    Ok(tasks)
}

pub(crate) async fn reboot_rows<S: Backend>(store: &S, node: &str) -> StoreResult<Vec<RebootRow>> {
    store
        .read(&reboot_rows_sql(), vec![Bind::Text(node.to_owned())])
        .await?
        .iter()
        .map(reboot_row)
        .collect()
}

pub(crate) async fn claim_reboot<S: Backend>(
    store: &S,
    execution_id: &str,
    from: Option<&str>,
    owner: &str,
    note: Option<&str>,
) -> StoreResult<bool> {
    let mut tx = store.write_tx().await?;
    let mut binds = vec![
        Bind::Text(execution_id.to_owned()),
        Bind::Text(owner.to_owned()),
        Bind::OptText(note.map(str::to_owned)),
    ];
    let sql = match from {
        None => CLAIM_PENDING_REBOOT,
        Some(from) => {
            binds.push(Bind::Text(from.to_owned()));
            CLAIM_LEFT_REBOOT
        }
    };
    let n = execute::<S>(&mut tx, sql, binds).await?;
    S::commit(tx).await?;
    Ok(n > 0)
}

pub(crate) async fn finish_reboot<S: Backend>(
    store: &S,
    owner: &str,
    notes: &[(String, String)],
    report: &[NewOutbound],
) -> StoreResult<Vec<Outbound>> {
    let mut tx = store.write_tx().await?;
    let mut finished = 0;
    for (id, note) in notes {
        let binds = vec![
            Bind::Text(id.clone()),
            Bind::Text(owner.to_owned()),
            Bind::Text(note.clone()),
        ];
        finished += execute::<S>(&mut tx, FINISH_REBOOT, binds).await?;
    }
    let mut written = Vec::new();
    if finished > 0 {
        for o in report {
            let key = match &o.dedup {
                Dedup::Explicit(k) | Dedup::Implicit(k) => k.clone(),
            };
            let binds = insert_outbound_binds(o, key, "");
            let row = fetch_one::<S>(&mut tx, insert_outbound_sql(), binds).await?;
            written.push(outbound(&row)?);
        }
    }
    S::commit(tx).await?;
    Ok(written)
}

pub(crate) async fn live_execution<S: Backend>(
    store: &S,
    task_id: &str,
) -> StoreResult<Option<Execution>> {
    let sql = format!(
        "SELECT {EXECUTION_COLUMNS} FROM executions \
         WHERE task_id = $1 AND status IN ('RUNNING', 'PAUSED') \
         ORDER BY created_at DESC, id DESC LIMIT 1"
    );
    read_optional(store, &sql, vec![Bind::Text(task_id.to_owned())])
        .await?
        .as_ref()
        .map(rows::execution)
        .transpose()
}

pub(crate) async fn create_execution<S: Backend>(
    store: &S,
    e: NewExecution,
) -> StoreResult<Execution> {
    let mut tx = store.write_tx().await?;
    let sql = format!(
        "INSERT INTO executions (id, task_id, status, token_hash, created_at, node_id) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {EXECUTION_COLUMNS}"
    );
    let binds = vec![
        Bind::Text(e.id),
        Bind::Text(e.task_id),
        Bind::Text(e.status.as_str().to_owned()),
        Bind::Text(e.token_hash),
        Bind::Int(ms(e.now)),
        Bind::OptText(e.node_id),
    ];
    let row = fetch_one::<S>(&mut tx, sql, binds).await?;
    let execution = rows::execution(&row)?;
    S::commit(tx).await?;
    Ok(execution)
}

pub(crate) async fn execution_by_token_hash<S: Backend>(
    store: &S,
    token_hash: &str,
) -> StoreResult<Option<Execution>> {
    let sql = format!("SELECT {EXECUTION_COLUMNS} FROM executions WHERE token_hash = $1");
    read_optional(store, &sql, vec![Bind::Text(token_hash.to_owned())])
        .await?
        .as_ref()
        .map(rows::execution)
        .transpose()
}

/// `impl TaskStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! task_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                model::{Execution, ExecutionStatus, Project, TaskView},
                store::{
                    NewExecution, NewOutbound, NewProject, NewTask, Outbound, RebootRow,
                    StoreResult, TaskStore,
                },
            };
            use $crate::shared::task_store as t;

            #[async_trait::async_trait]
            impl TaskStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn ensure_workspace(
                    &self,
                    id: &str,
                    name: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<String> {
                    t::ensure_workspace(self, id, name, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn create_project(&self, p: NewProject) -> StoreResult<Project> {
                    t::create_project(self, p).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_projects(&self) -> StoreResult<Vec<Project>> {
                    t::list_projects(self).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_project(&self, id: &str) -> StoreResult<Option<Project>> {
                    t::get_project(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn update_project(
                    &self,
                    id: &str,
                    name: &str,
                    path: &str,
                ) -> StoreResult<Option<Project>> {
                    t::update_project(self, id, name, path).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn create_task(&self, task: NewTask) -> StoreResult<TaskView> {
                    t::create_task(self, task).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_task(&self, id: &str) -> StoreResult<Option<TaskView>> {
                    t::get_task(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_tasks(&self, limit: u32) -> StoreResult<Vec<TaskView>> {
                    t::list_tasks(self, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn set_unattended(
                    &self,
                    task_id: &str,
                    on: bool,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<TaskView>> {
                    t::set_unattended(self, task_id, on, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn unattended_task_ids(&self) -> StoreResult<Vec<String>> {
                    t::unattended_task_ids(self).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn set_session_id(
                    &self,
                    execution_id: &str,
                    session_id: &str,
                ) -> StoreResult<Option<String>> {
                    t::set_session_id(self, execution_id, session_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn finish_execution(
                    &self,
                    execution_id: &str,
                    status: ExecutionStatus,
                    exit_code: Option<i64>,
                    reason: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    t::finish_execution(self, execution_id, status, exit_code, reason, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn interrupt_live_executions(
                    &self,
                    node: &str,
                    keep: &[String],
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<String>> {
                    t::interrupt_live_executions(self, node, keep, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn reboot_rows(&self, node: &str) -> StoreResult<Vec<RebootRow>> {
                    t::reboot_rows(self, node).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn claim_reboot(
                    &self,
                    execution_id: &str,
                    from: Option<&str>,
                    owner: &str,
                    note: Option<&str>,
                ) -> StoreResult<bool> {
                    t::claim_reboot(self, execution_id, from, owner, note).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn finish_reboot(
                    &self,
                    owner: &str,
                    notes: &[(String, String)],
                    report: &[NewOutbound],
                ) -> StoreResult<Vec<Outbound>> {
                    t::finish_reboot(self, owner, notes, report).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn live_execution(&self, task_id: &str) -> StoreResult<Option<Execution>> {
                    t::live_execution(self, task_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn create_execution(&self, e: NewExecution) -> StoreResult<Execution> {
                    t::create_execution(self, e).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn execution_by_token_hash(
                    &self,
                    token_hash: &str,
                ) -> StoreResult<Option<Execution>> {
                    t::execution_by_token_hash(self, token_hash).await
                }
            }
        };
    };
}
pub(crate) use task_store;
