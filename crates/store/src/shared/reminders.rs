//! The statements and decoders of
//! [`ReminderStore`](harness_core::store::ReminderStore) (migration sqlite
//! 0024 / postgres 0012), shared by both backends; the methods are
//! [`super::reminder_store`]'s.

use harness_core::store::{NewOutbound, Reminder, ReminderCandidate, StoreResult, Urgency};

use super::{Bind, SqlRow, outbox::outbound, time};

/// The columns of a candidate after the outbound row's: the ask, when it
/// was asked, its urgency (`$urgency` when it has none), its reminders so
/// far and whether it was escalated.
fn candidate_columns(urgency: &str) -> String {
    format!(
        "m.id AS ask_id, m.task_id AS ask_task_id, m.created_at AS asked_at, \
         COALESCE(c.urgency, '{urgency}') AS ask_urgency, \
         (SELECT COALESCE(MAX(r.seq), 0) FROM ask_reminders r WHERE r.message_id = m.id) AS reminders_sent, \
         CAST(CASE WHEN EXISTS (SELECT 1 FROM ask_escalations e WHERE e.message_id = m.id) THEN 1 ELSE 0 END AS BIGINT) AS ask_escalated"
    )
}

/// `$1` limit, after (`$2` asked at ms, `$3` ask id): OPEN asks whose outbound row (one per message) was sent,
/// and the asks of PENDING approvals whose push (`approval:<id>`, no
/// message of its own) was sent — an approval without a recorded urgency
/// is `high` (the core records every approval's ask as high) — oldest
/// first, keyset-paged.
pub(crate) fn candidates_sql() -> String {
    format!(
        "SELECT * FROM ( \
           SELECT {cols}, CAST(NULL AS TEXT) AS approval_id, {plain} \
           FROM harness_messages m \
           JOIN harness_outbound o ON o.harness_message_id = m.id \
           LEFT JOIN ask_choices c ON c.message_id = m.id \
           WHERE m.kind = 'ask' AND m.state = 'OPEN' AND o.state IN ('DELIVERED', 'SENT_UNVERIFIED') \
         UNION ALL \
           SELECT {cols}, a.id AS approval_id, {approval} \
           FROM approvals a \
           JOIN harness_messages m ON m.id = a.request_id \
           JOIN harness_outbound o ON o.dedup_key = 'approval:' || a.id \
           LEFT JOIN ask_choices c ON c.message_id = m.id \
           WHERE a.state = 'PENDING' AND m.kind = 'ask' AND m.state = 'OPEN' \
             AND o.state IN ('DELIVERED', 'SENT_UNVERIFIED') \
         ) x WHERE asked_at > $2 OR (asked_at = $2 AND ask_id > $3) \
         ORDER BY asked_at, ask_id LIMIT +$1",
        cols = super::outbox::COLUMNS,
        plain = candidate_columns("normal"),
        approval = candidate_columns("high"),
    )
}

/// The reminder row: `$1` ask, `$2` seq, `$3` outbound id, `$4` waited ms,
/// `$5` now — only while the ask is OPEN and no reminder `seq` or later
/// exists.
pub(crate) const INSERT_REMINDER: &str = "INSERT INTO ask_reminders \
     (message_id, seq, outbound_id, waited_ms, created_at) \
     SELECT $1, $2, $3, $4, $5 \
     WHERE EXISTS (SELECT 1 FROM harness_messages m WHERE m.id = $1 AND m.kind = 'ask' AND m.state = 'OPEN') \
       AND NOT EXISTS (SELECT 1 FROM ask_reminders r WHERE r.message_id = $1 AND r.seq >= $2)";

/// Its outbound row: `$1` id, `$2` dedup key, `$3` task, `$4` the ask (its
/// execution is the row's),
/// `$5` gateway, `$6` downstream, `$7` dest, `$8` requested to, `$9`
/// profile, `$10` scope, `$11` expect reply (0/1), `$12` text, `$13`
/// presentation, `$14` now. No message of its own (an outbound row carries
/// at most one, and the ask's is the first row's): its delivery mapping
/// names the task, whose OPEN ask a reply to it answers.
pub(crate) fn insert_outbound_sql() -> String {
    format!(
        "INSERT INTO harness_outbound (id, dedup_key, dedup_base, task_id, execution_id, \
           harness_message_id, gateway, downstream, dest, requested_to, profile, scope, \
           expect_reply, message, presentation, state, attempts, next_attempt_at, created_at, updated_at) \
         VALUES ($1, $2, NULL, $3, \
           (SELECT m.execution_id FROM harness_messages m WHERE m.id = $4), NULL, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'PENDING', 0, $14, $14, $14) \
         RETURNING {}",
        super::outbox::returning()
    )
}

