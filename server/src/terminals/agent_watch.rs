//! The agent watcher: one truthful state per live agent of this server
//! (the rules are the core's, `harness_core::agent_state`). One loop for
//! the whole server, not a task per agent: every [`WatchConfig::tick`],
//! for each watched execution —
//!
//! * when its terminal printed since the last look (the session's output
//!   generation), or once more after it stopped (the model caught up), the
//!   screen is read by its CLI's recogniser (Claude Code, Codex; a
//!   `command` agent has none), rendering only the lines it reads
//!   ([`recognise`]);
//! * the state machine takes that, the newest hook event, an open ask or
//!   approval (re-read when the task's messages change), and the silence
//!   (no output and no hook for the stall threshold, checked every tick);
//! * a change ([`harness_core::agent_state::is_change`]) is recorded with
//!   what it says (`Agents::record_state_change`), never an unchanged
//!   state.
//!
//! An exit is recorded at once by the exit's own path
//! ([`Terminals::agent_exited`]). Hook events come from where the hooks
//! arrive ([`Terminals::note_hook`]); the newest one is kept in the
//! database when it moves the turn (working, waiting for the person,
//! ended), so a restart knows an agent idle at its prompt. Writes are
//! serialized (one lock), so an exit is never overwritten by a tick that
//! read the screen just before it. Bounded: each tick reads at most the
//! screens that changed; cancelled with the server.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono::Utc;
use harness_core::{
    agent_state::{
        self, AgentState, Cli, ExitStatus, HookEvent, Inputs, Observation, Screen, Seen,
        StateChange, Turn,
    },
    agent_states::STALL_KEY,
    events::HarnessEvent,
    model::AgentStateName,
};
use harness_pty::{PtySession, RowTexts};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{
    Terminals,
    look_cost::{LookCost, WatchCost},
};

/// The watcher's pace and the default stall threshold.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Between two looks (at most 1 s: a usage limit is seen within 2 s).
    pub tick: Duration,
    /// The stall threshold unless the setting (`harness.agentStates`)
    /// says otherwise: `HARNESS_STALL_AFTER_SECS`, else 20 min.
    pub stall_after: Duration,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self {
            tick: Duration::from_secs(1),
            stall_after: agent_state::DEFAULT_STALL_AFTER,
        }
    }
}

impl WatchConfig {
    /// The defaults with `HARNESS_STALL_AFTER_SECS` (whole seconds ≥ 1); a
    /// bad value is an error naming the variable.
    pub fn from_env(stall_after_secs: Option<&str>) -> Result<Self, String> {
        let mut cfg = Self::default();
        if let Some(v) = stall_after_secs.map(str::trim).filter(|v| !v.is_empty()) {
            let secs = crate::config::parse_positive_secs(v)
                .map_err(|e| format!("HARNESS_STALL_AFTER_SECS={e}"))?;
            cfg.stall_after = Duration::from_secs(secs);
        }
        Ok(cfg)
    }
}

/// What the watcher knows of one execution.
struct Watched {
    task_id: String,
    session: Arc<PtySession>,
    /// Read from the task at the first look.
    loaded: Option<Loaded>,
    seen_generation: u64,
    /// Read the screen once more at the next look (the model may have
    /// trailed the output at this one).
    settle: bool,
    /// The last output or hook event.
    last_activity: Instant,
    seen: Seen,
    last_hook: Option<HookEvent>,
    /// Where the kept hook event left the turn (`None`: unknown).
    kept_turn: Option<Turn>,
    open_question: bool,
    question_stale: bool,
    /// The state last recorded.
    state: Option<AgentState>,
    /// The exit was recorded: no more looks.
    ended: bool,
    /// The screen rows the last looks rendered: unchanged ones are not
    /// rendered again.
    rows: RowTexts,
}

struct Loaded {
    cli: Option<Cli>,
    cwd: Option<PathBuf>,
}

/// The watched executions of this server (by execution id).
#[derive(Default)]
pub(crate) struct AgentWatch {
    agents: Mutex<HashMap<String, Watched>>,
    /// Serializes the records (ticks and exits).
    record: tokio::sync::Mutex<()>,
    /// What the looks cost (`/metrics`, the `agent_watch` benchmark).
    cost: LookCost,
}

