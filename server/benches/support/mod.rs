//! What the benchmarks share: the server configuration they start with,
//! rates, medians, and the raw one-row commit loops that are their ceilings.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use sqlx::Connection;

use harness_store::{SqliteOptions, SqliteStore};

/// A server configuration for a benchmark: agents launched through the
/// harness binary (the isolation probe and sandbox; a benchmark's own
/// executable would start a server that probes again), and no per-task
/// rate limits (a benchmark asks and pushes far faster than they allow —
/// they are what a working agent never reaches).
pub fn serve_config(
    addr: std::net::SocketAddr,
    data_dir: std::path::PathBuf,
) -> harness_server::ServeConfig {
    let mut cfg = harness_server::ServeConfig::new(addr, data_dir);
    cfg.harness_bin = env!("CARGO_BIN_EXE_harness").into();
    let unlimited = harness_core::rate_limit::Rate {
        burst: u32::MAX,
        every: Duration::from_millis(1),
    };
    cfg.rate_limits.ask = unlimited;
    cfg.rate_limits.notify = unlimited;
    cfg.rate_limits.push = unlimited;
    cfg
}

pub fn rate(n: usize, elapsed: Duration) -> f64 {
    n as f64 / elapsed.as_secs_f64()
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// CPU time of this process (its own threads, not its child processes).
pub fn own_cpu() -> Duration {
    // SAFETY: getrusage writes only into the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let t = |v: libc::timeval| {
        Duration::from_secs(v.tv_sec.max(0) as u64) + Duration::from_micros(v.tv_usec.max(0) as u64)
    };
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU time of every process named `postgres` on this machine (the local
/// server and its backends), from `/proc/*/stat`; `None` when there is
/// none (a server elsewhere). Backends that end between two readings take
/// their time with them: read it around a stretch of work on pooled,
/// long-lived connections.
pub fn postgres_cpu() -> Option<Duration> {
    let by_pid = postgres_cpu_by_pid();
    (!by_pid.is_empty()).then(|| by_pid.values().sum())
}

/// CPU time of each local `postgres` process by pid, from `/proc/*/stat`
/// (see [`postgres_cpu`]).
pub fn postgres_cpu_by_pid() -> std::collections::HashMap<i32, Duration> {
    let mut out = std::collections::HashMap::new();
    // SAFETY: sysconf only reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let Some(ticks) = u64::try_from(ticks).ok().filter(|t| *t > 0) else {
        return out;
    };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if !head.ends_with("(postgres") {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        out.insert(
            pid,
            Duration::from_micros((num(11) + num(12)) * 1_000_000 / ticks),
        );
    }
    out
}

/// Where a database's PostgreSQL CPU goes, read around a stretch of work:
/// the connections that hold `LISTEN` (the nodes' event listeners), the
/// other connections to the database, and the server's own processes
/// (WAL writer, checkpointer, …, and connections to other databases); and
/// the write transactions of the whole server.
pub struct PgSplit {
    cpu: std::collections::HashMap<i32, Duration>,
    xids: i64,
}

/// CPU per class and transactions between two [`PgSplit`] readings.
#[derive(Debug, Default, Clone, Copy)]
pub struct PgSplitDelta {
    pub listeners: Duration,
    pub sessions: Duration,
    pub server: Duration,
    /// Write transactions on the whole server.
    pub xids: i64,
}

impl PgSplit {
    pub async fn read(pool: &sqlx::PgPool) -> anyhow::Result<Self> {
        // Transaction ids handed out on the whole server: every write
        // transaction takes one (a NOTIFY's too); the statistics' commit
        // counters lag by up to seconds.
        let xids: i64 =
            sqlx::query_scalar("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint")
                .fetch_one(pool)
                .await?;
        Ok(Self {
            cpu: postgres_cpu_by_pid(),
            xids,
        })
    }

    /// What changed since `self` (the pids classified now: pooled
    /// connections live through the stretch).
    pub async fn since(&self, pool: &sqlx::PgPool) -> anyhow::Result<PgSplitDelta> {
        let after = Self::read(pool).await?;
        let rows: Vec<(i32, String)> = sqlx::query_as(
            "SELECT pid, CASE WHEN query ILIKE 'LISTEN%' THEN 'listener' ELSE 'session' END \
             FROM pg_stat_activity WHERE datname = current_database()",
        )
        .fetch_all(pool)
        .await?;
        let class: std::collections::HashMap<i32, String> = rows.into_iter().collect();
        let mut d = PgSplitDelta {
            xids: after.xids - self.xids,
            ..Default::default()
        };
        for (pid, now) in &after.cpu {
            let spent = now.saturating_sub(self.cpu.get(pid).copied().unwrap_or_default());
            match class.get(pid).map(String::as_str) {
                Some("listener") => d.listeners += spent,
                Some(_) => d.sessions += spent,
                None => d.server += spent,
            }
        }
        Ok(d)
    }
}

/// The SQLite ceiling: one-row `BEGIN IMMEDIATE; INSERT; COMMIT`
/// transactions on a store opened like Harness's (same pragmas, same disk,
/// same driver).
pub struct SqliteRaw {
    pub store: SqliteStore,
    payload: String,
    next: i64,
}

impl SqliteRaw {
    pub async fn open(dir: &std::path::Path) -> anyhow::Result<Self> {
        let url = format!("sqlite://{}", dir.join("raw.db").display());
        let store = SqliteStore::open(SqliteOptions::new(url)).await?;
        sqlx::query("CREATE TABLE bench (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")
            .execute(store.writer_pool())
            .await?;
        Ok(Self {
            store,
            payload: "x".repeat(200),
            next: 0,
        })
    }

    pub async fn commits(&mut self, n: usize) -> anyhow::Result<f64> {
        let pool = self.store.writer_pool();
        let start = Instant::now();
        for _ in 0..n {
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            sqlx::query("INSERT INTO bench (id, payload) VALUES (?, ?)")
                .bind(self.next)
                .bind(&self.payload)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            self.next += 1;
        }
        Ok(rate(n, start.elapsed()))
    }
}

/// The PostgreSQL ceiling: one-row `BEGIN; INSERT; COMMIT` transactions on
/// one connection to the same server and database as the store.
pub struct PgRaw {
    pool: sqlx::PgPool,
    payload: String,
    next: i64,
}

impl PgRaw {
    pub async fn open(url: &str) -> anyhow::Result<Self> {
        // No ping before each use: the ceiling is BEGIN, INSERT, COMMIT only.
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect(url)
            .await?;
        sqlx::query("CREATE TABLE bench_raw (id BIGINT PRIMARY KEY, payload TEXT NOT NULL)")
            .execute(&pool)
            .await?;
        Ok(Self {
            pool,
            payload: "x".repeat(200),
            next: 0,
        })
    }

    pub async fn commits(&mut self, n: usize) -> anyhow::Result<f64> {
        let start = Instant::now();
        for _ in 0..n {
            let mut tx = self.pool.begin().await?;
            sqlx::query("INSERT INTO bench_raw (id, payload) VALUES ($1, $2)")
                .bind(self.next)
                .bind(&self.payload)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            self.next += 1;
        }
        Ok(rate(n, start.elapsed()))
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A fresh database on the PostgreSQL server of `admin` (its URL).
pub async fn fresh_database(admin: &str) -> anyhow::Result<(String, String)> {
    let name = format!("harness_bench_{}", harness_core::ids::new_id());
    let mut conn = sqlx::PgConnection::connect(admin).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    let base = admin.split('?').next().unwrap_or(admin);
    let host_end = base
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| base[start..].find('/').map(|i| start + i))
        .unwrap_or(base.len());
    Ok((format!("{}/{name}", &base[..host_end]), name))
}

pub async fn drop_database(admin: &str, name: &str) -> anyhow::Result<()> {
    let mut conn = sqlx::PgConnection::connect(admin).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await?;
    conn.close().await?;
    Ok(())
}
