//! The SQL of [`harness_core::store::ApprovalStore`] (issue 31), written
//! once with `$n` parameters: PostgreSQL runs it as is, SQLite with `?n`
//! ([`sqlite`]). Both backends serialise writers (SQLite's one writer,
//! PostgreSQL's store-wide advisory lock), so each conditional statement
//! below has exactly one winner.

pub(crate) const COLS: &str = "id, task_id, execution_id, request_id, tool, input, input_hash, \
    cwd, rule, state, parked, decided_by, decided_via, decided_at, reason, consumed_at, outcome, \
    created_at";

pub(crate) fn insert() -> String {
    format!(
        "INSERT INTO approvals (id, task_id, execution_id, request_id, tool, input, input_hash, \
         cwd, rule, state, parked, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', 0, $10) RETURNING {COLS}"
    )
}

pub(crate) fn by_id() -> String {
    format!("SELECT {COLS} FROM approvals WHERE id = $1")
}

pub(crate) fn by_request() -> String {
    format!("SELECT {COLS} FROM approvals WHERE request_id = $1")
}

pub(crate) fn pending_for_call() -> String {
    format!(
        "SELECT {COLS} FROM approvals WHERE task_id = $1 AND input_hash = $2 \
         AND state = 'PENDING' ORDER BY created_at DESC, id DESC LIMIT 1"
    )
}

pub(crate) fn list_all() -> String {
    format!("SELECT {COLS} FROM approvals ORDER BY created_at DESC, id DESC LIMIT $1")
}

pub(crate) fn list_task() -> String {
    format!(
        "SELECT {COLS} FROM approvals WHERE task_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
    )
}

/// The conditional decision ($1 id, $2 state, $3 by, $4 via, $5 at, $6 reason).
pub(crate) fn decide() -> String {
    format!(
        "UPDATE approvals SET state = $2, decided_by = $3, decided_via = $4, decided_at = $5, \
         reason = $6 WHERE id = $1 AND state = 'PENDING' RETURNING {COLS}"
    )
}

/// The carrying ask answered with the decision's label ($1 id, $2 text, $3 at).
pub(crate) const ANSWER_ASK: &str = "UPDATE harness_messages SET state = 'ANSWERED', \
    reply_text = $2, replied_at = $3 WHERE id = $1 AND state = 'OPEN'";

/// The task's parked executions run again ($1 task).
pub(crate) const RESUME: &str = "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
    WHERE task_id = $1 AND status = 'PAUSED'";

/// A parked approval's typed decision, keyed: owed once ($1 id, $2 task,
/// $3 node, $4 text, $5 key, $6 now). Followed by [`typed_existing`] when
/// the key was taken.
pub(crate) fn typed(columns: &str) -> String {
    format!(
        "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
         attempts, next_attempt_at, created_at, updated_at, resume) \
         VALUES ($1, $2, 'input', $3, $4, 1, $5, 'QUEUED', 0, $6, $6, $6, 0) \
         ON CONFLICT (task_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING \
         RETURNING {columns}"
    )
}

/// The delivery already under the key ($1 task, $2 key).
pub(crate) fn typed_existing(columns: &str) -> String {
    format!("SELECT {columns} FROM deliveries WHERE task_id = $1 AND dedup_key = $2")
}

pub(crate) const PARK: &str = "UPDATE approvals SET parked = 1, outcome = 'told-to-wait' \
    WHERE id = $1 AND state = 'PENDING'";

/// Use the oldest unused decision of a call once ($1 task, $2 hash, $3 at).
pub(crate) fn consume() -> String {
    format!(
        "UPDATE approvals SET consumed_at = $3, \
           outcome = CASE state WHEN 'APPROVED' THEN 'ran' ELSE 'held' END \
         WHERE id = (SELECT a.id FROM approvals a WHERE a.task_id = $1 AND a.input_hash = $2 \
           AND a.state IN ('APPROVED', 'DENIED') AND a.consumed_at IS NULL \
           ORDER BY a.created_at, a.id LIMIT 1) \
         AND consumed_at IS NULL RETURNING {COLS}"
    )
}

/// The same statement for SQLite (`?n` parameters).
pub(crate) fn sqlite(sql: &str) -> String {
    sql.replace('$', "?")
}
