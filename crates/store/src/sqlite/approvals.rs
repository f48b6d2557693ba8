//! [`harness_core::store::ApprovalStore`] on SQLite: the shared
//! implementation (`crate::approvals_sql::approval_store`) and how a batch
//! runs here (`BEGIN IMMEDIATE` … `COMMIT` inside the batch).

use sqlx::{AssertSqlSafe, SqliteConnection, sqlite::SqliteRow};

use super::SqliteStore;
use crate::shared::messages::RECORD_ASK;

/// Opens the batch's transaction and runs the ask's statements.
async fn begin_ask(
    conn: &mut SqliteConnection,
    task_id: &str,
    id: &str,
    question: String,
    now: i64,
    key: Option<String>,
) -> Result<Vec<SqliteRow>, sqlx::Error> {
    sqlx::query(AssertSqlSafe(format!("BEGIN IMMEDIATE; {RECORD_ASK}")))
        .bind(task_id)
        .bind(id)
        .bind(question)
        .bind(now)
        .bind(key)
        .fetch_all(&mut *conn)
        .await
}

async fn end_batch(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::query("COMMIT").execute(conn).await.map(|_| ())
}

crate::approvals_sql::approval_store!(SqliteStore, reader, SqliteRow, SqliteConnection);
