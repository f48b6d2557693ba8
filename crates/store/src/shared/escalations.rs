//! The escalation and reachability half of
//! [`ReminderStore`](harness_core::store::ReminderStore) (migration sqlite
//! 0028 / postgres 0017), SQL once for both backends; the methods are in
//! `reminders::reminder_store!`. The "answered" notices are written by the
//! migration's trigger, in the transaction of the answer itself.

use harness_core::store::{Escalation, SendFailure, StoreResult};

use super::{SqlRow, time};

/// The escalation row: `$1` ask, `$2` seq, `$3` target, `$4` outbound id,
/// `$5` reason, `$6` notice, `$7` now — only while the ask is OPEN and no
/// escalation row `seq` or later exists (seq 1 first: an ask is escalated
/// once).
pub(crate) const INSERT_ESCALATION: &str = "INSERT INTO ask_escalations \
     (message_id, seq, target, outbound_id, reason, notice, created_at) \
     SELECT $1, $2, $3, $4, $5, $6, $7 \
     WHERE EXISTS (SELECT 1 FROM harness_messages m WHERE m.id = $1 AND m.kind = 'ask' AND m.state = 'OPEN') \
       AND NOT EXISTS (SELECT 1 FROM ask_escalations e WHERE e.message_id = $1 AND e.seq >= $2) \
     ON CONFLICT DO NOTHING";

pub(crate) const ESCALATION_COLUMNS: &str =
    "message_id, seq, target, outbound_id, reason, created_at";

/// `$1` outbound id: 1 when it asks a question that no longer waits — a
/// reminder or escalation of an ask that left OPEN, or an approval's push
/// (`approval:<id>`) whose approval is no longer PENDING.
pub(crate) const QUESTION_CLOSED: &str = "SELECT CAST(CASE WHEN \
       EXISTS (SELECT 1 FROM ask_reminders r JOIN harness_messages m ON m.id = r.message_id \
               WHERE r.outbound_id = $1 AND m.state <> 'OPEN') \
    OR EXISTS (SELECT 1 FROM ask_escalations e JOIN harness_messages m ON m.id = e.message_id \
               WHERE e.outbound_id = $1 AND m.state <> 'OPEN') \
    OR EXISTS (SELECT 1 FROM harness_outbound o JOIN approvals a ON o.dedup_key = 'approval:' || a.id \
               WHERE o.id = $1 AND a.state <> 'PENDING') \
    THEN 1 ELSE 0 END AS BIGINT) AS closed";

/// `$1` gateway, `$2` platform, `$3` chat (bare: a row may name it as
/// `<platform>:<chat>`, as gateways write either form): when its person last wrote
/// (an inbound message, or an answer through the gateway to an ask whose
/// first row — its own, or its approval's push — reached the chat, and
/// that was never escalated: an escalated ask may have been answered from
/// another chat). An answer on the web is none: the chat's window did not
/// move.
pub(crate) const LAST_WROTE: &str = "SELECT MAX(t) AS last_wrote FROM ( \
       SELECT MAX(i.created_at) AS t FROM gateway_inbound i \
         WHERE i.gateway = $1 AND i.platform = $2 AND i.chat_id = $3 \
       UNION ALL \
       SELECT MAX(g.answered_at) AS t FROM ask_gateway_answers g \
         JOIN harness_outbound o ON o.harness_message_id = g.message_id \
           OR o.dedup_key IN (SELECT 'approval:' || a.id FROM approvals a WHERE a.request_id = g.message_id) \
         WHERE o.gateway = $1 AND COALESCE(o.platform, o.downstream) = $2 \
           AND (o.platform_chat_id = $3 OR o.dest = $3 \
             OR o.platform_chat_id = $2 || ':' || $3 OR o.dest = $2 || ':' || $3) \
           AND NOT EXISTS (SELECT 1 FROM ask_escalations e WHERE e.message_id = g.message_id) \
     ) x";

/// `$1` ask, `$2` when: answered through a gateway (once), in the
/// transaction of the answer or the approval's decision.
pub(crate) const RECORD_GATEWAY_ANSWER: &str = "INSERT INTO ask_gateway_answers (message_id, answered_at) \
     SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM harness_messages m WHERE m.id = $1) \
     ON CONFLICT DO NOTHING";

/// `$1` gateway, `$2` downstream (`''`: none), `$3` dest (`''`: none): the
/// newest failed row to that target since its last delivery. A row dropped
/// on purpose (`not sent: …`: its question closed before it went out) never
/// tried to send, so it is no failure.
pub(crate) const LAST_FAILURE: &str = "SELECT o.last_error, o.attempts, o.updated_at, o.state \
     FROM harness_outbound o \
     WHERE o.gateway = $1 AND COALESCE(o.downstream, '') = $2 AND COALESCE(o.dest, '') = $3 \
       AND o.state IN ('FAILED', 'DEAD') AND o.last_error IS NOT NULL \
       AND o.last_error NOT LIKE 'not sent:%' \
       AND o.updated_at > COALESCE((SELECT MAX(d.delivered_at) FROM harness_outbound d \
           WHERE d.gateway = $1 AND COALESCE(d.downstream, '') = $2 AND COALESCE(d.dest, '') = $3 \
             AND d.state IN ('DELIVERED', 'SENT_UNVERIFIED')), 0) \
     ORDER BY o.updated_at DESC, o.id DESC LIMIT 1";

pub(crate) fn escalation<R: SqlRow>(row: &R) -> StoreResult<Escalation> {
    let seq: i64 = row.col("seq")?;
    Ok(Escalation {
        message_id: row.col("message_id")?,
        seq: u32::try_from(seq)
            .map_err(|_| super::corrupt("ask_escalations.seq", &seq.to_string()))?,
        target: row.col("target")?,
        outbound_id: row.col("outbound_id")?,
        reason: row.col("reason")?,
        created_at: time(row.col("created_at")?)?,
    })
}

pub(crate) fn failure<R: SqlRow>(row: &R) -> StoreResult<SendFailure> {
    let attempts: i64 = row.col("attempts")?;
    let state: String = row.col("state")?;
    Ok(SendFailure {
        error: row.col("last_error")?,
        attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        at: time(row.col("updated_at")?)?,
        dead: state == "DEAD",
    })
}
