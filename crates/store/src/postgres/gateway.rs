//! [`harness_core::store::GatewayStore`] on PostgreSQL: the shared
//! implementation ([`crate::shared::gateway`]).

use super::PgStore;

crate::shared::gateway::gateway_store!(PgStore, pool, super::DIALECT);
crate::shared::gateway_routes::gateway_route_store!(PgStore, pool);
