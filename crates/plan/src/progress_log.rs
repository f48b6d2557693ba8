//! `harness-progress.txt`: append-only, one event per line (A12 grammar):
//! `[<ISO UTC>] [SESSION-<N>] <TYPE> [<task-id>]? [<CATEGORY>]? <message>`.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::eligibility::Stats;
use crate::error::{PlanError, Result};
use crate::model::{Category, now_iso};
use crate::state_file::StateRoot;

/// One log event.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    Init(&'a str),
    Lock(&'a str),
    Starting {
        id: &'a str,
        title: &'a str,
        base: &'a str,
    },
    Checkpoint {
        id: &'a str,
        step: u32,
        total: u32,
        description: &'a str,
    },
    Completed {
        id: &'a str,
        commit: &'a str,
    },
    Error {
        id: Option<&'a str>,
        category: Category,
        message: &'a str,
    },
    Rollback {
        id: &'a str,
        commit: &'a str,
    },
    Recovery {
        id: &'a str,
        action: &'a str,
        reason: &'a str,
    },
    Stats(&'a Stats),
    Warn(&'a str),
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

fn quoted(s: &str) -> String {
    one_line(s).replace('"', "'")
}

impl Event<'_> {
    /// The text after `[SESSION-N] `.
    pub fn body(&self) -> String {
        match self {
            Event::Init(m) => format!("INIT {}", one_line(m)),
            Event::Lock(m) => format!("LOCK {}", one_line(m)),
            Event::Starting { id, title, base } => {
                format!("Starting [{id}] {} (base={base})", one_line(title))
            }
            Event::Checkpoint {
                id,
                step,
                total,
                description,
            } => format!(
                "CHECKPOINT [{id}] step={step}/{total} \"{}\"",
                quoted(description)
            ),
            Event::Completed { id, commit } => format!("Completed [{id}] (commit {commit})"),
            Event::Error {
                id: Some(id),
                category,
                message,
            } => format!("ERROR [{id}] [{category}] {}", one_line(message)),
            Event::Error {
                id: None,
                category,
                message,
            } => format!("ERROR [{category}] {}", one_line(message)),
            Event::Rollback { id, commit } => format!("ROLLBACK [{id}] git reset --hard {commit}"),
            Event::Recovery { id, action, reason } => format!(
                "RECOVERY [{id}] action=\"{}\" reason=\"{}\"",
                quoted(action),
                quoted(reason)
            ),
            Event::Stats(s) => format!("STATS {}", s.fields()),
            Event::Warn(m) => format!("WARN {}", one_line(m)),
        }
    }

    /// The complete line, without the newline.
    pub fn line(&self, session: u64) -> String {
        format!("[{}] [SESSION-{session}] {}", now_iso(), self.body())
    }
}

/// Appends one line (a single `write` of the whole line, then fsync). Call it under the
/// transaction lock when other writers may be active.
pub fn append(root: &StateRoot, session: u64, event: &Event<'_>) -> Result<()> {
    let path = root.progress_path();
    let mut line = event.line(session);
    line.push('\n');
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| PlanError::io("open", &path, e))?;
    f.write_all(line.as_bytes())
        .map_err(|e| PlanError::io("append", &path, e))?;
    f.sync_data()
        .map_err(|e| PlanError::io("fsync", &path, e))?;
    tracing::debug!(line = %line.trim_end(), "progress");
    Ok(())
}

/// The last `max_bytes` of a file as text (missing file = empty).
pub fn read_tail_bytes(path: &Path, max_bytes: u64) -> String {
    match std::fs::File::open(path) {
        Ok(f) => read_tail_of(f, max_bytes),
        Err(_) => String::new(),
    }
}

/// [`read_tail_bytes`] of a file already open (the plan view opens it once,
/// without following links, and reads from that descriptor).
pub fn read_tail_of(mut f: std::fs::File, max_bytes: u64) -> String {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > max_bytes && f.seek(SeekFrom::Start(len - max_bytes)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    if f.read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    if len > max_bytes {
        // drop the partial first line
        match text.find('\n') {
            Some(i) => text[i + 1..].to_string(),
            None => String::new(),
        }
    } else {
        text
    }
}

/// The last `n` non-empty lines of the log.
pub fn tail(root: &StateRoot, n: usize) -> Vec<String> {
    tail_lines(&read_tail_bytes(&root.progress_path(), TAIL_BYTES), n)
}

/// The last `n` non-empty lines of an open log file.
pub fn tail_of(file: std::fs::File, n: usize) -> Vec<String> {
    tail_lines(&read_tail_of(file, TAIL_BYTES), n)
}

/// How much of the log's end is read for a tail.
const TAIL_BYTES: u64 = 256 * 1024;

fn tail_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let skip = lines.len().saturating_sub(n);
    lines.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_valid_line(l: &str) -> bool {
        // [YYYY-MM-DDTHH:MM:SSZ] [SESSION-N] TYPE ...
        let b = l.as_bytes();
        l.len() > 36
            && b[0] == b'['
            && b[20] == b'Z'
            && b[21] == b']'
            && l[22..].starts_with(" [SESSION-")
            && !l.contains('\n')
    }

    #[test]
    fn grammar_of_each_type() {
        let stats = Stats::default();
        let cases: Vec<(Event<'_>, &str)> = vec![
            (
                Event::Init("Harness initialized for project /p"),
                "INIT Harness initialized for project /p",
            ),
            (Event::Lock("acquired (pid=12)"), "LOCK acquired (pid=12)"),
            (
                Event::Starting {
                    id: "task-001",
                    title: "Do\nit",
                    base: "abc",
                },
                "Starting [task-001] Do it (base=abc)",
            ),
            (
                Event::Checkpoint {
                    id: "task-001",
                    step: 1,
                    total: 3,
                    description: "a \"b\"",
                },
                "CHECKPOINT [task-001] step=1/3 \"a 'b'\"",
            ),
            (
                Event::Completed {
                    id: "task-001",
                    commit: "abc",
                },
                "Completed [task-001] (commit abc)",
            ),
            (
                Event::Error {
                    id: Some("task-001"),
                    category: Category::TestFail,
                    message: "x",
                },
                "ERROR [task-001] [TEST_FAIL] x",
            ),
            (
                Event::Error {
                    id: None,
                    category: Category::EnvSetup,
                    message: "x",
                },
                "ERROR [ENV_SETUP] x",
            ),
            (
                Event::Rollback {
                    id: "task-001",
                    commit: "abc",
                },
                "ROLLBACK [task-001] git reset --hard abc",
            ),
            (
                Event::Recovery {
                    id: "task-001",
                    action: "failed",
                    reason: "No progress",
                },
                "RECOVERY [task-001] action=\"failed\" reason=\"No progress\"",
            ),
            (
                Event::Stats(&stats),
                "STATS tasks_total=0 completed=0 failed=0 pending=0 blocked=0 attempts_total=0 checkpoints=0",
            ),
            (Event::Warn("stale"), "WARN stale"),
        ];
        for (ev, body) in cases {
            assert_eq!(ev.body(), body);
            let line = ev.line(3);
            assert!(is_valid_line(&line), "{line}");
            assert!(line.contains("[SESSION-3] "));
        }
    }

    #[test]
    fn append_only_and_tail() {
        let d = tempfile::tempdir().expect("tmp");
        let r = StateRoot::new(d.path());
        for i in 0..10 {
            append(&r, 1, &Event::Warn(&format!("w{i}"))).expect("append");
        }
        let t = tail(&r, 3);
        assert_eq!(t.len(), 3);
        assert!(t[2].ends_with("WARN w9"));
        let all = std::fs::read_to_string(r.progress_path()).expect("read");
        assert_eq!(all.lines().count(), 10);
    }
}
