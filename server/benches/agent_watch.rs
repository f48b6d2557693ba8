//! The cost of watching agents (`terminals::agent_watch`), measured in one
//! run on this machine, per look at one agent whose terminal printed since
//! the last look — what the watcher does for each such agent once a tick
//! (1 s): read the terminal model's screen text (`PtySession::screen_text`)
//! and run the CLI's recogniser on it (`agent_state::recognise`) and the
//! state machine. An agent that printed nothing costs one atomic load.
//!
//! Real PTY sessions (`harness_pty`, 160×45) each drawing a recorded
//! screen of Claude Code or Codex (`crates/core/tests/fixtures/agent_screens`),
//! looked at `HARNESS_BENCH_LOOKS` times each (default 2000). Prints µs
//! per look and what 1000 agents printing all the time cost: looks per
//! second × µs = CPU ms per second (% of one core). Not measured here: the
//! whole server at 1000 live agents printing, next to the watcher off
//! (left for a quiet machine).
//!
//! `cargo bench -p server --bench agent_watch`.

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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let n = looks();
    let mut total = Duration::ZERO;
    let mut count = 0usize;
    println!("agent watcher: one look (screen text + recogniser + state) per agent that printed");
    for (cli_dir, case, cli) in CASES {
        let session = drawn(dir.path(), cli_dir, case).await?;
        let started = Instant::now();
        let mut states = 0usize;
        for _ in 0..n {
            let seen = recognise(cli, &Screen::from_text(&session.screen_text().text));
            let state = agent_state::state(&Inputs {
                exit: None,
                observation: &seen.observation,
                last_hook: Some(HookEvent::PreToolUse),
                open_question: false,
                silent_secs: 1,
                stall_after: DEFAULT_STALL_AFTER,
            });
            states += usize::from(state.name().len() > 1);
        }
        let took = started.elapsed();
        total += took;
        count += n;
        println!(
            "  {cli_dir}/{case}: {:.1} µs per look ({states} looks)",
            took.as_secs_f64() * 1e6 / n as f64
        );
        let _ = session.kill();
    }
    let per_look = total.as_secs_f64() / count as f64;
    println!(
        "mean {:.1} µs per look; 1000 agents printing, one look each per second: {:.1} ms CPU per second ({:.2} % of one core)",
        per_look * 1e6,
        per_look * 1000.0 * 1e3,
        per_look * 1000.0 * 100.0
    );
    Ok(())
}
