//! Session-start recovery of interrupted `in_progress` tasks: the A8 decision matrix made
//! mechanical.
//!
//! Inputs: uncommitted changes outside the state files (`git status`), task commits (commits
//! after `started_at_commit` whose message names the task id), and the task's checkpoints.
//!
//! | # | dirty | task commits | checkpoints | action |
//! |---|---|---|---|---|
//! | 1 | no | no | none | failed `[SESSION_TIMEOUT] No progress detected` |
//! | 2 | no | no | some | validate: pass → commit + completed; fail → failed (work lost) |
//! | 3 | no | yes | any | validate: pass → completed; fail → rollback + failed |
//! | 4 | yes | no | any | validate dirty tree: pass → commit + completed; fail → rollback + failed |
//! | 5 | yes | yes | any | commit dirty changes, validate: pass → completed; fail → rollback + failed |
//!
//! Every failure row goes through the normal failure path (attempts+1, rollback to
//! `started_at_commit` with reset and clean, state files preserved). "The files match the
//! checkpoints" (row 2) is defined as: the validation command passes.

use crate::error::Result;
use crate::model::{Category, Task, now_iso, parse_iso, status};
use crate::progress_log::Event;
use crate::transitions::{self, Ctx, Outcome, log, with_state};
use crate::validate::{self, DEFAULT_VALIDATION_TIMEOUT, Verdict};

/// What recovery did to one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub id: String,
    pub row: u8,
    pub action: String,
    pub reason: String,
}

/// Recovers the `in_progress` tasks this session is responsible for: all of them in
/// exclusive mode; in concurrent mode the ones claimed by this worker, while other workers'
/// expired leases are reaped.
pub fn recover(ctx: &Ctx) -> Result<Vec<Recovered>> {
    let tasks: Vec<Task> = with_state(&ctx.root, |file| {
        let mut dirty = false;
        if file.concurrent() {
            let now = chrono::Utc::now();
            let foreign_expired = file.tasks.iter().any(|t| {
                t.is(status::IN_PROGRESS)
                    && t.claimed_by.as_deref() != Some(ctx.worker.as_str())
                    && t.lease_expires_at
                        .as_deref()
                        .and_then(parse_iso)
                        .is_some_and(|l| l <= now)
            });
            if foreign_expired {
                dirty = !transitions::reap_expired(&ctx.root, file).is_empty();
            }
        }
        let concurrent = file.concurrent();
        let mine = file
            .tasks
            .iter()
            .filter(|t| t.is(status::IN_PROGRESS))
            .filter(|t| !concurrent || t.claimed_by.as_deref() == Some(ctx.worker.as_str()))
            .cloned()
            .collect();
        Ok((mine, dirty))
    })?;
    let mut out = Vec::new();
    for t in tasks {
        out.push(recover_one(ctx, &t)?);
    }
    Ok(out)
}

fn recover_one(ctx: &Ctx, t: &Task) -> Result<Recovered> {
    let git = ctx.git();
    let repo = git.is_repo();
    let dirty = repo && git.is_dirty()?;
    let commits = if repo {
        git.task_commits(t.started_at_commit.as_deref(), &t.id)?
    } else {
        Vec::new()
    };
    let has_commits = !commits.is_empty();
    let has_cp = !t.checkpoints.is_empty();
    let row: u8 = match (dirty, has_commits, has_cp) {
        (false, false, false) => 1,
        (false, false, true) => 2,
        (false, true, _) => 3,
        (true, false, _) => 4,
        (true, true, _) => 5,
    };
    let reason = format!(
        "row {row}: uncommitted={} task_commits={} checkpoints={}",
        if dirty { "yes" } else { "no" },
        commits.len(),
        t.checkpoints.len()
    );
    let action = if row == 1 {
        with_state(&ctx.root, |file| {
            if let Some(task) = file.task_mut(&t.id) {
                transitions::fail_task(
                    task,
                    Category::SessionTimeout,
                    "No progress detected",
                    &now_iso(),
                );
            }
            log(
                &ctx.root,
                file,
                &Event::Error {
                    id: Some(&t.id),
                    category: Category::SessionTimeout,
                    message: "No progress detected",
                },
            );
            Ok(((), true))
        })?;
        "marked failed".to_string()
    } else if t.validation_command().is_none() {
        transitions::config_failure(ctx, &t.id)?;
        "config error: missing validation.command".to_string()
    } else {
        if row == 5 {
            git.commit_all(&format!("harness: {} recovered uncommitted work", t.id))?;
        }
        let command = t.validation_command().unwrap_or_default().to_string();
        let timeout = t
            .validation
            .timeout_seconds
            .unwrap_or(DEFAULT_VALIDATION_TIMEOUT);
        match validate::validate(&command, &ctx.command_dir(), timeout) {
            Verdict::Pass => {
                let outcome = if row == 3 || row == 5 {
                    let head = git.head().unwrap_or_else(|| "none".into());
                    transitions::record_completed(ctx, &t.id, &head)?
                } else {
                    transitions::mark_completed(ctx, t)?
                };
                match outcome {
                    Outcome::Completed { commit } => format!("validated; completed at {commit}"),
                    other => format!("{other:?}"),
                }
            }
            Verdict::Fail { category, message } => {
                let (cat, msg) = if row == 2 {
                    (
                        Category::SessionTimeout,
                        format!("Checkpointed work lost: {message}"),
                    )
                } else {
                    (category, message)
                };
                transitions::fail(ctx, &t.id, cat, &msg)?;
                "validation failed; rolled back and marked failed".to_string()
            }
        }
    };
    with_state(&ctx.root, |file| {
        log(
            &ctx.root,
            file,
            &Event::Recovery {
                id: &t.id,
                action: &action,
                reason: &reason,
            },
        );
        Ok(((), false))
    })?;
    Ok(Recovered {
        id: t.id.clone(),
        row,
        action,
        reason,
    })
}
