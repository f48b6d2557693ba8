//! State transactions of the protocol steps (claim, renew, checkpoint, complete, fail,
//! lease reaping). Each runs under the transaction lock; slow work (validation, cleanup)
//! runs outside it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::eligibility::{self, Stats};
use crate::error::{PlanError, Result};
use crate::git::Git;
use crate::lock;
use crate::model::{Category, Checkpoint, Task, TasksFile, iso, now_iso, parse_iso, status};
use crate::progress_log::{self, Event};
use crate::state_file::{self, StateRoot};
use crate::validate::{self, DEFAULT_VALIDATION_TIMEOUT, ShellCommand, Verdict};

/// Default claim lease: `HARNESS_LEASE_SECONDS`, else 1800 s.
pub fn default_lease_secs() -> u64 {
    std::env::var("HARNESS_LEASE_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v: &u64| *v > 0)
        .unwrap_or(1800)
}

/// Who is acting, where.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub root: StateRoot,
    /// The git work tree where the work, validation, commits and rollbacks happen.
    pub workdir: PathBuf,
    pub worker: String,
    pub lease_secs: u64,
}

impl Ctx {
    pub fn git(&self) -> Git {
        Git::new(&self.workdir)
    }

    /// Where commands run: the state root when it lies inside the work tree (the usual
    /// single-checkout case), else the work tree (a worker in its own worktree).
    pub fn command_dir(&self) -> PathBuf {
        match (self.workdir.canonicalize(), self.root.dir().canonicalize()) {
            (Ok(w), Ok(r)) if r.starts_with(&w) => r,
            _ => self.workdir.clone(),
        }
    }
}

/// Resolves the work tree for `cwd`: `HARNESS_WORK_DIR`, else the git top level of `cwd`,
/// else the state root.
pub fn resolve_workdir(cwd: &Path, root: &StateRoot) -> PathBuf {
    if let Some(w) = std::env::var_os("HARNESS_WORK_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(w);
    }
    let top = Git::new(cwd).run(&["rev-parse", "--show-toplevel"]).ok();
    match top {
        Some(t) if !t.is_empty() => PathBuf::from(t),
        _ => root.dir().to_path_buf(),
    }
}

/// Loads (restoring from `.bak` if needed), runs `f`, saves when `f` says so; all under the
/// transaction lock.
pub fn with_state<T>(
    root: &StateRoot,
    f: impl FnOnce(&mut TasksFile) -> Result<(T, bool)>,
) -> Result<T> {
    lock::transaction(root, || {
        let (mut file, restored) = state_file::load_or_restore(root)?;
        if restored {
            log(
                root,
                &file,
                &Event::Warn(
                    "harness-tasks.json was corrupt; restored from harness-tasks.json.bak",
                ),
            );
        }
        let (out, dirty) = f(&mut file)?;
        if dirty {
            state_file::save(root, &file)?;
        }
        Ok(out)
    })
}

/// Appends a log line; a failing append is reported, never fatal.
pub fn log(root: &StateRoot, file: &TasksFile, event: &Event<'_>) {
    if let Err(e) = progress_log::append(root, file.session_count, event) {
        tracing::error!(error = %e, "cannot append to progress log");
    }
}

fn lease_until(secs: u64) -> String {
    iso(chrono::Utc::now() + chrono::Duration::seconds(secs.min(i64::MAX as u64) as i64))
}

/// Reaps expired leases (A11): attempts+1, `[SESSION_TIMEOUT] Lease expired`, failed.
pub fn reap_expired(root: &StateRoot, file: &mut TasksFile) -> Vec<String> {
    let now = chrono::Utc::now();
    let now_s = iso(now);
    let mut reaped = Vec::new();
    for t in file.tasks.iter_mut().filter(|t| t.is(status::IN_PROGRESS)) {
        let expired = t
            .lease_expires_at
            .as_deref()
            .and_then(parse_iso)
            .is_some_and(|l| l <= now);
        if expired {
            let msg = format!(
                "Lease expired (claimed_by={})",
                t.claimed_by.as_deref().unwrap_or("")
            );
            fail_task(t, Category::SessionTimeout, &msg, &now_s);
            reaped.push((t.id.clone(), msg));
        }
    }
    for (id, msg) in &reaped {
        log(
            root,
            file,
            &Event::Error {
                id: Some(id),
                category: Category::SessionTimeout,
                message: msg,
            },
        );
    }
    reaped.into_iter().map(|(id, _)| id).collect()
}

