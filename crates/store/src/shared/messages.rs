//! What both backends share of asks and answers: the statements, the
//! binds and steps built from the core's values, and the decoding of what
//! recording and answering returned. The store itself is
//! [`super::message_store`].

use std::sync::LazyLock;

use harness_core::{
    model::Message,
    store::{Answered, AskRecorded, DeliveryClaim, NewAsk, StoreError, StoreResult},
};

use super::{Bind, SqlRow, backend::Step, ms, rows, time};

/// The statements of `record_ask` on SQLite (binds: [`ask_binds`]),
/// without the transaction around them: superseded OPEN asks, the ask,
/// the parked executions. PostgreSQL runs the same statements as one
/// function of its schema (`postgres::RECORD_ASK_CALL`).
pub(crate) const RECORD_ASK: &str = "UPDATE harness_messages SET state = 'CANCELLED' \
       WHERE task_id = $1 AND kind = 'ask' AND state = 'OPEN' AND id <> $2 \
       RETURNING 'cancelled' AS what, id, NULL AS execution_id; \
     INSERT INTO harness_messages (id, task_id, execution_id, kind, state, content, created_at, \
         idempotency_key) \
       VALUES ($2, $1, (SELECT x.id FROM executions x WHERE x.task_id = $1 AND x.status = 'RUNNING' \
         ORDER BY x.created_at DESC, x.id DESC LIMIT 1), 'ask', 'OPEN', $3, $4, $5) \
       RETURNING 'asked' AS what, id, execution_id; \
     UPDATE executions SET status = 'PAUSED' WHERE task_id = $1 AND status = 'RUNNING' \
       RETURNING 'paused' AS what, id, NULL AS execution_id";

/// The statement that stores an ask's evidence (`NewAsk::evidence`) after
/// `RECORD_ASK`, in its transaction: its binds `$2` (the ask's id) and `$4`
/// (now), the screen at `$screen`. Answers a row of `RECORD_ASK`'s shape.
pub(crate) fn insert_evidence(screen: usize) -> String {
    format!(
        "INSERT INTO ask_evidence (message_id, screen, created_at) VALUES ($2, ${screen}, $4) \
           RETURNING 'evidence' AS what, message_id AS id, NULL AS execution_id"
    )
}

/// An ask's binds for `RECORD_ASK` (`$1` … `$5`).
pub(crate) fn ask_binds(ask: &NewAsk) -> Vec<Bind> {
    vec![
        Bind::Text(ask.task_id.clone()),
        Bind::Text(ask.id.clone()),
        Bind::Text(ask.question.clone()),
        Bind::Int(ms(ask.now)),
        Bind::OptText(ask.idempotency_key.clone()),
    ]
}

/// The evidence of one ask (bind: $1 its id).
pub(crate) const ASK_EVIDENCE: &str = "SELECT screen FROM ask_evidence WHERE message_id = $1";

/// What `RECORD_ASK` returned, as an [`AskRecorded`].
pub(crate) fn ask_recorded<R: SqlRow>(ask: NewAsk, returned: &[R]) -> StoreResult<AskRecorded> {
    let now = ms(ask.now);
    let mut cancelled = Vec::new();
    let mut paused = Vec::new();
    let mut execution_id: Option<String> = None;
    let mut inserted = false;
    for row in returned {
        let what: String = row.col("what")?;
        let id: String = row.col("id")?;
        match what.as_str() {
            "cancelled" => cancelled.push(id),
            "paused" => paused.push(id),
            "asked" => {
                execution_id = row.col("execution_id")?;
                inserted = true;
            }
            _ => {}
        }
    }
    if !inserted {
        return Err(StoreError::Backend("ask insert returned no row".into()));
    }
    Ok(AskRecorded {
        message: Message {
            id: ask.id,
            task_id: ask.task_id,
            execution_id,
            kind: harness_core::model::MessageKind::Ask,
            state: harness_core::model::MessageState::Open,
            content: ask.question,
            reply_text: None,
            replied_at: None,
            created_at: time(now)?,
        },
        cancelled,
        paused,
    })
}

/// The lease of a hand-off: (owner, node, until in ms).
pub(crate) type HandoffBinds = (Option<String>, Option<String>, Option<i64>);

/// The hand-off of `claim`, if any.
pub(crate) fn handoff(claim: Option<&DeliveryClaim>) -> HandoffBinds {
    (
        claim.map(|c| c.owner.clone()),
        claim.map(|c| c.node.clone()),
        claim.map(|c| ms(c.until)),
    )
}

