//! The `ask_choices` row (migration 0010): its columns, its INSERT and its
//! decoder.

use harness_core::{
    options::{AskOption, Choices, Urgency},
    store::{DueDefault, StoreError, StoreResult},
};

use super::{SqlRow, time};

pub(crate) const CHOICE_COLUMNS: &str =
    "message_id, options, multi_select, default_label, deadline_at, urgency, answered_by";
/// What is read back: the stored columns and the option(s) that answered.
pub(crate) const READ_COLUMNS: &str = "message_id, options, multi_select, default_label, deadline_at, \
     urgency, answered_by, answered_options";
/// An ask's choices, not yet answered (`$1` message id, `$2` options JSON,
/// `$3` multi-select 0/1, `$4` default label, `$5` deadline ms, `$6` urgency).
pub(crate) const INSERT_CHOICES: &str = "INSERT INTO ask_choices (message_id, options, \
     multi_select, default_label, deadline_at, urgency, answered_by) \
     VALUES ($1, $2, $3, $4, $5, $6, NULL)";

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

/// Run by `record_ask_for_parent`.
pub(crate) const RECORD_ASK_FOR_PARENT: &str = "INSERT INTO workbench_events (id, parent_task_id, source_task_id, execution_id, \
                           kind, priority, dedup_key, execution_review_key, payload, state, attempts, \
                           created_at, updated_at, next_attempt_at) \
                         VALUES ($1, $2, $3, (SELECT m.execution_id FROM harness_messages m WHERE m.id = $4), \
                           $5, $6, $7, NULL, $8, 'PENDING', 0, $9, $9, $9) \
                         ON CONFLICT (dedup_key) DO NOTHING";

/// Run by `undelivered_event`.
pub(crate) const UNDELIVERED_EVENT: &str = "SELECT id FROM workbench_events WHERE dedup_key = $1 \
               AND state IN ('PENDING', 'PROCESSING')";
