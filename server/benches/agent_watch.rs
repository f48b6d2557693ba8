//! The cost of watching agents (`terminals::agent_watch`), measured in one
//! run on this machine, per look at one agent whose terminal printed since
//! the last look — what the watcher does for each such agent once a tick
//! (1 s): run the CLI's recogniser (`agent_state::recognise`) on the
//! screen's lines, each rendered when the recogniser reads it
//! (`agent_watch::recognise`), and the state machine; printed beside it,
//! the same over the whole screen's text (`PtySession::screen_text`, how
//! it was done before). An agent that printed nothing costs one atomic load.
//!
//! Real PTY sessions (`harness_pty`, 160×45) each drawing a recorded
//! screen of Claude Code or Codex (`crates/core/tests/fixtures/agent_screens`),
//! looked at `HARNESS_BENCH_LOOKS` times each (default 2000). Prints µs
//! per look and what 1000 agents printing all the time cost: looks per
//! second × µs = CPU ms per second (% of one core).
//!
//! Then the whole server (`whole.rs`): N live agents
//! (`HARNESS_BENCH_AGENTS`, default 1000; Claude-shaped, each in its holder,
//! redrawing a status line every second) and the server's own CPU over a
//! window (`HARNESS_BENCH_WINDOW_SECS`, default 10), with the watcher on
//! and, in a second server, off; the ratio is the cost of watching (target
//! ≤ 1.05). Then the detection latency, from the moment an agent drew its
//! line or ended: exit (target < 1 s) and usage limit (target < 2 s).
//!
//! `cargo bench -p server --bench agent_watch`.

mod support;
#[path = "support/watch_whole.rs"]
mod whole;

use std::time::{Duration, Instant};

use anyhow::Context;
use harness_core::agent_state::{
    self, Cli, DEFAULT_STALL_AFTER, HookEvent, Inputs, Screen, recognise,
};
use harness_pty::{PtySession, SpawnSpec};

const CASES: [(&str, &str, Cli); 6] = [
    ("claude", "working_tool", Cli::Claude),
    ("claude", "usage_limit_subscription", Cli::Claude),
    ("claude", "overloaded_529_retrying", Cli::Claude),
    ("claude", "quoted_status_lines_long", Cli::Claude),
    ("codex", "working_tool", Cli::Codex),
    ("codex", "usage_limit", Cli::Codex),
];

fn looks() -> usize {
    std::env::var("HARNESS_BENCH_LOOKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// A PTY of 45×160 that draws the recorded screen, then waits.
async fn drawn(
    dir: &std::path::Path,
    cli: &str,
    case: &str,
) -> anyhow::Result<std::sync::Arc<PtySession>> {
    let path = format!(
        "{}/../crates/core/tests/fixtures/agent_screens/{cli}/{case}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).with_context(|| path.clone())?;
    let body = text.split_once('\n').map_or("", |(_, b)| b);
    let mut bytes = b"\x1b[2J\x1b[H".to_vec();
    for (i, row) in body.trim_end_matches('\n').split('\n').enumerate() {
        bytes.extend_from_slice(format!("\x1b[{};1H{row}", i + 1).as_bytes());
    }
    let screen = dir.join(format!("{cli}-{case}.screen"));
    std::fs::write(&screen, bytes)?;
    let spec = SpawnSpec::new(
        [
            "sh".to_string(),
            "-c".into(),
            format!("cat '{}'; exec sleep 600", screen.display()),
        ],
        dir,
    )
    .size(45, 160);
    let session = PtySession::spawn(spec).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !session.screen_text().text.contains('─') && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(session)
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            looks_alone().await?;
            whole::run().await
        })
}

/// One look as the watcher does it (`agent_watch::recognise`: the lines
/// the recogniser reads, rendered when read) or, for comparison, over the
/// whole screen's text.
fn one_look(cli: Cli, session: &PtySession, whole: bool) -> agent_state::Seen {
    let seen = if whole {
        recognise(cli, &Screen::from_text(&session.screen_text().text))
    } else {
        // Nothing kept from an earlier look: every row read is rendered
        // (the server keeps an agent's rows between its looks).
        harness_server::terminals::agent_watch::recognise(
            cli,
            session,
            &mut harness_pty::RowTexts::default(),
        )
    };
    let state = agent_state::state(&Inputs {
        exit: None,
        observation: &seen.observation,
        last_hook: Some(HookEvent::PreToolUse),
        open_question: false,
        silent_secs: 1,
        stall_after: DEFAULT_STALL_AFTER,
    });
    std::hint::black_box(state);
    seen
}

/// Part 1: one look, alone.
async fn looks_alone() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let n = looks();
    let mut total = Duration::ZERO;
    let mut total_whole = Duration::ZERO;
    let mut count = 0usize;
    println!(
        "agent watcher: one look (screen lines + recogniser + state) per agent that printed (load average {})",
        whole::load_average()
    );
    for (cli_dir, case, cli) in CASES {
        let session = drawn(dir.path(), cli_dir, case).await?;
        // The look reads what the whole screen's text reads.
        anyhow::ensure!(
            one_look(cli, &session, false) == one_look(cli, &session, true),
            "{cli_dir}/{case}: the lines read differ from the whole screen's"
        );
        let mut took = [Duration::ZERO; 2];
        for (i, whole) in [false, true].into_iter().enumerate() {
            let started = Instant::now();
            for _ in 0..n {
                std::hint::black_box(one_look(cli, &session, whole));
            }
            took[i] = started.elapsed();
        }
        total += took[0];
        total_whole += took[1];
        count += n;
        println!(
            "  {cli_dir}/{case}: {:.1} µs per look (the whole screen's text: {:.1} µs; {n} looks)",
            took[0].as_secs_f64() * 1e6 / n as f64,
            took[1].as_secs_f64() * 1e6 / n as f64
        );
        let _ = session.kill();
    }
    println!(
        "mean over the whole screen's text: {:.1} µs per look",
        total_whole.as_secs_f64() * 1e6 / count as f64
    );
    let per_look = total.as_secs_f64() / count as f64;
    println!(
        "mean {:.1} µs per look; 1000 agents printing, one look each per second: {:.1} ms CPU per second ({:.2} % of one core)",
        per_look * 1e6,
        per_look * 1000.0 * 1e3,
        per_look * 1000.0 * 100.0
    );
    Ok(())
}
