//! `harness run`: the session protocol (A4) and, with an agent command, the deterministic
//! loop (A5–A7): pick, claim, run the agent, validate, commit or roll back, retry, stop.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::eligibility::{self, Stats};
use crate::error::{PlanError, Result};
use crate::lock::{self, LockKind, SessionLock};
use crate::model::{Category, Task, now_iso, status};
use crate::progress_log::{self, Event};
use crate::recovery::{self, Recovered};
use crate::state_file::{self, StateRoot};
use crate::transitions::{self, Ctx, Outcome, log, with_state};
use crate::validate::{self, DEFAULT_VALIDATION_TIMEOUT, ShellCommand, Verdict};

/// Options of `harness run`.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub cwd: PathBuf,
    /// `sh -c` command run once per claimed task; `None` = agent-driven mode (session start
    /// only, the agent follows the protocol with `harness task ...`).
    pub agent: Option<String>,
    pub worker: Option<String>,
    /// Overrides `session_config.max_tasks_per_session`.
    pub max_tasks: Option<u64>,
    /// Kill the agent's process group after this many seconds.
    pub agent_timeout: Option<u64>,
    pub lease_secs: Option<u64>,
}

/// Why the loop stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    AllCompleted,
    NothingEligible,
    MaxTasks,
    MaxSessions,
    EnvBroken,
    AgentDriven,
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::AllCompleted => "all tasks completed",
            StopReason::NothingEligible => {
                "no eligible task left (remaining are failed or blocked)"
            }
            StopReason::MaxTasks => "max_tasks_per_session reached",
            StopReason::MaxSessions => "max_sessions reached",
            StopReason::EnvBroken => "environment broken (ENV_SETUP failed twice)",
            StopReason::AgentDriven => "session started (agent-driven mode)",
        }
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub root: PathBuf,
    pub session: u64,
    pub worker: String,
    pub recovered: Vec<Recovered>,
    pub tasks_run: u64,
    pub stop: StopReason,
    pub stats: Stats,
    pub next: Option<(String, String)>,
    pub exit_code: i32,
}

/// Default worker id: `HARNESS_WORKER_ID`, else `<hostname>:<pid>` of this long-lived process.
pub fn default_worker() -> String {
    std::env::var("HARNESS_WORKER_ID")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| format!("{}:{}", lock::hostname(), std::process::id()))
}

/// What the driver hands to an agent runner for one claimed task.
#[derive(Debug, Clone)]
pub struct AgentRequest {
    pub task: Task,
    /// The prompt (task, checkpoints, previous errors, log tail).
    pub prompt: String,
    /// Directory to run in.
    pub dir: PathBuf,
    /// `HARNESS_TASK_ID`, `HARNESS_TASK_TITLE`, `HARNESS_STATE_ROOT`, `HARNESS_WORKER_ID`,
    /// `HARNESS_WORK_DIR`.
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
}

/// How the agent run ended. Only informative: validation decides the outcome.
#[derive(Debug, Clone, Default)]
pub struct AgentResult {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
}

/// Runs the agent for one task. The default is [`ShellAgent`]; a server-backed runner (a
/// supervised Harness task with a visible terminal) can implement this too.
pub trait AgentRunner {
    /// Runs to completion. `on_spawn` gets the process group of a local child (recorded so a
    /// successor session can kill it after a crash); `tick` must be called about once a second
    /// while waiting (it renews the claim lease).
    fn run_agent(
        &mut self,
        request: &AgentRequest,
        on_spawn: &mut dyn FnMut(i32),
        tick: &mut dyn FnMut(),
    ) -> Result<AgentResult>;
}

/// `sh -c <command>` with the prompt on stdin, in its own process group.
#[derive(Debug, Clone)]
pub struct ShellAgent {
    pub command: String,
}

impl AgentRunner for ShellAgent {
    fn run_agent(
        &mut self,
        request: &AgentRequest,
        on_spawn: &mut dyn FnMut(i32),
        tick: &mut dyn FnMut(),
    ) -> Result<AgentResult> {
        let cmd = ShellCommand {
            command: self.command.clone(),
            dir: request.dir.clone(),
            env: request.env.clone(),
            stdin: Some(request.prompt.clone()),
            timeout: request.timeout,
        };
        let r = validate::run_shell(&cmd, on_spawn, tick)?;
        Ok(AgentResult {
            exit_code: r.code,
            timed_out: r.timed_out,
        })
    }
}

