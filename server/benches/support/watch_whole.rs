//! Part 2 of the `agent_watch` benchmark: the whole server with N live
//! agents, the watcher on and off, and the detection latency.
//!
//! Each agent is Claude-shaped (provider `claude`, so the watcher runs
//! Claude Code's recogniser on it) and runs a bash script in its holder: it
//! draws a recorded Claude Code screen (cropped to the task terminal's
//! 80×24, as `server/tests/agent_states.rs` does), then redraws a status
//! line every second with no process started (`read -t`), so what is
//! measured is the server, not forks. The server's own CPU (this process:
//! the server runs in it) is read over a window with every agent printing;
//! "off" is the same server with the watcher's tick set to a day (it never
//! looks). Two probe agents then draw a usage limit and exit 3 on a trigger;
//! the latency is from the moment the script drew (its own clock) to the
//! moment `GET /api/tasks/{id}` shows the state.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::{Context, ensure};
use harness_server::launch;
use harness_server::terminals::look_cost::WatchCost;
use serde_json::{Value, json};

use crate::support;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The last 24 rows of a recorded screen, each cut at 80 columns.
fn fixture_rows(cli: &str, case: &str) -> anyhow::Result<Vec<String>> {
    let path = format!(
        "{}/../crates/core/tests/fixtures/agent_screens/{cli}/{case}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).with_context(|| path.clone())?;
    let body = text.split_once('\n').map_or("", |(_, b)| b);
    let mut rows: Vec<String> = Vec::new();
    for row in body.trim_end_matches('\n').split('\n') {
        let row: String = row.chars().take(80).collect();
        let row = row.trim_end().to_string();
        if row.trim().is_empty() && rows.last().is_some_and(|r| r.trim().is_empty()) {
            continue;
        }
        rows.push(row);
    }
    Ok(rows.split_off(rows.len().saturating_sub(24)))
}

/// The rows drawn cursor-positioned, as a TUI does, into `<dir>/<name>.screen`.
fn screen_file(dir: &Path, name: &str, rows: &[String]) -> anyhow::Result<PathBuf> {
    let mut bytes = b"\x1b[2J\x1b[H".to_vec();
    for (i, row) in rows.iter().enumerate() {
        bytes.extend_from_slice(format!("\x1b[{};1H{row}", i + 1).as_bytes());
    }
    let path = dir.join(format!("{name}.screen"));
    std::fs::write(&path, bytes)?;
    Ok(path)
}

/// The agents' script: `$HB_SCREEN` drawn, then a status line redrawn every
/// `$HB_EVERY` seconds (none once `$HB_QUIET` exists); once `$HB_TRIGGER` exists, `limit` draws
/// `$HB_LIMIT` and waits, `exit` exits 3 — each noting when in `<trigger>.drawn`.
const SCRIPT: &str = r#"cat "$HB_SCREEN"
while :; do
  if [ -n "$HB_TRIGGER" ] && [ -e "$HB_TRIGGER" ]; then
    case "$HB_KIND" in
      limit) cat "$HB_LIMIT"; date +%s%N > "$HB_TRIGGER.drawn"; while :; do read -r -t 100 -s x; done ;;
      exit) date +%s%N > "$HB_TRIGGER.drawn"; exit 3 ;;
    esac
  fi
  [ -e "$HB_QUIET" ] || printf '\033[24;1H\033[2K  %s lines printed' "$SECONDS"
  read -r -t "$HB_EVERY" -s x
done
"#;

struct Bench {
    dir: PathBuf,
    script: PathBuf,
    working: PathBuf,
    limit: PathBuf,
}

async fn start(
    data: &Path,
    watch: bool,
) -> anyhow::Result<(harness_server::Running, reqwest::Client)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut cfg = support::serve_config(listener.local_addr()?, data.to_path_buf());
    cfg.agent_isolation = harness_server::isolation::IsolationMode::Off;
    if !watch {
        cfg.agent_watch.tick = Duration::from_secs(86_400);
    }
    Ok((launch(cfg, listener).await?, reqwest::Client::new()))
}

