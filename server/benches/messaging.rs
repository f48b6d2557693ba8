//! Messaging throughput and latency, measured in one run on this machine:
//!
//! - raw SQLite: one-row `BEGIN IMMEDIATE; INSERT; COMMIT` transactions on the
//!   same disk with the same pragmas (WAL, synchronous=NORMAL) — the ceiling;
//! - asks/s through the core directly (`Asks::ask`, one transaction each),
//!   interleaved with the raw commits in rounds (median round reported) so a
//!   busy neighbour on this 2-core machine skews both alike;
//! - asks/s through the REST API (`POST /api/internal/harness/ask`, real HTTP);
//! - reply latency p50/p99 through the REST API.
//!
//! Prints the ratios against the targets: core ≥ 50 % of the raw commit
//! rate; REST reply p99 < 5 ms. Run: `cargo bench -p server --bench messaging`
//! (`HARNESS_BENCH_N` sets the sample count, default 3000).

use std::time::{Duration, Instant};

use harness_core::tasks::CreateTask;
use harness_server::launch;
use serde_json::json;

mod support;
use support::{SqliteRaw, median, rate};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

async fn run() -> anyhow::Result<()> {
    let n: usize = std::env::var("HARNESS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let dir = tempfile::tempdir()?;
    println!(
        "harness messaging benchmark: {n} samples per measurement, data in {}",
        dir.path().display()
    );

    let mut raw_db = SqliteRaw::open(dir.path()).await?;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let cfg = support::serve_config(listener.local_addr()?, dir.path().join("data"));
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

    // Core (insert + supersede + park, one transaction) against the raw
    // commit rate, interleaved in rounds so that both see the same machine
    // (other processes, page cache, WAL checkpoints); the median round is
    // reported. A warm-up round of each is discarded.
    let rounds = 5;
    let per_round = (n / rounds).max(1);
    raw_db.commits(per_round / 5).await?;
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
    core_round(per_round / 5).await?;
    let (mut raws, mut cores, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let r = raw_db.commits(per_round).await?;
        let c = core_round(per_round).await?;
        raws.push(r);
        cores.push(c);
        ratios.push(c / r);
    }
    let (raw, core_ask) = (median(raws), median(cores));
    let core_ratio = median(ratios.clone());

    // REST: the same operation over HTTP (auth, JSON, routing included).
    let client = reqwest::Client::new();
    let ask_url = format!("{}/api/internal/harness/ask", server.base_url());
    let start = Instant::now();
    for i in 0..n {
        let resp = client
            .post(&ask_url)
            .bearer_auth(&server.admin_token)
            .json(&json!({"taskId": tasks[i % tasks.len()], "question": "Which option?"}))
            .send()
            .await?;
        anyhow::ensure!(resp.status().is_success(), "ask failed: {}", resp.status());
    }
    let rest_ask = rate(n, start.elapsed());

    // Reply latency over REST: each reply answers a fresh OPEN ask and resumes.
    let reply_url = format!("{}/api/internal/harness/reply", server.base_url());
    let mut latencies = Vec::with_capacity(n);
    for i in 0..n {
        let task = &tasks[i % tasks.len()];
        h.asks().ask(task, Some("Proceed?")).await?;
        let start = Instant::now();
        let resp = client
            .post(&reply_url)
            .bearer_auth(&server.admin_token)
            .json(&json!({"taskId": task, "text": format!("yes {i}")}))
            .send()
            .await?;
        let status = resp.status();
        let _ = resp.bytes().await?;
        latencies.push(start.elapsed());
        anyhow::ensure!(status.is_success(), "reply failed: {status}");
    }
    latencies.sort();
    let (p50, p99) = (percentile(&latencies, 0.50), percentile(&latencies, 0.99));
    server.shutdown().await?;

    raw_db.store.close().await;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!();
    println!("{:<46} {:>12}", "measurement", "value");
    println!("{:<46} {:>10.0}/s", "raw SQLite one-row commits", raw);
    println!("{:<46} {:>10.0}/s", "asks through the core", core_ask);
    println!(
        "{:<46} {:>10.0}/s",
        "asks through REST (sequential HTTP)", rest_ask
    );
    println!("{:<46} {:>10.3}ms", "REST reply latency p50", ms(p50));
    println!("{:<46} {:>10.3}ms", "REST reply latency p99", ms(p99));
    println!();
    let shown: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    println!("core/raw per round: {}", shown.join(" "));
    println!(
        "ratio core/raw  = {:.2}  (median round; target >= 0.50: {})",
        core_ratio,
        if core_ratio >= 0.5 { "PASS" } else { "FAIL" }
    );
    println!("ratio REST/raw  = {:.2}", rest_ask / raw);
    println!("ratio REST/core = {:.2}", rest_ask / core_ask);
    println!(
        "reply p99       = {:.3} ms (target < 5 ms: {})",
        ms(p99),
        if p99 < Duration::from_millis(5) {
            "PASS"
        } else {
            "FAIL"
        }
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}