/// Marks `t` failed: attempts+1, error entry, `last_failed_at`, claim dropped.
pub fn fail_task(t: &mut Task, category: Category, message: &str, now: &str) {
    t.attempts = t.attempts.saturating_add(1);
    t.error_log.push(format!("[{category}] {message}"));
    t.status = status::FAILED.to_string();
    t.last_failed_at = Some(now.to_string());
    t.clear_claim();
}

/// Runs cycle detection and blocked propagation, logging each change.
pub fn validate_graph_logged(root: &StateRoot, file: &mut TasksFile) -> bool {
    let changes = eligibility::validate_graph(file, &now_iso());
    for c in &changes {
        log(
            root,
            file,
            &Event::Error {
                id: Some(&c.id),
                category: Category::Dependency,
                message: &c.message,
            },
        );
    }
    !changes.is_empty()
}

fn require_worker(file: &TasksFile, ctx: &Ctx) -> Result<()> {
    if file.concurrent() && ctx.worker.trim().is_empty() {
        return Err(PlanError::Usage(
            "concurrent mode needs a worker id (--worker-id or HARNESS_WORKER_ID)".into(),
        ));
    }
    Ok(())
}

/// Claims a task (the next eligible one, or `wanted`): reaps expired leases, validates the
/// graph, records `started_at_commit`, sets the claim and logs `Starting`.
pub fn claim(ctx: &Ctx, wanted: Option<&str>) -> Result<Option<Task>> {
    let head = ctx.git().head();
    with_state(&ctx.root, |file| {
        require_worker(file, ctx)?;
        let mut dirty = !reap_expired(&ctx.root, file).is_empty();
        dirty |= validate_graph_logged(&ctx.root, file);
        let pick = match wanted {
            Some(id) => {
                let t = file
                    .task(id)
                    .ok_or_else(|| PlanError::TaskNotFound(id.to_string()))?;
                if !(eligibility::is_eligible_pending(file, t)
                    || eligibility::is_retryable(file, t))
                {
                    return Err(PlanError::Conflict(format!(
                        "{id} is not claimable (status={}, attempts={}/{})",
                        t.status, t.attempts, t.max_attempts
                    )));
                }
                Some(id.to_string())
            }
            None => eligibility::next_task(file).map(|t| t.id.clone()),
        };
        let Some(id) = pick else {
            return Ok((None, dirty));
        };
        let now = now_iso();
        let Some(t) = file.task_mut(&id) else {
            return Ok((None, dirty));
        };
        t.status = status::IN_PROGRESS.to_string();
        t.claimed_by = Some(ctx.worker.clone());
        t.claimed_at = Some(now);
        t.lease_expires_at = Some(lease_until(ctx.lease_secs));
        t.started_at_commit = head.clone();
        let claimed = t.clone();
        log(
            &ctx.root,
            file,
            &Event::Starting {
                id: &claimed.id,
                title: &claimed.title,
                base: head.as_deref().unwrap_or("none"),
            },
        );
        Ok((Some(claimed), true))
    })
}

fn owned_in_progress<'a>(file: &'a mut TasksFile, ctx: &Ctx, id: &str) -> Result<&'a mut Task> {
    let t = file
        .task_mut(id)
        .ok_or_else(|| PlanError::TaskNotFound(id.to_string()))?;
    if !t.is(status::IN_PROGRESS) {
        return Err(PlanError::Conflict(format!(
            "{id} is not in_progress (status={})",
            t.status
        )));
    }
    if let Some(owner) = t.claimed_by.as_deref()
        && !owner.is_empty()
        && owner != ctx.worker
    {
        return Err(PlanError::Conflict(format!(
            "{id} is claimed by {owner}, not {}",
            ctx.worker
        )));
    }
    Ok(t)
}

