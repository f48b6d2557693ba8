//! The statements and decoders of
//! [`TaskStore`](harness_core::store::TaskStore) shared by both backends;
//! the methods are [`super::task_store`]'s.

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
