//! The ungated-run watch's reader (the rules are the core's,
//! `harness_core::ungated`): every [`WatchConfig::interval`], for each
//! execution of this node that is live or ended in the last
//! [`WatchConfig::recent`] and not flagged yet, read what its CLI appended
//! to its own record of the session and hand the calls to
//! [`Approvals::review_calls`].
//!
//! Which files are an execution's: its agent's home (the task's `HOME`,
//! else the server's; Claude Code's `CLAUDE_CONFIG_DIR`, Codex's
//! `CODEX_HOME`), written since the execution started, of its working
//! directory — Claude Code: `<claude>/projects/*/<session>.jsonl` whose
//! lines name that `cwd` (or named by the execution's session id); Codex:
//! `<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl` whose first line
//! (`session_meta`) names it. The session id is not needed: a run with its
//! hooks off never reports one. Two agents of one directory at the same
//! time are both read (docs/approvals.md says so).
//!
//! Bounded and restart-safe: at most [`MAX_EXECUTIONS`] executions a pass,
//! [`MAX_READ`] new bytes a file a pass; each file is read on from where
//! the last pass stopped (a restart reads it again from the start, and the
//! flag is the database's, once). Cancelled with the server.

use std::{
    collections::{HashMap, HashSet},
    io::{Read, Seek, SeekFrom},
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use chrono::{DateTime, Utc};
use harness_core::{
    Harness,
    model::{Execution, Provider},
    ungated::{
        self, SeenCall,
        transcripts::{Format, Reading},
    },
};
use tokio_util::sync::CancellationToken;

use crate::terminals::{Terminals, resume::codex_home};

/// The most executions one pass reads.
const MAX_EXECUTIONS: u32 = 200;
/// The most new bytes of one file one pass reads.
const MAX_READ: u64 = 16 * 1024 * 1024;
/// The longest first part of a file read to tell whose it is.
const HEAD: u64 = 4 * 1024 * 1024;
/// A file last written this long before its execution started is not its.
const START_SLACK: Duration = Duration::from_secs(5);

/// How the watch runs.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Between two passes.
    pub interval: Duration,
    /// How long a call of a live execution may wait for its check.
    pub settle: Duration,
    /// How long after its end an execution is still read.
    pub recent: Duration,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(30),
            settle: ungated::SETTLE,
            recent: Duration::from_secs(10 * 60),
        }
    }
}

/// One file as far as it was read.
enum FileRead {
    /// The execution's: read up to `offset`.
    Mine { offset: u64, reading: Reading },
    /// Another directory's session.
    NotMine,
}

/// What the watch knows of one execution.
#[derive(Default)]
struct Seen {
    files: HashMap<PathBuf, FileRead>,
    /// When each call (by its key) was first seen.
    first_seen: HashMap<String, DateTime<Utc>>,
}

/// The loop; ends when `cancel` is cancelled.
pub async fn run(terminals: Terminals, config: WatchConfig, cancel: CancellationToken) {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(config.interval) => {}
        }
        if let Err(err) = pass(&terminals, &config, &cancel, &mut seen).await {
            tracing::warn!(error = ?err, "the ungated-run watch's pass failed");
        }
    }
}

async fn pass(
    terminals: &Terminals,
    config: &WatchConfig,
    cancel: &CancellationToken,
    seen: &mut HashMap<String, Seen>,
) -> harness_core::CoreResult<()> {
    let harness = terminals.harness();
    let recent = chrono::Duration::from_std(config.recent).unwrap_or(chrono::Duration::zero());
    let executions = harness
        .approvals()
        .watched_executions(Utc::now() - recent, MAX_EXECUTIONS)
        .await?;
    let ids: HashSet<&str> = executions.iter().map(|e| e.id.as_str()).collect();
    seen.retain(|id, _| ids.contains(id.as_str()));
    for e in &executions {
        if cancel.is_cancelled() {
            return Ok(());
        }
        let state = seen.entry(e.id.clone()).or_default();
        if let Err(err) = review(terminals, harness, config, e, state).await {
            tracing::warn!(error = ?err, execution_id = %e.id, "cannot read an execution's session record");
        }
    }
    Ok(())
}