/// The task's PAUSED executions → RUNNING (`'resumed'` rows), then one of
/// its RUNNING executions, if any (`'running'`): `$1` task. Rows of the
/// shape [`answered_from`] reads.
pub(crate) const RESUME: &str = "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
       WHERE task_id = $1 AND status = 'PAUSED' \
       RETURNING 'resumed' AS what, id, NULL AS node_id, \
         NULL AS lease_owner, NULL AS lease_expires_at; \
     SELECT 'running' AS what, id, NULL AS node_id, NULL AS lease_owner, \
       NULL AS lease_expires_at FROM executions \
       WHERE task_id = $1 AND status = 'RUNNING' LIMIT 1";

/// The second half of an answer: [`RESUME`], then the reply's delivery row
/// (`crate::shared::deliveries::INSERT_REPLY_DELIVERY`).
static FINISH_ANSWER: LazyLock<String> =
    LazyLock::new(|| format!("{RESUME}; {}", super::deliveries::INSERT_REPLY_DELIVERY));

/// The second half of an answer, after the conditional OPEN → ANSWERED
/// returned `answered` (the ask's row): PAUSED → RUNNING and the reply's
/// delivery row with `delivery_text`. Shared by a person's reply, an
/// answer with options and the deadline's default, so all owe the agent
/// exactly the same row.
pub(crate) fn finish_answer<R: SqlRow>(
    answered: &R,
    task_id: &str,
    delivery_id: &str,
    delivery_text: &str,
    now: i64,
    (claim_owner, claim_node, claim_until): HandoffBinds,
) -> StoreResult<Step> {
    Ok(Step::new(
        FINISH_ANSWER.as_str(),
        vec![
            Bind::Text(task_id.to_owned()),
            Bind::Text(delivery_id.to_owned()),
            Bind::Text(answered.col("id")?),
            Bind::Text(delivery_text.to_owned()),
            Bind::Text(answered.col("content")?),
            Bind::Int(now),
            Bind::OptText(claim_owner),
            Bind::OptText(claim_node),
            Bind::OptInt(claim_until),
        ],
    ))
}

/// The ask answered in `answered` (its row) was answered through a
/// gateway at `now` (once per ask), in the answer's transaction.
pub(crate) fn from_chat<R: SqlRow>(answered: &R, now: i64) -> StoreResult<Step> {
    Ok(Step::new(
        super::escalations::RECORD_GATEWAY_ANSWER,
        vec![Bind::Text(answered.col("id")?), Bind::Int(now)],
    ))
}

/// What an answer did, from the ask's row and `finish_answer`'s rows.
/// `delivery_text`: the delivery's text when it is not the reply text.
pub(crate) fn answered_from<R: SqlRow>(
    row: &R,
    rows_after: &[R],
    delivery_text: Option<&str>,
) -> StoreResult<Answered> {
    let message = rows::message(row)?;
    let mut resumed = Vec::new();
    let mut running = false;
    let mut delivery = None;
    for r in rows_after {
        let what: String = r.col("what")?;
        match what.as_str() {
            "resumed" => resumed.push(r.col("id")?),
            "delivery" => {
                delivery = Some(
                    crate::shared::deliveries::ReplyRow {
                        id: r.col("id")?,
                        task_id: message.task_id.clone(),
                        message_id: message.id.clone(),
                        node_id: r.col("node_id")?,
                        text: delivery_text
                            .map(str::to_string)
                            .or_else(|| message.reply_text.clone())
                            .unwrap_or_default(),
                        question: message.content.clone(),
                        now: ms(message.replied_at.unwrap_or(message.created_at)),
                        lease_owner: r.col("lease_owner")?,
                        lease_expires_at: r.col("lease_expires_at")?,
                    }
                    .into_delivery()?,
                );
            }
            _ => running = true,
        }
    }
    Ok(Answered {
        message,
        resumed,
        running,
        delivery,
    })
}

/// The columns of a message in a `RETURNING` (no table alias).
static RETURNED: LazyLock<String> = LazyLock::new(|| rows::MESSAGE_COLUMNS.replace("m.", ""));

/// Run by `get_message` (`$1` id).
pub(crate) static MESSAGE_BY_ID: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM harness_messages m WHERE m.id = $1",
        rows::MESSAGE_COLUMNS
    )
});

