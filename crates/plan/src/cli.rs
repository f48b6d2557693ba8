//! The task-list CLI (docs/contract.md §8) and the only module that prints.
//!
//! `cli_main(args)` takes the arguments after `harness` (`args[0]` is the subcommand) and
//! returns the exit code: 0 ok, 1 failure of the work, 2 bad usage or bad state file.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;

use crate::driver::{self, AgentRunner, RunOptions};
use crate::eligibility::{self, Stats};
use crate::error::{PlanError, Result};
use crate::git;
use crate::lock;
use crate::model::{Category, Task, TasksFile, now_iso};
use crate::progress_log::{self, Event};
use crate::state_file::{self, StateRoot};
use crate::transitions::{self, Ctx, Outcome, with_state};

#[derive(Debug, Parser)]
#[command(
    name = "harness",
    no_binary_name = true,
    about = "Harness task-list loop"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Priority {
    P0,
    P1,
    P2,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create harness-tasks.json, harness-progress.txt, harness-init.sh and .harness-active.
    Init {
        /// Project directory (default: current directory).
        path: Option<PathBuf>,
        /// Also add the harness state files to the project's .gitignore.
        #[arg(long)]
        gitignore: bool,
    },
    /// Append a task.
    Add {
        /// The task's title (what the agent is asked to do).
        title: String,
        /// P0 (first), P1 or P2; either case.
        #[arg(long, value_enum, default_value = "p1", ignore_case = true)]
        priority: Priority,
        /// Comma-separated task ids.
        #[arg(long, value_delimiter = ',')]
        depends_on: Vec<String>,
        /// Validation command; exit 0 means done.
        #[arg(long)]
        validate: Option<String>,
        /// Validation timeout in seconds.
        #[arg(long)]
        timeout: Option<u64>,
        /// Attempts before the task is left failed.
        #[arg(long)]
        max_attempts: Option<u32>,
        /// `on_failure.cleanup` command run after a rollback.
        #[arg(long)]
        cleanup: Option<String>,
    },
    /// Show progress (read-only).
    Status {
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a session; with --agent, drive every task to completion.
    Run {
        /// Agent command, run with `sh -c` once per claimed task (prompt on stdin; in
        /// supervised mode stdin is the terminal and the prompt is in $HARNESS_PROMPT_FILE).
        #[arg(long)]
        agent: Option<String>,
        /// This worker's id in claims (default: HARNESS_WORKER_ID, else agent@<host>).
        #[arg(long)]
        worker_id: Option<String>,
        /// Overrides session_config.max_tasks_per_session (0 = no limit).
        #[arg(long)]
        max_tasks: Option<u64>,
        /// Kill the agent after this many seconds (TIMEOUT); in supervised mode time parked
        /// on ask_human does not count.
        #[arg(long)]
        agent_timeout: Option<u64>,
        /// Claim lease in seconds.
        #[arg(long)]
        lease: Option<u64>,
        /// Run each task as a supervised task of this Harness server (default: the
        /// `HARNESS_SERVER_URL` variable, else the server found in the data directory).
        #[arg(long, value_name = "URL", conflicts_with = "no_server")]
        server: Option<String>,
        /// Run the agent directly even when a Harness server is running.
        #[arg(long)]
        no_server: bool,
        /// Data directory of the Harness server to look for (default `HARNESS_DATA_DIR`,
        /// else ~/.harness).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Protocol steps for agent-driven mode.
    Task {
        #[command(subcommand)]
        step: TaskStep,
    },
    /// Run a Claude Code hook (payload JSON on stdin).
    Hook {
        /// The hook event name.
        event: String,
    },
}

#[derive(Debug, clap::Args)]
struct WorkerArgs {
    /// This worker's id in claims (default: HARNESS_WORKER_ID, else agent@<host>).
    #[arg(long)]
    worker_id: Option<String>,
    /// Claim lease in seconds (default HARNESS_LEASE_SECONDS or 1800).
    #[arg(long)]
    lease: Option<u64>,
}

#[derive(Debug, Subcommand)]
enum TaskStep {
    /// Claim the next eligible task (or --task ID).
    Claim {
        #[arg(long)]
        task: Option<String>,
        #[command(flatten)]
        w: WorkerArgs,
    },
    /// Push the lease of a claimed task forward.
    Renew {
        id: Option<String>,
        #[command(flatten)]
        w: WorkerArgs,
    },
    /// Record a checkpoint: `task checkpoint [ID] --step M --total N DESCRIPTION`.
    Checkpoint {
        #[arg(long)]
        step: u32,
        #[arg(long)]
        total: u32,
        /// [ID] DESCRIPTION (ID defaults to HARNESS_TASK_ID).
        #[arg(required = true, num_args = 1..=2)]
        rest: Vec<String>,
        #[command(flatten)]
        w: WorkerArgs,
    },
    /// Validate; pass → commit + completed, fail → rollback + failed.
    Complete {
        id: Option<String>,
        #[command(flatten)]
        w: WorkerArgs,
    },
    /// Record a failure and roll back to started_at_commit.
    Fail {
        id: Option<String>,
        #[arg(long, default_value = "TASK_EXEC")]
        category: String,
        #[arg(long)]
        message: String,
        #[command(flatten)]
        w: WorkerArgs,
    },
}

/// Where `harness run --agent CMD` was told to look for a Harness server.
#[derive(Debug, Clone, Default)]
pub struct ServerChoice {
    /// `--server URL`.
    pub server: Option<String>,
    /// `--no-server`: always run the agent directly.
    pub no_server: bool,
    /// `--data-dir DIR`.
    pub data_dir: Option<PathBuf>,
}

/// Chooses the agent runner of `harness run --agent CMD`: `Ok(None)` runs the command
/// directly ([`driver::ShellAgent`]); `Err(message)` stops with exit 2 (bad usage).
pub type RunnerFactory<'a> = dyn FnMut(&str, &ServerChoice) -> std::result::Result<Option<Box<dyn AgentRunner>>, String>
    + 'a;

/// Entry point: `args[0]` is the subcommand. Returns the exit code. Without a runner
/// factory, `harness run --agent` always runs the agent directly.
pub fn cli_main(args: Vec<String>) -> i32 {
    cli_main_with(args, &mut direct_only)
}

fn direct_only(
    _agent: &str,
    choice: &ServerChoice,
) -> std::result::Result<Option<Box<dyn AgentRunner>>, String> {
    match &choice.server {
        Some(_) if !choice.no_server => Err(
            "--server: supervised mode needs the `harness` binary (this build runs agents directly)"
                .into(),
        ),
        _ => Ok(None),
    }
}

/// [`cli_main`] with a factory for the agent runner of `harness run --agent CMD` (the
/// `harness` binary passes one that runs each task as a supervised Harness task).
pub fn cli_main_with(args: Vec<String>, runners: &mut RunnerFactory<'_>) -> i32 {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("harness: cannot read the current directory: {e}");
            return 1;
        }
    };
    match dispatch(cli.command, &cwd, runners) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("harness: {e}");
            e.exit_code()
        }
    }
}

