//! The real agent CLIs (Claude Code, Codex from npm, `end2end/real-cli`):
//! where they are installed and what a test reads of a task.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Server;

pub const PROMPT: &str = "Task: say hello";

/// Set to `1`, a missing real CLI or gateway fails its test instead of
/// skipping it (a machine that must run them all).
pub const REQUIRE: &str = "HARNESS_REQUIRE_REAL_CLIS";
/// A file each test with a real CLI appends `ran|skipped <test> <what>` to
/// (`test.sh` prints it at the end).
pub const REPORT: &str = "HARNESS_REAL_CLI_REPORT";

/// The one check of every test with a real CLI, gateway or SDK: `path` when
/// it is installed; else "skipped: …" and `None` — or a failure with
/// [`REQUIRE`]`=1`. Either way the run is noted in [`REPORT`].
pub fn real_tool(what: &str, path: PathBuf) -> Option<PathBuf> {
    let found = path.exists();
    note(if found { "ran" } else { "skipped" }, what);
    if found {
        return Some(path);
    }
    let why = format!(
        "{what} not installed (run scripts/setup.sh test) — expected at {}",
        path.display()
    );
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "{REQUIRE}=1: {why}"
    );
    eprintln!("skipped: {why}");
    None
}

fn note(result: &str, what: &str) {
    use std::io::Write;
    let Some(file) = std::env::var_os(REPORT) else {
        return;
    };
    // libtest names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("unknown test")
        .to_string();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        // One write(2) per line: tests running at once append whole lines
        // (`writeln!` on a File writes piece by piece and interleaved them).
        let _ = f.write_all(format!("{result} {test} ({what})\n").as_bytes());
    }
}

pub fn installed(cli: &str) -> Option<PathBuf> {
    real_tool(
        cli,
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../end2end/real-cli/node_modules/.bin")
            .join(cli),
    )
}

pub async fn screen(s: &Server, task: &str) -> String {
    let (_, v) = s
        .admin("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    v["text"].as_str().unwrap_or_default().to_string()
}

pub async fn task_json(s: &Server, task: &str) -> Value {
    s.admin("GET", &format!("/api/tasks/{task}"), None).await.1
}
