//! Agent terminals: the PTY supervisor (`harness-pty`) wired to the core.
//! Starts agents with an allow-listed environment, records their executions,
//! keeps parked terminals alive, and delivers replies exactly once into the
//! live terminal — or restarts the agent with its provider's resume mode when
//! the terminal is gone (docs/decisions.md D3, docs/decisions.md D5, D6, D13).

pub mod actions;
pub mod agent_watch;
pub mod child_input;
pub mod control;
pub mod deliver;
mod environment;
mod exits;
mod forward;
pub mod held;
pub mod hook_guard;
pub mod idle_start;
mod input;
pub mod look_cost;
pub mod mcp_ready;
pub mod prompts;
pub mod providers;
pub mod ready;
pub mod reboot;
pub mod resume;
mod submit;
pub mod unreadable;
pub mod ws;

use std::{os::unix::fs::DirBuilderExt, path::PathBuf, sync::Arc, time::Duration};

use harness_core::{
    CoreError, CoreResult, Harness,
    model::{Execution, ExecutionStatus, TaskView},
};
use harness_pty::{KeepaliveConfig, PtyRegistry, PtySession, ScreenText, SpawnSpec};
use providers::{SpawnInputs, StartMode};

#[derive(Debug, Clone)]
pub struct TerminalConfig {
    /// `http://127.0.0.1:<port>` as agents reach the server.
    pub base_url: String,
    pub signal_dir: PathBuf,
    /// Per-execution generated files (provider settings).
    pub runs_dir: PathBuf,
    pub harness_bin: PathBuf,
    /// The small holder binary (`private_exe`); `None`: holders run as
    /// `harness_bin hold`.
    pub holder_bin: Option<PathBuf>,
    pub keepalive: KeepaliveConfig,
    /// Delay between the reply text and the submit key.
    pub settle: Duration,
    /// Output silence that counts as "idle at the prompt".
    pub idle_quiet: Duration,
    /// Longest wait for an input boundary before injecting anyway.
    pub boundary_max: Duration,
    /// `HARNESS_CODEX_HOOK_TRUST` (docs/agent-clis.md, "Codex hook trust").
    pub codex_hook_trust: providers::CodexHookTrust,
    /// What agents cannot see (`crate::isolation`).
    pub isolation: crate::isolation::AgentIsolation,
    /// Calls to the other nodes of a cluster (signed with the node key).
    pub nodes: crate::node_call::NodeClient,
    /// Agents held by holder processes (they outlive the server); `None`:
    /// agents run in PTYs of this process and die with it.
    pub holders: Option<held::HolderSettings>,
    /// The stall threshold unless the setting says otherwise
    /// (`agent_watch::WatchConfig::stall_after`).
    pub stall_after: Duration,
}

impl TerminalConfig {
    pub fn new(base_url: String, data_dir: &std::path::Path, signal_dir: PathBuf) -> Self {
        Self {
            base_url,
            signal_dir,
            runs_dir: data_dir.join("runs"),
            harness_bin: PathBuf::from("harness"),
            holder_bin: None,
            keepalive: KeepaliveConfig::default(),
            settle: Duration::from_millis(80),
            idle_quiet: Duration::from_millis(400),
            boundary_max: Duration::from_secs(10),
            codex_hook_trust: providers::CodexHookTrust::parse(
                std::env::var("HARNESS_CODEX_HOOK_TRUST").ok().as_deref(),
            )
            .unwrap_or_else(|err| {
                tracing::warn!("{err}; using \"bypass\"");
                providers::CodexHookTrust::Bypass
            }),
            isolation: crate::isolation::AgentIsolation::none("not configured"),
            nodes: crate::node_call::NodeClient::new(Vec::new()),
            holders: None,
            stall_after: harness_core::agent_state::DEFAULT_STALL_AFTER,
        }
    }
}

#[derive(Clone)]
pub struct Terminals {
    inner: Arc<Inner>,
}