async fn review(
    terminals: &Terminals,
    harness: &Harness,
    config: &WatchConfig,
    e: &Execution,
    state: &mut Seen,
) -> harness_core::CoreResult<()> {
    let view = harness.tasks().get_task(&e.task_id).await?;
    let format = match view.task.agent.provider {
        Provider::Claude => Format::Claude,
        Provider::Codex => Format::Codex,
        Provider::Command => return Ok(()),
    };
    let cwd = terminals.working_dir(&view).await?;
    let env = view.task.agent.env.clone();
    let (since, session) = (e.created_at, e.session_id.clone());
    let files = std::mem::take(&mut state.files);
    let (files, calls) = tokio::task::spawn_blocking(move || {
        read_files(format, &env, &cwd, since, session.as_deref(), files)
    })
    .await
    .map_err(|err| harness_core::CoreError::Conflict(format!("the watch's read stopped: {err}")))?;
    state.files = files;
    let now = Utc::now();
    let ended = e.ended_at.is_some();
    let counted: Vec<(SeenCall, bool)> = calls
        .into_iter()
        .map(|c| {
            let key = ungated::call_key(c.call_id.as_deref(), &c.tool, &c.input);
            let first = *state.first_seen.entry(key).or_insert(now);
            let settled = ungated::settled(first, now, ended, config.settle);
            (c, settled)
        })
        .collect();
    tracing::debug!(execution_id = %e.id, files = state.files.len(), calls = counted.len(),
        "session record read");
    harness.approvals().review_calls(e, &counted).await?;
    Ok(())
}

/// Find the execution's files, read what is new in each, answer every call
/// read so far.
fn read_files(
    format: Format,
    env: &std::collections::BTreeMap<String, String>,
    cwd: &Path,
    since: DateTime<Utc>,
    session: Option<&str>,
    mut files: HashMap<PathBuf, FileRead>,
) -> (HashMap<PathBuf, FileRead>, Vec<SeenCall>) {
    let since = SystemTime::from(since)
        .checked_sub(START_SLACK)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let candidates = match format {
        Format::Claude => claude_root(env)
            .map(|root| claude_files(&root, session, since))
            .unwrap_or_default(),
        Format::Codex => codex_home(env)
            .map(|home| codex_files(&home, since))
            .unwrap_or_default(),
    };
    for path in candidates {
        if !files.contains_key(&path) {
            // Not known yet: judged once it names its directory.
            let judged = match is_mine(format, &path, cwd, session) {
                Some(true) => FileRead::Mine {
                    offset: 0,
                    reading: Reading::new(format),
                },
                Some(false) => FileRead::NotMine,
                None => continue,
            };
            files.insert(path.clone(), judged);
        }
        if let Some(FileRead::Mine { offset, reading }) = files.get_mut(&path) {
            match read_on(&path, *offset) {
                Ok((text, next)) => {
                    reading.feed(&text);
                    *offset = next;
                }
                Err(err) => {
                    tracing::debug!(%err, path = %path.display(), "cannot read a session record")
                }
            }
        }
    }
    let mut calls = Vec::new();
    for f in files.values() {
        if let FileRead::Mine { reading, .. } = f {
            calls.extend(reading.calls());
        }
    }
    (files, calls)
}

/// The whole lines after `offset` (at most [`MAX_READ`] bytes), and where
/// the next read starts.
fn read_on(path: &Path, offset: u64) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    f.take(MAX_READ).read_to_end(&mut buf)?;
    let whole = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    buf.truncate(whole);
    let next = offset + whole as u64;
    Ok((String::from_utf8_lossy(&buf).into_owned(), next))
}

fn claude_root(env: &std::collections::BTreeMap<String, String>) -> Option<PathBuf> {
    if let Some(dir) = env.get("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = env
        .get("HOME")
        .cloned()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOME").ok())?;
    Some(Path::new(&home).join(".claude"))
}

fn written_since(path: &Path, since: SystemTime) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= since)
}

fn jsonl_in(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
}

/// Claude Code's transcripts written since `since` (or of `session`).
fn claude_files(root: &Path, session: Option<&str>, since: SystemTime) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root.join("projects"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for path in jsonl_in(&dir.path()) {
            let named = session.is_some_and(|s| path.file_stem().is_some_and(|n| n == s));
            if named || written_since(&path, since) {
                out.push(path);
            }
        }
    }
    out
}

