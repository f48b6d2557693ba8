//! The SQL of [`harness_core::store::ApprovalStore`], written once for
//! both backends with `$n` parameters (both run it as is: sqlx-sqlite binds
//! `$n` like `?n`); the methods are `crate::shared::approval_store`'s.
//! Both backends serialise writers (SQLite's one writer, PostgreSQL's
//! store-wide advisory lock), so each conditional statement below has
//! exactly one winner.

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

/// The audit page ($1 task, $2 since ms, $3 until ms, $4 before id, $5
/// limit; NULL = no filter). The cursor is a keyset on (created_at, id):
/// an unknown id matches nothing (the core checks it exists first).
pub(crate) fn list() -> String {
    format!(
        "SELECT {COLS} FROM approvals a WHERE (CAST($1 AS TEXT) IS NULL OR a.task_id = $1) \
         AND (CAST($2 AS BIGINT) IS NULL OR a.created_at >= $2) \
         AND (CAST($3 AS BIGINT) IS NULL OR a.created_at < $3) \
         AND (CAST($4 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM approvals c WHERE c.id = $4 \
           AND (a.created_at < c.created_at OR (a.created_at = c.created_at AND a.id < c.id)))) \
         ORDER BY a.created_at DESC, a.id DESC LIMIT +$5"
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
/// $3 node, $4 text, $5 key, $6 now, $7 resume: the agent is restarted from
/// its session to read it when its terminal is gone, e.g. after a server
/// restart). Followed by [`typed_existing`] when the key was taken.
pub(crate) fn typed(columns: &str) -> String {
    format!(
        "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
         attempts, next_attempt_at, created_at, updated_at, resume) \
         VALUES ($1, $2, 'input', $3, $4, 1, $5, 'QUEUED', 0, $6, $6, $6, $7) \
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

/// A decided approval's push to chat and its ask's reminders and
/// escalations not sent yet are dropped ($1 key `approval:<id>`, $2 now,
/// $3 the ask): nobody needs to answer them any more.
pub(crate) fn drop_push() -> String {
    format!(
        "UPDATE harness_outbound SET state = 'DEAD', \
           last_error = 'not sent: the approval was decided first', \
           next_attempt_at = NULL, updated_at = $2 \
         WHERE state IN ('PENDING', 'FAILED') AND (dedup_key = $1 \
           OR id IN (SELECT r.outbound_id FROM ask_reminders r WHERE r.message_id = $3 \
             UNION ALL SELECT e.outbound_id FROM ask_escalations e WHERE e.message_id = $3)) \
         RETURNING {}",
        crate::shared::outbox::returning()
    )
}

/// Decisions of the task never used that went stale ($1 task, $2 at): the
/// task asked something newer since (an ask created after the decision,
/// other than the approval's own), or the execution that asked ended after
/// the decision (not by a restart's interruption: that agent is resumed
/// and reads the decision). Closed as used, outcome `unused`, so a grant
/// never outlives the turn it was for.
pub(crate) const EXPIRE_UNUSED: &str = "UPDATE approvals SET consumed_at = $2, outcome = 'unused' \
    WHERE task_id = $1 AND state IN ('APPROVED', 'DENIED') AND consumed_at IS NULL AND ( \
      EXISTS (SELECT 1 FROM harness_messages m WHERE m.task_id = $1 AND m.kind = 'ask' \
        AND m.id <> approvals.request_id AND m.created_at > approvals.decided_at) \
      OR EXISTS (SELECT 1 FROM executions e WHERE e.id = approvals.execution_id \
        AND e.ended_at IS NOT NULL AND e.ended_at >= approvals.decided_at \
        AND COALESCE(e.end_reason, '') <> 'interrupted'))";

/// A derived task's approval push, due later ($1 id, $2 due ms): the
/// parent is asked first (the escalation ladder's step).
pub(crate) fn defer_push() -> String {
    format!(
        "UPDATE harness_outbound SET next_attempt_at = $2 WHERE id = $1 RETURNING {}",
        crate::shared::outbox::returning()
    )
}

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