impl AgentWatch {
    fn agents(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.agents.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `(state name, agents in it)` for every name (`/metrics`): the
    /// executions this server watches, live or exited and still shown.
    pub(crate) fn counts(&self) -> Vec<(&'static str, i64)> {
        let agents = self.agents();
        AgentStateName::ALL
            .iter()
            .map(|&name| {
                let n = agents
                    .values()
                    .filter(|w| w.state.as_ref().is_some_and(|s| s.name() == name))
                    .count();
                (name.as_str(), i64::try_from(n).unwrap_or(i64::MAX))
            })
            .collect()
    }
}

/// What `cli`'s recogniser reads on the session's screen now. The screen is
/// read as lines rendered when the recogniser reads them (the rows around
/// the CLI's input box, not the conversation above), with the terminal
/// model locked for the moment of the look; the same rows as
/// [`PtySession::screen_text`] gives, at a fraction of the cost
/// (`docs/agent-states.md`, "In the server"; the `agent_watch` benchmark).
/// A row unchanged since the agent's last look is taken from `kept` rather
/// than rendered again (a look then reads little of the terminal model,
/// which a second after the last look is cold in the cache).
pub fn recognise(cli: Cli, session: &PtySession, kept: &mut RowTexts) -> Seen {
    session.read_lines_with(kept, |lines| {
        let row = |i: usize| lines.line(i);
        agent_state::recognise(cli, &Screen::lazy(lines.len(), &row))
    })
}

/// The last non-blank lines of a screen (at most the evidence's number):
/// what an exit or a stall shows.
fn tail(session: &PtySession) -> Vec<String> {
    let text = session.screen_text().text;
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| l.replace('\u{a0}', " ").trim_end().to_string())
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.len() > agent_state::MAX_EVIDENCE_LINES {
        lines.drain(..lines.len() - agent_state::MAX_EVIDENCE_LINES);
    }
    lines
}

/// The exit as the state machine's input: a signal by its number (0: the
/// end was reported without one, e.g. the holder was lost); a code of 128 +
/// n is signal n (the isolation launcher reports a killed child so).
fn exit_of(status: Option<&harness_pty::ExitStatus>, code: Option<i64>) -> ExitStatus {
    match status {
        Some(s) => match &s.signal {
            Some(words) => ExitStatus::Signal(agent_state::signal_number(words).unwrap_or(0)),
            None => agent_state::exit_of_code(i32::try_from(s.code).unwrap_or(1)),
        },
        None => agent_state::exit_of_code(code.and_then(|c| i32::try_from(c).ok()).unwrap_or(1)),
    }
}

impl Terminals {
    fn watch(&self) -> &AgentWatch {
        &self.inner.watch
    }

    /// Watch a started or re-attached agent.
    pub(super) fn watch_agent(&self, task_id: &str, execution_id: &str, session: Arc<PtySession>) {
        let mut agents = self.watch().agents();
        // One execution per task: a newer one replaces its predecessor.
        agents.retain(|_, w| w.task_id != task_id || !w.ended);
        agents.insert(
            execution_id.to_string(),
            Watched {
                task_id: task_id.to_string(),
                seen_generation: session.output_generation(),
                session,
                loaded: None,
                settle: true,
                last_activity: Instant::now(),
                seen: Seen {
                    observation: Observation::None,
                    lines: Vec::new(),
                },
                last_hook: None,
                kept_turn: None,
                open_question: false,
                question_stale: true,
                state: None,
                ended: false,
                rows: RowTexts::default(),
            },
        );
    }

    /// The stall threshold in force (the setting, else the configured one).
    pub async fn stall_after(&self) -> harness_core::CoreResult<Duration> {
        self.harness()
            .agents()
            .stall_after(self.inner.config.stall_after)
            .await
    }

    /// `(state name, agents)` of this server's agents, every name.
    pub fn agent_state_counts(&self) -> Vec<(&'static str, i64)> {
        self.watch().counts()
    }

    /// What watching cost since the start: the looks at a screen that
    /// printed (screen lines, recogniser, state), their wall time and their
    /// CPU time ([`super::look_cost`]).
    pub fn watch_cost(&self) -> WatchCost {
        self.watch().cost.read()
    }

