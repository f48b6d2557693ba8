//! [`harness_core::store::GatewayStore`] and
//! [`harness_core::store::GatewayRouteStore`] on PostgreSQL: the shared
//! implementations ([`crate::shared::gateway_store`],
//! [`crate::shared::gateway_route_store`]).

use super::PgStore;

crate::shared::gateway_store::gateway_store!(PgStore);
crate::shared::gateway_route_store::gateway_route_store!(PgStore);
