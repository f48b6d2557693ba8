//! Agents in holders, at scale, measured in one run on this machine:
//!
//! 1. N agents (`HARNESS_BENCH_AGENTS`, default 1000; each `sleep` in a
//!    holder, agent isolation off so the holder is what is measured) are
//!    started through a real server;
//! 2. per holder: RSS (`VmRSS`, and `RssAnon`: what is its own), threads,
//!    CPU over 5 s of idle (holders and the server process); the server's
//!    own RSS growth per agent;
//! 3. SIGTERM-equivalent shutdown of the server with N agents live (target
//!    < 2 s) — the agents must all still run after it;
//! 4. a new server on the same data directory: time until every terminal
//!    is live again (target < 2 s), and every execution still RUNNING.
//!
//! `cargo bench -p server --bench holders`.

mod support;

use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use harness_server::launch;
use serde_json::json;

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `key:` of `/proc/<pid>/status`, in kB.
fn status_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `Pss:` of `/proc/<pid>/smaps_rollup` (shared pages split among their
/// users), in kB.
fn pss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The executable a process runs (`/proc/<pid>/exe`).
fn exe_of(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return 0;
    };
    let f: Vec<&str> = after.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

/// Pids of the holders serving `data` (their command line names its
/// `holders` directory).
fn holders(data: &std::path::Path) -> Vec<u32> {
    let marker = data.join("holders").display().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        if cmd.contains("\0hold\0") && cmd.contains(&marker) {
            out.push(pid);
        }
    }
    out
}

async fn start(
    data: &std::path::Path,
) -> anyhow::Result<(harness_server::Running, reqwest::Client)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut cfg = support::serve_config(listener.local_addr()?, data.to_path_buf());
    cfg.agent_isolation = harness_server::isolation::IsolationMode::Off;
    Ok((launch(cfg, listener).await?, reqwest::Client::new()))
}

async fn run() -> anyhow::Result<()> {
    let n = env_num("HARNESS_BENCH_AGENTS", 1000);
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    println!("harness holders benchmark: {n} agents");
    let self_pid = std::process::id();
    let (server, client) = start(&data).await?;
    let rss_before = status_kb(self_pid, "VmRSS:");
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        let url = |p: &str| format!("{}{p}", server.base_url());
        let t: serde_json::Value = client
            .post(url("/api/tasks"))
            .bearer_auth(&server.admin_token)
            .json(
                &json!({"title": format!("held {i}"), "agent": {"provider": "command",
                "command": ["sleep", "100000"], "cwd": dir.path()}}),
            )
            .send()
            .await?
            .json()
            .await?;
        let id = t["id"].as_str().context("task id")?.to_string();
        let resp = client
            .post(url(&format!("/api/tasks/{id}/start")))
            .bearer_auth(&server.admin_token)
            .send()
            .await?;
        ensure!(
            resp.status().is_success(),
            "start {i}: {}",
            resp.text().await?
        );
        tasks.push(id);
    }
    let start_secs = started.elapsed().as_secs_f64();
    let pids = holders(&data);
    ensure!(pids.len() == n, "{} holders for {n} agents", pids.len());
    // Settle, then measure.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = status_kb(self_pid, "VmRSS:");
    let rss: u64 = pids.iter().map(|&p| status_kb(p, "VmRSS:")).sum();
    let anon: u64 = pids.iter().map(|&p| status_kb(p, "RssAnon:")).sum();
    let pss: u64 = pids.iter().map(|&p| pss_kb(p)).sum();
    let holder_exe = pids.first().map(|&p| exe_of(p)).unwrap_or_default();
    let holder_size = std::fs::metadata(holder_exe.trim_end_matches(" (deleted)"))
        .map(|m| m.len())
        .unwrap_or(0);
    let threads: u64 = pids.iter().map(|&p| status_kb(p, "Threads:")).sum();
    let ticks_before: u64 = pids.iter().map(|&p| cpu_ticks(p)).sum();
    let server_before = cpu_ticks(self_pid);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let idle_ticks: u64 = pids.iter().map(|&p| cpu_ticks(p)).sum::<u64>() - ticks_before;
    let server_idle = cpu_ticks(self_pid) - server_before;

    // The upgrade's stop: the server goes, the agents stay.
    let stop = Instant::now();
    server.shutdown().await?;
    let stop_secs = stop.elapsed().as_secs_f64();
    let still = holders(&data).len();

    let again = Instant::now();
    let (server, client) = start(&data).await?;
    let reattach_secs = again.elapsed().as_secs_f64();
    let (live, _) = server.terminals.pty_counts();
    let mut running = 0;
    for id in &tasks {
        let v: serde_json::Value = client
            .get(format!("{}/api/tasks/{id}", server.base_url()))
            .bearer_auth(&server.admin_token)
            .send()
            .await?
            .json()
            .await?;
        if v["execution"]["status"] == "RUNNING" {
            running += 1;
        }
    }
    // Clean up: every agent ends with its holder.
    server.terminals.shutdown_ending_agents().await;
    server.shutdown().await?;

    let per = |v: u64| v as f64 / n as f64;
    println!();
    println!(
        "{:<52} {:>10.1} s",
        format!("start {n} agents (REST create + start)"),
        start_secs
    );
    println!("{:<52} {:>10.0} kB", "holder VmRSS per agent", per(rss));
    println!(
        "{:<52} {:>10.0} kB",
        "holder RssAnon per agent (its own memory)",
        per(anon)
    );
    println!(
        "{:<52} {:>10.0} kB",
        "holder Pss per agent (shared pages split)",
        per(pss)
    );
    println!("{:<52} {:>10.2}", "holder threads per agent", per(threads));
    println!(
        "{:<52} {:>10.0} kB  {holder_exe}",
        "holder binary",
        holder_size as f64 / 1024.0
    );
    println!(
        "{:<52} {:>10.0} kB",
        "server RSS growth per agent",
        per(rss_after.saturating_sub(rss_before))
    );
    println!(
        "{:<52} {:>10} ticks",
        "holders' CPU in 5 s idle (all)", idle_ticks
    );
    println!(
        "{:<52} {:>10} ticks",
        "server's CPU in 5 s idle", server_idle
    );
    println!(
        "{:<52} {:>10.3} s",
        "shutdown with all agents live", stop_secs
    );
    println!("{:<52} {:>10}", "holders alive after the shutdown", still);
    println!(
        "{:<52} {:>10.3} s",
        "restart until every terminal is live", reattach_secs
    );
    println!(
        "{:<52} {:>10} / {n}",
        "terminals live after the restart", live
    );
    println!(
        "{:<52} {:>10} / {n}",
        "executions RUNNING after the restart", running
    );
    println!();
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    println!(
        "shutdown < 2 s: {} ; agents kept: {} ; re-attach < 2 s: {} ; all live: {}",
        verdict(stop_secs < 2.0),
        verdict(still == n),
        verdict(reattach_secs < 2.0),
        verdict(live == n && running == n)
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}
