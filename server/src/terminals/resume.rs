//! How a task's agent is started again: with its provider session when
//! Harness knows it, never "the most recent session" (`codex resume --last`
//! or `claude --continue` pick the latest session *of the directory* — maybe
//! another task's).
//!
//! Codex reports its session id (SessionStart hook) only at its first turn.
//! When no hook reported it, the id is read from Codex's own session files
//! (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, first line
//! `session_meta` with `id`, `timestamp`, `cwd`): the one session started in
//! the agent's working directory while that execution ran. None, or more
//! than one → a fresh start (the reply is typed in with its question).

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader, Read},
    path::{Path, PathBuf},
};

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use harness_core::{
    CoreResult,
    model::{Execution, Provider, TaskView},
};

use super::{StartMode, Terminals};

/// The longest first line read from a session file (it carries the base
/// instructions, tens of KiB).
const MAX_META_LINE: u64 = 4 * 1024 * 1024;

impl Terminals {
    /// The start mode that continues `execution`'s conversation if possible.
    pub async fn resume_mode(&self, view: &TaskView, execution: &Execution) -> StartMode {
        if let Some(session_id) = &execution.session_id {
            return StartMode::Resume {
                session_id: session_id.clone(),
            };
        }
        if view.task.agent.provider == Provider::Codex
            && let Ok(cwd) = self.working_dir(view).await
        {
            let until = execution.ended_at.unwrap_or_else(Utc::now);
            let home = codex_home(&view.task.agent.env);
            let found =
                home.and_then(|h| find_codex_session(&h, &cwd, execution.created_at, until));
            if let Some(session_id) = found {
                tracing::info!(task_id = %view.task.id, %session_id, "Codex session found in its session files");
                return StartMode::Resume { session_id };
            }
        }
        StartMode::Fresh { prompt: None }
    }

    /// The resume mode for the task's latest execution (REST `resume: true`).
    pub async fn resume_mode_for(&self, task_id: &str) -> CoreResult<StartMode> {
        let view = self.inner.harness.tasks().get_task(task_id).await?;
        Ok(match &view.execution {
            Some(e) => self.resume_mode(&view, e).await,
            None => StartMode::Fresh { prompt: None },
        })
    }

    /// A resumed execution continues a known session: record it at once
    /// (the CLI's own SessionStart report may come late, or never).
    pub(super) async fn adopt_session(&self, task_id: &str, execution_id: &str, mode: &StartMode) {
        if let StartMode::Resume { session_id } = mode
            && let Err(err) = self
                .inner
                .harness
                .tasks()
                .record_session(task_id, Some(execution_id), Some(session_id))
                .await
        {
            tracing::warn!(error = ?err, task_id, "cannot record the resumed session id");
        }
    }
}

/// The longest wait for a restarted agent to draw its screen.
const DRAW_MAX: std::time::Duration = std::time::Duration::from_secs(20);