struct Inner {
    harness: Harness,
    registry: PtyRegistry,
    config: TerminalConfig,
    /// Serialises this process's starts (across nodes the database's one
    /// live execution per task decides: a losing start is a 409).
    start_lock: tokio::sync::Mutex<()>,
    /// SessionStart reports (`ready`): when a restarted agent accepts input.
    starts: ready::AgentSignals,
    /// The agents that listed their Harness tools over MCP (`mcp_ready`).
    tools_listed: ready::AgentSignals,
    /// The agents' states (`agent_watch`).
    watch: agent_watch::AgentWatch,
    /// Agents in holders this build cannot read (`unreadable`).
    unreadable: unreadable::UnreadableHolders,
    /// Exits being recorded (`exits`): an action waits for its exit's.
    exits: exits::Exits,
    /// The secrets of each agent's environment (`environment`).
    secrets: environment::AgentSecrets,
}

/// Result of typing into a terminal.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputResult {
    pub task_id: String,
    pub submitted: bool,
    pub deduped: bool,
    /// With an idempotency key: the delivery row (also the injection id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    /// With an idempotency key: `delivered`, `queued`, `failed` or `unverified`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery: Option<&'static str>,
}

impl Terminals {
    pub fn new(harness: Harness, config: TerminalConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry: PtyRegistry::new(config.keepalive),
                harness,
                config,
                start_lock: tokio::sync::Mutex::new(()),
                starts: ready::AgentSignals::default(),
                tools_listed: ready::AgentSignals::default(),
                watch: agent_watch::AgentWatch::default(),
                unreadable: unreadable::UnreadableHolders::default(),
                exits: exits::Exits::default(),
                secrets: environment::AgentSecrets::default(),
            }),
        }
    }

    pub fn harness(&self) -> &Harness {
        &self.inner.harness
    }

    /// The client of node-to-node calls.
    pub fn node_client(&self) -> &crate::node_call::NodeClient {
        &self.inner.config.nodes
    }

    /// The live (not exited) session of a task.
    pub fn live(&self, task_id: &str) -> Option<Arc<PtySession>> {
        self.inner.registry.get(task_id).filter(|s| !s.has_exited())
    }

    /// `(live, parked)` agent terminals (for `/metrics`).
    pub fn pty_counts(&self) -> (usize, usize) {
        let registry = &self.inner.registry;
        let ids = registry.task_ids();
        let live = ids
            .iter()
            .filter(|id| registry.get(id).is_some_and(|s| !s.has_exited()))
            .count();
        let parked = ids.iter().filter(|id| registry.is_parked(id)).count();
        (live, parked)
    }

    /// The session of a task, live or recently exited.
    pub fn session(&self, task_id: &str) -> Option<Arc<PtySession>> {
        self.inner.registry.get(task_id)
    }

    pub(crate) async fn working_dir(&self, view: &TaskView) -> CoreResult<PathBuf> {
        if let Some(cwd) = &view.task.agent.cwd {
            return Ok(PathBuf::from(cwd));
        }
        if let Some(project_id) = &view.task.project_id {
            match self.inner.harness.tasks().project(project_id).await {
                Ok(p) => return Ok(PathBuf::from(&p.path)),
                Err(CoreError::NotFound(_)) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/")))
    }

    /// Start the task's agent in a new PTY. Runs in its own task: a caller
    /// that goes away (a dropped request) cannot stop it between creating
    /// the execution and registering its terminal.
    /// When the task's agent runs on another live node, that node starts
    /// it (forwarded: it answers 409 while its agent runs).
    pub async fn start(&self, task_id: &str, mode: StartMode) -> CoreResult<Execution> {
        self.spawn_start(task_id, mode, true).await
    }

    /// [`Self::start`] asked by another node: here or not at all.
    pub async fn start_here(&self, task_id: &str, mode: StartMode) -> CoreResult<Execution> {
        self.spawn_start(task_id, mode, false).await
    }

    async fn spawn_start(
        &self,
        task_id: &str,
        mode: StartMode,
        forward: bool,
    ) -> CoreResult<Execution> {
        let this = self.clone();
        let task_id = task_id.to_owned();
        tokio::spawn(async move { this.start_now(&task_id, mode, forward).await })
            .await
            .map_err(|join| {
                CoreError::Conflict(format!("the agent start was interrupted: {join}"))
            })?
    }

    #[tracing::instrument(skip_all, fields(task_id))]
    async fn start_now(
        &self,
        task_id: &str,
        mode: StartMode,
        forward: bool,
    ) -> CoreResult<Execution> {
        let h = &self.inner.harness;
        let view = h.tasks().get_task(task_id).await?;
        let guard = self.inner.start_lock.lock().await;
        if self.live(&view.task.id).is_some() {
            return Err(CoreError::Conflict(
                "the task's agent is already running".into(),
            ));
        }
        // A start another node asked of a draining one: refused, never passed on.
        if !forward {
            h.cluster().refuse_start_while_draining()?;
        }
        match h.cluster().placement(&view.task.id).await? {
            harness_core::cluster::Placement::Free => {}
            // A live execution of this node without a terminal (e.g. its
            // process was lost) is superseded.
            harness_core::cluster::Placement::Here(old) => {
                h.tasks()
                    .finish_execution(
                        &view.task.id,
                        &old.id,
                        ExecutionStatus::Stopped,
                        None,
                        "superseded",
                    )
                    .await?;
            }
            harness_core::cluster::Placement::Node { url, .. } if forward => {
                drop(guard);
                return self.forward_start(&url, &view.task.id, &mode).await;
            }
            harness_core::cluster::Placement::Node { node_id, .. } => {
                return Err(CoreError::Conflict(format!(
                    "the task's agent runs on node {node_id}, not on this one"
                )));
            }
            _ => {
                // A dead node's execution is interrupted; an unreachable one refused.
                self.elsewhere(&view.task.id).await?;
            }
        }
        // A draining node starts no agent: another node does.
        if h.cluster().draining() {
            drop(guard);
            return self.start_elsewhere(&view.task.id, &mode).await;
        }
        let cwd = self.working_dir(&view).await?;
        if !cwd.is_dir() {
            return Err(CoreError::invalid(
                "agent.cwd",
                format!("working directory {} does not exist", cwd.display()),
            ));
        }
        let isolation = &self.inner.config.isolation;
        if let Some(hidden) = isolation.hides(&cwd) {
            return Err(CoreError::invalid(
                "agent.cwd",
                format!(
                    "working directory {} is inside {}, which agents cannot see (Harness's data)",
                    cwd.display(),
                    hidden.display()
                ),
            ));
        }
        let (execution, token) = h.tasks().begin_execution(&view.task.id).await?;
        let run_dir = self.inner.config.runs_dir.join(&execution.id);
        let mcp_url = format!("{}/mcp", self.inner.config.base_url);
        let directive = h.tasks().directive_for(&view.task.id).await?;
        // Isolated agents get the hooks as their CLI's managed settings (an
        // `/etc` layer); any other start whose settings would switch the
        // hooks off is refused (`hook_guard`), at every start and resume.
        let managed_etc = (isolation.managed_hooks()
            && view.task.agent.provider != harness_core::model::Provider::Command)
            .then(|| run_dir.join("etc"));
        let guarded = hook_guard::check(
            view.task.agent.provider,
            &cwd,
            &view.task.agent.env,
            managed_etc.is_some(),
            std::path::Path::new("/etc"),
        )
        .map_err(std::io::Error::other);
        let argv = guarded.and_then(|()| {
            providers::argv(&SpawnInputs {
                agent: &view.task.agent,
                mode: &mode,
                directive: &directive,
                run_dir: &run_dir,
                harness_bin: &self.inner.config.harness_bin,
                mcp_url: &mcp_url,
                codex_hook_trust: self.inner.config.codex_hook_trust,
                managed_etc: managed_etc.as_deref(),
            })
        });
        let argv = argv.and_then(|argv| {
            let Some(iso) = isolation.for_agent(
                &run_dir,
                &self.inner.config.signal_dir,
                &self.inner.config.harness_bin,
                managed_etc.as_deref(),
            ) else {
                return Ok(argv);
            };
            // The run directory is bound into the agent's view: it must exist.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&run_dir)?;
            Ok(iso.wrap(&self.inner.config.harness_bin, &argv))
        });
        // What the hook decides by when it cannot reach the server.
        let snapshot = if argv.is_ok() {
            self.approval_snapshot(&view, &run_dir).await
        } else {
            None
        };
        let spawned = match argv {
            Ok(argv) => {
                let mut spec = SpawnSpec::new(argv, cwd);
                spec.env = self.environment(&view, &execution, &token);
                self.inner.secrets.set(&view.task.id, &spec.env);
                if let Some(path) = snapshot {
                    spec.env.insert(
                        harness_core::approvals::offline::SNAPSHOT_ENV.into(),
                        path.display().to_string(),
                    );
                }
                self.spawn_session(spec, &view.task.id, &execution.id).await
            }
            Err(e) => Err(e.to_string()),
        };
        let session = match spawned {
            Ok(s) => s,
            Err(err) => {
                h.tasks()
                    .finish_execution(
                        &view.task.id,
                        &execution.id,
                        ExecutionStatus::Failed,
                        None,
                        "spawn_failed",
                    )
                    .await?;
                return Err(CoreError::invalid(
                    "agent",
                    format!("cannot start the agent: {err}"),
                ));
            }
        };
        self.adopt_session(&view.task.id, &execution.id, &mode)
            .await;
        self.inner.registry.insert(&view.task.id, session.clone());
        self.watch_agent(&view.task.id, &execution.id, session.clone());
        self.watch_exit(view.task.id.clone(), execution.id.clone(), session.clone());
        prompts::watch(
            h.clone(),
            view.task.id.clone(),
            view.task.agent.provider,
            session,
        );
        tracing::info!(execution_id = %execution.id, "agent started");
        Ok(execution)
    }

    /// Record the exit of the agent once its output is drained; then its
    /// holder (if any) may leave.
    fn watch_exit(&self, task_id: String, execution_id: String, session: Arc<PtySession>) {
        let this = self.clone();
        tokio::spawn(async move {
            let exit = session.wait_exit().await.ok();
            let (status, code) = match &exit {
                Some(s) if s.success() => (ExecutionStatus::Completed, Some(i64::from(s.code))),
                Some(s) => (ExecutionStatus::Failed, Some(i64::from(s.code))),
                None => (ExecutionStatus::Failed, None),
            };
            if this
                .record_exit(
                    &task_id,
                    &execution_id,
                    (status, exit.as_ref()),
                    code,
                    "exited",
                )
                .await
            {
                session.exit_recorded();
            }
        });
    }

    /// Records an agent's exit (and tells its parent's inbox), and its
    /// state (`agent_watch`: with the PTY's exit status when known); false
    /// when it could not be recorded.
    async fn record_exit(
        &self,
        task_id: &str,
        execution_id: &str,
        (status, exit): (ExecutionStatus, Option<&harness_pty::ExitStatus>),
        code: Option<i64>,
        reason: &str,
    ) -> bool {
        // Until it is all written, an action this record plans (a restart
        // at once) waits for it (`exits`).
        let _settling = self.inner.exits.begin(execution_id);
        let harness = &self.inner.harness;
        let finished = harness
            .tasks()
            .finish_execution(task_id, execution_id, status, code, reason)
            .await;
        if finished.is_ok() {
            self.agent_exited(task_id, execution_id, exit, code).await;
        }
        match finished {
            // The execution-exit producer of the parent's inbox.
            Ok(true) => {
                crate::workers::inbox::on_exit(harness, task_id, execution_id, status, code).await;
                true
            }
            Ok(false) => true,
            Err(err) => {
                tracing::error!(error = ?err, task_id, "cannot record the agent's exit");
                false
            }
        }
    }

    /// Stop the task's agent: the execution becomes STOPPED, the process group
    /// is terminated. Its terminal stays, exited, like a failed run's: the
    /// last output is what a person wants to see after Stop.
    /// An agent on another live node is stopped by that node (forwarded).
    pub async fn stop(&self, task_id: &str) -> CoreResult<bool> {
        let view = self.inner.harness.tasks().get_task(task_id).await?;
        if self.live(&view.task.id).is_none()
            && let forward::Elsewhere::Forward(url) = self.elsewhere(&view.task.id).await?
        {
            return self.forward_stop(&url, &view.task.id).await;
        }
        self.stop_here(&view.task.id).await
    }

    /// [`Self::stop`] here: the execution STOPPED, open asks cancelled, the
    /// terminal here (if any) terminated.
    pub async fn stop_here(&self, task_id: &str) -> CoreResult<bool> {
        let h = &self.inner.harness;
        let view = h.tasks().get_task(task_id).await?;
        if let Some(exec) = h.tasks().live_execution(&view.task.id).await? {
            h.tasks()
                .finish_execution(
                    &view.task.id,
                    &exec.id,
                    ExecutionStatus::Stopped,
                    None,
                    "stopped",
                )
                .await?;
        }
        h.asks().cancel_open_asks(&view.task.id).await?;
        h.agents()
            .cancel_agent_actions(&view.task.id, "a person stopped the agent")
            .await?;
        match self.inner.registry.get(&view.task.id) {
            Some(session) if !session.has_exited() => {
                if let Err(err) = session.terminate(Duration::from_secs(3)).await {
                    tracing::warn!(%err, "terminate failed; killing");
                    let _ = session.kill();
                }
                Ok(true)
            }
            // An agent in a holder this build cannot read: ended by signals.
            _ => match self.inner.unreadable.take_task(&view.task.id) {
                Some(found) => Ok(unreadable::end(&found.dir).await),
                None => Ok(false),
            },
        }
    }

    /// The screen of the task's terminal, here or on its agent's node.
    pub async fn screen(&self, task_id: &str) -> CoreResult<ScreenText> {
        let task_id = harness_core::validate::task_id(Some(task_id))?;
        if self.session(&task_id).is_none()
            && let forward::Elsewhere::Forward(url) = self.elsewhere(&task_id).await?
        {
            return self.forward_screen(&url, &task_id).await;
        }
        self.screen_here(&task_id)
    }

    /// The screen of the terminal in this process.
    pub fn screen_here(&self, task_id: &str) -> CoreResult<ScreenText> {
        let task_id = harness_core::validate::task_id(Some(task_id))?;
        self.session(&task_id)
            .map(|s| s.screen_text())
            .ok_or_else(|| CoreError::NotFound("No active terminal session for this task".into()))
    }

    /// The agent's turn ended (Stop hook): a real input boundary.
    pub fn turn_complete(&self, task_id: &str) {
        if let Some(s) = self.live(task_id) {
            s.mark_turn_complete();
        }
    }

    /// Server shutdown: held agents keep running (the next start
    /// re-attaches them), agents in this process's own PTYs are killed.
    pub fn shutdown(&self) {
        self.inner.registry.shutdown();
    }

    /// Shutdown of a node the cluster declared dead: every agent is ended,
    /// held or not (the survivors take its work over). Waits (at most 5 s)
    /// for the exits, so each holder is told it may leave instead of
    /// keeping its exit until the orphan timeout.
    pub async fn shutdown_ending_agents(&self) {
        let registry = &self.inner.registry;
        let sessions: Vec<Arc<PtySession>> = registry
            .task_ids()
            .iter()
            .filter_map(|id| registry.get(id))
            .collect();
        registry.shutdown_with(false);
        let mut exits = tokio::task::JoinSet::new();
        for s in sessions {
            exits.spawn(async move {
                if tokio::time::timeout(Duration::from_secs(5), s.wait_exit())
                    .await
                    .is_ok()
                {
                    s.exit_recorded();
                }
            });
        }
        while exits.join_next().await.is_some() {}
        // The acknowledgements go out through each holder's control queue.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
