//! `ReceiptStore` on SQLite: the shared implementation
//! ([`crate::shared::receipts`]).

use super::SqliteStore;

crate::shared::receipts::receipt_store!(SqliteStore);