/// The task's newest ask (`$1` task), only an OPEN one with `open_only`.
pub(crate) fn newest_ask(open_only: bool) -> String {
    let filter = if open_only {
        "AND m.state = 'OPEN'"
    } else {
        ""
    };
    format!(
        "SELECT {} FROM harness_messages m \
         WHERE m.task_id = $1 AND m.kind = 'ask' {filter} \
         ORDER BY m.created_at DESC, m.id DESC LIMIT 1",
        rows::MESSAGE_COLUMNS
    )
}

/// Run by `ask_by_key` (`$1` task, `$2` key).
pub(crate) static ASK_BY_KEY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM harness_messages m \
             WHERE m.task_id = $1 AND m.kind = 'ask' AND m.idempotency_key = $2",
        rows::MESSAGE_COLUMNS
    )
});

/// A CLOSED notify line bound to the task's newest RUNNING execution (`$1`
/// id, `$2` task, `$3` task, `$4` text, `$5` now).
pub(crate) static RECORD_NOTIFY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO harness_messages AS m (id, task_id, execution_id, kind, state, content, created_at) \
         VALUES ($1, $2, (SELECT x.id FROM executions x WHERE x.task_id = $3 AND x.status = 'RUNNING' \
         ORDER BY x.created_at DESC LIMIT 1), 'notify', 'CLOSED', $4, $5) RETURNING {}",
        RETURNED.as_str()
    )
});

/// A person's reply: the task's newest OPEN ask → ANSWERED if still OPEN
/// (`$1` task, `$2` text, `$3` now), returning it.
pub(crate) static ANSWER_OPEN_ASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE harness_messages AS m SET state = 'ANSWERED', reply_text = $2, replied_at = $3 \
         WHERE m.id = (SELECT o.id FROM harness_messages o WHERE o.task_id = $1 AND o.kind = 'ask' \
           AND o.state = 'OPEN' ORDER BY o.created_at DESC, o.id DESC LIMIT 1) \
         AND m.state = 'OPEN' RETURNING {}",
        RETURNED.as_str()
    )
});

/// This very ask → ANSWERED if still OPEN (`$1` id, `$2` text, `$3` now),
/// returning it: an answer with options.
pub(crate) static ANSWER_THIS_ASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE harness_messages AS m SET state = 'ANSWERED', reply_text = $2, replied_at = $3 \
         WHERE m.id = $1 AND m.kind = 'ask' AND m.state = 'OPEN' RETURNING {}",
        RETURNED.as_str()
    )
});

/// This ask → ANSWERED with its default label as the reply text (`$1` id,
/// `$2` now), only if still OPEN, due and with a default; returning it.
pub(crate) static ANSWER_WITH_DEFAULT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE harness_messages AS m SET state = 'ANSWERED', \
           reply_text = (SELECT c.default_label FROM ask_choices c WHERE c.message_id = $1), \
           replied_at = $2 \
         WHERE m.id = $1 AND m.kind = 'ask' AND m.state = 'OPEN' AND EXISTS ( \
           SELECT 1 FROM ask_choices c WHERE c.message_id = $1 AND c.default_label IS NOT NULL \
             AND c.deadline_at IS NOT NULL AND c.deadline_at <= $2 AND c.answered_by IS NULL) \
         RETURNING {}",
        RETURNED.as_str()
    )
});

/// OPEN → IGNORED if still OPEN (`$1` id), returning it.
pub(crate) static IGNORE_ASK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE harness_messages AS m SET state = 'IGNORED' WHERE m.id = $1 AND m.kind = 'ask' \
         AND m.state = 'OPEN' RETURNING {}",
        RETURNED.as_str()
    )
});

/// A message that is not an ask deleted (`$1` id; a `'deleted'` row), else
/// whether it exists (an `'exists'` row: an ask).
pub(crate) static DISMISS_MESSAGE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "DELETE FROM harness_messages AS m WHERE m.id = $1 AND m.kind <> 'ask' \
           RETURNING 'deleted' AS what, {}; \
         SELECT 'exists' AS what, id FROM harness_messages WHERE id = $1",
        RETURNED.as_str()
    )
});

/// Run by `cancel_open_asks`.
pub(crate) const CANCEL_OPEN_ASKS: &str = "UPDATE harness_messages SET state = 'CANCELLED' \
             WHERE task_id = $1 AND kind = 'ask' AND state = 'OPEN' RETURNING id";

/// Run by `expire_asks_before`.
pub(crate) const EXPIRE_ASKS_BEFORE: &str = "UPDATE harness_messages SET state = 'EXPIRED' \
             WHERE kind = 'ask' AND state = 'OPEN' AND created_at < $1 RETURNING id";
