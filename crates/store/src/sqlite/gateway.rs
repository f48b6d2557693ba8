//! [`harness_core::store::GatewayStore`] on SQLite: the shared statements of
//! `gateway_sql.rs` with `?N` parameters; reads on the read-only pool.

use super::SqliteStore;
use crate::gateway_sql::{for_sqlite, gateway_store};

gateway_store!(SqliteStore, reader, for_sqlite);
