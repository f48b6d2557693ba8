//! What both backends share of asks and answers: the statements that
//! record an ask, and the decoding of what recording and answering returned.

use std::sync::LazyLock;

use harness_core::{
    model::Message,
    store::{Answered, AskRecorded, NewAsk, StoreError, StoreResult},
};

use super::{SqlRow, ms, rows, time};

/// The statements of `record_ask` (binds: $1 task, $2 ask id, $3 question,
/// $4 now, $5 idempotency key or NULL), without the transaction around them: also run by
/// `record_ask_with_choices` (`choices.rs` of each backend).
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

/// Run by `message_by_id`.
pub(crate) static MESSAGE_BY_ID: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM harness_messages m WHERE m.id = $1",
        MESSAGE_COLUMNS = super::rows::MESSAGE_COLUMNS
    )
});

/// Run by `resume_in`.
pub(crate) const RESUME_PAUSED: &str = "UPDATE executions SET status = 'RUNNING', ended_at = NULL \
         WHERE task_id = $1 AND status = 'PAUSED' RETURNING id";

/// Run by `resume_in`.
pub(crate) const ANY_RUNNING: &str =
    "SELECT EXISTS (SELECT 1 FROM executions WHERE task_id = $1 AND status = 'RUNNING')";

/// Run by `ask_by_key`.
pub(crate) static ASK_BY_KEY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM harness_messages m \
             WHERE m.task_id = $1 AND m.kind = 'ask' AND m.idempotency_key = $2",
        MESSAGE_COLUMNS = super::rows::MESSAGE_COLUMNS
    )
});

/// Run by `dismiss_message`.
pub(crate) const DISMISS_MESSAGE: &str =
    "SELECT EXISTS (SELECT 1 FROM harness_messages WHERE id = $1)";

/// Run by `cancel_open_asks`.
pub(crate) const CANCEL_OPEN_ASKS: &str = "UPDATE harness_messages SET state = 'CANCELLED' \
             WHERE task_id = $1 AND kind = 'ask' AND state = 'OPEN' RETURNING id";

/// Run by `expire_asks_before`.
pub(crate) const EXPIRE_ASKS_BEFORE: &str = "UPDATE harness_messages SET state = 'EXPIRED' \
             WHERE kind = 'ask' AND state = 'OPEN' AND created_at < $1 RETURNING id";
