//! The store conformance suite (`conformance/`) against SQLite, one fresh
//! database file per case.

#[macro_use]
mod conformance;

use std::sync::Arc;

use conformance::Backend;
use harness_store::{SqliteOptions, SqliteStore};

async fn sqlite() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("conformance.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url)).await.unwrap();
    Backend {
        store: Arc::new(store),
        _guard: Box::new(dir),
    }
}

conformance_suite!(sqlite);