/// Runs one session; with `opts.agent`, tasks are executed by a [`ShellAgent`].
pub fn run(opts: &RunOptions) -> Result<RunReport> {
    let mut shell = opts.agent.clone().map(|command| ShellAgent { command });
    run_with(opts, shell.as_mut().map(|s| s as &mut dyn AgentRunner))
}

/// Runs one session with any agent runner (`None` = agent-driven mode).
pub fn run_with(opts: &RunOptions, agent: Option<&mut dyn AgentRunner>) -> Result<RunReport> {
    let root = state_file::discover(&opts.cwd)?;
    let workdir = transitions::resolve_workdir(&opts.cwd, &root);
    let worker = opts.worker.clone().unwrap_or_else(default_worker);
    // A4.1: the file must parse (or be restored from .bak).
    let file = match with_state(&root, |f| Ok((f.clone(), false))) {
        Ok(f) => f,
        Err(e @ (PlanError::Corrupt { .. } | PlanError::Config { .. })) => {
            let _ = progress_log::append(
                &root,
                0,
                &Event::Error {
                    id: None,
                    category: Category::EnvSetup,
                    message: &format!("harness-tasks.json corrupted and unrecoverable: {e}"),
                },
            );
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let ctx = Ctx {
        root: root.clone(),
        workdir,
        worker: worker.clone(),
        lease_secs: opts
            .lease_secs
            .unwrap_or_else(transitions::default_lease_secs),
    };
    if file.concurrent() && opts.worker.is_none() && std::env::var("HARNESS_WORKER_ID").is_err() {
        tracing::info!(%worker, "concurrent mode without explicit worker id");
    }
    root.activate()?;
    let kind = if file.concurrent() {
        LockKind::Shared
    } else {
        LockKind::Exclusive
    };
    let mut session = SessionLock::acquire(&root, kind, &worker)?;
    let result = run_locked(opts, &ctx, &mut session, agent);
    let _ = with_state(&root, |f| {
        log(&root, f, &Event::Lock("released"));
        Ok(((), false))
    });
    session.release()?;
    result
}

fn run_locked(
    opts: &RunOptions,
    ctx: &Ctx,
    session: &mut SessionLock,
    agent: Option<&mut dyn AgentRunner>,
) -> Result<RunReport> {
    let root = &ctx.root;
    let killed = session.kill_orphans();
    let stale = session.stale.clone();
    // A4.6 session tracking (done first so every line of this session carries its number;
    // max_sessions = the number of sessions allowed).
    let (session_no, over) = with_state(root, |f| {
        if let Some(max) = f.session_config.max_sessions()
            && f.session_count >= max
        {
            return Ok(((f.session_count, true), false));
        }
        f.session_count += 1;
        Ok(((f.session_count, false), true))
    })?;
    with_state(root, |f| {
        log(
            root,
            f,
            &Event::Lock(&format!("acquired (pid={})", std::process::id())),
        );
        if let Some(s) = &stale {
            let mut msg = format!(
                "previous session (pid={} worker={}) ended without releasing its lock",
                s.pid, s.worker
            );
            if let Some(g) = killed {
                msg.push_str(&format!("; killed its orphaned process group {g}"));
            }
            log(root, f, &Event::Warn(&msg));
        }
        Ok(((), false))
    })?;
    let mut report = RunReport {
        root: root.dir().to_path_buf(),
        session: session_no,
        worker: ctx.worker.clone(),
        recovered: Vec::new(),
        tasks_run: 0,
        stop: StopReason::AgentDriven,
        stats: Stats::default(),
        next: None,
        exit_code: 0,
    };
    if over {
        report.stop = StopReason::MaxSessions;
        finish(ctx, &mut report)?;
        return Ok(report);
    }
    // A4.4 recovery, A4.5 health check
    report.recovered = recovery::recover(ctx)?;
    let env_ok = run_init_script(ctx)? || run_init_script(ctx)?;
    if !env_ok {
        with_state(root, |f| {
            log(
                root,
                f,
                &Event::Error {
                    id: None,
                    category: Category::EnvSetup,
                    message: "harness-init.sh failed twice; environment broken",
                },
            );
            Ok(((), false))
        })?;
        report.stop = StopReason::EnvBroken;
    } else if let Some(agent) = agent {
        report.stop = drive(opts, ctx, session, agent, &mut report.tasks_run)?;
    }
    finish(ctx, &mut report)?;
    Ok(report)
}

/// Runs `harness-init.sh` when present; true when it passed (or does not exist).
fn run_init_script(ctx: &Ctx) -> Result<bool> {
    let script = ctx.root.path(state_file::INIT_SCRIPT);
    if !script.is_file() {
        return Ok(true);
    }
    let cmd = ShellCommand {
        command: format!("sh ./{}", state_file::INIT_SCRIPT),
        dir: ctx.root.dir().to_path_buf(),
        timeout: Some(Duration::from_secs(600)),
        ..ShellCommand::default()
    };
    let r = validate::run_shell(&cmd, &mut |_| {}, &mut || {})?;
    with_state(&ctx.root, |f| {
        if r.success() {
            log(&ctx.root, f, &Event::Init("Environment health check: PASS"));
        } else {
            log(
                &ctx.root,
                f,
                &Event::Error {
                    id: None,
                    category: Category::EnvSetup,
                    message: &format!("harness-init.sh failed: {}", r.output_tail),
                },
            );
        }
        Ok(((), false))
    })?;
    Ok(r.success())
}

fn drive(
    opts: &RunOptions,
    ctx: &Ctx,
    session: &mut SessionLock,
    agent: &mut dyn AgentRunner,
    tasks_run: &mut u64,
) -> Result<StopReason> {
    let cap = match opts.max_tasks {
        Some(n) if n > 0 => Some(n),
        Some(_) => None,
        None => transitions::with_state(&ctx.root, |f| Ok((f.session_config.max_tasks(), false)))?,
    };
    let mut env_failures = 0u32;
    loop {
        if cap.is_some_and(|c| *tasks_run >= c) {
            return Ok(StopReason::MaxTasks);
        }
        let Some(task) = transitions::claim(ctx, None)? else {
            let all_done = with_state(&ctx.root, |f| {
                Ok((f.tasks.iter().all(|t| t.is(status::COMPLETED)), false))
            })?;
            return Ok(if all_done {
                StopReason::AllCompleted
            } else {
                StopReason::NothingEligible
            });
        };
        if task.validation_command().is_none() {
            transitions::config_failure(ctx, &task.id)?;
            continue;
        }
        let outcome = execute(opts, ctx, session, agent, &task)?;
        *tasks_run += 1;
        match outcome {
            Outcome::Failed {
                category: Category::EnvSetup,
                ..
            } => {
                env_failures += 1;
                let healthy = run_init_script(ctx)?;
                if env_failures >= 2 || !healthy {
                    with_state(&ctx.root, |f| {
                        log(
                            &ctx.root,
                            f,
                            &Event::Error {
                                id: None,
                                category: Category::EnvSetup,
                                message: "ENV_SETUP failed twice; stopping (environment broken)",
                            },
                        );
                        Ok(((), false))
                    })?;
                    return Ok(StopReason::EnvBroken);
                }
            }
            _ => env_failures = 0,
        }
    }
}

/// One attempt: agent, validation, commit or rollback.
fn execute(
    opts: &RunOptions,
    ctx: &Ctx,
    session: &mut SessionLock,
    agent: &mut dyn AgentRunner,
    task: &Task,
) -> Result<Outcome> {
    let request = AgentRequest {
        task: task.clone(),
        prompt: build_prompt(ctx, task),
        dir: ctx.command_dir(),
        env: vec![
            ("HARNESS_TASK_ID".into(), task.id.clone()),
            ("HARNESS_TASK_TITLE".into(), task.title.clone()),
            (
                "HARNESS_STATE_ROOT".into(),
                ctx.root.dir().display().to_string(),
            ),
            ("HARNESS_WORKER_ID".into(), ctx.worker.clone()),
            ("HARNESS_WORK_DIR".into(), ctx.workdir.display().to_string()),
        ],
        timeout: opts.agent_timeout.map(Duration::from_secs),
    };
    let renew_every = Duration::from_secs((ctx.lease_secs / 3).max(1));
    let mut last_renew = Instant::now();
    let result = agent.run_agent(
        &request,
        &mut |g| {
            // recorded so a successor session can kill the group if this process dies
            let _ = session.set_child_pgid(Some(g));
        },
        &mut || {
            if last_renew.elapsed() >= renew_every {
                if let Err(e) = transitions::renew(ctx, &task.id) {
                    tracing::warn!(task = %task.id, error = %e, "lease renew failed");
                }
                last_renew = Instant::now();
            }
        },
    );
    let _ = session.set_child_pgid(None);
    let agent_result = match result {
        Ok(r) => r,
        Err(e) => {
            return transitions::fail(
                ctx,
                &task.id,
                Category::TaskExec,
                &format!("agent could not run: {e}"),
            );
        }
    };
    if agent_result.timed_out {
        return transitions::fail(
            ctx,
            &task.id,
            Category::Timeout,
            &format!(
                "Agent timed out after {}s",
                opts.agent_timeout.unwrap_or_default()
            ),
        );
    }
    // The task must still be ours and in progress (the agent may have used the protocol
    // steps itself).
    let current = with_state(&ctx.root, |f| Ok((f.task(&task.id).cloned(), false)))?;
    match current {
        Some(t) if t.is(status::IN_PROGRESS) => {}
        Some(t) if t.is(status::COMPLETED) => {
            return Ok(Outcome::Completed {
                commit: "by agent".into(),
            });
        }
        _ => {
            return Ok(Outcome::Failed {
                category: Category::TaskExec,
                message: "task left in_progress state during the agent run".into(),
                permanent: false,
            });
        }
    }
    let command = task.validation_command().unwrap_or_default();
    let timeout = task
        .validation
        .timeout_seconds
        .unwrap_or(DEFAULT_VALIDATION_TIMEOUT);
    match validate::validate(command, &ctx.command_dir(), timeout) {
        Verdict::Pass => transitions::mark_completed(ctx, task),
        Verdict::Fail { category, message } => {
            let (category, message) = match (category, agent_result.exit_code) {
                (Category::TestFail, Some(code)) if code != 0 => (
                    Category::TaskExec,
                    format!("agent exited {code}; {message}"),
                ),
                other => (other.0, message),
            };
            transitions::fail(ctx, &task.id, category, &message)
        }
    }
}

/// The prompt given to the agent on stdin: the task, its history, and the log tail.
pub fn build_prompt(ctx: &Ctx, task: &Task) -> String {
    let mut p = String::new();
    p.push_str(&format!(
        "You are working on task {} of the harness task list at {}.\n\n",
        task.id,
        ctx.root.dir().display()
    ));
    p.push_str(&format!("Task: {}\n", task.title));
    p.push_str(&format!(
        "Priority: {}  Attempt: {} of {}\n",
        task.priority.as_deref().unwrap_or("-"),
        task.attempts + 1,
        task.max_attempts
    ));
    if let Some(c) = task.validation_command() {
        p.push_str(&format!(
            "Done means this command exits 0 (run by the harness afterwards): {c}\n"
        ));
    }
    if !task.error_log.is_empty() {
        p.push_str("\nPrevious errors (the work tree was rolled back after each):\n");
        for e in &task.error_log {
            p.push_str(&format!("- {e}\n"));
        }
    }
    if !task.checkpoints.is_empty() {
        p.push_str("\nCheckpoints recorded so far:\n");
        for c in &task.checkpoints {
            p.push_str(&format!(
                "- step {}/{}: {}\n",
                c.step, c.total, c.description
            ));
        }
    }
    p.push_str(&format!(
        "\nRecord progress with: harness task checkpoint {} --step M --total N \"what was done\"\n\
         Do not commit and do not edit harness-tasks.json: the harness validates, then commits or rolls back.\n",
        task.id
    ));
    let tail = progress_log::tail(&ctx.root, 20);
    if !tail.is_empty() {
        p.push_str("\nRecent progress log:\n");
        for l in tail {
            p.push_str(&l);
            p.push('\n');
        }
    }
    p
}

fn finish(ctx: &Ctx, report: &mut RunReport) -> Result<()> {
    let root: &StateRoot = &ctx.root;
    let (stats, next, open, bad) = with_state(root, |f| {
        if report.stop != StopReason::AgentDriven {
            f.last_session = Some(now_iso());
        }
        let stats = Stats::of(f);
        log(root, f, &Event::Stats(&stats));
        let next = eligibility::next_task(f).map(|t| (t.id.clone(), t.title.clone()));
        let open = eligibility::has_open_work(f);
        let bad = f
            .tasks
            .iter()
            .any(|t| eligibility::is_permanently_failed(t) || eligibility::needs_human(t))
            || stats.blocked > 0;
        Ok((
            (stats, next, open, bad),
            report.stop != StopReason::AgentDriven,
        ))
    })?;
    if !open {
        root.deactivate()?;
    }
    report.exit_code = match report.stop {
        StopReason::EnvBroken => 1,
        StopReason::AgentDriven => 0,
        _ if bad => 1,
        _ => 0,
    };
    report.stats = stats;
    report.next = next;
    Ok(())
}
