//! Agents that outlive the server: each agent's PTY is owned by a holder
//! process (`harness hold …`, crate `harness-holder`), started from the
//! private copy of this executable, in its own session, with its socket in
//! `<data-dir>/holders/<execution>/` (which agents cannot see).
//!
//! * [`Terminals::spawn_session`] starts an agent in a new holder and
//!   attaches to it (or, with holders off, in a PTY of this process).
//! * [`Terminals::reattach_holders`] runs at start, before executions left
//!   live are marked interrupted: every live holder of this node is
//!   re-attached (screen redrawn from the holder's model, parked asks
//!   parked again, exit watched); an exit that happened while the server
//!   was down is read from the holder (or its `exit.json`) and recorded.
//!   What no holder holds any more is interrupted by the caller.

use std::{
    ffi::OsString,
    os::unix::fs::DirBuilderExt,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use harness_core::model::{Execution, ExecutionStatus};
use harness_holder::{HoldConfig, HolderError, read_exit_file, session::exit_status};
use harness_pty::{PtySession, SessionOptions, SpawnSpec};

use super::Terminals;

/// This build's name in the holder protocol's hello.
pub const BUILD: &str = concat!("harness ", env!("CARGO_PKG_VERSION"));
/// The file naming a holder's task, next to its socket.
const TASK_FILE: &str = "task";
/// The server URL the held agent was given (`TOWER_API_URL`).
const URL_FILE: &str = "server-url";
/// Longest a new holder may take to listen.
const SPAWN_WAIT: Duration = Duration::from_secs(10);
/// Holders re-attached at once at start.
const ATTACH_CONCURRENCY: usize = 64;
/// The subcommand that runs a holder.
pub const SUBCOMMAND: &str = "hold";

/// Whether agents are held, and for how long a holder waits for its server.
#[derive(Debug, Clone)]
pub struct HolderSettings {
    /// `<data-dir>/holders`: one directory per execution.
    pub dir: PathBuf,
    /// Time without a server after which a holder ends its agent.
    pub orphan_timeout: Duration,
}

/// What [`Terminals::reattach_holders`] found.
#[derive(Debug, Default, Clone)]
pub struct Reattached {
    /// Executions a live holder holds (not to be interrupted).
    pub held: Vec<String>,
    /// Holders re-attached.
    pub attached: usize,
    /// Agents that exited while the server was down (exit recorded).
    pub exited: usize,
    /// Holders whose protocol this build cannot read (left running).
    pub incompatible: usize,
    /// Protocol versions of those holders.
    pub incompatible_protocols: std::collections::BTreeSet<u16>,
    /// Holders of executions that are no longer live (their agents ended).
    pub ended: usize,
}

enum Found {
    Held(String),
    /// Its execution could not be read: left alone, not interrupted.
    Unread(String),
    Exited,
    /// Its holder speaks this protocol version, which this build cannot read.
    Incompatible(String, u16),
    Ended,
    Gone,
}

fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

impl Terminals {
    /// Starts `spec` for `execution_id`: in a new holder when holders are
    /// on, else in a PTY of this process.
    pub(super) async fn spawn_session(
        &self,
        spec: SpawnSpec,
        task_id: &str,
        execution_id: &str,
    ) -> Result<Arc<PtySession>, String> {
        let Some(holders) = &self.inner.config.holders else {
            return PtySession::spawn(spec).await.map_err(|e| e.to_string());
        };
        let dir = holders.dir.join(execution_id);
        private_dir(&dir)
            .and_then(|()| super::providers::write_private(&dir.join(TASK_FILE), task_id))
            .and_then(|_| {
                super::providers::write_private(&dir.join(URL_FILE), &self.inner.config.base_url)
            })
            .map_err(|e| format!("cannot prepare the holder directory: {e}"))?;
        let program = spec.argv.first().cloned().unwrap_or_default();
        let fallback = spec.clone();
        let mut cfg = HoldConfig::new(&dir, spec.argv.into_iter().map(OsString::from).collect());
        cfg.cwd = Some(spec.cwd);
        cfg.rows = spec.rows;
        cfg.cols = spec.cols;
        cfg.orphan_timeout = holders.orphan_timeout;
        let env = spec
            .env
            .into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        // The small holder binary when this build embeds one, else this
        // executable's copy; `hold` first either way.
        let binary =
            (self.inner.config.holder_bin.as_ref()).unwrap_or(&self.inner.config.harness_bin);
        let socket = match harness_holder::spawn_holder(
            binary,
            &[OsString::from(SUBCOMMAND)],
            &cfg,
            env,
            SPAWN_WAIT,
        )
        .await
        {
            Ok(socket) => socket,
            // An agent that runs beats one that cannot start: in this
            // process's own PTY (it then dies with the server), said loudly.
            Err(err) => {
                tracing::error!(
                    error = %err,
                    task_id,
                    "the agent's holder did not start: the agent runs inside the server and will not survive its restart"
                );
                let _ = std::fs::remove_dir_all(&dir);
                return PtySession::spawn(fallback).await.map_err(|e| e.to_string());
            }
        };
        // The holder runs the agent now: never a second one beside it.
        harness_holder::attach_session(&socket, BUILD, &program, SessionOptions::default())
            .await
            .map(|a| a.session)
            .map_err(|e| format!("the agent's holder started but cannot be reached: {e}"))
    }

    /// At start: finds this node's holders and re-attaches every one whose
    /// execution is still live (see the module docs).
    pub async fn reattach_holders(&self) -> Reattached {
        let mut out = Reattached::default();
        let Some(holders) = &self.inner.config.holders else {
            return out;
        };
        let dirs: Vec<PathBuf> = match std::fs::read_dir(&holders.dir) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
            Err(e) => {
                tracing::error!(error = %e, dir = %holders.dir.display(), "cannot read the holders directory");
                return out;
            }
        };
        let mut set = tokio::task::JoinSet::new();
        let mut dirs = dirs.into_iter();
        loop {
            while set.len() < ATTACH_CONCURRENCY {
                let Some(dir) = dirs.next() else { break };
                let this = self.clone();
                set.spawn(async move { this.reattach_one(&dir).await });
            }
            let Some(done) = set.join_next().await else {
                break;
            };
            match done {
                Ok(Found::Held(id)) => {
                    out.attached += 1;
                    out.held.push(id);
                }
                Ok(Found::Unread(id)) => out.held.push(id),
                Ok(Found::Incompatible(id, protocol)) => {
                    out.incompatible += 1;
                    out.incompatible_protocols.insert(protocol);
                    out.held.push(id);
                }
                Ok(Found::Exited) => out.exited += 1,
                Ok(Found::Ended) => out.ended += 1,
                Ok(Found::Gone) => {}
                Err(e) => tracing::error!(error = %e, "a holder re-attach task failed"),
            }
        }
        out
    }

    async fn reattach_one(&self, dir: &Path) -> Found {
        let Some(execution_id) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            return Found::Gone;
        };
        let task_id = std::fs::read_to_string(dir.join(TASK_FILE))
            .map(|t| t.trim().to_owned())
            .unwrap_or_default();
        let live = match self.inner.harness.tasks().live_execution(&task_id).await {
            Ok(Some(e)) if e.id == execution_id && !task_id.is_empty() => Some(e),
            Ok(_) => None,
            Err(err) => {
                // Unknown state: leave the holder alone, it is retried at the next start.
                tracing::error!(error = ?err, %execution_id, "cannot read a held execution");
                return Found::Unread(execution_id);
            }
        };
        let socket = dir.join(harness_holder::hold::SOCKET_NAME);
        if socket.exists() {
            let program = live.as_ref().map_or("agent", |_| "held agent");
            match harness_holder::attach_session(&socket, BUILD, program, SessionOptions::default())
                .await
            {
                Ok(attached) => {
                    // Read again (by this build): no longer unreadable.
                    let _ = std::fs::remove_file(dir.join(super::unreadable::MARKER));
                    let Some(execution) = live else {
                        // Its execution ended while nobody held it: end the agent too.
                        tracing::warn!(%execution_id, "a holder of an ended execution: its agent is ended");
                        let session = attached.session;
                        let _ = session.kill();
                        tokio::spawn(async move {
                            if tokio::time::timeout(Duration::from_secs(15), session.wait_exit())
                                .await
                                .is_ok()
                            {
                                session.exit_recorded();
                            }
                        });
                        return Found::Ended;
                    };
                    tracing::info!(
                        %execution_id,
                        task_id,
                        pid = attached.info.child_pid,
                        holder_build = attached.info.build,
                        "re-attached to a held agent"
                    );
                    let url = std::fs::read_to_string(dir.join(URL_FILE)).unwrap_or_default();
                    if !url.is_empty() && url != self.inner.config.base_url {
                        tracing::error!(
                            %execution_id,
                            was = %url,
                            now = %self.inner.config.base_url,
                            "this held agent reaches Harness at its old address: its hooks and MCP calls fail until Harness listens there again (keep --bind across restarts)"
                        );
                    }
                    self.adopt_held(&task_id, &execution, attached.session);
                    return Found::Held(execution_id);
                }
                Err(HolderError::Incompatible { holder_version, .. }) => {
                    return self
                        .keep_unreadable(
                            dir,
                            &task_id,
                            execution_id,
                            live.is_some(),
                            holder_version,
                        )
                        .await;
                }
                // A socket nobody listens on: its holder is gone.
                Err(err) => {
                    tracing::warn!(%execution_id, error = %err, "a holder socket without a holder");
                }
            }
        }
        let record = read_exit_file(dir).ok().flatten();
        let found = match (live, record) {
            (Some(execution), Some(record)) => {
                let status = exit_status(&record.status);
                let (state, code) = if status.success() {
                    (ExecutionStatus::Completed, Some(i64::from(status.code)))
                } else {
                    (ExecutionStatus::Failed, Some(i64::from(status.code)))
                };
                self.record_exit(
                    &task_id,
                    &execution.id,
                    (state, Some(&status)),
                    code,
                    &record.reason,
                )
                .await;
                Found::Exited
            }
            _ => Found::Gone,
        };
        if let Err(e) = std::fs::remove_dir_all(dir) {
            tracing::warn!(error = %e, dir = %dir.display(), "cannot remove a finished holder directory");
        }
        found
    }

    /// A holder speaking `protocol`, which this build cannot read: kept
    /// running with its execution live (`super::unreadable`), or, when its
    /// execution already ended, ended by signals.
    async fn keep_unreadable(
        &self,
        dir: &Path,
        task_id: &str,
        execution_id: String,
        live: bool,
        protocol: u16,
    ) -> Found {
        let socket = dir.join(harness_holder::hold::SOCKET_NAME);
        let facts = super::unreadable::facts(&socket, protocol).await;
        if !live {
            tracing::warn!(%execution_id, protocol, "a holder this build cannot read, of an ended execution: ended by signals");
            super::unreadable::end(dir).await;
            return Found::Ended;
        }
        super::unreadable::write_marker(dir, task_id, &execution_id, &facts);
        tracing::error!(
            %execution_id,
            task_id,
            holder_pid = facts.holder_pid,
            protocol,
            "{}",
            facts.note
        );
        self.inner.unreadable.insert(
            &execution_id,
            super::unreadable::Unreadable {
                task_id: task_id.to_owned(),
                dir: dir.to_path_buf(),
                facts,
            },
        );
        Found::Incompatible(execution_id, protocol)
    }

    /// A re-attached agent is this server's again: registered (parked when
    /// it waits for an answer), its exit and prompts watched.
    fn adopt_held(&self, task_id: &str, execution: &Execution, session: Arc<PtySession>) {
        self.inner.registry.insert(task_id, session.clone());
        self.watch_agent(task_id, &execution.id, session.clone());
        if execution.status == ExecutionStatus::Paused {
            self.inner.registry.park(task_id);
        }
        self.watch_exit(task_id.to_owned(), execution.id.clone(), session.clone());
        let harness = self.inner.harness.clone();
        let task_id = task_id.to_owned();
        tokio::spawn(async move {
            if let Ok(view) = harness.tasks().get_task(&task_id).await {
                super::prompts::watch(harness, task_id, view.task.agent.provider, session);
            }
        });
    }
}
