//! `MessageStore` on SQLite: the shared implementation
//! ([`crate::shared::message_store`]) and what SQLite spells its own way
//! in asks and answers.

use super::SqliteStore;
use crate::shared::{backend::AskSql, messages::RECORD_ASK};

/// SQLite's side of asks and answers: the ask's statements as they are,
/// `LIKE` (it ignores ASCII case), the default option read with
/// `json_each` (its `key` is the 0-based index).
pub(super) const ASKS: AskSql = AskSql {
    record_ask: RECORD_ASK,
    like: "LIKE",
    default_option: "(SELECT json_array(CAST(j.key AS INTEGER)) \
       FROM json_each(ask_choices.options) j \
       WHERE json_extract(j.value, '$.label') = ask_choices.default_label LIMIT 1)",
};

crate::shared::message_store::message_store!(SqliteStore);
