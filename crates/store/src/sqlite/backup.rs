//! Online backup and offline restore of the SQLite database (`harness backup`,
//! `harness restore`).
//!
//! A backup is `VACUUM INTO` on a read-only connection: one consistent
//! snapshot of the committed state while the server keeps writing (WAL lets
//! readers and the writer run side by side). It is written to a temporary file
//! created empty and private (0600, in a 0700 directory next to the
//! destination) before any data is written, checked (`PRAGMA
//! integrity_check`), synced, and only then renamed into place — a crash never leaves a
//! half-written file under the destination's name.
//!
//! A restore runs with the server stopped (the caller holds the data
//! directory's lock): the backup is checked first, the current database and
//! its WAL are moved aside under one suffix (nothing is deleted), and the copy
//! is renamed into place. Migrations of a newer binary run at the next start;
//! a backup made by a newer binary (unknown migrations) is refused.

use std::{
    path::{Path, PathBuf},
    str::FromStr,
    time::Duration,
};

use sqlx::{
    Connection, Row,
    sqlite::{SqliteConnectOptions, SqliteConnection},
};

use crate::StoreOpenError;

/// What a backup or a restore wrote, for the CLI to print.
#[derive(Debug, Clone)]
pub struct BackupSummary {
    pub path: PathBuf,
    pub bytes: u64,
    /// The newest migration the copy carries.
    pub schema_version: i64,
    /// Row counts per product table (sorted by name).
    pub tables: Vec<(String, i64)>,
    /// Restore only: where the replaced database was moved.
    pub previous: Option<PathBuf>,
}

/// The newest migration this binary knows.
pub fn supported_schema_version() -> i64 {
    sqlx::migrate!("../../migrations/sqlite")
        .migrations
        .iter()
        .map(|m| m.version)
        .max()
        .unwrap_or(0)
}

/// The database file of a `sqlite://` url.
pub fn sqlite_path(url: &str) -> Result<PathBuf, StoreOpenError> {
    let options = SqliteConnectOptions::from_str(url).map_err(|source| StoreOpenError::Url {
        url: crate::redact_url(url),
        source,
    })?;
    if !url.starts_with("sqlite:") {
        return Err(StoreOpenError::Unsupported(crate::redact_url(url)));
    }
    Ok(options.get_filename().to_path_buf())
}

/// Copy the database at `url` into `dest` (which must not exist) while the
/// server may be running.
#[tracing::instrument(skip_all, fields(dest = %dest.display()))]
pub async fn backup(url: &str, dest: &Path) -> Result<BackupSummary, StoreOpenError> {
    if crate::postgres::is_postgres(url) {
        return Err(crate::postgres::use_pg_dump(url, dest, false));
    }
    let source = sqlite_path(url)?;
    if !source.is_file() {
        return Err(StoreOpenError::Backup(format!(
            "no database at {} (wrong --data-dir or --database-url?)",
            source.display()
        )));
    }
    if dest.exists() {
        return Err(StoreOpenError::Backup(format!(
            "{} already exists; choose a new file name (a backup never overwrites)",
            dest.display()
        )));
    }
    let dir = parent_dir(dest);
    if !dir.is_dir() {
        return Err(StoreOpenError::Backup(format!(
            "directory {} does not exist",
            dir.display()
        )));
    }
    // Private from the first byte: a 0700 directory next to the destination
    // holds an empty 0600 file created before `VACUUM INTO` writes into it
    // (SQLite would create a new file 0644 under the usual umask, readable by
    // every local user until the copy was done), and SQLite's own journal of
    // the copy lands in the same private directory.
    let staging = sibling(dest, &format!(".partial-{}", std::process::id()));
    let partial = staging.join("backup.sqlite");
    remove_staging(&staging);
    let result = async {
        create_private_target(&staging, &partial)?;
        let mut conn = connect(&source, false).await?;
        sqlx::query("VACUUM INTO ?")
            .bind(path_str(&partial)?)
            .execute(&mut conn)
            .await
            .map_err(|e| StoreOpenError::Backup(format!("VACUUM INTO failed: {e}")))?;
        conn.close().await.ok();
        private_and_synced(&partial)?;
        let (schema_version, tables) = verify(&partial).await?;
        std::fs::rename(&partial, dest).map_err(|e| io(dest, e))?;
        sync_dir(&dir);
        Ok::<_, StoreOpenError>((schema_version, tables))
    }
    .await;
    remove_staging(&staging);
    let (schema_version, tables) = match result {
        Ok(v) => v,
        Err(err) => return Err(err),
    };
    let bytes = std::fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
    Ok(BackupSummary {
        path: dest.to_path_buf(),
        bytes,
        schema_version,
        tables,
        previous: None,
    })
}