/// Pushes the lease forward; returns the new `lease_expires_at`.
pub fn renew(ctx: &Ctx, id: &str) -> Result<String> {
    with_state(&ctx.root, |file| {
        require_worker(file, ctx)?;
        let t = owned_in_progress(file, ctx, id)?;
        let until = lease_until(ctx.lease_secs);
        t.lease_expires_at = Some(until.clone());
        t.claimed_by = Some(ctx.worker.clone());
        Ok((until, true))
    })
}

/// Records a checkpoint (and renews the lease).
pub fn checkpoint(ctx: &Ctx, id: &str, step: u32, total: u32, description: &str) -> Result<()> {
    with_state(&ctx.root, |file| {
        let t = owned_in_progress(file, ctx, id)?;
        t.checkpoints.push(Checkpoint {
            step,
            total,
            description: description.to_string(),
            timestamp: now_iso(),
            extra: Default::default(),
        });
        t.lease_expires_at = Some(lease_until(ctx.lease_secs));
        log(
            &ctx.root,
            file,
            &Event::Checkpoint {
                id,
                step,
                total,
                description,
            },
        );
        Ok(((), true))
    })
}

/// How a task attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Completed {
        commit: String,
    },
    Failed {
        category: Category,
        message: String,
        permanent: bool,
    },
    /// Missing `validation.command`: the task is failed with `[CONFIG]` and waits for a human.
    Config {
        message: String,
    },
}

/// Marks the task failed with `[CONFIG] Missing validation.command` (no attempt used).
pub fn config_failure(ctx: &Ctx, id: &str) -> Result<Outcome> {
    with_state(&ctx.root, |file| {
        let idx = file
            .tasks
            .iter()
            .position(|t| t.id == id)
            .ok_or_else(|| PlanError::TaskNotFound(id.to_string()))?;
        let message = format!(
            "Missing validation.command (file {}, field tasks[{idx}].validation.command)",
            state_file::TASKS_FILE
        );
        let now = now_iso();
        let t = &mut file.tasks[idx];
        t.error_log
            .push(format!("[{}] {message}", Category::Config));
        t.status = status::FAILED.to_string();
        t.last_failed_at = Some(now);
        t.clear_claim();
        log(
            &ctx.root,
            file,
            &Event::Error {
                id: Some(id),
                category: Category::Config,
                message: &message,
            },
        );
        Ok((Outcome::Config { message }, true))
    })
}

/// Validates the task in the work tree; pass → commit + `completed`, fail → the failure path.
pub fn complete(ctx: &Ctx, id: &str) -> Result<Outcome> {
    let task = with_state(&ctx.root, |file| {
        Ok((owned_in_progress(file, ctx, id)?.clone(), false))
    })?;
    let Some(command) = task.validation_command().map(str::to_string) else {
        return config_failure(ctx, id);
    };
    let timeout = task
        .validation
        .timeout_seconds
        .unwrap_or(DEFAULT_VALIDATION_TIMEOUT);
    match validate::validate(&command, &ctx.command_dir(), timeout) {
        Verdict::Pass => mark_completed(ctx, &task),
        Verdict::Fail { category, message } => fail(ctx, id, category, &message),
    }
}

/// Commits the work (task id in the message) and marks the task completed.
pub fn mark_completed(ctx: &Ctx, task: &Task) -> Result<Outcome> {
    let git = ctx.git();
    let commit = if git.is_repo() {
        git.commit_all(&commit_message(task))?
    } else {
        "none".to_string()
    };
    record_completed(ctx, &task.id, &commit)
}

/// The commit message of a completed task (the id makes it findable by recovery).
pub fn commit_message(task: &Task) -> String {
    format!("harness: {} completed: {}", task.id, task.title)
}

