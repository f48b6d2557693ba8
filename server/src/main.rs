//! The `harness` binary.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::{Parser, Subcommand};
use harness_server::{ServeConfig, config, launch};
use tracing_subscriber::EnvFilter;

mod cli_ops;
mod logging;
mod node_cli;
mod report_cli;

#[derive(Parser)]
#[command(
    name = "harness",
    version,
    about = "Agents that park when blocked and resume when answered",
    after_help = "Examples:\n  \
        harness serve                          # UI, REST, MCP on http://127.0.0.1:7700\n  \
        harness open                           # open the UI, logged in\n  \
        harness init && harness add \"Write the parser\" --priority P0\n  \
        harness run --agent 'claude -p'        # drive the task list\n  \
        harness status --json\n\n\
        Run `harness <cmd> --help` for a command's options."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the web UI, REST API, MCP endpoint and terminals.
    Serve {
        /// Address to listen on.
        #[arg(long, env = "HARNESS_BIND", default_value = "127.0.0.1:7700")]
        bind: SocketAddr,
        /// Data directory (database, secrets, signal files). Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Database URL. Default: sqlite://<data-dir>/harness.db
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
        /// Days after which an unanswered question expires.
        #[arg(long, env = "HARNESS_PENDING_TTL_DAYS", default_value_t = 14)]
        pending_ttl_days: u64,
        /// Extra accepted Host header values (host:port), comma-separated.
        #[arg(long, env = "HARNESS_ALLOWED_HOSTS", value_delimiter = ',')]
        allowed_host: Vec<String>,
        /// How long a reply (or keyed terminal input) waits for its delivery
        /// into the terminal before answering `queued`, in milliseconds.
        #[arg(long, env = "HARNESS_DELIVERY_WAIT_MS", default_value_t = 2000)]
        delivery_wait_ms: u64,
        /// Isolate agents from the data directory: auto (when the kernel allows it),
        /// required (refuse to start without it) or off.
        #[arg(long, env = "HARNESS_AGENT_ISOLATION", default_value = "auto",
              value_parser = harness_server::isolation::IsolationMode::parse)]
        agent_isolation: harness_server::isolation::IsolationMode,
        /// Do not print the login link (it carries the admin token) at start:
        /// for service managers whose logs others can read. `harness open`
        /// still opens or prints it.
        #[arg(long, env = "HARNESS_NO_LOGIN_LINK")]
        no_login_link: bool,
        /// Directory of the secret files (admin.token, internal-api.key, gateway.token,
        /// metrics.token, node.key) instead of <data-dir>/secrets: one directory every node of
        /// a cluster shares. HARNESS_ADMIN_TOKEN, HARNESS_INTERNAL_API_KEY, HARNESS_GATEWAY_TOKEN,
        /// HARNESS_METRICS_TOKEN and HARNESS_NODE_KEY give a value directly (winning over its file).
        #[arg(long, env = "HARNESS_SECRETS_DIR")]
        secrets_dir: Option<PathBuf>,
        /// This node's own base URL, reachable by the other nodes of a
        /// cluster (several nodes on one PostgreSQL), e.g. http://10.0.0.2:7700.
        #[arg(long, env = "HARNESS_NODE_URL", value_parser = config::parse_node_url)]
        node_url: Option<String>,
        /// What this node is shown as in the UI, the CLI and the API (1 to 64
        /// printable characters). Default: the machine's hostname.
        #[arg(long, env = "HARNESS_NODE_NAME", value_parser = config::parse_node_name)]
        node_name: Option<String>,
        /// How often this node writes its heartbeat, in seconds.
        #[arg(long, env = "HARNESS_NODE_HEARTBEAT_SECS", default_value_t = 5,
              value_parser = config::parse_positive_secs)]
        node_heartbeat_secs: u64,
        /// A node without a heartbeat for this many seconds is dead: the
        /// others recover its work. At least twice the heartbeat.
        #[arg(long, env = "HARNESS_NODE_DEAD_AFTER_SECS", default_value_t = 30,
              value_parser = config::parse_positive_secs)]
        node_dead_after_secs: u64,
    },
    /// Open the web UI in a browser, logged in (the login link of the running server).
    Open {
        /// Data directory. Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Print the link instead of opening a browser.
        #[arg(long)]
        print: bool,
    },
    /// Create the task-list state files (harness-tasks.json, …) in PATH.
    #[command(disable_help_flag = true)]
    Init(Passthrough),
    /// Add a task to harness-tasks.json.
    #[command(disable_help_flag = true)]
    Add(Passthrough),
    /// Show the task list: progress, blocked tasks, the next task (--json).
    #[command(disable_help_flag = true)]
    Status(Passthrough),
    /// Drive the task list: claim, run the agent, validate, commit or roll back.
    #[command(disable_help_flag = true)]
    Run(Passthrough),
    /// Agent-driven protocol steps: claim, renew, checkpoint, complete, fail.
    #[command(disable_help_flag = true)]
    Task(Passthrough),
    /// Where the agent hooks come from, and removal of what Harness generated.
    Hooks {
        #[command(subcommand)]
        action: HooksAction,
        /// Data directory. Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
    },
    /// Copy the database to FILE while the server runs (a consistent snapshot).
    ///
    /// Example: harness backup ~/harness-$(date +%F).db
    Backup {
        /// The file to write (must not exist).
        file: PathBuf,
        /// Data directory. Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Database URL. Default: sqlite://<data-dir>/harness.db
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
    },
    /// Replace the database with a backup made by `harness backup` (stop the server first).
    ///
    /// The current database is kept next to it as harness.db.before-restore-<time>.
    Restore {
        /// The backup file.
        file: PathBuf,
        /// Data directory. Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Database URL. Default: sqlite://<data-dir>/harness.db
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
    },
    /// Copy every table of a SQLite database into a new, empty PostgreSQL database (stop the
    /// server first), in one transaction; row counts are checked per table.
    ///
    /// Example: harness migrate-db --to postgres://harness@db.example/harness
    #[command(alias = "migrate-store")]
    MigrateDb {
        /// The SQLite database. Default: sqlite://<data-dir>/harness.db
        #[arg(long)]
        from: Option<String>,
        /// The PostgreSQL database (created by its owner, empty; migrated here).
        #[arg(long)]
        to: String,
        /// Data directory (locked while copying). Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Check the installation: data directory and secrets, the database, the server, agent
    /// CLIs, the web bundle, free disk. Exit code 0 only when all pass.
    Doctor {
        /// Data directory. Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Database URL (a postgres://… one is checked by connecting). Default:
        /// sqlite://<data-dir>/harness.db
        #[arg(long, env = "DATABASE_URL")]
        database_url: Option<String>,
    },
    /// Print the gateway's bearer token (secrets/gateway.token: OpenClaw / Hermes use it for
    /// /mcp and the gateway routes), or replace it with --rotate (the old one stops working at
    /// once, on a running server too).
    GatewayToken {
        /// Data directory. Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Replace the token with a new one and print it.
        #[arg(long)]
        rotate: bool,
        /// The shared secrets directory of a cluster (see `serve --help`).
        #[arg(long, env = "HARNESS_SECRETS_DIR")]
        secrets_dir: Option<PathBuf>,
    },
    /// The nodes of a cluster: list them, drain one before its machine's
    /// maintenance (it takes no new work; its agents keep running), undrain it.
    ///
    /// Example: harness node drain --wait --timeout 3600 && systemctl stop harness
    Node {
        #[command(subcommand)]
        action: NodeAction,
        /// Data directory (finds the running server and its admin token). Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
        /// The shared secrets directory of a cluster (see `serve --help`).
        #[arg(long, env = "HARNESS_SECRETS_DIR", global = true)]
        secrets_dir: Option<PathBuf>,
        /// The server to ask (any node of the cluster), e.g. http://10.0.0.2:7700.
        /// Default: the one running on this data directory.
        #[arg(long, env = "HARNESS_SERVER_URL", global = true)]
        server: Option<String>,
    },
    /// The morning report: what ended, ran, was asked and decided, what was
    /// committed, and what waits for you now (ranked, numbered), from the
    /// running server.
    ///
    /// Example: harness report --since 12h
    Report {
        /// From when: an RFC 3339 time or a duration back from now (12h, 90m, 2d).
        /// Default: the end of the last report sent to chat, else 24 hours ago.
        #[arg(long)]
        since: Option<String>,
        /// Print the API's JSON.
        #[arg(long)]
        json: bool,
        /// Send it to the active unattended chat target instead of printing it.
        #[arg(long)]
        send: bool,
        /// Data directory (finds the running server and its admin token). Default: ~/.harness
        #[arg(long, env = "HARNESS_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The shared secrets directory of a cluster (see `serve --help`).
        #[arg(long, env = "HARNESS_SECRETS_DIR")]
        secrets_dir: Option<PathBuf>,
        /// The server to ask. Default: the one running on this data directory.
        #[arg(long, env = "HARNESS_SERVER_URL")]
        server: Option<String>,
    },
    /// Run Harness as a systemd service (started at boot, restarted on failure): install it,
    /// see its state, remove it. Agents keep running across the service's restarts.
    ///
    /// Example: harness service install --user -- --bind 127.0.0.1:7700
    Service {
        #[command(subcommand)]
        action: ServiceAction,
        /// Data directory the service serves (passed to `harness serve` in the unit).
        /// Default: ~/.harness of the user the service runs as
        #[arg(long, env = "HARNESS_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
    },
    /// The demo agent behind Home's first step (run as a task's command).
    #[command(hide = true)]
    DemoAgent,
    /// Agent hooks (JSON on stdin, as Claude Code and Codex send it).
    Hook {
        /// The hook event: pre-tool, session-start, stop, subagent-stop,
        /// teammate-idle, self-reflect.
        event: String,
    },
}