fn dispatch(cmd: Command, cwd: &Path, runners: &mut RunnerFactory<'_>) -> Result<i32> {
    match cmd {
        Command::Init { path, gitignore } => {
            init(&path.unwrap_or_else(|| cwd.to_path_buf()), gitignore)
        }
        Command::Add {
            title,
            priority,
            depends_on,
            validate,
            timeout,
            max_attempts,
            cleanup,
        } => add(
            cwd,
            title,
            priority,
            depends_on,
            validate,
            timeout,
            max_attempts,
            cleanup,
        ),
        Command::Status { json } => status(cwd, json),
        Command::Run {
            agent,
            worker_id,
            max_tasks,
            agent_timeout,
            lease,
            server,
            no_server,
            data_dir,
        } => {
            let choice = ServerChoice {
                server,
                no_server,
                data_dir,
            };
            let runner = match &agent {
                Some(cmd) => runners(cmd, &choice).map_err(PlanError::Usage)?,
                None => None,
            };
            run(
                RunOptions {
                    cwd: cwd.to_path_buf(),
                    agent,
                    worker: worker_id,
                    max_tasks,
                    agent_timeout,
                    lease_secs: lease,
                },
                runner,
            )
        }
        Command::Task { step } => task_step(cwd, step),
        Command::Hook { event } => {
            let mut input = String::new();
            let _ = std::io::stdin().read_to_string(&mut input);
            let out = crate::hooks::hook_main(&event, &input, cwd);
            if !out.stdout.is_empty() {
                println!("{}", out.stdout);
            }
            if !out.stderr.is_empty() {
                eprintln!("{}", out.stderr);
            }
            Ok(out.exit_code)
        }
    }
}

