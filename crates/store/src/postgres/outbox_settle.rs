//! A sender's turn on PostgreSQL: the shared turn
//! ([`crate::shared::outbox_settle`]) with PostgreSQL's spelling — JSON
//! arrays read with `jsonb_array_elements`, one delivery mapping per key
//! with `DISTINCT ON` (the greater outbound id wins, as on SQLite). The
//! batch is one transaction that holds the store's write lock shared
//! ([`PgStore::run_shared_batch`]) and locks the tasks whose asks it sent
//! before it activates them (`harness_lock_tasks`, migration 0044), each
//! statement sent with all eight parameters (`batch::run`).

use std::{future::Future, sync::LazyLock};

use harness_core::store::StoreResult;
use sqlx::postgres::PgRow;

use super::PgStore;
use crate::shared::{
    Bind,
    outbox_settle::{OutboxBackend, TurnSql, shapes},
};

static TURN: TurnSql = TurnSql {
    dialect: super::DIALECT,
    settles: "jsonb_array_elements($2::jsonb) AS e(value)",
    next: "(value ->> 'next')::bigint",
    settled_ids: "(SELECT e ->> 'id' FROM jsonb_array_elements($2::jsonb) AS e)",
    released_ids: "(SELECT jsonb_array_elements_text($8::jsonb))",
    message_returning: "harness_messages.id AS id, harness_messages.state AS extra",
    map_select: "SELECT DISTINCT ON (lower(o.gateway), o.platform, \
       COALESCE(o.platform_chat_id, ''), o.platform_message_id)",
    map_order: "lower(o.gateway), o.platform, COALESCE(o.platform_chat_id, ''), \
       o.platform_message_id, o.id DESC",
    release_tail: "",
    claim_tail: "",
    lock_tasks: "SELECT what, id, extra FROM harness_lock_tasks(ARRAY({tasks}))",
};

static SHAPES: LazyLock<Vec<String>> = LazyLock::new(|| shapes(&TURN));

impl OutboxBackend for PgStore {
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
    ) -> impl Future<Output = StoreResult<Vec<PgRow>>> + Send {
        PgStore::run_shared_batch(self, sql, binds)
    }
}
