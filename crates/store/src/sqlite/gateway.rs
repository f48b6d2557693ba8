//! [`harness_core::store::GatewayStore`] on SQLite: the shared
//! implementation ([`crate::shared::gateway`]); reads on the read-only pool.

use super::SqliteStore;

crate::shared::gateway::gateway_store!(SqliteStore, reader, super::DIALECT);
crate::shared::gateway_routes::gateway_route_store!(SqliteStore, reader);
