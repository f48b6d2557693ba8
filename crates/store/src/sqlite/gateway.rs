//! [`harness_core::store::GatewayStore`] on SQLite: the shared
//! implementation ([`crate::shared::gateway_store`]); reads on the read-only pool.

use super::SqliteStore;

crate::shared::gateway_store::gateway_store!(SqliteStore);
crate::shared::gateway_routes::gateway_route_store!(SqliteStore, reader);
