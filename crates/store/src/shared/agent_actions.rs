//! The statements and the row decoder of
//! [`harness_core::store::AgentActionStore`] (migration 0038,
//! `agent_actions`), shared by both backends; the methods are
//! [`super::agent_action_store`]'s. The claim, release and expiry are the
//! engine's generic statements (`shared::work`).

use std::sync::LazyLock;

use harness_core::store::{
    AGENT_ACTIONS, ActionKind, ActionReason, ActionState, AgentAction, StoreResult,
};

use super::{Dialect, SqlRow, enum_col, opt_time, time};

pub(crate) const COLUMNS: &str = "id, task_id, execution_id, node_id, action, reason, text, \
     due_at, dedup_key, state, attempts, next_attempt_at, lease_owner, lease_expires_at, \
     last_error, result, delivery_id, started_execution_id, created_at, updated_at, done_at";

/// `$1` id, `$2` task, `$3` execution, `$4` node, `$5` action, `$6`
/// reason, `$7` text, `$8` due at, `$9` dedup key, `$10` now.
pub(crate) const INSERT: &str = "INSERT INTO agent_actions (id, task_id, execution_id, node_id, \
     action, reason, text, due_at, dedup_key, state, attempts, next_attempt_at, created_at, \
     updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', 0, $8, $10, $10) \
     ON CONFLICT (dedup_key) DO NOTHING";

pub(crate) static BY_KEY: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM agent_actions WHERE dedup_key = $1"));

pub(crate) static BY_ID: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM agent_actions WHERE id = $1"));

/// `$1` execution, `$2` the new row's id, `$3` the note, `$4` now: the
/// execution's other due actions are cancelled.
pub(crate) static SUPERSEDE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE agent_actions SET state = 'CANCELLED', last_error = $3, next_attempt_at = NULL, \
           updated_at = $4 \
         WHERE execution_id = $1 AND id <> $2 AND state IN ('PENDING', 'FAILED') \
         RETURNING {COLUMNS}"
    )
});

pub(crate) static OPEN: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {COLUMNS} FROM agent_actions \
         WHERE execution_id = $1 AND state IN ('PENDING', 'RUNNING', 'FAILED') \
         ORDER BY created_at, id"
    )
});

pub(crate) const CLOSED_COUNT: &str = "SELECT COUNT(*) FROM agent_actions \
     WHERE execution_id = $1 AND reason = $2 AND state NOT IN ('PENDING', 'RUNNING', 'FAILED')";

/// Done, or maybe done (under way, unverified), since `$3`: the caps.
pub(crate) const DONE_SINCE: &str = "SELECT COUNT(*) FROM agent_actions \
     WHERE task_id = $1 AND reason = $2 AND state IN ('DONE', 'RUNNING', 'UNVERIFIED') \
       AND COALESCE(done_at, updated_at) >= $3";

/// `$1` task, `$2` execution (NULL: every one of the task), `$3` why, `$4`
/// now: due rows only (a row under way is its worker's).
pub(crate) static CANCEL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE agent_actions SET state = 'CANCELLED', last_error = $3, next_attempt_at = NULL, \
           updated_at = $4 \
         WHERE task_id = $1 AND (execution_id = $2 OR $2 IS NULL) \
           AND state IN ('PENDING', 'FAILED') \
         RETURNING {COLUMNS}"
    )
});

/// `$1` id, `$2` state, `$3` next attempt, `$4` error, `$5` result, `$6`
/// delivery, `$7` started execution, `$8` now, `$9` lease owner: only a
/// row still RUNNING under this owner (a late outcome after a recovery is
/// ignored).
pub(crate) const SETTLE: &str = "UPDATE agent_actions SET state = $2, next_attempt_at = $3, \
     last_error = $4, result = COALESCE($5, result), delivery_id = COALESCE($6, delivery_id), \
     started_execution_id = COALESCE($7, started_execution_id), \
     done_at = CASE WHEN $2 IN ('DONE', 'UNVERIFIED') THEN $8 ELSE done_at END, \
     lease_owner = NULL, lease_expires_at = NULL, updated_at = $8 \
     WHERE id = $1 AND state = 'RUNNING' AND lease_owner = $9";

pub(crate) static OF_TASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {COLUMNS} FROM agent_actions WHERE task_id = $1 \
         ORDER BY created_at DESC, id DESC LIMIT +$2"
    )
});

/// `$1` id, `$2` now, `$3` lease owner: back to due now, the claim's
/// attempt undone (the engine's generic release).
pub(crate) static RELEASE: LazyLock<String> = LazyLock::new(|| {
    use super::work::{Whose, release};
    release(
        &AGENT_ACTIONS,
        Whose::Owner("$3"),
        Some("($1)"),
        "$2",
        "",
        "id",
    )
    .unwrap_or_default()
});

/// `$1` now: a RUNNING row whose lease ended may have been done (the
/// engine's generic expiry).
pub(crate) static EXPIRE: LazyLock<String> = LazyLock::new(|| {
    use super::work::{Whose, unverify};
    unverify(&AGENT_ACTIONS, Whose::Expired("$1"), "$1", "id")
});

/// `$1` owner, `$2` lease until, `$3` now, `$4` limit, `$5` node: the
/// engine's generic claim of this node's rows and of rows of no node.
pub(crate) fn claim(dialect: Dialect) -> String {
    use super::work::ClaimParams;
    let params = ClaimParams {
        owner: "$1",
        until: "$2",
        now: "$3",
        lease_now: "$3",
        limit: "$4",
        node: Some(("$5", "1")),
        within: "",
        set: "",
    };
    super::work::claim(&AGENT_ACTIONS, dialect, params, "", "", COLUMNS)
}

pub(crate) fn action<R: SqlRow>(row: &R) -> StoreResult<AgentAction> {
    Ok(AgentAction {
        id: row.col("id")?,
        task_id: row.col("task_id")?,
        execution_id: row.col("execution_id")?,
        node_id: row.col("node_id")?,
        action: enum_col(row, "action", ActionKind::parse)?,
        reason: enum_col(row, "reason", ActionReason::parse)?,
        text: row.col("text")?,
        due_at: time(row.col("due_at")?)?,
        dedup_key: row.col("dedup_key")?,
        state: enum_col(row, "state", ActionState::parse)?,
        attempts: u32::try_from(row.col::<i64>("attempts")?).unwrap_or(u32::MAX),
        next_attempt_at: opt_time(row.col("next_attempt_at")?)?,
        lease_owner: row.col("lease_owner")?,
        lease_expires_at: opt_time(row.col("lease_expires_at")?)?,
        last_error: row.col("last_error")?,
        result: row.col("result")?,
        delivery_id: row.col("delivery_id")?,
        started_execution_id: row.col("started_execution_id")?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
        done_at: opt_time(row.col("done_at")?)?,
    })
}

/// A count as the port answers it.
pub(crate) fn count(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