const INIT_SCRIPT_TEMPLATE: &str = "#!/bin/sh\n# harness-init.sh: idempotent environment setup and health check.\n# Runs at every session start; a non-zero exit is an ENV_SETUP error.\nset -e\nexit 0\n";

const GITIGNORE_LINES: &[&str] = &[
    "harness-tasks.json.bak",
    "harness-tasks.json.tmp.*",
    ".harness-*",
];

fn init(path: &Path, gitignore: bool) -> Result<i32> {
    if !path.is_dir() {
        return Err(PlanError::Usage(format!(
            "init: {} is not a directory",
            path.display()
        )));
    }
    let root = StateRoot::new(
        path.canonicalize()
            .map_err(|e| PlanError::io("resolve", path, e))?,
    );
    let created = lock::transaction(&root, || {
        if root.exists() {
            state_file::load_or_restore(&root)?;
            return Ok(false);
        }
        let file = TasksFile::new(&now_iso());
        state_file::save(&root, &file)?;
        progress_log::append(
            &root,
            0,
            &Event::Init(&format!(
                "Harness initialized for project {}",
                root.dir().display()
            )),
        )?;
        let script = root.path(state_file::INIT_SCRIPT);
        if !script.exists() {
            state_file::write_atomic(&script, INIT_SCRIPT_TEMPLATE.as_bytes())?;
            git::make_executable(&script);
        }
        Ok(true)
    })?;
    if gitignore {
        let gi = root.path(".gitignore");
        let mut text = std::fs::read_to_string(&gi).unwrap_or_default();
        let mut changed = false;
        for l in GITIGNORE_LINES {
            if !text.lines().any(|x| x.trim() == *l) {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(l);
                text.push('\n');
                changed = true;
            }
        }
        if changed {
            state_file::write_atomic(&gi, text.as_bytes())?;
        }
    }
    root.activate()?;
    if created {
        println!("initialized harness in {}", root.dir().display());
    } else {
        println!("harness already initialized in {}", root.dir().display());
    }
    Ok(0)
}

#[allow(clippy::too_many_arguments)]
fn add(
    cwd: &Path,
    title: String,
    priority: Priority,
    depends_on: Vec<String>,
    validate: Option<String>,
    timeout: Option<u64>,
    max_attempts: Option<u32>,
    cleanup: Option<String>,
) -> Result<i32> {
    if title.trim().is_empty() || title.contains('\n') {
        return Err(PlanError::Usage(
            "add: TITLE must be one non-empty line".into(),
        ));
    }
    let root = state_file::discover(cwd)?;
    let deps: Vec<String> = depends_on
        .into_iter()
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .collect();
    let id = with_state(&root, |file| {
        let id = eligibility::next_task_id(file);
        for d in &deps {
            if *d == id {
                return Err(PlanError::Usage(format!(
                    "add: dependency cycle: {id} -> {id}"
                )));
            }
            if file.task(d).is_none() {
                return Err(PlanError::Usage(format!("add: unknown dependency {d}")));
            }
        }
        let mut t = Task::new(id.clone(), title.clone());
        t.priority = Some(format!("{priority:?}"));
        t.depends_on = json!(deps);
        t.validation.command = validate.clone();
        t.validation.timeout_seconds = timeout;
        t.on_failure.cleanup = cleanup.clone();
        if let Some(m) = max_attempts {
            t.max_attempts = m;
        }
        file.tasks.push(t);
        if let Some(path) = eligibility::find_cycle(file, &id)
            .or_else(|| deps.iter().find_map(|d| eligibility::find_cycle(file, d)))
        {
            return Err(PlanError::Usage(format!(
                "add: dependency cycle: {}",
                path.join(" -> ")
            )));
        }
        Ok((id, true))
    })?;
    println!("{id}");
    if validate.is_none() {
        eprintln!(
            "harness: warning: {id} has no validation command; it cannot complete until tasks[].validation.command is set"
        );
    }
    Ok(0)
}

