//! The agent states' table (`agent_states`, and `executions.last_hook`,
//! migration 0037 on both backends) once for both: the SQL and the row
//! decoder of [`harness_core::store::AgentStateStore`]; the methods are
//! [`super::agent_state_store`]'s.

use harness_core::{
    model::{AgentStateName, AgentStateRecord, ExecutionStatus, TaskStatus},
    store::{LatestRun, RecordedState, StoreResult},
};

use super::{SqlRow, corrupt, enum_col, time};

pub(crate) const COLUMNS: &str = "execution_id, task_id, state, reason, lines, since, \
    error_kind, attempt, attempt_of, gave_up, reset_text, reset_at, exit_code, signal, \
    silent_secs, dialog_title, dialog_options, updated_at";

/// The record (`$1`…`$18`, [`COLUMNS`] in order); `since` is kept while the
/// state's name stays the same.
pub(crate) fn upsert() -> String {
    format!(
        "INSERT INTO agent_states ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
           $11, $12, $13, $14, $15, $16, $17, $18) \
         ON CONFLICT (execution_id) DO UPDATE SET \
           since = CASE WHEN agent_states.state = excluded.state THEN agent_states.since \
             ELSE excluded.since END, \
           state = excluded.state, reason = excluded.reason, lines = excluded.lines, \
           error_kind = excluded.error_kind, attempt = excluded.attempt, \
           attempt_of = excluded.attempt_of, gave_up = excluded.gave_up, \
           reset_text = excluded.reset_text, reset_at = excluded.reset_at, \
           exit_code = excluded.exit_code, signal = excluded.signal, \
           silent_secs = excluded.silent_secs, dialog_title = excluded.dialog_title, \
           dialog_options = excluded.dialog_options, updated_at = excluded.updated_at \
         RETURNING {COLUMNS}"
    )
}

pub(crate) fn by_execution() -> String {
    format!("SELECT {COLUMNS} FROM agent_states WHERE execution_id = $1")
}

/// `$1` the key: whether an outbound row holds it.
pub(crate) const PUSHED: &str = "SELECT COUNT(*) FROM harness_outbound WHERE dedup_key = $1";

/// `$1` hook, `$2` now, `$3` execution.
pub(crate) const NOTE_HOOK: &str =
    "UPDATE executions SET last_hook = $1, last_hook_at = $2 WHERE id = $3";

pub(crate) const LAST_HOOK: &str = "SELECT last_hook, last_hook_at FROM executions \
     WHERE id = $1 AND last_hook IS NOT NULL AND last_hook_at IS NOT NULL";

/// Every open (not DONE or CANCELLED) unattended task's latest execution
/// (by start, then id: the task view's) with that execution's recorded
/// state, by task id: the waiting count's one query
/// (`AgentStateStore::latest_unattended_runs`).
pub(crate) const LATEST_UNATTENDED_RUNS: &str = "SELECT t.id AS task_id, t.status AS task_status, \
       t.unattended, e.id AS e_id, e.status AS e_status, e.exit_code AS e_exit_code, \
       e.created_at AS e_created_at, e.ended_at AS e_ended_at, s.state AS s_state, \
       s.reason AS s_reason, s.since AS s_since, s.exit_code AS s_exit_code, \
       s.gave_up AS s_gave_up \
     FROM tasks t JOIN executions e ON e.id = \
       (SELECT x.id FROM executions x WHERE x.task_id = t.id \
        ORDER BY x.created_at DESC, x.id DESC LIMIT 1) \
     LEFT JOIN agent_states s ON s.execution_id = e.id \
     WHERE t.unattended = 1 AND t.status NOT IN ('DONE', 'CANCELLED') \
     ORDER BY t.id";

/// A row of [`LATEST_UNATTENDED_RUNS`].
pub(crate) fn latest_run<R: SqlRow>(row: &R) -> StoreResult<LatestRun> {
    let state = match row.col::<Option<String>>("s_state")? {
        Some(state) => Some(RecordedState {
            state: state_name(&state)?,
            reason: row.col("s_reason")?,
            since: time(row.col("s_since")?)?,
            exit_code: small("agent_states.exit_code", row.col("s_exit_code")?)?,
            gave_up: row.col::<i64>("s_gave_up")? != 0,
        }),
        None => None,
    };
    Ok(LatestRun {
        task_id: row.col("task_id")?,
        task_status: enum_col(row, "task_status", TaskStatus::parse)?,
        unattended: row.col::<i64>("unattended")? != 0,
        execution_id: row.col("e_id")?,
        status: enum_col(row, "e_status", ExecutionStatus::parse)?,
        exit_code: row.col("e_exit_code")?,
        created_at: time(row.col("e_created_at")?)?,
        ended_at: row
            .col::<Option<i64>>("e_ended_at")?
            .map(time)
            .transpose()?,
        state,
    })
}

/// A stored state's name (an unknown one: the row is corrupt).
fn state_name(text: &str) -> StoreResult<AgentStateName> {
    AgentStateName::parse(text).ok_or_else(|| corrupt("agent_states.state", text))
}

fn strings(column: &'static str, text: &str) -> StoreResult<Vec<String>> {
    serde_json::from_str(text).map_err(|_| corrupt(column, text))
}

fn small<T: TryFrom<i64>>(column: &'static str, v: Option<i64>) -> StoreResult<Option<T>> {
    v.map(|n| T::try_from(n).map_err(|_| corrupt(column, &n.to_string())))
        .transpose()
}

/// A record from a row whose columns are `prefix` + [`COLUMNS`]
/// (`task_id` given: the view's join does not repeat it).
pub(crate) fn record_with<R: SqlRow>(
    row: &R,
    prefix: &str,
    task_id: Option<String>,
) -> StoreResult<AgentStateRecord> {
    let c = |name: &str| format!("{prefix}{name}");
    let lines: String = row.col(&c("lines"))?;
    let options: String = row.col(&c("dialog_options"))?;
    Ok(AgentStateRecord {
        execution_id: row.col(&c("execution_id"))?,
        task_id: match task_id {
            Some(t) => t,
            None => row.col(&c("task_id"))?,
        },
        state: state_name(&row.col::<String>(&c("state"))?)?,
        reason: row.col(&c("reason"))?,
        lines: strings("agent_states.lines", &lines)?,
        since: time(row.col(&c("since"))?)?,
        error_kind: row.col(&c("error_kind"))?,
        attempt: small("agent_states.attempt", row.col(&c("attempt"))?)?,
        attempt_of: small("agent_states.attempt_of", row.col(&c("attempt_of"))?)?,
        gave_up: row.col::<i64>(&c("gave_up"))? != 0,
        reset_text: row.col(&c("reset_text"))?,
        reset_at: row
            .col::<Option<i64>>(&c("reset_at"))?
            .map(time)
            .transpose()?,
        exit_code: small("agent_states.exit_code", row.col(&c("exit_code"))?)?,
        signal: small("agent_states.signal", row.col(&c("signal"))?)?,
        silent_secs: small("agent_states.silent_secs", row.col(&c("silent_secs"))?)?,
        dialog_title: row.col(&c("dialog_title"))?,
        dialog_options: strings("agent_states.dialog_options", &options)?,
        updated_at: time(row.col(&c("updated_at"))?)?,
    })
}

pub(crate) fn record<R: SqlRow>(row: &R) -> StoreResult<AgentStateRecord> {
    record_with(row, "", None)
}