/// Marks the task completed at `commit` (no new commit) and logs `Completed`.
pub fn record_completed(ctx: &Ctx, id: &str, commit: &str) -> Result<Outcome> {
    with_state(&ctx.root, |file| {
        let t = file
            .task_mut(id)
            .ok_or_else(|| PlanError::TaskNotFound(id.to_string()))?;
        t.status = status::COMPLETED.to_string();
        t.completed_at = Some(now_iso());
        t.clear_claim();
        log(&ctx.root, file, &Event::Completed { id, commit });
        Ok((
            Outcome::Completed {
                commit: commit.to_string(),
            },
            true,
        ))
    })
}

/// `task fail` from the CLI: the task must be in progress and not claimed by another worker.
pub fn fail_owned(ctx: &Ctx, id: &str, category: Category, message: &str) -> Result<Outcome> {
    with_state(&ctx.root, |file| {
        owned_in_progress(file, ctx, id)?;
        Ok(((), false))
    })?;
    fail(ctx, id, category, message)
}

/// The failure path (A6.4): attempts+1, error entry, rollback to `started_at_commit` with
/// the state files preserved (attempts forced to max when that commit is gone), ERROR and
/// ROLLBACK logged, then `on_failure.cleanup`.
pub fn fail(ctx: &Ctx, id: &str, category: Category, message: &str) -> Result<Outcome> {
    let git = ctx.git();
    let (outcome, cleanup) = with_state(&ctx.root, |file| {
        let now = now_iso();
        let t = file
            .task_mut(id)
            .ok_or_else(|| PlanError::TaskNotFound(id.to_string()))?;
        fail_task(t, category, message, &now);
        let base = t.started_at_commit.clone();
        let mut rollback_to = None;
        if let Some(b) = base.as_deref()
            && git.is_repo()
        {
            if git.commit_exists(b) {
                rollback_to = Some(b.to_string());
            } else {
                t.attempts = t.attempts.max(t.max_attempts);
            }
        }
        let cleanup = t
            .on_failure
            .cleanup
            .clone()
            .filter(|c| !c.trim().is_empty());
        let permanent = eligibility::is_permanently_failed(t);
        state_file::save(&ctx.root, file)?;
        log(
            &ctx.root,
            file,
            &Event::Error {
                id: Some(id),
                category,
                message,
            },
        );
        if let Some(b) = rollback_to.as_deref() {
            match git.rollback(b, true, &ctx.root) {
                Ok(()) => log(&ctx.root, file, &Event::Rollback { id, commit: b }),
                Err(e) => log(
                    &ctx.root,
                    file,
                    &Event::Warn(&format!("[{id}] rollback to {b} failed: {e}")),
                ),
            }
        }
        let outcome = Outcome::Failed {
            category,
            message: message.to_string(),
            permanent,
        };
        Ok(((outcome, cleanup), false))
    })?;
    if let Some(c) = cleanup {
        run_cleanup(ctx, id, &c);
    }
    Ok(outcome)
}

fn run_cleanup(ctx: &Ctx, id: &str, command: &str) {
    let cmd = ShellCommand {
        command: command.to_string(),
        dir: ctx.command_dir(),
        env: vec![("HARNESS_TASK_ID".into(), id.to_string())],
        timeout: Some(Duration::from_secs(300)),
        ..ShellCommand::default()
    };
    let ok = validate::run_shell(&cmd, &mut |_| {}, &mut || {})
        .map(|r| r.success())
        .unwrap_or(false);
    if !ok {
        let _ = with_state(&ctx.root, |file| {
            log(
                &ctx.root,
                file,
                &Event::Warn(&format!("[{id}] on_failure.cleanup failed: {command}")),
            );
            Ok(((), false))
        });
    }
}

/// Appends a STATS line and returns the stats.
pub fn log_stats(root: &StateRoot) -> Result<Stats> {
    with_state(root, |file| {
        let stats = Stats::of(file);
        log(root, file, &Event::Stats(&stats));
        Ok((stats, false))
    })
}
