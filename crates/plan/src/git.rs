//! The git operations of the loop, run in the work tree: HEAD, dirty check, commit,
//! task-commit lookup and rollback that never resets or cleans the state files away.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{PlanError, Result};
use crate::state_file::{self, STATE_PATTERNS, StateRoot};

/// State files snapshotted and restored around a rollback.
const SNAPSHOT_FILES: &[&str] = &[
    state_file::TASKS_FILE,
    state_file::BAK_FILE,
    state_file::PROGRESS_FILE,
    state_file::INIT_SCRIPT,
    state_file::ACTIVE_MARKER,
    state_file::REFLECT_MARKER,
    state_file::STOP_COUNTER,
];

/// A git work tree.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

fn exclude_pathspecs() -> Vec<String> {
    STATE_PATTERNS
        .iter()
        .map(|p| format!(":(exclude,glob)**/{p}"))
        .collect()
}

impl Git {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Git { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self) -> Command {
        let mut c = Command::new("git");
        c.current_dir(&self.dir).stdin(Stdio::null());
        c
    }

    /// Runs git; stdout (trimmed) on success.
    pub fn run(&self, args: &[&str]) -> Result<String> {
        let out = self
            .command()
            .args(args)
            .output()
            .map_err(|e| PlanError::Git {
                args: args.join(" "),
                message: e.to_string(),
            })?;
        if !out.status.success() {
            return Err(PlanError::Git {
                args: args.join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    pub fn is_repo(&self) -> bool {
        self.run(&["rev-parse", "--is-inside-work-tree"])
            .map(|s| s == "true")
            .unwrap_or(false)
    }

    /// `git rev-parse HEAD`, `None` in a repo without commits (or outside git).
    pub fn head(&self) -> Option<String> {
        self.run(&["rev-parse", "--verify", "-q", "HEAD"]).ok()
    }

    /// `git cat-file -t <hash>` is a commit.
    pub fn commit_exists(&self, hash: &str) -> bool {
        self.run(&["cat-file", "-t", hash])
            .map(|t| t == "commit")
            .unwrap_or(false)
    }

    /// Uncommitted changes outside the state files (`git status --porcelain`).
    pub fn is_dirty(&self) -> Result<bool> {
        let mut args = vec!["status", "--porcelain", "--untracked-files=all", "--", "."];
        let ex = exclude_pathspecs();
        args.extend(ex.iter().map(String::as_str));
        Ok(!self.run(&args)?.is_empty())
    }

    fn identity_args(&self) -> Vec<&'static str> {
        let has_email = self
            .run(&["config", "user.email"])
            .map(|s| !s.is_empty())
            .unwrap_or(false);
        if has_email {
            Vec::new()
        } else {
            vec![
                "-c",
                "user.name=harness",
                "-c",
                "user.email=harness@localhost",
            ]
        }
    }

    /// Stages everything except the state files and commits (an empty commit when nothing
    /// changed, so every completed task has its commit). Returns the new HEAD.
    pub fn commit_all(&self, message: &str) -> Result<String> {
        let mut add = vec!["add", "-A", "--", "."];
        let ex = exclude_pathspecs();
        add.extend(ex.iter().map(String::as_str));
        self.run(&add)?;
        let mut commit = self.identity_args();
        commit.extend([
            "commit",
            "-q",
            "--allow-empty",
            "--no-verify",
            "-m",
            message,
        ]);
        self.run(&commit)?;
        self.head().ok_or_else(|| PlanError::Git {
            args: "rev-parse HEAD".into(),
            message: "no HEAD after commit".into(),
        })
    }

    /// Commits whose message names `task_id` (as a whole token), newest first: those after
    /// `since` when it is a known commit, else among the last 5 commits.
    pub fn task_commits(&self, since: Option<&str>, task_id: &str) -> Result<Vec<String>> {
        if self.head().is_none() {
            return Ok(Vec::new());
        }
        let range;
        let mut args = vec!["log", "--format=%H%x00%B%x1e"];
        match since.filter(|s| self.commit_exists(s)) {
            Some(s) => {
                range = format!("{s}..HEAD");
                args.push(&range);
            }
            None => args.push("-5"),
        }
        let out = self.run(&args)?;
        Ok(out
            .split('\u{1e}')
            .filter_map(|rec| {
                let (hash, msg) = rec.trim().split_once('\0')?;
                mentions_id(msg, task_id).then(|| hash.to_string())
            })
            .collect())
    }

    /// `git reset --hard <commit>` (then `git clean -fd` when `clean`), never touching the
    /// state files: they are excluded from clean and, when the state root lies inside this
    /// work tree, snapshotted before and restored after the reset.
    pub fn rollback(&self, commit: &str, clean: bool, state: &StateRoot) -> Result<()> {
        let snapshot = self.snapshot(state);
        let reset = self.run(&["reset", "-q", "--hard", commit]);
        let cleaned = if clean && reset.is_ok() {
            let mut args = vec!["clean", "-fdq"];
            for p in STATE_PATTERNS {
                args.push("-e");
                args.push(p);
            }
            self.run(&args).map(|_| ())
        } else {
            Ok(())
        };
        restore(&snapshot)?;
        reset?;
        cleaned
    }

    fn snapshot(&self, state: &StateRoot) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let (Ok(work), Ok(root)) = (self.dir.canonicalize(), state.dir().canonicalize()) else {
            return Vec::new();
        };
        if !root.starts_with(&work) {
            return Vec::new();
        }
        SNAPSHOT_FILES
            .iter()
            .map(|name| {
                let p = state.path(name);
                let bytes = std::fs::read(&p).ok();
                (p, bytes)
            })
            .collect()
    }
}

fn restore(snapshot: &[(PathBuf, Option<Vec<u8>>)]) -> Result<()> {
    for (path, bytes) in snapshot {
        let now = std::fs::read(path).ok();
        if &now == bytes {
            continue;
        }
        match bytes {
            Some(b) => {
                state_file::write_atomic(path, b)?;
                if path.ends_with(state_file::INIT_SCRIPT) {
                    make_executable(path);
                }
            }
            None => state_file::remove_if_exists(path)?,
        }
    }
    Ok(())
}

pub(crate) fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
}

/// `msg` contains `id` not glued to other id characters (`task-1` does not match `task-10`).
pub fn mentions_id(msg: &str, id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    let is_id_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    msg.match_indices(id).any(|(i, _)| {
        let before = msg[..i].chars().next_back();
        let after = msg[i + id.len()..].chars().next();
        !before.is_some_and(is_id_char) && !after.is_some_and(is_id_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_mentions_are_token_based() {
        assert!(mentions_id("harness: complete task-1: x", "task-1"));
        assert!(!mentions_id("harness: complete task-10", "task-1"));
        assert!(mentions_id("[task-010] done", "task-010"));
        assert!(!mentions_id("subtask-010", "task-010"));
    }
}