/// Replace the database at `url` with the backup `from`. The server must be
/// stopped (the caller holds the data directory's lock).
#[tracing::instrument(skip_all, fields(from = %from.display()))]
pub async fn restore(url: &str, from: &Path) -> Result<BackupSummary, StoreOpenError> {
    if crate::postgres::is_postgres(url) {
        return Err(crate::postgres::use_pg_dump(url, from, true));
    }
    let target = sqlite_path(url)?;
    if !from.is_file() {
        return Err(StoreOpenError::Backup(format!(
            "no backup file at {}",
            from.display()
        )));
    }
    let (schema_version, tables) = verify(from).await?;
    let supported = supported_schema_version();
    if schema_version > supported {
        return Err(StoreOpenError::Backup(format!(
            "the backup was made by a newer Harness (schema {schema_version}, this binary knows up to \
             {supported}); restore it with that version"
        )));
    }
    let dir = parent_dir(&target);
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let incoming = sibling(&target, &format!(".restoring-{}", std::process::id()));
    let _ = std::fs::remove_file(&incoming);
    copy_private(from, &incoming)?;
    private_and_synced(&incoming)?;
    let previous = if target.exists() {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let aside = sibling(&target, &format!(".before-restore-{stamp}"));
        // The database, its WAL and shared memory move as one set, so the
        // set aside copy keeps its last committed transactions.
        for suffix in ["-wal", "-shm"] {
            let from_file = sibling(&target, suffix);
            if from_file.exists() {
                let to = sibling(&aside, suffix);
                std::fs::rename(&from_file, &to).map_err(|e| io(&from_file, e))?;
            }
        }
        std::fs::rename(&target, &aside).map_err(|e| io(&target, e))?;
        Some(aside)
    } else {
        None
    };
    std::fs::rename(&incoming, &target).map_err(|e| io(&target, e))?;
    sync_dir(&dir);
    let bytes = std::fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
    Ok(BackupSummary {
        path: target,
        bytes,
        schema_version,
        tables,
        previous,
    })
}

/// Integrity check, schema version and row counts of a database file.
async fn verify(path: &Path) -> Result<(i64, Vec<(String, i64)>), StoreOpenError> {
    let mut conn = connect(path, true).await?;
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .map_err(|e| not_a_backup(path, &e))?;
    if check != "ok" {
        return Err(StoreOpenError::Backup(format!(
            "{} fails the integrity check: {check}",
            path.display()
        )));
    }
    let schema_version: Option<i64> =
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1")
            .fetch_one(&mut conn)
            .await
            .map_err(|e| not_a_backup(path, &e))?;
    let Some(schema_version) = schema_version else {
        return Err(StoreOpenError::Backup(format!(
            "{} is not a Harness database (no migrations recorded)",
            path.display()
        )));
    };
    let names: Vec<String> = sqlx::query(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await
    .map_err(|e| not_a_backup(path, &e))?
    .iter()
    .map(|row| row.get::<String, _>(0))
    .collect();
    let mut tables = Vec::with_capacity(names.len());
    for name in names {
        // Table names come from sqlite_master of the file itself; quote them.
        let sql = format!("SELECT COUNT(*) FROM \"{}\"", name.replace('"', "\"\""));
        // Audited: the only dynamic part is a table name read from the file
        // itself, quoted as an identifier above.
        let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut conn)
            .await
            .map_err(|e| not_a_backup(path, &e))?;
        tables.push((name, count));
    }
    conn.close().await.ok();
    Ok((schema_version, tables))
}

/// `snapshot`: a finished copy nobody writes (opened immutable: no locks, no
/// `-wal`/`-shm` files created next to it). Otherwise the live database.
async fn connect(path: &Path, snapshot: bool) -> Result<SqliteConnection, StoreOpenError> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .read_only(snapshot)
        .immutable(snapshot)
        .busy_timeout(Duration::from_secs(10));
    SqliteConnection::connect_with(&options)
        .await
        .map_err(StoreOpenError::Connect)
}

fn not_a_backup(path: &Path, err: &sqlx::Error) -> StoreOpenError {
    StoreOpenError::Backup(format!(
        "{} is not a readable Harness database: {err}",
        path.display()
    ))
}

/// Creates `staging` (0700, must not exist) and in it the empty 0600 file
/// `partial` that `VACUUM INTO` fills (it accepts an empty file).
pub fn create_private_target(staging: &Path, partial: &Path) -> Result<(), StoreOpenError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(staging)
            .map_err(|e| io(staging, e))?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(partial)
            .map_err(|e| io(partial, e))?;
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir(staging).map_err(|e| io(staging, e))?;
        std::fs::File::create(partial).map_err(|e| io(partial, e))?;
    }
    Ok(())
}

/// Copies `from` into a new 0600 file `to` (private before the first byte).
fn copy_private(from: &Path, to: &Path) -> Result<(), StoreOpenError> {
    let mut source = std::fs::File::open(from).map_err(|e| io(from, e))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut target = options.open(to).map_err(|e| io(to, e))?;
    std::io::copy(&mut source, &mut target).map_err(|e| io(to, e))?;
    Ok(())
}

/// Removes a staging directory of an earlier or of this backup (its files
/// are ours: the copy and SQLite's journal of it).
fn remove_staging(staging: &Path) {
    // Never through a link: only a real directory is emptied; anything else
    // under that name (an older version's partial file, a planted link) is
    // removed itself.
    match std::fs::symlink_metadata(staging) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            let _ = std::fs::remove_file(staging);
            return;
        }
        Err(_) => return,
    }
    if let Ok(entries) = std::fs::read_dir(staging) {
        for entry in entries.flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let _ = std::fs::remove_dir(staging);
}

fn private_and_synced(path: &Path) -> Result<(), StoreOpenError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io(path, e))?;
    }
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| io(path, e))
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

fn path_str(path: &Path) -> Result<&str, StoreOpenError> {
    path.to_str()
        .ok_or_else(|| StoreOpenError::Backup(format!("{} is not a UTF-8 path", path.display())))
}

fn io(path: &Path, source: std::io::Error) -> StoreOpenError {
    StoreOpenError::Io {
        path: path.to_path_buf(),
        source,
    }
}
