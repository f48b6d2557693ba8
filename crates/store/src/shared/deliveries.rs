//! The `deliveries` row (migration 0004): its columns and decoder.

use std::sync::LazyLock;

use harness_core::{
    deliveries::{Delivery, DeliveryKind, DeliveryState},
    store::{StoreError, StoreResult},
    work::{ManualAction, ManualActions},
};

use super::{SqlRow, opt_time, time};

pub(crate) const DELIVERY_COLUMNS: &str = "id, task_id, kind, message_id, node_id, text, question, \
     submit, dedup_key, state, attempts, next_attempt_at, lease_owner, lease_expires_at, \
     last_error, created_at, updated_at, done_at, resume";

/// States a worker may claim (due rows only).
pub(crate) const CLAIMABLE: &str = "('QUEUED', 'WAITING_BOUNDARY', 'RESUMING', 'FAILED')";

pub(crate) fn delivery<R: SqlRow>(row: &R) -> StoreResult<Delivery> {
    let kind: String = row.col("kind")?;
    let state: String = row.col("state")?;
    let attempts: i64 = row.col("attempts")?;
    Ok(Delivery {
        id: row.col("id")?,
        task_id: row.col("task_id")?,
        kind: DeliveryKind::parse(&kind).ok_or(StoreError::Corrupt {
            column: "deliveries.kind",
            value: kind.clone(),
        })?,
        message_id: row.col("message_id")?,
        node_id: row.col("node_id")?,
        text: row.col("text")?,
        question: row.col("question")?,
        submit: row.col::<i64>("submit")? != 0,
        dedup_key: row.col("dedup_key")?,
        state: DeliveryState::parse(&state).ok_or(StoreError::Corrupt {
            column: "deliveries.state",
            value: state.clone(),
        })?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        next_attempt_at: opt_time(row.col("next_attempt_at")?)?,
        lease_owner: row.col("lease_owner")?,
        lease_expires_at: opt_time(row.col("lease_expires_at")?)?,
        last_error: row.col("last_error")?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
        done_at: opt_time(row.col("done_at")?)?,
        resume: row.col::<i64>("resume")? != 0,
    })
}

pub(crate) fn state_list(states: &[DeliveryState]) -> String {
    super::quoted_list(states.iter().map(|s| s.as_str()))
}

/// The reply's delivery row, built from what `answer_open_ask` inserted.
pub(crate) struct ReplyRow {
    pub id: String,
    pub task_id: String,
    pub message_id: String,
    pub node_id: Option<String>,
    pub text: String,
    pub question: String,
    pub now: i64,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<i64>,
}

impl ReplyRow {
    pub(crate) fn into_delivery(self) -> StoreResult<Delivery> {
        let at = time(self.now)?;
        Ok(Delivery {
            id: self.id,
            task_id: self.task_id,
            kind: DeliveryKind::Reply,
            message_id: Some(self.message_id),
            node_id: self.node_id,
            text: self.text,
            question: Some(self.question),
            submit: true,
            dedup_key: None,
            state: DeliveryState::Queued,
            attempts: 0,
            next_attempt_at: Some(at),
            lease_owner: self.lease_owner,
            lease_expires_at: opt_time(self.lease_expires_at)?,
            last_error: None,
            created_at: at,
            updated_at: at,
            done_at: None,
            resume: false,
        })
    }
}

/// The INSERT of a reply's delivery, run inside the answering transaction
/// (`$1` task, `$2` delivery id, `$3` ask id, `$4` reply text, `$5` question,
/// `$6` now; the hand-off lease `$7` owner, `$8` its node, `$9` until — taken
/// only when the row's node is that node or none). Only when the task's
/// agent ever ran; bound to the node of its live execution, if any.
pub(crate) const INSERT_REPLY_DELIVERY: &str = "INSERT INTO deliveries (id, task_id, kind, message_id, node_id, text, question, \
       submit, state, attempts, next_attempt_at, created_at, updated_at, lease_owner, lease_expires_at) \
     SELECT $2, $1, 'reply', $3, n.node_id, $4, $5, 1, 'QUEUED', 0, $6, $6, $6, \
       CASE WHEN n.node_id IS NULL OR n.node_id = $8 THEN $7 END, \
       CASE WHEN $7 IS NOT NULL AND (n.node_id IS NULL OR n.node_id = $8) THEN $9 END \
     FROM (SELECT (SELECT x.node_id FROM executions x WHERE x.task_id = $1 \
       AND x.status IN ('RUNNING', 'PAUSED') ORDER BY x.created_at DESC, x.id DESC LIMIT 1) AS node_id) AS n \
     WHERE EXISTS (SELECT 1 FROM executions e WHERE e.task_id = $1) \
     RETURNING 'delivery' AS what, id, node_id, lease_owner, lease_expires_at";

/// Run by `enqueue_input`.
pub(crate) static INSERT_INPUT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
             attempts, next_attempt_at, created_at, updated_at, resume) \
             VALUES ($1, $2, 'input', $3, $4, $5, $6, 'QUEUED', 0, $7, $7, $7, $8) \
             ON CONFLICT (task_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING \
             RETURNING {DELIVERY_COLUMNS}",
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `enqueue_input`.
pub(crate) static INPUT_BY_KEY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE task_id = $1 AND dedup_key = $2",
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `advance_delivery`.
pub(crate) static ADVANCE_DELIVERY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE deliveries SET state = $1, lease_expires_at = $2, updated_at = $3 \
             WHERE id = $4 AND lease_owner = $5 AND state IN {CLAIMABLE} \
             RETURNING {DELIVERY_COLUMNS}",
        CLAIMABLE = super::deliveries::CLAIMABLE,
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `complete_delivery`.
pub(crate) static COMPLETE_DELIVERY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE deliveries SET state = 'DELIVERED', next_attempt_at = NULL, lease_owner = NULL, \
               lease_expires_at = NULL, last_error = NULL, updated_at = $1, done_at = $1 \
             WHERE id = $2 AND lease_owner = $3 AND state = 'WRITING' \
             RETURNING {DELIVERY_COLUMNS}",
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `mark_delivery_delivered`.
pub(crate) static MARK_DELIVERY_DELIVERED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE deliveries SET state = 'DELIVERED', next_attempt_at = NULL, lease_owner = NULL, \
               lease_expires_at = NULL, updated_at = $1, done_at = $1 \
             WHERE id = $2 AND state IN {from} RETURNING {DELIVERY_COLUMNS}",
        from = state_list(DeliveryState::accepted_by(ManualAction::MarkDelivered)),
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `task_deliveries`.
pub(crate) static TASK_DELIVERIES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE task_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT +$2",
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});