async fn agent(
    server: &harness_server::Running,
    client: &reqwest::Client,
    b: &Bench,
    title: &str,
    env: Value,
) -> anyhow::Result<String> {
    let url = |p: &str| format!("{}{p}", server.base_url());
    let mut env = env;
    env["HB_SCREEN"] = json!(b.working);
    env["HB_LIMIT"] = json!(b.limit);
    let t: Value = client
        .post(url("/api/tasks"))
        .bearer_auth(&server.admin_token)
        .json(&json!({"title": title, "agent": {"provider": "claude",
            "command": ["bash", b.script], "cwd": b.dir, "env": env}}))
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
        "start {title}: {}",
        resp.text().await?
    );
    Ok(id)
}

/// Milliseconds from the script's `<trigger>.drawn` until the task shows `state`.
async fn latency(
    server: &harness_server::Running,
    client: &reqwest::Client,
    id: &str,
    trigger: &Path,
    state: &str,
) -> anyhow::Result<f64> {
    std::fs::write(trigger, b"")?;
    let drawn = PathBuf::from(format!("{}.drawn", trigger.display()));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        ensure!(Instant::now() < deadline, "{id} never showed {state}");
        let t: Value = client
            .get(format!("{}/api/tasks/{id}", server.base_url()))
            .bearer_auth(&server.admin_token)
            .send()
            .await?
            .json()
            .await?;
        if t["agentState"]["state"] == state {
            let seen = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos();
            let at: u128 = std::fs::read_to_string(&drawn)
                .with_context(|| format!("{} was not written", drawn.display()))?
                .trim()
                .parse()?;
            return Ok(seen.saturating_sub(at) as f64 / 1e6);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The server's CPU over the window with `n` agents printing, and, with
/// the watcher on, the two latencies.
async fn one(
    b: &Bench,
    n: u64,
    window: Duration,
    watch: bool,
    round: u64,
) -> anyhow::Result<(Duration, Duration, WatchCost, Option<(f64, f64)>)> {
    let data = b
        .dir
        .join(format!("data-{}-{round}", if watch { "on" } else { "off" }));
    let (server, client) = start(&data, watch).await?;
    let quiet = data.with_extension("quiet");
    let every = json!({"HB_EVERY": "1", "HB_QUIET": quiet});
    for i in 0..n {
        agent(&server, &client, b, &format!("printer {i}"), every.clone()).await?;
    }
    let (live, _) = server.terminals.pty_counts();
    ensure!(live as u64 == n, "{live} of {n} agents live");
    // Every agent has drawn and been looked at once (its first look reads
    // the task), then the window.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let before = support::own_cpu();
    let cost_before = server.terminals.watch_cost();
    tokio::time::sleep(window).await;
    let cpu = support::own_cpu().saturating_sub(before);
    let watching = server.terminals.watch_cost().since(&cost_before);
    // Idle: every agent stops printing.
    std::fs::write(&quiet, b"")?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = support::own_cpu();
    tokio::time::sleep(window).await;
    let idle = support::own_cpu().saturating_sub(before);
    let latencies = if watch {
        let mut got = Vec::new();
        for kind in ["limit", "exit"] {
            let trigger = b.dir.join(format!("{kind}-{round}.trigger"));
            let id = agent(
                &server,
                &client,
                b,
                &format!("probe {kind}"),
                json!({"HB_EVERY": "0.02", "HB_KIND": kind, "HB_TRIGGER": trigger}),
            )
            .await?;
            // Looked at once before the trigger (as every agent is).
            tokio::time::sleep(Duration::from_secs(2)).await;
            let state = if kind == "limit" {
                "usage_limited"
            } else {
                "exited"
            };
            got.push(latency(&server, &client, &id, &trigger, state).await?);
        }
        Some((got[0], got[1]))
    } else {
        None
    };
    server.terminals.shutdown_ending_agents().await;
    server.shutdown().await?;
    Ok((cpu, idle, watching, latencies))
}

pub async fn run() -> anyhow::Result<()> {
    let n = env_num("HARNESS_BENCH_AGENTS", 1000);
    let window = Duration::from_secs(env_num("HARNESS_BENCH_WINDOW_SECS", 10));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let b = Bench {
        dir: d.to_path_buf(),
        script: d.join("printer.sh"),
        working: screen_file(d, "working", &fixture_rows("claude", "working_tool")?)?,
        limit: screen_file(
            d,
            "limit",
            &fixture_rows("claude", "usage_limit_subscription@80x24")?,
        )?,
    };
    std::fs::write(&b.script, SCRIPT)?;
    println!();
    println!(
        "the whole server: {n} Claude-shaped agents in holders, each redrawing a line every second; the server's CPU over {} s (load average {})",
        window.as_secs(),
        load_average()
    );
    // Off and on alternate (`HARNESS_BENCH_ROUNDS` pairs, default 2), each in
    // a server of its own; the medians are compared.
    let rounds = env_num("HARNESS_BENCH_ROUNDS", 2).max(1);
    let (mut offs, mut ons, mut latencies) = (Vec::new(), Vec::new(), None);
    let (mut idle_offs, mut idle_ons, mut shares) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (off, idle_off, _, _) = one(&b, n, window, false, round).await?;
        let (on, idle_on, w, l) = one(&b, n, window, true, round).await?;
        let took = w.cpu().context("no look's CPU time was sampled")?;
        println!(
            "  round {}: the watcher looked {} times in {} s: {:.3} s CPU in all ({:.1} µs per look; {} looks sampled), {:.1} % of the server's CPU; wall time {:.3} s ({:.1} µs per look, information)",
            round + 1,
            w.looks,
            window.as_secs(),
            took.as_secs_f64(),
            took.as_secs_f64() * 1e6 / w.looks.max(1) as f64,
            w.sampled,
            100.0 * took.as_secs_f64() / on.as_secs_f64().max(1e-9),
            w.wall.as_secs_f64(),
            w.wall.as_secs_f64() * 1e6 / w.looks.max(1) as f64,
        );
        shares.push(took.as_secs_f64() / on.saturating_sub(took).as_secs_f64().max(1e-9));
        println!(
            "  round {}: printing: off {:.2} s, on {:.2} s CPU; idle: off {:.2} s, on {:.2} s",
            round + 1,
            off.as_secs_f64(),
            on.as_secs_f64(),
            idle_off.as_secs_f64(),
            idle_on.as_secs_f64()
        );
        offs.push(off.as_secs_f64());
        ons.push(on.as_secs_f64());
        idle_offs.push(idle_off.as_secs_f64());
        idle_ons.push(idle_on.as_secs_f64());
        latencies = l.or(latencies);
    }
    let off = Duration::from_secs_f64(support::median(offs));
    let on = Duration::from_secs_f64(support::median(ons));
    let (limit_ms, exit_ms) = latencies.context("latencies")?;
    let idle_off = support::median(idle_offs);
    let idle_on = support::median(idle_ons);
    let pct = |cpu: Duration| 100.0 * cpu.as_secs_f64() / window.as_secs_f64();
    let ratio = on.as_secs_f64() / off.as_secs_f64().max(1e-9);
    println!(
        "  watcher off (median): {:.2} s CPU ({:.1} % of one core; {:.0} µs per agent per second)",
        off.as_secs_f64(),
        pct(off),
        off.as_secs_f64() * 1e6 / window.as_secs_f64() / n as f64
    );
    println!(
        "  watcher on (median):  {:.2} s CPU ({:.1} % of one core; {:.0} µs per agent per second)",
        on.as_secs_f64(),
        pct(on),
        on.as_secs_f64() * 1e6 / window.as_secs_f64() / n as f64
    );
    println!(
        "  idle (no agent printing; median): off {idle_off:.2} s, on {idle_on:.2} s CPU ({:.0} vs {:.0} µs per agent per second)",
        idle_off * 1e6 / window.as_secs_f64() / n as f64,
        idle_on * 1e6 / window.as_secs_f64() / n as f64
    );
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    let share = support::median(shares);
    println!(
        "watching adds {:.1} % to the server's CPU with {n} agents printing (its looks' own CPU time over the rest; median of the rounds; target ≤ 5 %: {}); on/off measured as two servers {ratio:.3} (information: the noise between two servers is larger than the effect)",
        100.0 * share,
        verdict(share <= 0.05)
    );
    println!(
        "detection: usage limit {limit_ms:.0} ms after it was drawn (target < 2000: {}), exit {exit_ms:.0} ms (target < 1000: {})",
        verdict(limit_ms < 2000.0),
        verdict(exit_ms < 1000.0)
    );
    println!("load average at the end: {}", load_average());
    Ok(())
}

/// The machine's load average (1, 5, 15 min; `/proc/loadavg`), to read the
/// figures by: the machine may be shared.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}
