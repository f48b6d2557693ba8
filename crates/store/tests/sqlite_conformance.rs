//! The store conformance suite (`conformance/`) against SQLite, one fresh
//! database file per case; `connect` opens another `SqliteStore` (its own
//! writer connection) on the same file, as a second process would.

#[macro_use]
mod conformance;

use std::sync::Arc;

use conformance::{Backend, Connect};
use harness_core::store::Store;
use harness_store::{SqliteOptions, SqliteStore};

async fn sqlite() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("conformance.db").display());
    let store = SqliteStore::open(SqliteOptions::new(&url))
        .await
        .unwrap()
        .with_node_dead_after(conformance::nodes::NODE_DEAD_AFTER);
    let connect: Connect = Arc::new(move || {
        let url = url.clone();
        Box::pin(async move {
            let store = SqliteStore::open(SqliteOptions::new(&url))
                .await
                .unwrap()
                .with_node_dead_after(conformance::nodes::NODE_DEAD_AFTER);
            Arc::new(store) as Arc<dyn Store>
        })
    });
    Backend {
        store: Arc::new(store),
        connect,
        _guard: Box::new(dir),
    }
}

conformance_suite!(sqlite);
