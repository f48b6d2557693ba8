//! [`harness_core::store::ApprovalStore`] on PostgreSQL: the shared
//! implementation (`crate::approvals_sql::approval_store`) and how a batch
//! runs here (`batch_tx` holds the transaction and commits it).

use sqlx::{PgConnection, postgres::PgRow};

use super::{
    PgStore,
    batch::{self, args},
};

/// Runs the ask's statements (the transaction is `batch_tx`'s).
async fn begin_ask(
    conn: &mut PgConnection,
    task_id: &str,
    id: &str,
    question: String,
    now: i64,
    key: Option<String>,
) -> Result<Vec<PgRow>, sqlx::Error> {
    batch::run(
        conn,
        super::RECORD_ASK_CALL,
        &args!(task_id, id, question, now, key),
    )
    .await
}

/// `batch_tx` commits.
async fn end_batch(_conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    Ok(())
}

crate::approvals_sql::approval_store!(PgStore, pool, PgRow, PgConnection);
