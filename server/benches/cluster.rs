//! Several nodes on one PostgreSQL database, in one run: asks/s
//! and outbox messages/s with 1, 2 and 3 nodes next to the raw one-row
//! commit rate of the same server and database measured in the same run.
//!
//! Three servers are launched in this process (`harness_server::launch`,
//! each its own data directory and node id, one fresh database). Per node
//! count `k` and round:
//!
//! - **raw**: one-row `BEGIN; INSERT; COMMIT` transactions on one
//!   connection (`support::PgRaw`);
//! - **asks**: `k` callers, one per node, each `Asks::ask` in a loop on
//!   its node's own tasks (insert + supersede + park, one transaction);
//!   the total rate;
//! - **outbox**: rows queued first, then one sender per node (as the server
//!   runs it, concurrency 4, the gateway CLI double in `noop` mode) until
//!   every row is DELIVERED; the total rate.
//!
//! Targets: one node's asks ≥ 0.6 × raw; adding nodes does not lower the
//! total (≥ 0.97 × one node's) and does not raise PostgreSQL's CPU per ask
//! (medians). Medians of 3 rounds. Each round also prints the CPU time per ask of this process
//! (the nodes) and of the local PostgreSQL server's processes. `HARNESS_BENCH_N` asks per round (default 1500), a third as
//! many outbox messages. The server is `HARNESS_TEST_POSTGRES_URL`, else
//! `postgres://postgres@127.0.0.1:5432/postgres`.
//! Run: `cargo bench -p server --bench cluster`.

use std::time::{Duration, Instant};

use harness_core::{Harness, outbox::PushInput, tasks::CreateTask};
use harness_server::{
    launch,
    workers::outbox::{self as sender, OutboxConfig},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

mod support;
use support::{PgRaw, PgSplit, drop_database, fresh_database, median, own_cpu, postgres_cpu, rate};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");
const NODES: usize = 3;
const ROUNDS: usize = 3;

/// A node on `url`; its own sender is off (each round starts its own).
async fn node(dir: &std::path::Path, url: &str) -> anyhow::Result<harness_server::Running> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut cfg = support::serve_config(listener.local_addr()?, dir.to_path_buf());
    cfg.database_url = Some(url.to_string());
    cfg.outbox_wait = Duration::ZERO;
    cfg.outbox.max_in_flight = 0;
    launch(cfg, listener).await
}

/// `n` asks from one caller on `h`, round-robin over `tasks`.
async fn asks(h: Harness, tasks: Vec<String>, n: usize) -> anyhow::Result<()> {
    for i in 0..n {
        h.asks()
            .ask(&tasks[i % tasks.len()], Some("Which option?"))
            .await?;
    }
    Ok(())
}

/// `m` outbound rows queued on `h` (not timed), tagged `tag`.
async fn queue(h: &Harness, task: &str, m: usize, tag: &str) -> anyhow::Result<()> {
    for i in 0..m {
        h.outbox()
            .push_to_human(PushInput {
                task_id: Some(task.to_string()),
                message: Some(format!("{tag} {i}")),
                scope: Some("work".into()),
                expect_reply: Some(false),
                ..Default::default()
            })
            .await?;
    }
    Ok(())
}

/// Senders on `nodes` until every row tagged `tag` was attempted (DELIVERED
/// with the `noop` double); the rate.
async fn drain(
    nodes: &[&Harness],
    pool: &sqlx::PgPool,
    m: usize,
    tag: &str,
) -> anyhow::Result<f64> {
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let mut jobs = Vec::new();
    for (i, h) in nodes.iter().enumerate() {
        let config = OutboxConfig {
            max_in_flight: 4,
            ..OutboxConfig::default()
        };
        let owner = format!("{}:{tag}-{i}", h.config().node_id);
        jobs.push(tokio::spawn(sender::run(
            (*h).clone(),
            owner,
            config,
            cancel.clone(),
        )));
    }
    // The stored message is the composed body (task title first).
    let like = format!("%{tag} %");
    let deadline = Instant::now() + Duration::from_secs(300);
    let elapsed = loop {
        let done: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM harness_outbound \
             WHERE state IN ('DELIVERED', 'SENT_UNVERIFIED', 'FAILED', 'DEAD') AND message LIKE $1",
        )
        .bind(&like)
        .fetch_one(pool)
        .await?;
        if done as usize >= m {
            break started.elapsed();
        }
        anyhow::ensure!(Instant::now() < deadline, "the outbox did not drain");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    cancel.cancel();
    for job in jobs {
        job.await?;
    }
    Ok(rate(m, elapsed))
}

struct Row {
    raw: f64,
    asks: f64,
    outbox: f64,
    /// PostgreSQL's CPU per ask (µs), when its processes are local.
    pg_us: Option<f64>,
}

