use harness_core::store::StoreError;

/// Failure to open or migrate a database.
#[derive(Debug, thiserror::Error)]
pub enum StoreOpenError {
    #[error("invalid database url {url:?}: {source}")]
    Url {
        url: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("cannot open database: {0}")]
    Connect(#[source] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("unsupported database url {0:?} (expected sqlite://… or postgres://…)")]
    Unsupported(String),
    #[error(
        "{backend} is not supported yet: this version stores its data in SQLite \
         (use a sqlite://… database url, or leave it unset for <data-dir>/harness.db)"
    )]
    NotYetSupported { backend: &'static str },
    /// `harness backup` / `harness restore` refused or failed (the message
    /// says why and what to do).
    #[error("{0}")]
    Backup(String),
    /// `harness migrate-db` refused or failed (the message says why).
    #[error("migrate-db: {0}")]
    MigrateDb(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Map a driver error into the core's storage error classes.
pub(crate) fn map(err: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &err {
        match db.kind() {
            sqlx::error::ErrorKind::ForeignKeyViolation => {
                return StoreError::MissingReference(referenced(db.message()));
            }
            sqlx::error::ErrorKind::UniqueViolation => {
                return StoreError::Duplicate("row");
            }
            _ => {}
        }
    }
    StoreError::Backend(Box::new(err))
}

fn referenced(_message: &str) -> &'static str {
    // SQLite does not say which foreign key failed; callers know the context.
    "row"
}
