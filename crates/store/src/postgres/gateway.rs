//! [`harness_core::store::GatewayStore`] on PostgreSQL: the shared
//! statements of `gateway_sql.rs` as written.

use super::PgStore;
use crate::gateway_sql::{for_postgres, gateway_store};

gateway_store!(PgStore, pool, for_postgres);
