//! `ReceiptStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::receipts`]).

use super::PgStore;

crate::shared::receipts::receipt_store!(PgStore);
