//! A fresh PostgreSQL database per test, for the server-level tests that
//! also run on PostgreSQL (`*_on_postgres`): created on the server named by
//! `HARNESS_TEST_POSTGRES_URL` (any database on it) and dropped when the
//! guard goes. Without that variable the PostgreSQL variants are skipped
//! (they print why and pass); `./test.sh` sets it when PostgreSQL answers.

use harness_core::ids;
use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// A test's own database: `url` opens it; dropping this drops it.
pub struct FreshDb {
    pub url: String,
    admin: String,
    name: String,
}

/// A fresh, empty database, or `None` (with a "skipped" line) when
/// `HARNESS_TEST_POSTGRES_URL` is unset.
pub async fn fresh() -> Option<FreshDb> {
    let admin = std::env::var("HARNESS_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.trim().is_empty());
    let Some(admin) = admin else {
        eprintln!("skipped: HARNESS_TEST_POSTGRES_URL is not set (no PostgreSQL)");
        return None;
    };
    let name = format!("harness_test_{}", ids::new_id());
    let mut conn = PgConnection::connect(&admin).await.unwrap();
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    Some(FreshDb {
        url: with_database(&admin, &name),
        admin,
        name,
    })
}

/// `url` with its database replaced by `database`.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{database}{query}", &base[..host_end])
}

impl Drop for FreshDb {
    /// On a thread of its own: `Drop` cannot await, and the test's runtime
    /// may be shutting down.
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let mut conn = PgConnection::connect(&admin)
                    .await
                    .map_err(|e| e.to_string())?;
                sqlx::query(AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
                conn.close().await.map_err(|e| e.to_string())
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test database {}: {dropped:?}", self.name);
        }
    }
}
