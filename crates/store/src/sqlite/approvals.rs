//! [`harness_core::store::ApprovalStore`] on SQLite: the shared
//! implementation ([`crate::shared::approval_store`]).

use super::SqliteStore;

crate::shared::approval_store::approval_store!(SqliteStore);
