//! Operator commands of the `harness` binary: `backup`, `restore`,
//! `migrate-db`, `doctor`.

use std::{path::Path, process::ExitCode};

use anyhow::Context;
use harness_server::{config, datalock::DataLock, doctor};
use harness_store::backup::{self, BackupSummary};

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn print_summary(verb: &str, s: &BackupSummary) {
    println!(
        "{verb} {} ({} bytes, schema version {})",
        s.path.display(),
        s.bytes,
        s.schema_version
    );
    for (table, rows) in &s.tables {
        println!("  {table:<24} {rows:>8} rows");
    }
}

/// `harness backup FILE`: a consistent copy while the server runs.
pub fn backup(data_dir: &Path, url: Option<String>, file: &Path) -> anyhow::Result<()> {
    let url = config::database_url(data_dir, url);
    let summary = runtime()?.block_on(backup::backup(&url, file))?;
    print_summary("backed up to", &summary);
    println!(
        "also keep {} (the admin token and the internal API key): a restored database needs them",
        data_dir.join("secrets").display()
    );
    Ok(())
}

/// `harness restore FILE`: with the server stopped.
pub fn restore(data_dir: &Path, url: Option<String>, file: &Path) -> anyhow::Result<()> {
    let _lock = DataLock::acquire(data_dir)?;
    let url = config::database_url(data_dir, url);
    let summary = runtime()?.block_on(backup::restore(&url, file))?;
    print_summary("restored", &summary);
    if let Some(previous) = &summary.previous {
        println!("the replaced database was kept as {}", previous.display());
    }
    Ok(())
}

/// `harness migrate-db`: with the server stopped (the data directory's lock
/// is held while copying).
pub fn migrate_db(data_dir: &Path, from: Option<String>, to: &str) -> anyhow::Result<()> {
    let _lock = DataLock::acquire(data_dir)?;
    let from = from.unwrap_or_else(|| config::database_url(data_dir, None));
    let summary = runtime()?.block_on(harness_store::migrate_db::migrate_db(&from, to))?;
    println!(
        "migrated {} rows in {} tables from {} to {}",
        summary.rows(),
        summary.tables.len(),
        harness_store::redact_url(&from),
        harness_store::redact_url(to)
    );
    for (table, rows) in &summary.tables {
        println!("  {table:<24} {rows:>8} rows");
    }
    println!(
        "start the server with --database-url {} (keep {}: the admin token and the internal API key)",
        harness_store::redact_url(to),
        data_dir.join("secrets").display()
    );
    Ok(())
}

/// `harness doctor`: exit 0 only when every check passes.
pub fn doctor_cmd(data_dir: &Path, database_url: Option<String>) -> ExitCode {
    let inputs = doctor::Inputs {
        data_dir: data_dir.to_path_buf(),
        site_root: harness_server::config::default_site_root(),
        min_free_bytes: 1024 * 1024 * 1024,
        database_url,
    };
    let checks = doctor::run(&inputs);
    let mut failed = 0;
    for check in &checks {
        println!("{}", check.line());
        if check.outcome == doctor::Outcome::Fail {
            failed += 1;
        }
    }
    if failed == 0 {
        println!("all {} checks passed", checks.len());
        ExitCode::SUCCESS
    } else {
        println!("{failed} of {} checks failed", checks.len());
        ExitCode::FAILURE
    }
}
