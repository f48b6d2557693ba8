//! The morning report's reads and the `reports` / `report_items` tables
//! (migration 0041 on both backends) once for both: the SQL and the row
//! decoders of [`harness_core::store::ReportStore`]; the methods are
//! [`super::report_store`]'s.

use harness_core::store::{
    ANSWERED_BY_DEFAULT, ExecutionFact, ItemKind, ItemRef, MessageFact, ReportChannel, StoreResult,
    StoredReport,
};

use super::{SqlRow, enum_col, opt_time, rows, time};

/// `$1` since, `$2` until (ms), `$3` limit: live at some moment of the
/// window.
pub(crate) const EXECUTIONS: &str = "SELECT id, task_id, status, session_id, exit_code, \
     created_at, ended_at, node_id, end_reason, reboot_note FROM executions \
     WHERE created_at < $2 AND (ended_at IS NULL OR ended_at >= $1) \
     ORDER BY created_at, id LIMIT +$3";

/// `$1` since, `$2` until (ms), `$3` limit: created or answered in the
/// window, or an OPEN ask. Counts are BIGINT on both backends.
pub(crate) const MESSAGES: &str = "SELECT m.id, m.task_id, m.execution_id, m.kind, m.state, \
     m.content, m.reply_text, m.replied_at, m.created_at, \
     c.answered_by, c.default_label, c.deadline_at, \
     (SELECT COUNT(*) FROM ask_reminders r WHERE r.message_id = m.id) AS reminders, \
     (SELECT COUNT(*) FROM ask_gateway_answers g WHERE g.message_id = m.id) AS via_chat \
     FROM harness_messages m LEFT JOIN ask_choices c ON c.message_id = m.id \
     WHERE (m.created_at >= $1 AND m.created_at < $2) \
        OR (m.replied_at >= $1 AND m.replied_at < $2) \
        OR (m.kind = 'ask' AND m.state = 'OPEN') \
     ORDER BY m.created_at, m.id LIMIT +$3";

/// `$1` since, `$2` until (ms), `$3` limit.
pub(crate) const APPROVAL_IDS: &str = "SELECT id FROM approvals \
     WHERE (created_at >= $1 AND created_at < $2) \
        OR (decided_at >= $1 AND decided_at < $2) OR state = 'PENDING' \
     ORDER BY created_at, id LIMIT +$3";

/// `$1`…`$7`: id, channel, scope, since, until, content, now.
pub(crate) const INSERT_REPORT: &str = "INSERT INTO reports \
     (id, channel, scope, since_at, until_at, content, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// `$1`…`$5`: report, number, kind, ref, task.
pub(crate) const INSERT_ITEM: &str = "INSERT INTO report_items \
     (report_id, number, kind, ref_id, task_id) VALUES ($1, $2, $3, $4, $5)";

pub(crate) const REPORT: &str = "SELECT id, channel, scope, since_at, until_at, content, \
     created_at FROM reports WHERE id = $1";

pub(crate) const ITEMS: &str = "SELECT number, kind, ref_id, task_id FROM report_items \
     WHERE report_id = $1 ORDER BY number";

/// `$1` channel, `$2` scope.
pub(crate) const LAST_UNTIL: &str = "SELECT MAX(until_at) FROM reports \
     WHERE channel = $1 AND scope = $2";

pub(crate) fn execution_fact<R: SqlRow>(row: &R) -> StoreResult<ExecutionFact> {
    Ok(ExecutionFact {
        execution: rows::execution(row)?,
        end_reason: row.col("end_reason")?,
        reboot_note: row.col("reboot_note")?,
    })
}

pub(crate) fn message_fact<R: SqlRow>(row: &R) -> StoreResult<MessageFact> {
    let answered_by: Option<String> = row.col("answered_by")?;
    Ok(MessageFact {
        message: rows::message(row)?,
        reminders: u32::try_from(row.col::<i64>("reminders")?).unwrap_or(u32::MAX),
        via_chat: row.col::<i64>("via_chat")? > 0,
        by_default: answered_by.as_deref() == Some(ANSWERED_BY_DEFAULT),
        default_label: row.col("default_label")?,
        deadline_at: opt_time(row.col("deadline_at")?)?,
    })
}

pub(crate) fn report<R: SqlRow>(row: &R, items: Vec<ItemRef>) -> StoreResult<StoredReport> {
    Ok(StoredReport {
        id: row.col("id")?,
        channel: enum_col(row, "channel", ReportChannel::parse)?,
        scope: row.col("scope")?,
        since: time(row.col("since_at")?)?,
        until: time(row.col("until_at")?)?,
        content: row.col("content")?,
        created_at: time(row.col("created_at")?)?,
        items,
    })
}

pub(crate) fn item<R: SqlRow>(row: &R) -> StoreResult<ItemRef> {
    let number: i64 = row.col("number")?;
    Ok(ItemRef {
        number: u32::try_from(number).map_err(|_| super::corrupt("number", &number.to_string()))?,
        kind: enum_col(row, "kind", ItemKind::parse)?,
        ref_id: row.col("ref_id")?,
        task_id: row.col("task_id")?,
    })
}
