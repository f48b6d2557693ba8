//! The store conformance suite (`conformance/`) against PostgreSQL: one
//! fresh database per case (`harness_test_<id>`), dropped when the case
//! ends; `connect` opens another `PgStore` (its own pool) on it, as a
//! second server would.
//!
//! The server is `HARNESS_TEST_POSTGRES_URL` (any database on it: the
//! cases create their own), else `postgres://postgres@127.0.0.1:5432/postgres`
//! when something answers there. With neither, every case prints
//! "skipped: no PostgreSQL" and passes.

#[macro_use]
mod conformance;

use std::{sync::Arc, time::Duration};

use conformance::{Backend, Connect};
use harness_core::{ids, store::Store};
use harness_store::{PgOptions, PgStore};
use sqlx::{AssertSqlSafe, Connection, PgConnection};

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The admin URL of the server under test, if there is one.
fn server_url() -> Option<String> {
    if let Ok(url) = std::env::var("HARNESS_TEST_POSTGRES_URL")
        && !url.trim().is_empty()
    {
        return Some(url);
    }
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 5432));
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300))
        .ok()
        .map(|_| DEFAULT_URL.to_string())
}

/// `url` with its database replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
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

/// Drops the case's database when the case ends (on a thread of its own:
/// `Drop` cannot await, and the test's runtime may be shutting down).
struct DropDatabase {
    admin: String,
    name: String,
}

impl Drop for DropDatabase {
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

/// A fresh, empty database on the server (not migrated yet).
async fn fresh_database(admin: &str) -> (String, DropDatabase) {
    let name = format!("harness_test_{}", ids::new_id());
    let mut conn = PgConnection::connect(admin).await.unwrap();
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let url = with_database(admin, &name);
    (
        url,
        DropDatabase {
            admin: admin.to_string(),
            name,
        },
    )
}

async fn postgres() -> Option<Backend> {
    let Some(admin) = server_url() else {
        eprintln!(
            "skipped: no PostgreSQL (set HARNESS_TEST_POSTGRES_URL or run one on 127.0.0.1:5432)"
        );
        return None;
    };
    let (url, guard) = fresh_database(&admin).await;
    let store = PgStore::open(PgOptions::new(&url)).await.unwrap();
    let connect: Connect = Arc::new(move || {
        let url = url.clone();
        Box::pin(async move {
            let store = PgStore::open(PgOptions::new(&url)).await.unwrap();
            Arc::new(store) as Arc<dyn Store>
        })
    });
    Some(Backend {
        store: Arc::new(store),
        connect,
        _guard: Box::new(guard),
    })
}

conformance_suite!(postgres);

/// Two servers starting at once on an empty database: both open, and the
/// migrations ran once (sqlx's migrator holds `pg_advisory_lock`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_opening_an_empty_database_migrate_once() {
    let Some(admin) = server_url() else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let (url, _guard) = fresh_database(&admin).await;
    let (a, b) = tokio::join!(
        PgStore::open(PgOptions::new(&url)),
        PgStore::open(PgOptions::new(&url))
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let runs: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(a.pool())
            .await
            .unwrap();
    let files = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../migrations/postgres"
    ))
    .unwrap()
    .count();
    assert_eq!(runs.len(), files, "one row per migration: {runs:?}");
    assert!(runs.iter().all(|(_, ok)| *ok));
    a.close().await;
    b.close().await;
}
