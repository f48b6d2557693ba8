//! [`TaskStore`](harness_core::store::TaskStore) once for both backends:
//! workspaces, projects, tasks, executions, tokens. Each writing method is
//! one write transaction (`write_tx`).

/// `$1` id, `$2` project, `$3` title, `$4` description, `$5` parent, `$6`
/// agent config (JSON), `$7` created, `$8` updated.
pub(crate) const INSERT_TASK: &str = "INSERT INTO tasks (id, project_id, title, description, \
     parent_task_id, status, unattended, agent_config, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, 'TODO', 0, $6, $7, $8)";

/// The columns of a [`RebootRow`](harness_core::store::RebootRow): the
/// execution's and the reboot decision's.
pub(crate) const REBOOT_COLUMNS: &str = "e.id, e.task_id, e.status, e.session_id, e.exit_code, \
     e.created_at, e.ended_at, e.node_id, e.reboot_state, e.reboot_owner, e.reboot_note";

/// The task's execution just before `e`.
const PREVIOUS: &str = "FROM executions p WHERE p.task_id = e.task_id \
     AND (p.created_at < e.created_at OR (p.created_at = e.created_at AND p.id < e.id)) \
     ORDER BY p.created_at DESC, p.id DESC LIMIT 1";

/// `$1` node: owed to it (PENDING of the node or of none) or CLAIMED by
/// anyone, with the reboot state and note of the execution before each.
pub(crate) fn reboot_rows_sql() -> String {
    format!(
        "SELECT {REBOOT_COLUMNS}, \
           (SELECT p.reboot_state {PREVIOUS}) AS previous_state, \
           (SELECT p.reboot_note {PREVIOUS}) AS previous_note \
         FROM executions e \
         WHERE (e.reboot_state = 'PENDING' AND (e.node_id IS NULL OR e.node_id = $1)) \
            OR e.reboot_state = 'CLAIMED' \
         ORDER BY e.created_at, e.id"
    )
}

/// `$1` id, `$2` owner, `$3` note: a PENDING decision taken.
pub(crate) const CLAIM_PENDING_REBOOT: &str = "UPDATE executions \
     SET reboot_state = 'CLAIMED', reboot_owner = $2, reboot_note = $3 \
     WHERE id = $1 AND reboot_state = 'PENDING'";

/// `$1` id, `$2` owner, `$3` note, `$4` the earlier boot: its claim taken over.
pub(crate) const CLAIM_LEFT_REBOOT: &str = "UPDATE executions \
     SET reboot_owner = $2, reboot_note = $3 \
     WHERE id = $1 AND reboot_state = 'CLAIMED' AND reboot_owner = $4";

/// `$1` id, `$2` owner, `$3` note: a claim reported.
pub(crate) const FINISH_REBOOT: &str = "UPDATE executions \
     SET reboot_state = 'DONE', reboot_note = $3 \
     WHERE id = $1 AND reboot_state = 'CLAIMED' AND reboot_owner = $2";

pub(crate) fn reboot_row<R: super::SqlRow>(
    row: &R,
) -> harness_core::store::StoreResult<harness_core::store::RebootRow> {
    use harness_core::store::{RebootState, StoreError};
    let parse = |state: String| {
        RebootState::parse(&state).ok_or(StoreError::Corrupt {
            column: "executions.reboot_state",
            value: state,
        })
    };
    Ok(harness_core::store::RebootRow {
        execution: super::rows::execution(row)?,
        state: parse(row.col("reboot_state")?)?,
        owner: row.col("reboot_owner")?,
        note: row.col("reboot_note")?,
        previous_state: row
            .col::<Option<String>>("previous_state")?
            .map(parse)
            .transpose()?,
        previous_note: row.col("previous_note")?,
    })
}