/// Wait (bounded) until a just-started agent has drawn something: input
/// typed before a TUI is up is read as keystrokes of its start-up (a real
/// Claude Code left the reply unsent in its input box). The caller then
/// waits for the usual input boundary (quiet output or a turn end).
pub async fn wait_until_drawn(session: &harness_pty::PtySession) {
    let deadline = tokio::time::Instant::now() + DRAW_MAX;
    while tokio::time::Instant::now() < deadline && !session.has_exited() {
        session.sync_model().await;
        if session.bracketed_paste_enabled() || !session.screen_text().text.trim().is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Codex's home: the task's `CODEX_HOME`, else `<HOME>/.codex` (the task's
/// HOME, else the server's).
pub fn codex_home(task_env: &BTreeMap<String, String>) -> Option<PathBuf> {
    if let Some(h) = task_env.get("CODEX_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h));
    }
    let home = task_env
        .get("HOME")
        .cloned()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOME").ok())?;
    Some(Path::new(&home).join(".codex"))
}

/// The id of the one Codex session started in `cwd` between `since` and
/// `until` (with a little slack for clocks), if exactly one exists.
pub fn find_codex_session(
    codex_home: &Path,
    cwd: &Path,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Option<String> {
    let slack = ChronoDuration::seconds(2);
    let (from, to) = (since - slack, until + slack);
    let mut found = Vec::new();
    // Day directories may be named in local time: look one day either side.
    let mut day = (from - ChronoDuration::days(1)).date_naive();
    let last = (to + ChronoDuration::days(1)).date_naive();
    while day <= last {
        let dir = codex_home
            .join("sessions")
            .join(day.format("%Y").to_string())
            .join(day.format("%m").to_string())
            .join(day.format("%d").to_string());
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !(name.starts_with("rollout-") && name.ends_with(".jsonl")) {
                continue;
            }
            if let Some((id, started, dir)) = session_meta(&entry.path())
                && started >= from
                && started <= to
                && same_dir(&dir, cwd)
            {
                found.push(id);
            }
        }
        day = match day.succ_opt() {
            Some(d) => d,
            None => break,
        };
    }
    found.sort();
    found.dedup();
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// `(id, timestamp, cwd)` from a session file's first line.
fn session_meta(path: &Path) -> Option<(String, DateTime<Utc>, PathBuf)> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    BufReader::new(file.take(MAX_META_LINE))
        .read_line(&mut line)
        .ok()?;
    let v: serde_json::Value = serde_json::from_str(&line).ok()?;
    if v["type"] != "session_meta" {
        return None;
    }
    let p = &v["payload"];
    let id = p["id"].as_str()?.to_string();
    let started = p["timestamp"]
        .as_str()
        .or_else(|| v["timestamp"].as_str())
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())?
        .with_timezone(&Utc);
    let cwd = PathBuf::from(p["cwd"].as_str()?);
    Some((id, started, cwd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_session(home: &Path, id: &str, at: &str, cwd: &str) {
        let t = DateTime::parse_from_rfc3339(at).unwrap();
        let dir = home.join("sessions").join(t.format("%Y/%m/%d").to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let meta = serde_json::json!({"timestamp": at, "type": "session_meta",
            "payload": {"id": id, "session_id": id, "timestamp": at, "cwd": cwd,
                        "base_instructions": {"text": "x".repeat(50_000)}}});
        std::fs::write(
            dir.join(format!(
                "rollout-{}-{id}.jsonl",
                t.format("%Y-%m-%dT%H-%M-%S")
            )),
            format!("{meta}\n{{\"type\":\"event_msg\"}}\n"),
        )
        .unwrap();
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_one_session_of_the_directory_in_the_window() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        write_session(h, "before", "2026-11-30T10:00:00Z", "/work/a");
        write_session(h, "mine", "2026-11-30T10:05:03Z", "/work/a");
        write_session(h, "other-dir", "2026-11-30T10:05:04Z", "/work/b");
        let (from, to) = (at("2026-11-30T10:05:00Z"), at("2026-11-30T10:06:00Z"));
        assert_eq!(
            find_codex_session(h, Path::new("/work/a"), from, to).as_deref(),
            Some("mine")
        );
        // Another session of the same directory in the window: ambiguous.
        write_session(h, "second", "2026-11-30T10:05:30Z", "/work/a");
        assert_eq!(find_codex_session(h, Path::new("/work/a"), from, to), None);
        // Nothing in the window.
        assert_eq!(
            find_codex_session(
                h,
                Path::new("/work/a"),
                at("2026-12-01T00:00:00Z"),
                at("2026-12-01T01:00:00Z")
            ),
            None
        );
        assert_eq!(
            find_codex_session(&h.join("missing"), Path::new("/work/a"), from, to),
            None
        );
    }

    #[test]
    fn codex_home_from_the_task_env() {
        let mut env = BTreeMap::new();
        env.insert("HOME".to_string(), "/home/u".to_string());
        assert_eq!(codex_home(&env), Some(PathBuf::from("/home/u/.codex")));
        env.insert("CODEX_HOME".to_string(), "/c".to_string());
        assert_eq!(codex_home(&env), Some(PathBuf::from("/c")));
    }
}