/// The binds of [`insert_outbound_sql`] for `o`: its dedup key `key`
/// (`o.dedup` is ignored) and the ask `message_id` whose execution the row
/// takes. One binding for every writer of such a row: a reminder, an
/// escalation, an approval's push.
pub(crate) fn insert_outbound_binds(o: &NewOutbound, key: String, message_id: &str) -> Vec<Bind> {
    vec![
        Bind::Text(o.id.clone()),
        Bind::Text(key),
        Bind::OptText(o.task_id.clone()),
        Bind::Text(message_id.to_string()),
        Bind::Text(o.gateway.clone()),
        Bind::OptText(o.downstream.clone()),
        Bind::OptText(o.dest.clone()),
        Bind::OptText(o.requested_to.clone()),
        Bind::OptText(o.profile.clone()),
        Bind::Text(o.scope.clone()),
        Bind::Int(i64::from(o.expect_reply)),
        Bind::Text(o.message.clone()),
        Bind::OptText(o.presentation.clone()),
        Bind::Int(super::ms(o.now)),
    ]
}

/// `$1` now: reminders and escalations not sent yet whose ask is no
/// longer OPEN → DEAD; so are approval pushes (`approval:<id>`)
/// whose approval is no longer PENDING (a decision drops its push itself;
/// this catches one that was being sent then and failed, and one whose ask ended).
pub(crate) fn drop_stale_sql() -> String {
    format!(
        "UPDATE harness_outbound SET state = 'DEAD', \
           last_error = 'not sent: the ask was no longer waiting for an answer', \
           next_attempt_at = NULL, updated_at = $1 \
         WHERE state IN ('PENDING', 'FAILED') AND (id IN (SELECT r.outbound_id FROM ask_reminders r \
           JOIN harness_messages m ON m.id = r.message_id WHERE m.state <> 'OPEN' \
           UNION ALL SELECT e.outbound_id FROM ask_escalations e \
           JOIN harness_messages m ON m.id = e.message_id WHERE m.state <> 'OPEN') \
           OR (dedup_key LIKE 'approval:%' AND EXISTS (SELECT 1 FROM approvals a \
             WHERE a.id = substr(harness_outbound.dedup_key, 10) AND a.state <> 'PENDING'))) \
         RETURNING {}",
        super::outbox::returning()
    )
}

/// A reminder and whether its outbound row reached the chat.
pub(crate) const REMINDER_COLUMNS: &str = "message_id, seq, outbound_id, waited_ms, created_at, \
     CAST(CASE WHEN EXISTS (SELECT 1 FROM harness_outbound o WHERE o.id = ask_reminders.outbound_id \
       AND o.state IN ('DELIVERED', 'SENT_UNVERIFIED')) THEN 1 ELSE 0 END AS BIGINT) AS sent";

pub(crate) fn candidate<R: SqlRow>(row: &R) -> StoreResult<ReminderCandidate> {
    let urgency: String = row.col("ask_urgency")?;
    let sent: i64 = row.col("reminders_sent")?;
    let escalated: i64 = row.col("ask_escalated")?;
    Ok(ReminderCandidate {
        message_id: row.col("ask_id")?,
        approval_id: row.col("approval_id")?,
        task_id: row.col("ask_task_id")?,
        asked_at: time(row.col("asked_at")?)?,
        urgency: Urgency::parse(&urgency)
            .ok_or_else(|| super::corrupt("ask_choices.urgency", &urgency))?,
        sent: u32::try_from(sent).unwrap_or(u32::MAX),
        escalated: escalated != 0,
        first: outbound(row)?,
    })
}

pub(crate) fn reminder<R: SqlRow>(row: &R) -> StoreResult<Reminder> {
    let seq: i64 = row.col("seq")?;
    Ok(Reminder {
        message_id: row.col("message_id")?,
        seq: u32::try_from(seq)
            .map_err(|_| super::corrupt("ask_reminders.seq", &seq.to_string()))?,
        outbound_id: row.col("outbound_id")?,
        waited_ms: row.col("waited_ms")?,
        created_at: time(row.col("created_at")?)?,
        sent: row.col::<i64>("sent")? != 0,
    })
}