fn status(cwd: &Path, as_json: bool) -> Result<i32> {
    let root = state_file::discover(cwd)?;
    let file = state_file::load(&root)?;
    let stats = Stats::of(&file);
    let blocked = eligibility::blocked_ids(&file);
    let next = eligibility::next_task(&file);
    let log_tail = progress_log::tail(&root, 5);
    let counts = eligibility::status_counts(&file);
    if as_json {
        let tasks: Vec<_> = file
            .tasks
            .iter()
            .map(|t| {
                json!({
                    "id": t.id, "title": t.title, "status": t.status,
                    "priority": t.priority, "depends_on": t.depends_on,
                    "attempts": t.attempts, "max_attempts": t.max_attempts,
                    "blocked": blocked.contains(&t.id),
                    "permanently_failed": eligibility::is_permanently_failed(t),
                    "retryable": eligibility::is_retryable(&file, t),
                    "last_error": t.last_error(),
                    "claimed_by": t.claimed_by, "lease_expires_at": t.lease_expires_at,
                    "checkpoints": t.checkpoints.len(),
                    "completed_at": t.completed_at,
                })
            })
            .collect();
        let out = json!({
            "root": root.dir(),
            "active": root.is_active(),
            "concurrency_mode": if file.concurrent() { "concurrent" } else { "exclusive" },
            "session_count": file.session_count,
            "last_session": file.last_session,
            "counts": counts,
            "stats": stats,
            "next": next.map(|t| json!({"id": t.id, "title": t.title})),
            "tasks": tasks,
            "log_tail": log_tail,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(0);
    }
    println!(
        "completed={} failed={} pending={} blocked={} in_progress={} total={}",
        stats.completed,
        stats.failed,
        stats.pending,
        stats.blocked,
        counts.get("in_progress").copied().unwrap_or(0),
        stats.tasks_total
    );
    for t in &file.tasks {
        let mark = if blocked.contains(&t.id) {
            " [blocked]"
        } else {
            ""
        };
        println!(
            "[{}] {}: {} ({}/{}){mark}",
            t.status, t.id, t.title, t.attempts, t.max_attempts
        );
        // Why it failed (or why it is being retried): the newest error
        // entry — for an agent that exited non-zero it names the exit code
        // ("agent exited N; …"), for a timeout "[TIMEOUT] …".
        if let Some(err) = t.last_error().filter(|_| t.status != "completed") {
            println!("    last error: {err}");
        }
    }
    match next {
        Some(t) => println!("next: {}: {}", t.id, t.title),
        None => println!("next: none"),
    }
    println!(
        "session_count={} last_session={}",
        file.session_count,
        file.last_session.as_deref().unwrap_or("never")
    );
    if !log_tail.is_empty() {
        println!("recent log:");
        for l in log_tail {
            println!("  {l}");
        }
    }
    Ok(0)
}

fn run(opts: RunOptions, runner: Option<Box<dyn AgentRunner>>) -> Result<i32> {
    let report = match runner {
        Some(mut r) => driver::run_with(&opts, Some(r.as_mut()))?,
        None => driver::run(&opts)?,
    };
    for r in &report.recovered {
        println!("RECOVERY [{}] row {}: {}", r.id, r.row, r.action);
    }
    println!(
        "session={} worker={} tasks_run={} stop=\"{}\"",
        report.session,
        report.worker,
        report.tasks_run,
        report.stop.as_str()
    );
    if let Some((id, title)) = &report.next {
        println!("next: {id}: {title}");
    }
    println!("STATS {}", report.stats.fields());
    Ok(report.exit_code)
}

fn default_cli_worker() -> String {
    std::env::var("HARNESS_WORKER_ID")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| format!("agent@{}", lock::hostname()))
}

fn ctx_for(cwd: &Path, w: &WorkerArgs) -> Result<Ctx> {
    let root = state_file::discover(cwd)?;
    let workdir = transitions::resolve_workdir(cwd, &root);
    let worker = match &w.worker_id {
        Some(id) => id.clone(),
        None => {
            let file = state_file::load(&root)?;
            match std::env::var("HARNESS_WORKER_ID") {
                Ok(v) if !v.trim().is_empty() => v,
                _ if file.concurrent() => String::new(),
                _ => default_cli_worker(),
            }
        }
    };
    Ok(Ctx {
        root,
        workdir,
        worker,
        lease_secs: w.lease.unwrap_or_else(transitions::default_lease_secs),
    })
}

fn task_id(id: Option<String>) -> Result<String> {
    id.or_else(|| std::env::var("HARNESS_TASK_ID").ok())
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| PlanError::Usage("task id missing (argument or HARNESS_TASK_ID)".into()))
}

