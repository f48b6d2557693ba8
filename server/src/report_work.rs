//! What the morning report reads of an agent's work without running the
//! agent ([`harness_core::report::WorkReader`]): the commits on its working
//! directory's branch since its run started, with `git` as a subprocess
//! under a timeout (a slow or missing repository reads as nothing).

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::report::{WorkReader, model::Commits};
use tokio::process::Command;

/// One `git` call gives up after this long.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest `harness-tasks.json` the report reads.
const MAX_TASKS_FILE: u64 = 8 * 1024 * 1024;

/// git's empty tree: the diff base of a first commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Reads the working directories on this machine.
pub struct LocalWork;

async fn git(dir: &str, args: &[&str]) -> Option<String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = match tokio::time::timeout(GIT_TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) if out.status.success() => out,
        Ok(Ok(_)) | Ok(Err(_)) => return None,
        Err(_) => {
            tracing::warn!(
                dir,
                "git did not answer in time: the report shows no commits"
            );
            return None;
        }
    };
    String::from_utf8(out.stdout)
        .ok()
        .map(|s| s.trim().to_string())
}

#[async_trait]
impl WorkReader for LocalWork {
    async fn commits(&self, dir: &str, since: DateTime<Utc>) -> Option<Commits> {
        if !std::path::Path::new(dir).is_dir() {
            return None;
        }
        let branch = git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]).await?;
        let since_arg = format!("--since={}", since.to_rfc3339());
        let log = git(dir, &["log", &since_arg, "--format=%H", "HEAD"]).await?;
        let hashes: Vec<&str> = log.lines().filter(|l| !l.is_empty()).collect();
        let oldest = hashes.last()?;
        let parent = format!("{oldest}^");
        let base = match git(dir, &["rev-parse", "--verify", "--quiet", &parent]).await {
            Some(p) if !p.is_empty() => p,
            _ => EMPTY_TREE.to_string(),
        };
        let shortstat = git(dir, &["diff", "--shortstat", &base, "HEAD"])
            .await
            .unwrap_or_default();
        Some(Commits {
            branch,
            count: u32::try_from(hashes.len()).unwrap_or(u32::MAX),
            shortstat,
        })
    }

    /// The plan tasks of `project_dir`'s `harness-tasks.json` that wait on
    /// the ones in progress, when the task-list loop is active there: what
    /// waits in that project holds the task the loop works on, and all that
    /// depends on it (a plan task is not linked to the Harness task whose
    /// agent runs it, so each waiting item of the project counts them). A
    /// file that is missing, too big or unreadable counts nothing.
    async fn dependents(&self, project_dir: &str, _task_id: &str) -> u32 {
        let root = harness_plan::state_file::StateRoot::new(project_dir);
        // Only a task list whose loop is active there (`.harness-active`).
        let active = root.path(harness_plan::state_file::ACTIVE_MARKER);
        if !tokio::fs::try_exists(&active).await.unwrap_or(false) {
            return 0;
        }
        let path = root.tasks_path();
        let read = async {
            let meta = tokio::fs::metadata(&path).await.ok()?;
            if meta.len() > MAX_TASKS_FILE {
                tracing::warn!(path = %path.display(), "harness-tasks.json too big to read for the report");
                return None;
            }
            tokio::fs::read(&path).await.ok()
        };
        let Ok(Some(bytes)) = tokio::time::timeout(GIT_TIMEOUT, read).await else {
            return 0;
        };
        match serde_json::from_slice::<harness_plan::model::TasksFile>(&bytes) {
            Ok(file) => u32::try_from(harness_plan::eligibility::waiting_on_in_progress(&file))
                .unwrap_or(u32::MAX),
            Err(err) => {
                tracing::debug!(path = %path.display(), %err, "harness-tasks.json unreadable for the report");
                0
            }
        }
    }
}
