//! Harness storage: the core's [`harness_core::store::Store`] port on SQL.
//!
//! SQLite (WAL, `synchronous=NORMAL`, foreign keys on, busy timeout) is the
//! embedded default. All SQL of the product lives in this crate; PostgreSQL
//! is a second backend implementing the same trait. What the two share (row
//! decoders, the SQL both dialects read, whole aggregates written once) is in
//! `shared`.

#![forbid(unsafe_code)]

mod error;
pub mod migrate_db;
mod open;
mod postgres;
mod shared;
mod sqlite;

pub use error::StoreOpenError;
pub use open::{AnyStore, redact_url};
pub use postgres::{
    PgOptions, PgProbe, PgStore, bus::PgEventBus, is_postgres, pg_dump_command, pg_restore_command,
    probe as probe_postgres,
};
pub use sqlite::{CheckpointStats, SqliteOptions, SqliteStore, backup};