fn outcome_json(id: &str, o: &Outcome) -> (serde_json::Value, i32) {
    match o {
        Outcome::Completed { commit } => (
            json!({"task_id": id, "status": "completed", "commit": commit}),
            0,
        ),
        Outcome::Failed {
            category,
            message,
            permanent,
        } => (
            json!({"task_id": id, "status": "failed", "category": category.as_str(),
                   "message": message, "permanent": permanent}),
            1,
        ),
        Outcome::Config { message } => (
            json!({"task_id": id, "status": "failed", "category": "CONFIG", "message": message}),
            2,
        ),
    }
}

fn task_step(cwd: &Path, step: TaskStep) -> Result<i32> {
    match step {
        TaskStep::Claim { task, w } => {
            let ctx = ctx_for(cwd, &w)?;
            match transitions::claim(&ctx, task.as_deref())? {
                Some(t) => {
                    println!(
                        "{}",
                        json!({"claimed": true, "worker_id": ctx.worker, "task_id": t.id,
                               "title": t.title, "lease_expires_at": t.lease_expires_at,
                               "started_at_commit": t.started_at_commit})
                    );
                    Ok(0)
                }
                None => {
                    println!("{}", json!({"claimed": false}));
                    Ok(1)
                }
            }
        }
        TaskStep::Renew { id, w } => {
            let ctx = ctx_for(cwd, &w)?;
            let id = task_id(id)?;
            let until = transitions::renew(&ctx, &id)?;
            println!(
                "{}",
                json!({"renewed": true, "task_id": id, "lease_expires_at": until})
            );
            Ok(0)
        }
        TaskStep::Checkpoint {
            step,
            total,
            rest,
            w,
        } => {
            let ctx = ctx_for(cwd, &w)?;
            let (id, desc) = match rest.as_slice() {
                [desc] => (task_id(None)?, desc.clone()),
                [id, desc] => (id.clone(), desc.clone()),
                _ => return Err(PlanError::Usage("checkpoint: [ID] DESCRIPTION".into())),
            };
            if step == 0 || total == 0 || step > total {
                return Err(PlanError::Usage(format!(
                    "checkpoint: need 1 <= step <= total (got {step}/{total})"
                )));
            }
            transitions::checkpoint(&ctx, &id, step, total, &desc)?;
            println!("{}", json!({"task_id": id, "step": step, "total": total}));
            Ok(0)
        }
        TaskStep::Complete { id, w } => {
            let ctx = ctx_for(cwd, &w)?;
            let id = task_id(id)?;
            let outcome = transitions::complete(&ctx, &id)?;
            let (out, code) = outcome_json(&id, &outcome);
            println!("{out}");
            if let Outcome::Config { message } = &outcome {
                eprintln!(
                    "harness: [CONFIG] {}: {message}",
                    ctx.root.tasks_path().display()
                );
            }
            Ok(code)
        }
        TaskStep::Fail {
            id,
            category,
            message,
            w,
        } => {
            let ctx = ctx_for(cwd, &w)?;
            let id = task_id(id)?;
            let cat = Category::parse(&category)
                .ok_or_else(|| PlanError::Usage(format!("fail: unknown category {category}")))?;
            let outcome = transitions::fail_owned(&ctx, &id, cat, &message)?;
            let (out, _) = outcome_json(&id, &outcome);
            println!("{out}");
            Ok(0)
        }
    }
}
