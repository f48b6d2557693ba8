//! The `ask_choices` row (migration 0010): its columns, its INSERT and its
//! decoder, and the statements an ask with choices or for a parent adds to
//! its transaction. The store itself is [`super::choices_store`].

use harness_core::{
    inbox::NewEvent,
    options::{AskOption, Choices, Urgency},
    store::{DueDefault, StoreError, StoreResult},
};

use super::{Bind, SqlRow, backend::Step, ms, time};

/// What is read back: the stored columns and the option(s) that answered.
pub(crate) const READ_COLUMNS: &str = "message_id, options, multi_select, default_label, deadline_at, \
     urgency, answered_by, answered_options";
/// An ask's choices, not yet answered (`$1` message id, `$2` options JSON,
/// `$3` multi-select 0/1, `$4` default label, `$5` deadline ms, `$6` urgency).
pub(crate) const INSERT_CHOICES: &str = "INSERT INTO ask_choices (message_id, options, \
     multi_select, default_label, deadline_at, urgency, answered_by) \
     VALUES ($1, $2, $3, $4, $5, $6, NULL)";

/// The `ask_choices` row of `message_id` ([`INSERT_CHOICES`]), in the
/// ask's transaction; `options`: [`options_json`].
pub(crate) fn insert_choices(message_id: &str, choices: &Choices, options: &str) -> Step {
    Step::new(
        INSERT_CHOICES,
        vec![
            Bind::Text(message_id.to_owned()),
            Bind::Text(options.to_owned()),
            Bind::Int(i64::from(choices.multi_select)),
            Bind::OptText(choices.default.clone()),
            Bind::OptInt(choices.deadline_at.map(ms)),
            Bind::Text(choices.urgency.as_str().to_owned()),
        ],
    )
}

/// The screen of ask `message_id` (`NewAsk::evidence`), in the ask's
/// transaction (a derived task's native question, an approval).
pub(crate) fn insert_ask_screen(message_id: &str, screen: &str, now: i64) -> Step {
    Step::new(
        super::receipts::ADD_ASK_EVIDENCE,
        vec![
            Bind::Text(message_id.to_owned()),
            Bind::Text(screen.to_owned()),
            Bind::Int(now),
        ],
    )
}

/// A derived task's ask as a HIGH event in its parent's inbox, in the
/// ask's transaction (`ask_id`: the ask just recorded; the event names its
/// execution): [`RECORD_ASK_FOR_PARENT`], an `'event'` row when added.
pub(crate) fn insert_parent_event(event: &NewEvent, ask_id: &str, payload: &str) -> Step {
    Step::new(
        RECORD_ASK_FOR_PARENT,
        vec![
            Bind::Text(event.id.clone()),
            Bind::Text(event.parent_task_id.clone()),
            Bind::Text(event.source_task_id.clone()),
            Bind::Text(ask_id.to_owned()),
            Bind::Text(event.kind.as_str().to_owned()),
            Bind::Text(event.priority.as_str().to_owned()),
            Bind::Text(event.dedup_key.clone()),
            Bind::Text(payload.to_owned()),
            Bind::Int(ms(event.now)),
        ],
    )
}

/// The stored form of an ask's options.
pub(crate) fn options_json(choices: &Choices) -> StoreResult<String> {
    serde_json::to_string(&choices.options).map_err(|e| StoreError::Backend(Box::new(e)))
}

/// An ask whose default is due (`due_defaults`).
pub(crate) fn due_default<R: SqlRow>(r: &R) -> StoreResult<DueDefault> {
    Ok(DueDefault {
        message_id: r.col("message_id")?,
        task_id: r.col("task_id")?,
        default_label: r.col("default_label")?,
        deadline_at: time(r.col("deadline_at")?)?,
    })
}