async fn run() -> anyhow::Result<()> {
    let n: usize = std::env::var("HARNESS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let m = (n / 3).max(30);
    let admin = std::env::var("HARNESS_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let (url, name) = fresh_database(&admin).await?;
    let result = bench(&url, n, m).await;
    drop_database(&admin, &name).await?;
    let rows = result?;
    println!();
    println!(
        "{:<6} {:>12} {:>10} {:>10} {:>13} {:>11}",
        "nodes", "raw commits", "asks", "asks/raw", "outbox msgs", "outbox/raw"
    );
    for (k, r) in rows.iter().enumerate() {
        println!(
            "{:<6} {:>10.0}/s {:>8.0}/s {:>10.2} {:>11.0}/s {:>11.2}",
            k + 1,
            r.raw,
            r.asks,
            r.asks / r.raw,
            r.outbox,
            r.outbox / r.raw
        );
    }
    let one = &rows[0];
    let ratio = one.asks / one.raw;
    println!();
    println!(
        "one node: asks {ratio:.2} x raw (target >= 0.60): {}",
        if ratio >= 0.6 { "PASS" } else { "FAIL" }
    );
    for (k, r) in rows.iter().enumerate().skip(1) {
        let (a, o) = (r.asks / one.asks, r.outbox / one.outbox);
        println!(
            "{} nodes: asks {a:.2} x one node's, outbox {o:.2} x one node's (target >= 0.97): {}",
            k + 1,
            if a >= 0.97 && o >= 0.97 {
                "PASS"
            } else {
                "FAIL"
            }
        );
        if let (Some(mine), Some(ones)) = (r.pg_us, one.pg_us) {
            println!(
                "{} nodes: PostgreSQL's CPU per ask {mine:.0} µs, one node's {ones:.0} µs \
                 (target: no higher): {}",
                k + 1,
                if mine <= ones { "PASS" } else { "FAIL" }
            );
        }
    }
    Ok(())
}

async fn bench(url: &str, n: usize, m: usize) -> anyhow::Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    println!(
        "harness cluster benchmark: {NODES} nodes on one PostgreSQL database, {n} asks and {m} \
         outbox messages per round, {ROUNDS} rounds per node count"
    );
    let mut raw = PgRaw::open(url).await?;
    let mut servers = Vec::new();
    for k in 0..NODES {
        servers.push(node(&dir.path().join(format!("node-{k}")), url).await?);
    }
    let first = servers[0].harness.clone();
    first
        .settings().set_notify_targets(vec![serde_json::from_value(json!(
            {"label": "bench", "gateway": "openclaw", "downstream": "telegram", "dest": "telegram:-1", "scope": "work"}
        ))?])
        .await?;
    first
        .outbox()
        .set_gateway_config(serde_json::from_value(json!(
            {"openclaw": {"cliPath": DOUBLE, "env": {"GATEWAY_DOUBLE_MODE": "noop"}}}
        ))?)
        .await?;
    // Each node's own tasks with a live execution on it (asks park them).
    let mut tasks = Vec::new();
    for s in &servers {
        let mut mine = Vec::new();
        for i in 0..32 {
            let view = s
                .harness
                .tasks()
                .create_task(CreateTask {
                    title: Some(format!("bench {i}")),
                    ..Default::default()
                })
                .await?;
            s.harness.tasks().begin_execution(&view.task.id).await?;
            mine.push(view.task.id);
        }
        tasks.push(mine);
    }
    let push_task = tasks[0][0].clone();
    let pool = sqlx::PgPool::connect(url).await?;
    // Warm-up (discarded).
    raw.commits(100).await?;
    asks(first.clone(), tasks[0].clone(), 100).await?;

    let mut rows = Vec::new();
    for k in 1..=NODES {
        let (mut raws, mut askss, mut outs) = (Vec::new(), Vec::new(), Vec::new());
        let mut pgs = Vec::new();
        for round in 0..ROUNDS {
            raws.push(raw.commits(n).await?);
            let (cpu, pg_cpu) = (own_cpu(), postgres_cpu());
            let split = PgSplit::read(&pool).await?;
            let started = Instant::now();
            let mut set = tokio::task::JoinSet::new();
            for i in 0..k {
                let per = n / k + usize::from(i < n % k);
                set.spawn(asks(servers[i].harness.clone(), tasks[i].clone(), per));
            }
            while let Some(done) = set.join_next().await {
                done??;
            }
            askss.push(rate(n, started.elapsed()));
            let split = split.since(&pool).await?;
            let per_ask = |d: Duration| d.as_micros() / n as u128;
            let harness_us = per_ask(own_cpu().saturating_sub(cpu));
            let pg_us = match (pg_cpu, postgres_cpu()) {
                (Some(before), Some(after)) => {
                    let us = per_ask(after.saturating_sub(before));
                    pgs.push(us as f64);
                    format!("{us}")
                }
                _ => "n/a".into(),
            };
            let tag = format!("k{k}r{round}");
            queue(&first, &push_task, m, &tag).await?;
            let nodes: Vec<&Harness> = servers[..k].iter().map(|s| &s.harness).collect();
            outs.push(drain(&nodes, &pool, m, &tag).await?);
            println!(
                "  {k} node(s), round {round}: raw {:.0}/s, asks {:.0}/s (CPU per ask: nodes \
                 {harness_us} µs, PostgreSQL {pg_us} µs: listeners {} µs, sessions {} µs, \
                 server {} µs; {:.2} write transactions per ask), outbox {:.0}/s",
                raws[round],
                askss[round],
                per_ask(split.listeners),
                per_ask(split.sessions),
                per_ask(split.server),
                split.xids as f64 / n as f64,
                outs[round]
            );
        }
        rows.push(Row {
            raw: median(raws),
            asks: median(askss),
            outbox: median(outs),
            pg_us: (!pgs.is_empty()).then(|| median(pgs)),
        });
    }
    pool.close().await;
    raw.close().await;
    for s in servers {
        s.shutdown().await?;
    }
    Ok(rows)
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}
