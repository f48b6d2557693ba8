//! Asks through the core on SQLite and on PostgreSQL, each next to its own
//! ceiling measured in the same run:
//!
//! - SQLite: one-row `BEGIN IMMEDIATE; INSERT; COMMIT` transactions on the
//!   same disk with the same pragmas (`support::SqliteRaw`);
//! - PostgreSQL: one-row `BEGIN; INSERT; COMMIT` transactions on one
//!   connection to the same server and database the store uses
//!   (`support::PgRaw`).
//!
//! Per backend a server is launched (`harness_server::launch`, the store
//! the binary would open), 64 tasks are given a running execution, and
//! rounds of raw commits and of `Asks::ask` (insert + supersede + park,
//! one transaction) alternate so that a busy neighbour on this 2-core
//! machine skews both alike; the median round's ratio is reported against
//! the target core ≥ 0.5 × raw. The PostgreSQL server is
//! `HARNESS_TEST_POSTGRES_URL`, else `postgres://postgres@127.0.0.1:5432/postgres`;
//! a fresh database is created for the run and dropped after it.
//! Run: `cargo bench -p server --bench backends` (`HARNESS_BENCH_N`: asks
//! per backend, default 2000).

use std::time::Instant;

use harness_core::tasks::CreateTask;
use harness_server::launch;

mod support;
use support::{PgRaw, SqliteRaw, drop_database, fresh_database, median, rate};

/// One backend's figures.
struct Figures {
    raw: f64,
    core: f64,
    ratios: Vec<f64>,
}

/// The raw side of one backend.
enum Raw {
    Sqlite(SqliteRaw),
    Pg(PgRaw),
}

impl Raw {
    async fn commits(&mut self, n: usize) -> anyhow::Result<f64> {
        match self {
            Self::Sqlite(r) => r.commits(n).await,
            Self::Pg(r) => r.commits(n).await,
        }
    }
}

/// Interleaved rounds of raw commits and core asks on a server over
/// `database_url` (`None`: SQLite in the data directory).
async fn measure(
    dir: &std::path::Path,
    database_url: Option<String>,
    mut raw: Raw,
    n: usize,
) -> anyhow::Result<Figures> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut cfg = support::serve_config(listener.local_addr()?, dir.join("data"));
    cfg.database_url = database_url;
    let server = launch(cfg, listener).await?;
    let h = server.harness.clone();
    let mut tasks = Vec::new();
    for i in 0..64 {
        let view = h
            .tasks()
            .create_task(CreateTask {
                title: Some(format!("bench {i}")),
                ..Default::default()
            })
            .await?;
        h.tasks().begin_execution(&view.task.id).await?;
        tasks.push(view.task.id);
    }
    let rounds = 5;
    let per_round = (n / rounds).max(1);
    let mut asked = 0usize;
    let mut core_round = async |count: usize| -> anyhow::Result<f64> {
        let start = Instant::now();
        for _ in 0..count {
            h.asks()
                .ask(&tasks[asked % tasks.len()], Some("Which option?"))
                .await?;
            asked += 1;
        }
        Ok(rate(count, start.elapsed()))
    };
    // A warm-up round of each is discarded.
    raw.commits(per_round / 5).await?;
    core_round(per_round / 5).await?;
    let (mut raws, mut cores, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let r = raw.commits(per_round).await?;
        let c = core_round(per_round).await?;
        raws.push(r);
        cores.push(c);
        ratios.push(c / r);
    }
    server.shutdown().await?;
    match raw {
        Raw::Sqlite(r) => r.store.close().await,
        Raw::Pg(r) => r.close().await,
    }
    Ok(Figures {
        raw: median(raws),
        core: median(cores),
        ratios,
    })
}

fn row(backend: &str, f: &Figures) {
    let ratio = median(f.ratios.clone());
    let shown: Vec<String> = f.ratios.iter().map(|r| format!("{r:.2}")).collect();
    println!(
        "{backend:<11} {:>12.0}/s {:>12.0}/s {:>7.2} {:<5} (rounds {})",
        f.raw,
        f.core,
        ratio,
        if ratio >= 0.5 { "PASS" } else { "FAIL" },
        shown.join(" ")
    );
}

async fn run() -> anyhow::Result<()> {
    let n: usize = std::env::var("HARNESS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let admin = std::env::var("HARNESS_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let dir = tempfile::tempdir()?;
    println!(
        "harness backends benchmark: {n} asks per backend, SQLite in {}, PostgreSQL on {}",
        dir.path().display(),
        harness_store::redact_url(&admin)
    );

    let sqlite_dir = dir.path().join("sqlite");
    std::fs::create_dir_all(&sqlite_dir)?;
    let sqlite = measure(
        &sqlite_dir,
        None,
        Raw::Sqlite(SqliteRaw::open(&sqlite_dir).await?),
        n,
    )
    .await?;

    let (url, name) = fresh_database(&admin).await?;
    let pg_dir = dir.path().join("pg");
    let pg = async {
        let raw = Raw::Pg(PgRaw::open(&url).await?);
        measure(&pg_dir, Some(url.clone()), raw, n).await
    }
    .await;
    drop_database(&admin, &name).await?;
    let pg = pg?;

    println!();
    println!(
        "{:<11} {:>14} {:>14} {:>7}",
        "backend", "raw commits", "core asks", "ratio"
    );
    row("SQLite", &sqlite);
    row("PostgreSQL", &pg);
    println!();
    println!("target: core asks >= 0.50 x the same backend's raw one-row commits (median round)");
    Ok(())
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}