pub(crate) fn choices<R: SqlRow>(row: &R) -> StoreResult<(String, Choices)> {
    let id: String = row.col("message_id")?;
    let options: String = row.col("options")?;
    let options: Vec<AskOption> =
        serde_json::from_str(&options).map_err(|_| StoreError::Corrupt {
            column: "ask_choices.options",
            value: options.clone(),
        })?;
    let urgency: String = row.col("urgency")?;
    let urgency = Urgency::parse(&urgency).ok_or(StoreError::Corrupt {
        column: "ask_choices.urgency",
        value: urgency.clone(),
    })?;
    let deadline: Option<i64> = row.col("deadline_at")?;
    let answered: Option<String> = row.col("answered_options")?;
    let answered_options = answered
        .map(|text| {
            serde_json::from_str::<Vec<usize>>(&text).map_err(|_| StoreError::Corrupt {
                column: "ask_choices.answered_options",
                value: text.clone(),
            })
        })
        .transpose()?;
    Ok((
        id,
        Choices {
            options,
            multi_select: row.col::<i64>("multi_select")? != 0,
            default: row.col("default_label")?,
            deadline_at: deadline.map(time).transpose()?,
            urgency,
            answered_by: row.col("answered_by")?,
            answered_options,
        },
    ))
}

/// Run by `answer_with_options`: no option picked (`[]`) is a free answer,
/// recorded as one (NULL).
pub(crate) const ANSWER_WITH_OPTIONS: &str =
    "UPDATE ask_choices SET answered_options = NULLIF($1, '[]') WHERE message_id = $2";

/// The parent's inbox event of an ask (`$1` event id, `$2` parent, `$3`
/// source task, `$4` ask, `$5` kind, `$6` priority, `$7` dedup key, `$8`
/// payload, `$9` now): an `'event'` row when added, none when an event
/// under the key exists.
pub(crate) const RECORD_ASK_FOR_PARENT: &str = "INSERT INTO workbench_events (id, parent_task_id, source_task_id, execution_id, \
       kind, priority, dedup_key, execution_review_key, payload, state, attempts, \
       created_at, updated_at, next_attempt_at) \
     VALUES ($1, $2, $3, (SELECT m.execution_id FROM harness_messages m WHERE m.id = $4), \
       $5, $6, $7, NULL, $8, 'PENDING', 0, $9, $9, $9) \
     ON CONFLICT (dedup_key) DO NOTHING \
     RETURNING 'event' AS what, id, NULL AS execution_id";

/// An ask's choices with the ask (`$1` … `$5` the ask's, `$6` options
/// JSON, `$7` multi-select, `$8` default, `$9` deadline, `$10` urgency): a
/// `'choices'` row.
pub(crate) const INSERT_ASKED_CHOICES: &str = "INSERT INTO ask_choices (message_id, options, \
     multi_select, default_label, deadline_at, urgency, answered_by) \
     VALUES ($2, $6, $7, $8, $9, $10, NULL) \
     RETURNING 'choices' AS what, message_id AS id, NULL AS execution_id";

/// The ask's choices answered by its default (`$1` the ask), the default
/// option recorded as the answer's (`option`: the dialect's
/// `AskSql::default_option`).
pub(crate) fn mark_default(option: &str) -> String {
    format!(
        "UPDATE ask_choices SET answered_by = '{}', answered_options = {option} \
         WHERE message_id = $1",
        harness_core::options::ANSWERED_BY_DEFAULT
    )
}

/// OPEN asks with a default whose deadline is at or before `$1`, oldest
/// first, up to `$2` (`hint`: the dialect's index hint).
pub(crate) fn due_defaults(hint: &str) -> String {
    format!(
        "SELECT c.message_id, m.task_id, c.default_label, c.deadline_at \
         FROM ask_choices c {hint} \
         JOIN harness_messages m ON m.id = c.message_id \
         WHERE c.default_label IS NOT NULL AND c.deadline_at IS NOT NULL \
           AND c.answered_by IS NULL AND c.deadline_at <= $1 AND m.state = 'OPEN' \
         ORDER BY c.deadline_at LIMIT +$2"
    )
}

/// The earliest deadline of an OPEN ask with a default (`hint`: the
/// dialect's index hint).
pub(crate) fn next_default_deadline(hint: &str) -> String {
    format!(
        "SELECT MIN(c.deadline_at) FROM ask_choices c {hint} \
         JOIN harness_messages m ON m.id = c.message_id \
         WHERE c.default_label IS NOT NULL AND c.deadline_at IS NOT NULL \
           AND c.answered_by IS NULL AND m.state = 'OPEN'"
    )
}

/// Run by `undelivered_event`.
pub(crate) const UNDELIVERED_EVENT: &str = "SELECT id FROM workbench_events WHERE dedup_key = $1 \
               AND state IN ('PENDING', 'PROCESSING')";