/// Codex's session files written since `since` (day directories from the
/// day before `since` to tomorrow: they may be named in local time).
fn codex_files(home: &Path, since: SystemTime) -> Vec<PathBuf> {
    let from = DateTime::<Utc>::from(since) - chrono::Duration::days(1);
    let last = Utc::now() + chrono::Duration::days(1);
    let mut day = from.date_naive();
    let mut out = Vec::new();
    while day <= last.date_naive() {
        let dir = home
            .join("sessions")
            .join(day.format("%Y").to_string())
            .join(day.format("%m").to_string())
            .join(day.format("%d").to_string());
        out.extend(jsonl_in(&dir).filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
                && written_since(p, since)
        }));
        day = match day.succ_opt() {
            Some(d) => d,
            None => break,
        };
    }
    out
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Whether the file is a session of `cwd` (or is named by `session`);
/// `None` while it cannot tell (no line naming a directory written yet).
fn is_mine(format: Format, path: &Path, cwd: &Path, session: Option<&str>) -> Option<bool> {
    let name = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if session.is_some_and(|s| name == s || name.ends_with(&format!("-{s}"))) {
        return Some(true);
    }
    let f = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    f.take(HEAD).read_to_end(&mut bytes).ok()?;
    let head = String::from_utf8_lossy(&bytes);
    let dir_of = |line: &str| -> Option<PathBuf> {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let cwd = match format {
            Format::Claude => v.get("cwd"),
            Format::Codex => (v.get("type").and_then(|t| t.as_str()) == Some("session_meta"))
                .then(|| v.get("payload").and_then(|p| p.get("cwd")))
                .flatten(),
        };
        cwd.and_then(|c| c.as_str()).map(PathBuf::from)
    };
    // Whole lines only: the last one may be being written.
    let mut lines = head.split_inclusive('\n').filter(|l| l.ends_with('\n'));
    match format {
        // The first line is the session's meta.
        Format::Codex => lines.next().and_then(dir_of),
        Format::Claude => lines.find_map(dir_of),
    }
    .map(|dir| same_dir(&dir, cwd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_on_by_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"b\":").unwrap();
        let (text, next) = read_on(&p, 0).unwrap();
        assert_eq!((text.as_str(), next), ("{\"a\":1}\n", 8));
        std::fs::write(&p, "{\"a\":1}\n{\"b\":2}\n").unwrap();
        let (text, next) = read_on(&p, next).unwrap();
        assert_eq!((text.as_str(), next), ("{\"b\":2}\n", 16));
    }

    #[test]
    fn whose_file_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let claude = dir.path().join("t.jsonl");
        std::fs::write(
            &claude,
            format!(
                "{{\"type\":\"queue-operation\"}}\n{{\"type\":\"user\",\"cwd\":{:?}}}\n",
                work.display().to_string()
            ),
        )
        .unwrap();
        assert_eq!(is_mine(Format::Claude, &claude, &work, None), Some(true));
        assert_eq!(
            is_mine(Format::Claude, &claude, dir.path(), None),
            Some(false)
        );
        assert_eq!(
            is_mine(Format::Claude, &claude, dir.path(), Some("t")),
            Some(true)
        );
        // Nothing that names a directory yet: asked again later.
        let early = dir.path().join("e.jsonl");
        std::fs::write(&early, "{\"type\":\"queue-operation\"}\n{\"cwd\":").unwrap();
        assert_eq!(is_mine(Format::Claude, &early, &work, None), None);
        let codex = dir.path().join("rollout-2026-12-05T08-00-00-sid.jsonl");
        std::fs::write(
            &codex,
            format!(
                "{{\"type\":\"session_meta\",\"payload\":{{\"cwd\":{:?}}}}}\n",
                work.display().to_string()
            ),
        )
        .unwrap();
        assert_eq!(is_mine(Format::Codex, &codex, &work, None), Some(true));
        assert_eq!(
            is_mine(Format::Codex, &codex, dir.path(), None),
            Some(false)
        );
        assert_eq!(
            is_mine(Format::Codex, &codex, dir.path(), Some("sid")),
            Some(true)
        );
    }
}
