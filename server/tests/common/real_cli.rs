//! The real agent CLIs (Claude Code, Codex from npm, `end2end/real-cli`):
//! where they are installed and what a test reads of a task.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Server;

pub const PROMPT: &str = "Task: say hello";

pub fn installed(cli: &str) -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../end2end/real-cli/node_modules/.bin")
        .join(cli);
    if bin.exists() {
        Some(bin)
    } else {
        eprintln!(
            "skipped: {cli} not installed (run scripts/setup.sh test) — expected at {}",
            bin.display()
        );
        None
    }
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