#[derive(Subcommand)]
enum NodeAction {
    /// Every node: live, draining or dead, its URL, how many agents it runs.
    List {
        /// Print the API's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop the node taking new work (kept across its restarts until undrained):
    /// queued work goes to the other nodes, new agents start on another node.
    Drain {
        /// The node id. Default: the node of the server asked.
        node_id: Option<String>,
        /// Return once no agent runs on the node any more (prints progress).
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this many seconds (exit code 1).
        #[arg(long, requires = "wait")]
        timeout: Option<u64>,
    },
    /// Let the node take work again.
    Undrain {
        /// The node id. Default: the node of the server asked.
        node_id: Option<String>,
    },
}

#[derive(Subcommand)]
enum ServiceAction {
    /// Write, enable and start the systemd unit (again: rewritten only when it changed).
    Install {
        /// A unit of your own user's manager (~/.config/systemd/user), kept running
        /// without a login session by lingering. Default: a system unit (needs root;
        /// the service runs as the user who ran sudo).
        #[arg(long)]
        user: bool,
        /// Print the unit and where it would go; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Further `harness serve` options for the unit, after `--`.
        #[arg(last = true)]
        serve_args: Vec<String>,
    },
    /// Whether the unit file exists, is enabled and active, and where it is.
    Status,
    /// Stop and disable the service, remove its unit (agents keep running).
    Uninstall {
        /// The user unit (default: the system unit).
        #[arg(long)]
        user: bool,
        /// Say what would be done; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Subcommand)]
enum HooksAction {
    /// Show how hooks reach the agents and what Harness generated.
    Status,
    /// Remove every hook/MCP settings file Harness generated for agents.
    Uninstall,
}

fn hooks_admin(action: HooksAction, data_dir: Option<PathBuf>) -> ExitCode {
    let runs = data_dir
        .unwrap_or_else(config::default_data_dir)
        .join("runs");
    let count = std::fs::read_dir(&runs).map(|d| d.count()).unwrap_or(0);
    match action {
        HooksAction::Status => {
            println!(
                "Harness never edits ~/.claude or ~/.codex. Hooks and the MCP endpoint are passed to each \
                 agent it starts: Claude Code gets --settings/--mcp-config files under {} ({count} \
                 execution(s)); Codex gets -c overrides (features.hooks, hooks.*, mcp_servers.harness) \
                 and --dangerously-bypass-hook-trust.",
                runs.display()
            );
            ExitCode::SUCCESS
        }
        HooksAction::Uninstall => match std::fs::remove_dir_all(&runs) {
            Ok(()) => {
                println!(
                    "removed {count} generated settings folder(s) from {}",
                    runs.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("nothing to remove: {} does not exist", runs.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("harness: cannot remove {}: {e}", runs.display());
                ExitCode::FAILURE
            }
        },
    }
}

/// Arguments handed unchanged to the task-list CLI (`harness_plan::cli`).
#[derive(clap::Args)]
struct Passthrough {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn plan(name: &str, rest: Passthrough) -> ExitCode {
    let mut args = vec![name.to_string()];
    args.extend(rest.args);
    exit(harness_plan::cli::cli_main_with(args, &mut agent_runner))
}

/// The agent runner of `harness run --agent CMD`: a supervised Harness task when a server is
/// running (or named), else `None` (the agent runs directly). Says which, on stderr.
fn agent_runner(
    command: &str,
    choice: &harness_plan::cli::ServerChoice,
) -> Result<Option<Box<dyn harness_plan::driver::AgentRunner>>, String> {
    use harness_server::supervised::{self, Mode};
    match supervised::choose(choice).map_err(|e| e.to_string())? {
        Mode::Direct { note } => {
            eprintln!("harness: {note}");
            Ok(None)
        }
        Mode::Supervised { server, note } => {
            eprintln!("harness: {note}");
            Ok(Some(Box::new(supervised::SupervisedAgent::new(
                server,
                command.to_string(),
                Box::new(|line| eprintln!("harness: {line}")),
            ))))
        }
    }
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn hook(event: &str) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env = harness_server::hooks::HookEnv::from_process();
    let outcome = harness_server::hooks::run(event, &env, &cwd);
    print!("{}", outcome.stdout);
    eprint!("{}", outcome.stderr);
    exit(outcome.exit_code)
}

fn main() -> ExitCode {
    // The agent launcher (docs/security.md): before anything else, while the
    // process still has one thread (a new user namespace needs that).
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(harness_pty::isolate::SUBCOMMAND) {
        let code = match args.get(2).map(String::as_str) {
            Some("--probe") => harness_pty::isolate::probe_main(false),
            Some("--probe-layer") => harness_pty::isolate::probe_main(true),
            _ => harness_pty::isolate::launcher_main(&args[2..]),
        };
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // An agent holder (`terminals::held`): before any thread starts, since
    // it forks to detach.
    if args.get(1).map(String::as_str) == Some(harness_server::terminals::held::SUBCOMMAND) {
        return harness_holder::hold::run(
            std::env::args_os().skip(2),
            harness_server::terminals::held::BUILD,
        );
    }
    let cli = Cli::parse();
    // Hooks and task-list commands run inside agents' terminals: quiet by default.
    let default_level = if matches!(cli.command, Command::Serve { .. }) {
        "info"
    } else {
        "warn"
    };
    logging::init(
        EnvFilter::try_from_env("HARNESS_LOG").unwrap_or_else(|_| EnvFilter::new(default_level)),
    );
    let result = match cli.command {
        Command::Serve {
            bind,
            data_dir,
            database_url,
            pending_ttl_days,
            allowed_host,
            delivery_wait_ms,
            agent_isolation,
            no_login_link,
            secrets_dir,
            node_url,
            node_name,
            node_heartbeat_secs,
            node_dead_after_secs,
        } => {
            let mut cfg = ServeConfig::new(bind, data_dir.unwrap_or_else(config::default_data_dir));
            cfg.secrets = harness_server::secrets::SecretSources::from_env();
            cfg.secrets.dir = secrets_dir;
            cfg.database_url = database_url;
            cfg.allowed_hosts = allowed_host;
            cfg.delivery_wait = std::time::Duration::from_millis(delivery_wait_ms);
            cfg.agent_isolation = agent_isolation;
            cfg.node_url = node_url;
            cfg.node_name = node_name;
            cfg.node_heartbeat = std::time::Duration::from_secs(node_heartbeat_secs);
            cfg.node_dead_after = std::time::Duration::from_secs(node_dead_after_secs);
            cfg.pending_ttl =
                std::time::Duration::from_secs(pending_ttl_days.saturating_mul(86_400));
            let watch = harness_server::terminals::agent_watch::WatchConfig::from_env(
                std::env::var("HARNESS_STALL_AFTER_SECS").ok().as_deref(),
            );
            match harness_server::config::HoldersConfig::from_env(
                std::env::var("HARNESS_HOLDERS").ok().as_deref(),
                std::env::var("HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS")
                    .ok()
                    .as_deref(),
            )
            .and_then(|holders| Ok((holders, watch?)))
            {
                Ok((holders, watch)) => {
                    cfg.holders = holders;
                    cfg.agent_watch = watch;
                    serve(cfg, !no_login_link)
                }
                Err(err) => Err(anyhow::anyhow!(err)),
            }
        }
        Command::Init(a) => return plan("init", a),
        Command::Add(a) => return plan("add", a),
        Command::Status(a) => return plan("status", a),
        Command::Run(a) => return plan("run", a),
        Command::Task(a) => return plan("task", a),
        Command::Hook { event } => return hook(&event),
        Command::DemoAgent => {
            return ExitCode::from(u8::try_from(harness_server::demo_agent::run()).unwrap_or(1));
        }
        Command::Hooks { action, data_dir } => return hooks_admin(action, data_dir),
        Command::Backup {
            file,
            data_dir,
            database_url,
        } => cli_ops::backup(
            &data_dir.unwrap_or_else(config::default_data_dir),
            database_url,
            &file,
        ),
        Command::Restore {
            file,
            data_dir,
            database_url,
        } => cli_ops::restore(
            &data_dir.unwrap_or_else(config::default_data_dir),
            database_url,
            &file,
        ),
        Command::MigrateDb { from, to, data_dir } => cli_ops::migrate_db(
            &data_dir.unwrap_or_else(config::default_data_dir),
            from,
            &to,
        ),
        Command::Doctor {
            data_dir,
            database_url,
        } => {
            return cli_ops::doctor_cmd(
                &data_dir.unwrap_or_else(config::default_data_dir),
                database_url,
            );
        }
        Command::GatewayToken {
            data_dir,
            rotate,
            secrets_dir,
        } => gateway_token(
            &data_dir.unwrap_or_else(config::default_data_dir),
            secrets_dir,
            rotate,
        ),
        Command::Node {
            action,
            data_dir,
            secrets_dir,
            server,
        } => {
            let target = node_cli::Target {
                data_dir: data_dir.unwrap_or_else(config::default_data_dir),
                secrets_dir,
                server,
            };
            match action {
                NodeAction::List { json } => node_cli::list(&target, json),
                NodeAction::Drain {
                    node_id,
                    wait,
                    timeout,
                } => node_cli::set(
                    &target,
                    node_id,
                    true,
                    wait,
                    timeout.map(std::time::Duration::from_secs),
                ),
                NodeAction::Undrain { node_id } => {
                    node_cli::set(&target, node_id, false, false, None)
                }
            }
        }
        Command::Report {
            since,
            json,
            send,
            data_dir,
            secrets_dir,
            server,
        } => report_cli::report(
            &node_cli::Target {
                data_dir: data_dir.unwrap_or_else(config::default_data_dir),
                secrets_dir,
                server,
            },
            since.as_deref(),
            json,
            send,
        ),
        Command::Service { action, data_dir } => service(action, data_dir),
        Command::Open { data_dir, print } => {
            open(&data_dir.unwrap_or_else(config::default_data_dir), print)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("harness: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn service(action: ServiceAction, data_dir: Option<PathBuf>) -> anyhow::Result<()> {
    use harness_server::service::{self, InstallOptions, Scope};
    let scope = |user: bool| if user { Scope::User } else { Scope::System };
    // Warnings on stderr: `--dry-run > harness.service` writes the unit alone.
    let mut say = |line: &str| {
        if line.starts_with("warning:") {
            eprintln!("harness: {line}");
        } else {
            println!("{line}");
        }
    };
    match action {
        ServiceAction::Install {
            user,
            dry_run,
            serve_args,
        } => service::install(
            &InstallOptions {
                scope: scope(user),
                data_dir,
                serve_args,
                dry_run,
            },
            &mut say,
        ),
        ServiceAction::Status => {
            for line in service::status()?.lines() {
                say(&line);
            }
            Ok(())
        }
        ServiceAction::Uninstall { user, dry_run } => {
            service::uninstall(scope(user), dry_run, &mut say)
        }
    }
}

fn gateway_token(
    data_dir: &std::path::Path,
    secrets_dir: Option<PathBuf>,
    rotate: bool,
) -> anyhow::Result<()> {
    let mut sources = harness_server::secrets::SecretSources::from_env();
    sources.dir = secrets_dir;
    let data = harness_server::secrets::DataDir::prepare_with(data_dir, &sources)?;
    let token = if rotate {
        anyhow::ensure!(
            sources.gateway_token.is_none(),
            "the gateway token is set by {}: change it there (on every node)",
            harness_server::secrets::GATEWAY_TOKEN_ENV
        );
        harness_server::secrets::rotate_gateway_token(&data.secrets)?
    } else {
        data.gateway_token()?
    };
    println!("{token}");
    Ok(())
}

fn serve(cfg: ServeConfig, print_login_link: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(cfg.bind)
            .await
            .with_context(|| format!("cannot listen on {}", cfg.bind))?;
        let running = launch(cfg, listener).await?;
        println!(
            "Harness is listening on {} (data dir {})",
            running.base_url(),
            running.data_dir.display()
        );
        println!(
            "Admin token (for scripts and agents you connect yourself): {}",
            running.admin_token_source
        );
        // Like Jupyter: the one link that logs this browser in (`harness open` opens it).
        if print_login_link {
            println!(
                "Open the UI (logs you in): {}",
                login_url(&browser_base(running.addr), &running.admin_token)
            );
        } else {
            println!("Open the UI: run `harness open` (the login link is not printed)");
        }
        let stop = running.cancel_token();
        tokio::select! {
            () = shutdown_signal() => tracing::info!("shutting down"),
            () = stop.cancelled() => {}
        }
        running.shutdown().await
    })
}

/// The address a local browser uses: loopback when bound to all interfaces.
fn browser_base(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://127.0.0.1:{}", addr.port())
    } else {
        format!("http://{addr}")
    }
}

fn login_url(base: &str, token: &str) -> String {
    format!("{base}/login?token={token}")
}

/// `harness open`: the running server's login link (from `<data-dir>/server.json`
/// and the admin token), opened with the desktop's opener or printed.
fn open(data_dir: &std::path::Path, print: bool) -> anyhow::Result<()> {
    let base = harness_server::supervised::discovery::read(data_dir)
        .map(|d| d.url)
        .context("no running server found (start one with `harness serve`)")?;
    // The admin token as the server has it (a cluster's variable or shared directory first).
    let token = harness_server::secrets::SecretSources::from_env().admin_token_for(data_dir)?;
    let url = login_url(base.trim_end_matches('/'), token.trim());
    if print {
        println!("{url}");
        return Ok(());
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener)
        .arg(&url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(status) if status.success() => Ok(()),
        _ => {
            println!("Open this link in your browser: {url}");
            Ok(())
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
