//! A sender's turn on SQLite: the shared turn
//! ([`crate::shared::outbox_settle`]) with SQLite's spelling — JSON arrays
//! read with `json_each`, the delivery mappings applied in id order (the
//! greater outbound id wins), and `typeof(…)` no-ops so each statement uses
//! a prefix of the parameters. The batch is one `BEGIN IMMEDIATE`
//! transaction on the writer (`run_batch`).

use std::{future::Future, sync::LazyLock};

use harness_core::store::StoreResult;
use sqlx::sqlite::SqliteRow;

use super::SqliteStore;
use crate::shared::{
    Bind,
    outbox_settle::{OutboxBackend, TurnSql, shapes},
};

static TURN: TurnSql = TurnSql {
    dialect: super::DIALECT,
    settles: "json_each($2)",
    next: "value ->> 'next'",
    settled_ids: "(SELECT value ->> 'id' FROM json_each($2))",
    released_ids: "(SELECT value FROM json_each($8))",
    message_returning: "id AS id, state AS extra",
    map_select: "SELECT",
    map_order: "o.id",
    release_tail: " AND (typeof($1) || typeof($2) || typeof($5) || typeof($6) || typeof($7)) IS NOT NULL",
    claim_tail: " AND (typeof($1) || typeof($2) || typeof($5)) IS NOT NULL",
    // One writer: nothing to lock.
    lock_tasks: "",
};

static SHAPES: LazyLock<Vec<String>> = LazyLock::new(|| shapes(&TURN));

impl OutboxBackend for SqliteStore {
    fn shapes(&self) -> &'static [String] {
        &SHAPES
    }

    fn enqueue_sql(&self) -> &'static str {
        &super::outbox::ENQUEUE
    }

    fn run_turn(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<SqliteRow>>> + Send {
        SqliteStore::run_batch(self, sql, binds)
    }
}