    /// A hook event of `execution_id` (or the task's watched execution):
    /// the newest one, activity; kept in the database when it moved the
    /// turn ([`HookEvent::turn`]: working, waiting for the person, ended).
    pub async fn note_hook(&self, task_id: &str, execution_id: Option<&str>, hook: HookEvent) {
        let turn = hook.turn();
        let keep = {
            let mut agents = self.watch().agents();
            let found = match execution_id {
                Some(id) => agents.get_mut(id).map(|w| (id.to_string(), w)),
                None => agents
                    .iter_mut()
                    .find(|(_, w)| w.task_id == task_id && !w.ended)
                    .map(|(id, w)| (id.clone(), w)),
            };
            let Some((id, w)) = found else { return };
            w.last_hook = Some(hook);
            w.last_activity = Instant::now();
            let keep = w.kept_turn != Some(turn);
            w.kept_turn = Some(turn);
            keep.then_some(id)
        };
        if let Some(id) = keep
            && let Err(err) = self.harness().agents().note_hook(&id, hook).await
        {
            tracing::warn!(error = ?err, execution_id = %id, "cannot keep the agent's hook event");
        }
    }

    /// The agent's exit, recorded as its state at once (from the exit's
    /// own path): `status` as the PTY reported it (`None`: found after a
    /// restart, `code` from the holder's record).
    pub(super) async fn agent_exited(
        &self,
        task_id: &str,
        execution_id: &str,
        status: Option<&harness_pty::ExitStatus>,
        code: Option<i64>,
    ) {
        let _one = self.watch().record.lock().await;
        let (previous, lines, cwd) = {
            let mut agents = self.watch().agents();
            match agents.get_mut(execution_id) {
                Some(w) => {
                    w.ended = true;
                    (
                        w.state.clone(),
                        tail(&w.session),
                        w.loaded.as_ref().and_then(|l| l.cwd.clone()),
                    )
                }
                None => (None, Vec::new(), None),
            }
        };
        let previous = match previous {
            Some(p) => Some(p),
            None => self
                .harness()
                .agents()
                .recorded_state(execution_id)
                .await
                .ok()
                .flatten(),
        };
        let exit = exit_of(status, code);
        let state = agent_state::state(&Inputs {
            exit: Some(exit),
            observation: &Observation::None,
            last_hook: None,
            open_question: false,
            silent_secs: 0,
            stall_after: agent_state::DEFAULT_STALL_AFTER,
        });
        if !agent_state::is_change(previous.as_ref(), &state) {
            return;
        }
        let change = StateChange {
            task_id: task_id.to_string(),
            execution_id: execution_id.to_string(),
            previous,
            state: state.clone(),
            lines,
            reset_at: None,
            at: Utc::now(),
        };
        let plan_active = cwd.is_some_and(|d| harness_plan::active_state_root(&d).is_some());
        match self
            .harness()
            .agents()
            .record_state_change(&change, plan_active)
            .await
        {
            Ok(_) => {
                if let Some(w) = self.watch().agents().get_mut(execution_id) {
                    w.state = Some(state);
                }
            }
            Err(err) => {
                tracing::error!(error = ?err, task_id, execution_id, "cannot record the agent's exit state");
            }
        }
    }
}

/// The watcher's loop; ends when `cancel` is cancelled.
pub async fn run(terminals: Terminals, config: WatchConfig, cancel: CancellationToken) {
    let harness = terminals.harness().clone();
    let mut events = harness.subscribe();
    let mut stall_after = load_stall(&terminals, &config).await;
    let mut next = Instant::now() + config.tick;
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep_until(next) => {
                next = Instant::now() + config.tick;
                look(&terminals, stall_after, &cancel).await;
            }
            event = events.recv() => match event {
                Ok(HarnessEvent::SettingChanged { key }) if key == STALL_KEY => {
                    stall_after = load_stall(&terminals, &config).await;
                }
                Ok(HarnessEvent::MessageChanged { task_id, .. }
                    | HarnessEvent::MessageDeleted { task_id, .. }
                    | HarnessEvent::TaskChanged { task_id }) => stale(&terminals, Some(&task_id)),
                Ok(HarnessEvent::Resync) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    stale(&terminals, None);
                    stall_after = load_stall(&terminals, &config).await;
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    events = harness.subscribe();
                }
            },
        }
    }
}

async fn load_stall(terminals: &Terminals, config: &WatchConfig) -> Duration {
    terminals
        .harness()
        .agents()
        .stall_after(config.stall_after)
        .await
        .unwrap_or_else(|err| {
            tracing::warn!(error = ?err, "cannot read the stall threshold; using the default");
            config.stall_after
        })
}

/// The open question of `task_id` (every task: `None`) is read again.
fn stale(terminals: &Terminals, task_id: Option<&str>) {
    for w in terminals.watch().agents().values_mut() {
        if task_id.is_none_or(|t| t == w.task_id) {
            w.question_stale = true;
        }
    }
}

