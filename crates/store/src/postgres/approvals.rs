//! [`harness_core::store::ApprovalStore`] on PostgreSQL: the shared
//! implementation ([`crate::shared::approval_store`]).

use super::PgStore;

crate::shared::approval_store::approval_store!(PgStore);
