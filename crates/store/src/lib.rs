//! Harness storage: the core's [`harness_core::store::Store`] port on SQL.
//!
//! SQLite (WAL, `synchronous=NORMAL`, foreign keys on, busy timeout) is the
//! embedded default. All SQL of the product lives in this crate; a PostgreSQL
//! backend is a second module implementing the same trait.

mod error;
mod gateway_sql;
pub mod migrate_db;
mod open;
mod postgres;
mod sqlite;

pub use error::StoreOpenError;
pub use open::{AnyStore, redact_url};
pub use postgres::{PgOptions, PgStore};
pub use sqlite::{CheckpointStats, SqliteOptions, SqliteStore, backup};