/// One look at every watched execution.
async fn look(terminals: &Terminals, stall_after: Duration, cancel: &CancellationToken) {
    // Executions whose terminal left this server are forgotten.
    let ids: Vec<String> = {
        let mut agents = terminals.watch().agents();
        agents.retain(|_, w| {
            terminals
                .session(&w.task_id)
                .is_some_and(|s| Arc::ptr_eq(&s, &w.session))
        });
        agents
            .iter()
            .filter(|(_, w)| !w.ended && !w.session.has_exited())
            .map(|(id, _)| id.clone())
            .collect()
    };
    for id in ids {
        if cancel.is_cancelled() {
            return;
        }
        if let Err(err) = look_at(terminals, &id, stall_after).await {
            tracing::warn!(error = ?err, execution_id = %id, "the agent watcher's look failed");
        }
    }
}

async fn look_at(
    terminals: &Terminals,
    execution_id: &str,
    stall_after: Duration,
) -> harness_core::CoreResult<()> {
    let h = terminals.harness();
    let (task_id, loaded, question_stale) = {
        let agents = terminals.watch().agents();
        let Some(w) = agents.get(execution_id) else {
            return Ok(());
        };
        (w.task_id.clone(), w.loaded.is_some(), w.question_stale)
    };
    // The first look: the task, what was recorded, the kept hook event.
    let mut first = None;
    if !loaded || question_stale {
        let view = h.tasks().get_task(&task_id).await?;
        let load = if loaded {
            None
        } else {
            let cwd = terminals.working_dir(&view).await.ok();
            let recorded = h.agents().recorded_state(execution_id).await?;
            let hook = h.agents().last_hook(execution_id).await?;
            Some((Cli::of(view.task.agent.provider), cwd, recorded, hook))
        };
        first = Some((view.open_ask, load));
    }
    let now = Instant::now();
    let (state, observation_lines, cwd, previous) = {
        // The look's cost: this block, which holds no `.await`.
        let mut probe = terminals.watch().cost.probe();
        let mut agents = terminals.watch().agents();
        let Some(w) = agents.get_mut(execution_id) else {
            return Ok(());
        };
        if let Some((open_ask, load)) = first {
            w.open_question = open_ask;
            w.question_stale = false;
            if let Some((cli, cwd, recorded, hook)) = load {
                w.loaded = Some(Loaded { cli, cwd });
                w.state = recorded;
                if let Some((hook, _)) = hook {
                    w.last_hook = w.last_hook.or(Some(hook));
                    w.kept_turn = Some(hook.turn());
                }
            }
        }
        let generation = w.session.output_generation();
        let printed = generation != w.seen_generation;
        if printed {
            w.seen_generation = generation;
            w.last_activity = now;
        }
        if printed || w.settle {
            w.settle = printed;
            let cli = w.loaded.as_ref().and_then(|l| l.cli);
            w.seen = match cli {
                Some(cli) => {
                    probe.looked();
                    recognise(cli, &w.session, &mut w.rows)
                }
                None => Seen {
                    observation: Observation::None,
                    lines: Vec::new(),
                },
            };
        }
        let silent = now.saturating_duration_since(w.last_activity).as_secs();
        let state = agent_state::state(&Inputs {
            exit: None,
            observation: &w.seen.observation,
            last_hook: w.last_hook,
            open_question: w.open_question,
            silent_secs: silent,
            stall_after,
        });
        if !agent_state::is_change(w.state.as_ref(), &state) {
            return Ok(());
        }
        let lines = match &state {
            AgentState::Stalled { .. } => tail(&w.session),
            _ => w.seen.lines.clone(),
        };
        (
            state,
            lines,
            w.loaded.as_ref().and_then(|l| l.cwd.clone()),
            w.state.clone(),
        )
    };
    let _one = terminals.watch().record.lock().await;
    let still = terminals
        .watch()
        .agents()
        .get(execution_id)
        .is_some_and(|w| !w.ended && !w.session.has_exited());
    if !still {
        // The exit's path records it.
        return Ok(());
    }
    let at = Utc::now();
    let change = StateChange {
        task_id: task_id.clone(),
        execution_id: execution_id.to_string(),
        previous,
        reset_at: agent_state::reset_at(&state, at),
        state: state.clone(),
        lines: observation_lines,
        at,
    };
    let plan_active = matches!(state, AgentState::Idle)
        && cwd.is_some_and(|d| harness_plan::active_state_root(&d).is_some());
    h.agents().record_state_change(&change, plan_active).await?;
    if let Some(w) = terminals.watch().agents().get_mut(execution_id) {
        w.state = Some(state);
    }
    Ok(())
}