/// `impl TaskStore for $store`, reading from `self.$read`, writing on
/// `self.$write` (one-statement writes) or in `self.write_tx()`.
macro_rules! task_store {
    ($store:ty, $read:ident, $write:ident) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                model::{Execution, Project, TaskView},
                store::{
                    Dedup, NewExecution, NewOutbound, NewProject, NewTask, Outbound, RebootRow,
                    StoreError, StoreResult, TaskStore,
                },
            };
            use sqlx::AssertSqlSafe;
            use $crate::shared::rows::{self, PROJECT_SELECT, TASK_VIEW_SELECT, ms};
            use $crate::error::map;

            #[async_trait::async_trait]
            impl TaskStore for $store {
                async fn ensure_workspace(
                    &self,
                    id: &str,
                    name: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<String> {
                    let mut tx = self.write_tx().await?;
                    sqlx::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING")
                        .bind(id)
                        .bind(name)
                        .bind(ms(now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    let id: String = sqlx::query_scalar("SELECT id FROM workspaces WHERE name = $1")
                        .bind(name)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    Ok(id)
                }

                async fn create_project(&self, p: NewProject) -> StoreResult<Project> {
                    let mut tx = self.write_tx().await?;
                    sqlx::query("INSERT INTO projects (id, workspace_id, name, path, created_at) VALUES ($1, $2, $3, $4, $5)")
                        .bind(&p.id)
                        .bind(&p.workspace_id)
                        .bind(&p.name)
                        .bind(&p.path)
                        .bind(ms(p.now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    Ok(Project {
                        id: p.id,
                        name: p.name,
                        path: p.path,
                        workspace: p.workspace_name,
                        workspace_id: p.workspace_id,
                        created_at: rows::time(ms(p.now))?,
                    })
                }

                async fn list_projects(&self) -> StoreResult<Vec<Project>> {
                    let sql = format!("{PROJECT_SELECT} ORDER BY w.name, p.name");
                    sqlx::query(AssertSqlSafe(sql))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(rows::project)
                        .collect()
                }

                async fn get_project(&self, id: &str) -> StoreResult<Option<Project>> {
                    let sql = format!("{PROJECT_SELECT} WHERE p.id = $1");
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?
                        .as_ref()
                        .map(rows::project)
                        .transpose()
                }

                async fn update_project(
                    &self,
                    id: &str,
                    name: &str,
                    path: &str,
                ) -> StoreResult<Option<Project>> {
                    let mut tx = self.write_tx().await?;
                    let changed = sqlx::query("UPDATE projects SET name = $1, path = $2 WHERE id = $3")
                        .bind(name)
                        .bind(path)
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?
                        .rows_affected();
                    if changed == 0 {
                        return Ok(None);
                    }
                    let sql = format!("{PROJECT_SELECT} WHERE p.id = $1");
                    let row = sqlx::query(AssertSqlSafe(sql))
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    row.as_ref().map(rows::project).transpose()
                }

                async fn create_task(&self, t: NewTask) -> StoreResult<TaskView> {
                    let agent =
                        serde_json::to_string(&t.agent).map_err(|e| StoreError::Backend(Box::new(e)))?;
                    let mut tx = self.write_tx().await?;
                    sqlx::query($crate::shared::tasks::INSERT_TASK)
                    .bind(&t.id)
                    .bind(&t.project_id)
                    .bind(&t.title)
                    .bind(&t.description)
                    .bind(&t.parent_task_id)
                    .bind(&agent)
                    .bind(ms(t.now))
                    .bind(ms(t.now))
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
                    let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = $1");
                    let row = sqlx::query(AssertSqlSafe(sql))
                        .bind(&t.id)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    let view = rows::task_view(&row)?;
                    tx.commit().await.map_err(map)?;
                    Ok(view)
                }

                async fn get_task(&self, id: &str) -> StoreResult<Option<TaskView>> {
                    let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = $1");
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?
                        .as_ref()
                        .map(rows::task_view)
                        .transpose()
                }

                async fn list_tasks(&self, limit: u32) -> StoreResult<Vec<TaskView>> {
                    let sql = format!("{TASK_VIEW_SELECT} ORDER BY t.created_at DESC, t.id DESC LIMIT +$1");
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(rows::task_view)
                        .collect()
                }

                async fn set_unattended(
                    &self,
                    task_id: &str,
                    on: bool,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<TaskView>> {
                    let mut tx = self.write_tx().await?;
                    let updated =
                        sqlx::query("UPDATE tasks SET unattended = $1, updated_at = $2 WHERE id = $3")
                            .bind(i64::from(on))
                            .bind(ms(now))
                            .bind(task_id)
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?
                            .rows_affected();
                    if updated == 0 {
                        return Ok(None);
                    }
                    let sql = format!("{TASK_VIEW_SELECT} WHERE t.id = $1");
                    let row = sqlx::query(AssertSqlSafe(sql))
                        .bind(task_id)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    let view = rows::task_view(&row)?;
                    tx.commit().await.map_err(map)?;
                    Ok(Some(view))
                }

                async fn unattended_task_ids(&self) -> StoreResult<Vec<String>> {
                    sqlx::query_scalar("SELECT id FROM tasks WHERE unattended = 1 ORDER BY id")
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)
                }

                async fn set_session_id(
                    &self,
                    execution_id: &str,
                    session_id: &str,
                ) -> StoreResult<Option<String>> {
                    let mut tx = self.write_tx().await?;
                    sqlx::query("UPDATE executions SET session_id = $1 WHERE id = $2 AND session_id IS NULL")
                        .bind(session_id)
                        .bind(execution_id)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    let stored: Option<Option<String>> =
                        sqlx::query_scalar("SELECT session_id FROM executions WHERE id = $1")
                            .bind(execution_id)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    Ok(stored.flatten())
                }

                async fn finish_execution(
                    &self,
                    execution_id: &str,
                    status: harness_core::model::ExecutionStatus,
                    exit_code: Option<i64>,
                    reason: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    let mut tx = self.write_tx().await?;
                    let n = sqlx::query(
                        "UPDATE executions SET status = $1, exit_code = $2, end_reason = $3, ended_at = $4 \
                         WHERE id = $5 AND status IN ('RUNNING', 'PAUSED')",
                    )
                    .bind(status.as_str())
                    .bind(exit_code)
                    .bind(reason)
                    .bind(ms(now))
                    .bind(execution_id)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?
                    .rows_affected();
                    tx.commit().await.map_err(map)?;
                    Ok(n > 0)
                }

                async fn interrupt_live_executions(
                    &self,
                    node: &str,
                    keep: &[String],
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<String>> {
                    let mut tx = self.write_tx().await?;
                    let live: Vec<(String, String)> = sqlx::query_as(
                        "SELECT id, task_id FROM executions \
                         WHERE status IN ('RUNNING', 'PAUSED') AND (node_id IS NULL OR node_id = $1)",
                    )
                    .bind(node)
                    .fetch_all(&mut *tx)
                    .await
                    .map_err(map)?;
                    let mut tasks = Vec::new();
                    for (id, task_id) in live.into_iter().filter(|(id, _)| !keep.contains(id)) {
                        sqlx::query(
                            "UPDATE executions SET status = 'FAILED', end_reason = 'interrupted', ended_at = $1, \
                               reboot_state = 'PENDING' \
                             WHERE id = $2 AND status IN ('RUNNING', 'PAUSED')",
                        )
                        .bind(ms(now))
                        .bind(&id)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                        tasks.push(task_id);
                    }
                    tx.commit().await.map_err(map)?;
                    Ok(tasks)
                }

                async fn reboot_rows(&self, node: &str) -> StoreResult<Vec<RebootRow>> {
                    sqlx::query(AssertSqlSafe($crate::shared::tasks::reboot_rows_sql()))
                        .bind(node)
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map($crate::shared::tasks::reboot_row)
                        .collect()
                }

                async fn claim_reboot(
                    &self,
                    execution_id: &str,
                    from: Option<&str>,
                    owner: &str,
                    note: Option<&str>,
                ) -> StoreResult<bool> {
                    let mut tx = self.write_tx().await?;
                    let query = match from {
                        None => sqlx::query($crate::shared::tasks::CLAIM_PENDING_REBOOT)
                            .bind(execution_id)
                            .bind(owner)
                            .bind(note),
                        Some(from) => sqlx::query($crate::shared::tasks::CLAIM_LEFT_REBOOT)
                            .bind(execution_id)
                            .bind(owner)
                            .bind(note)
                            .bind(from),
                    };
                    let n = query.execute(&mut *tx).await.map_err(map)?.rows_affected();
                    tx.commit().await.map_err(map)?;
                    Ok(n > 0)
                }

                async fn finish_reboot(
                    &self,
                    owner: &str,
                    notes: &[(String, String)],
                    report: &[NewOutbound],
                ) -> StoreResult<Vec<Outbound>> {
                    let mut tx = self.write_tx().await?;
                    let mut finished = 0;
                    for (id, note) in notes {
                        finished += sqlx::query($crate::shared::tasks::FINISH_REBOOT)
                            .bind(id)
                            .bind(owner)
                            .bind(note)
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?
                            .rows_affected();
                    }
                    let mut written = Vec::new();
                    if finished > 0 {
                        for o in report {
                            let key = match &o.dedup {
                                Dedup::Explicit(k) | Dedup::Implicit(k) => k.clone(),
                            };
                            let row = $crate::shared::reminders::insert_outbound(o, key, "")
                                .fetch_one(&mut *tx)
                                .await
                                .map_err(map)?;
                            written.push($crate::shared::outbox::outbound(&row)?);
                        }
                    }
                    tx.commit().await.map_err(map)?;
                    Ok(written)
                }

                async fn live_execution(&self, task_id: &str) -> StoreResult<Option<Execution>> {
                    sqlx::query(
                        "SELECT id, task_id, status, session_id, exit_code, created_at, ended_at, node_id FROM executions \
                         WHERE task_id = $1 AND status IN ('RUNNING', 'PAUSED') ORDER BY created_at DESC, id DESC LIMIT 1",
                    )
                    .bind(task_id)
                    .fetch_optional(&self.$read)
                    .await
                    .map_err(map)?
                    .as_ref()
                    .map(rows::execution)
                    .transpose()
                }

                async fn create_execution(&self, e: NewExecution) -> StoreResult<Execution> {
                    let mut tx = self.write_tx().await?;
                    let row = sqlx::query(
                        "INSERT INTO executions (id, task_id, status, token_hash, created_at, node_id) \
                         VALUES ($1, $2, $3, $4, $5, $6) \
                         RETURNING id, task_id, status, session_id, exit_code, created_at, ended_at, node_id",
                    )
                    .bind(&e.id)
                    .bind(&e.task_id)
                    .bind(e.status.as_str())
                    .bind(&e.token_hash)
                    .bind(ms(e.now))
                    .bind(&e.node_id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(map)?;
                    let execution = rows::execution(&row)?;
                    tx.commit().await.map_err(map)?;
                    Ok(execution)
                }

                async fn execution_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<Execution>> {
                    sqlx::query(
                        "SELECT id, task_id, status, session_id, exit_code, created_at, ended_at, node_id \
                         FROM executions WHERE token_hash = $1",
                    )
                    .bind(token_hash)
                    .fetch_optional(&self.$read)
                    .await
                    .map_err(map)?
                    .as_ref()
                    .map(rows::execution)
                    .transpose()
                }
            }
        };
    };
}
pub(crate) use task_store;
