//! The `harness_outbound` row (migration 0008): its columns and decoder.

use harness_core::{
    model::MessageState,
    outbox::{Outbound, OutboundState},
    store::{StoreError, StoreResult},
};

use super::{Bind, SqlRow, opt_time, time};

pub(crate) const COLUMNS: &str = "o.id, o.dedup_key, o.task_id, o.execution_id, o.harness_message_id, o.gateway, \
     o.downstream, o.dest, o.requested_to, o.profile, o.scope, o.expect_reply, o.message, \
     o.presentation, o.state, o.attempts, o.next_attempt_at, o.lease_owner, o.lease_expires_at, \
     o.platform, o.platform_chat_id, o.platform_message_id, o.last_error, o.delivered_at, \
     o.created_at, o.updated_at, o.started_attempt";

/// The "really started" evidence, committed just before a sender spawns the
/// CLI, for several sends in one statement (a group commit): each row only
/// while still SENDING under `owner`'s lease at its attempt. `$1` owner,
/// then each row's id and attempt. Answers the statement and its binds;
/// its rows are the ids marked.
pub(crate) fn mark_started(owner: &str, marks: &[(String, u32)]) -> (String, Vec<Bind>) {
    let mut binds = vec![Bind::Text(owner.to_string())];
    let mut rows = Vec::with_capacity(marks.len());
    for (id, attempt) in marks {
        let n = binds.len();
        rows.push(format!("(id = ${} AND attempts = ${})", n + 1, n + 2));
        binds.push(Bind::Text(id.clone()));
        binds.push(Bind::Int(i64::from(*attempt)));
    }
    let rows = if rows.is_empty() {
        "0 = 1".to_string()
    } else {
        rows.join(" OR ")
    };
    let sql = format!(
        "UPDATE harness_outbound SET started_attempt = attempts \
         WHERE state = 'SENDING' AND lease_owner = $1 AND ({rows}) RETURNING id"
    );
    (sql, binds)
}

pub(crate) fn returning() -> String {
    COLUMNS.replace("o.", "")
}

/// Whether a new row may be written (`$1` explicit key, `$2` implicit base,
/// `$3` task): the task exists, and the explicit key is unused, or the
/// newest row of the base is not in the current lifecycle (still waiting to
/// be sent, an ask still OPEN, or a notify that may already have gone out).
pub(crate) const ALLOWED: &str = "($3 IS NULL OR EXISTS (SELECT 1 FROM tasks t WHERE t.id = $3)) AND CASE \
     WHEN $1 IS NOT NULL THEN NOT EXISTS (SELECT 1 FROM harness_outbound k WHERE k.dedup_key = $1) \
     ELSE NOT EXISTS (SELECT 1 FROM harness_outbound n LEFT JOIN harness_messages nm ON nm.id = n.harness_message_id \
       WHERE n.id = (SELECT b.id FROM harness_outbound b WHERE b.dedup_base = $2 \
         ORDER BY b.created_at DESC, b.id DESC LIMIT 1) \
       AND (nm.state IN ('PENDING_DELIVERY', 'OPEN') OR (n.state = 'SENT_UNVERIFIED' AND n.expect_reply = 0))) END";

pub(crate) fn outbound<R: SqlRow>(row: &R) -> StoreResult<Outbound> {
    let state: String = row.col("state")?;
    let attempts: i64 = row.col("attempts")?;
    Ok(Outbound {
        id: row.col("id")?,
        dedup_key: row.col("dedup_key")?,
        task_id: row.col("task_id")?,
        execution_id: row.col("execution_id")?,
        message_id: row.col("harness_message_id")?,
        gateway: row.col("gateway")?,
        downstream: row.col("downstream")?,
        dest: row.col("dest")?,
        requested_to: row.col("requested_to")?,
        profile: row.col("profile")?,
        scope: row.col("scope")?,
        expect_reply: row.col::<i64>("expect_reply")? != 0,
        message: row.col("message")?,
        presentation: row.col("presentation")?,
        state: OutboundState::parse(&state).ok_or(StoreError::Corrupt {
            column: "harness_outbound.state",
            value: state.clone(),
        })?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        next_attempt_at: opt_time(row.col("next_attempt_at")?)?,
        lease_owner: row.col("lease_owner")?,
        lease_expires_at: opt_time(row.col("lease_expires_at")?)?,
        platform: row.col("platform")?,
        platform_chat_id: row.col("platform_chat_id")?,
        platform_message_id: row.col("platform_message_id")?,
        last_error: row.col("last_error")?,
        delivered_at: opt_time(row.col("delivered_at")?)?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
        started_attempt: row
            .col::<Option<i64>>("started_attempt")?
            .and_then(|a| u32::try_from(a).ok()),
    })
}

pub(crate) fn message_state(v: Option<String>) -> StoreResult<Option<MessageState>> {
    v.map(|s| {
        MessageState::parse(&s).ok_or(StoreError::Corrupt {
            column: "harness_messages.state",
            value: s,
        })
    })
    .transpose()
}
