//! [`harness_core::store::GatewayStore`] and
//! [`harness_core::store::GatewayRouteStore`] on SQLite: the shared
//! implementations ([`crate::shared::gateway_store`],
//! [`crate::shared::gateway_route_store`]).

use super::SqliteStore;

crate::shared::gateway_store::gateway_store!(SqliteStore);
crate::shared::gateway_route_store::gateway_route_store!(SqliteStore);
