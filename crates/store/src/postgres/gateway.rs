//! [`harness_core::store::GatewayStore`] on PostgreSQL: the shared
//! implementation ([`crate::shared::gateway_store`]).

use super::PgStore;

crate::shared::gateway_store::gateway_store!(PgStore);
crate::shared::gateway_routes::gateway_route_store!(PgStore, pool);
