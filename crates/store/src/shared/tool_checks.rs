//! The ungated-run watch's tables (`tool_checks`, `ungated_runs`, migration
//! 0033 on both backends) once for both: the SQL and the row decoder of
//! [`harness_core::store::ToolCheckStore`]; the methods are
//! [`super::tool_check_store`]'s.

use harness_core::store::{StoreResult, UngatedEvidence, UngatedFlag};

use super::{SqlRow, enum_col, time};

/// `$1` task, `$2` key, `$3` execution, `$4` tool, `$5` now: kept once.
pub(crate) const RECORD: &str = "INSERT INTO tool_checks \
     (task_id, call_key, execution_id, tool, created_at) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (task_id, call_key) DO NOTHING";

/// The most keys one `IN` list asks about.
pub(crate) const KEYS_PER_QUERY: usize = 400;

/// `$1` task, `$2…` the keys ([`super::marks`]).
pub(crate) fn checked(keys: usize) -> String {
    format!(
        "SELECT call_key FROM tool_checks WHERE task_id = $1 AND call_key IN ({})",
        super::marks(2, keys)
    )
}

pub(crate) const FLAG_COLUMNS: &str = "execution_id, task_id, tool, call_key, evidence, detail, \
    message_id, outbound_id, created_at";

/// The flag, once per execution (`$1`…`$9` the columns in order); answers
/// the execution id only when this statement wrote it.
pub(crate) fn insert_flag() -> String {
    format!(
        "INSERT INTO ungated_runs ({FLAG_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (execution_id) DO NOTHING RETURNING execution_id"
    )
}

/// The alert's notice on `/harness`: a CLOSED notify of the task, of the
/// flagged execution (`$1` id, `$2` task, `$3` execution, `$4` text, `$5` now).
pub(crate) const INSERT_NOTICE: &str = "INSERT INTO harness_messages \
     (id, task_id, execution_id, kind, state, content, created_at) \
     VALUES ($1, $2, $3, 'notify', 'CLOSED', $4, $5)";

pub(crate) fn flag_by_execution() -> String {
    format!("SELECT {FLAG_COLUMNS} FROM ungated_runs WHERE execution_id = $1")
}

pub(crate) fn flags_of_task() -> String {
    format!(
        "SELECT {FLAG_COLUMNS} FROM ungated_runs WHERE task_id = $1 \
         ORDER BY created_at, execution_id"
    )
}

/// `$1` node, `$2` ended after (ms), `$3` limit: this node's (or no
/// node's) executions, live or recently ended, not flagged yet.
pub(crate) const WATCHED: &str = "SELECT id, task_id, status, session_id, exit_code, created_at, \
     ended_at, node_id FROM executions e \
     WHERE (e.node_id = $1 OR e.node_id IS NULL) \
       AND (e.status IN ('RUNNING', 'PAUSED') OR e.ended_at >= $2) \
       AND NOT EXISTS (SELECT 1 FROM ungated_runs u WHERE u.execution_id = e.id) \
     ORDER BY e.created_at, e.id LIMIT +$3";

pub(crate) fn flag<R: SqlRow>(row: &R) -> StoreResult<UngatedFlag> {
    Ok(UngatedFlag {
        execution_id: row.col("execution_id")?,
        task_id: row.col("task_id")?,
        tool: row.col("tool")?,
        call_key: row.col("call_key")?,
        evidence: enum_col(row, "evidence", UngatedEvidence::parse)?,
        detail: row.col("detail")?,
        message_id: row.col("message_id")?,
        outbound_id: row.col("outbound_id")?,
        created_at: time(row.col("created_at")?)?,
    })
}
