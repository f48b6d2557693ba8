//! `MessageStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::message_store`]) and what PostgreSQL spells its own
//! way in asks and answers.

use super::{PgStore, RECORD_ASK_CALL};
use crate::shared::backend::AskSql;

/// PostgreSQL's side of asks and answers: the ask as one call of the
/// schema's function (`RECORD_ASK_CALL`), `ILIKE` (SQLite's `LIKE`
/// ignores ASCII case), the default option read with `jsonb` functions
/// (`WITH ORDINALITY` counts from 1).
pub(super) const ASKS: AskSql = AskSql {
    record_ask: RECORD_ASK_CALL,
    like: "ILIKE",
    default_option: "(SELECT jsonb_build_array(j.ord - 1)::text \
       FROM jsonb_array_elements(ask_choices.options::jsonb) WITH ORDINALITY AS j(value, ord) \
       WHERE j.value ->> 'label' = ask_choices.default_label ORDER BY j.ord LIMIT 1)",
};

crate::shared::message_store::message_store!(PgStore);
