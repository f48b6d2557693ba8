//! One attempt at a timed automatic action (`harness_core::agent_actions`):
//! what the core's rule says the action does now (`plan::step`, rechecked
//! with the task as it is), performed here — text typed through a keyed
//! delivery (typed at most once, by the node that holds the terminal), a
//! restart through [`Terminals::start`] with the provider session (as the
//! resume after a reboot does), a dialog's key pressed while the dialog
//! still shows. An attempt first waits until the exit it may answer is
//! recorded in full (`exits`). Answers the engine's outcome; the worker
//! records it.

use std::time::Duration;

use harness_core::{
    CoreError,
    agent_actions::{ActionOutcome, AgentAction, Step, delivery_key, plan},
    agent_state::{self, Cli, Observation, Screen},
    model::TaskView,
    work::Outcome,
};

use harness_pty::PtySession;

use super::{StartMode, Terminals};

/// The longest one start may take before the attempt is unverified (the
/// start goes on in its own task: it may still succeed).
const START_MAX: Duration = Duration::from_secs(60);
/// How long a dialog answered with its key may take to close.
const DIALOG_CLOSE: Duration = Duration::from_secs(5);
/// The longest wait for the record of the exit an action answers.
const EXIT_SETTLE_MAX: Duration = Duration::from_secs(30);

fn ended(outcome: Outcome, result: Option<String>) -> ActionOutcome {
    ActionOutcome {
        result,
        ..ActionOutcome::of(outcome)
    }
}

impl Terminals {
    /// Perform `a` once.
    pub async fn perform_action(&self, a: &AgentAction) -> ActionOutcome {
        // The exit it answers (a restart planned by the exit's own record)
        // is recorded in full first: the execution finished, its state,
        // the parent told — then the task is read.
        if !self.exit_settled(&a.execution_id, EXIT_SETTLE_MAX).await {
            return ended(
                Outcome::Retry("the exit it answers is still being recorded".into()),
                None,
            );
        }
        let view = match self.harness().tasks().get_task(&a.task_id).await {
            Ok(view) => view,
            Err(CoreError::NotFound(_)) => {
                return ended(Outcome::GaveUp("the task is gone".into()), None);
            }
            Err(err) => return ended(Outcome::Retry(err.client_message()), None),
        };
        match plan::step(a, &view) {
            Step::Skip(why) => ended(Outcome::GaveUp(why), None),
            Step::Later(why) => ended(Outcome::Retry(why), None),
            Step::Type(text) => self.type_past_dialog(a, &view, &text).await,
            Step::TypeIfStillLimited => match self.still_limited(&view) {
                Some(false) => ended(
                    Outcome::Done,
                    Some("it went on by itself after the reset; nothing typed".into()),
                ),
                _ => self.type_past_dialog(a, &view, plan::CONTINUE).await,
            },
            Step::Key(key) => self.press(a, &view, &key).await,
            Step::Start { session, wake } => self.start_for(a, &view, session, wake).await,
        }
    }

    /// [`Self::type_for`], once no dialog of the CLI holds the keys: a
    /// dialog whose option keeps the task as configured (Codex draws its
    /// rate-limit dialog with its usage-limit cell) is answered first —
    /// where the policy says so —; another one is left to a person, and the
    /// text waits.
    async fn type_past_dialog(
        &self,
        a: &AgentAction,
        view: &TaskView,
        text: &str,
    ) -> ActionOutcome {
        let shown = Cli::of(view.task.agent.provider).zip(self.live(&a.task_id));
        let Some((cli, session)) = shown else {
            return self.type_for(a, text).await;
        };
        let read =
            |s: &PtySession| agent_state::dialog(cli, &Screen::from_text(&s.screen_text().text));
        let Some((title, options)) = read(&session) else {
            return self.type_for(a, text).await;
        };
        let answers = match self.harness().agents().task_recovery_policy(view).await {
            Ok(p) => p.answer_dialogs,
            Err(err) => return ended(Outcome::Retry(err.client_message()), None),
        };
        let Some(key) = plan::keeping_option(&options).filter(|_| answers) else {
            return ended(
                Outcome::Retry(format!("a dialog of the CLI holds its input: {title}")),
                None,
            );
        };
        if let Err(err) = session.write(key.as_bytes()).await {
            return ended(
                Outcome::Retry(format!("terminal write failed: {err}")),
                None,
            );
        }
        let closed = tokio::time::timeout(DIALOG_CLOSE, async {
            while read(&session).is_some() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
        .is_ok();
        if !closed {
            return ended(
                Outcome::Unverified(format!("picked {key} in “{title}”; the dialog stayed")),
                None,
            );
        }
        let mut out = self.type_for(a, text).await;
        out.result = out
            .result
            .map(|r| format!("picked {key} in “{title}”, then {r}"));
        out
    }

    /// Type `text` (and Enter) through the action's keyed delivery: the
    /// delivery worker of the agent's node types it, at most once.
    async fn type_for(&self, a: &AgentAction, text: &str) -> ActionOutcome {
        match self
            .harness()
            .deliveries()
            .enqueue_input(&a.task_id, text, true, &delivery_key(&a.id))
            .await
        {
            Ok((row, _)) => ActionOutcome {
                result: Some(format!("typed “{text}”")),
                delivery_id: Some(row.id),
                ..ActionOutcome::of(Outcome::Done)
            },
            Err(err) => ended(Outcome::Retry(err.client_message()), None),
        }
    }

    /// Whether the agent's screen here still shows its usage limit (`None`:
    /// no screen here to read).
    fn still_limited(&self, view: &TaskView) -> Option<bool> {
        let cli = Cli::of(view.task.agent.provider)?;
        let session = self.live(&view.task.id)?;
        let screen = Screen::from_text(&session.screen_text().text);
        Some(matches!(
            agent_state::observe(cli, &screen),
            Observation::UsageLimited { .. }
        ))
    }

    /// Press `key` in the agent's terminal here while its CLI's dialog
    /// still shows it as the option that keeps the task as configured.
    async fn press(&self, a: &AgentAction, view: &TaskView, key: &str) -> ActionOutcome {
        let Some(session) = self.live(&a.task_id) else {
            return ended(
                Outcome::GaveUp("no live terminal of its agent on this node".into()),
                None,
            );
        };
        let Some(cli) = Cli::of(view.task.agent.provider) else {
            return ended(
                Outcome::GaveUp("not a Claude Code or Codex agent".into()),
                None,
            );
        };
        let screen = Screen::from_text(&session.screen_text().text);
        let Observation::NativeDialog { title, options } = agent_state::observe(cli, &screen)
        else {
            return ended(
                Outcome::GaveUp("the dialog is no longer shown".into()),
                None,
            );
        };
        if plan::keeping_option(&options).as_deref() != Some(key) {
            return ended(
                Outcome::GaveUp(format!("another dialog is shown: {title}")),
                None,
            );
        }
        let label = key
            .parse::<usize>()
            .ok()
            .and_then(|n| options.get(n.checked_sub(1)?))
            .cloned()
            .unwrap_or_default();
        // A key, not pasted text: the dialog picks the option by its number.
        match session.write(key.as_bytes()).await {
            Ok(()) => ended(
                Outcome::Done,
                Some(format!("picked {key}. {label} in “{title}”")),
            ),
            Err(err) => ended(
                Outcome::Retry(format!("terminal write failed: {err}")),
                None,
            ),
        }
    }

    /// Start the agent again — with its provider session (never a fresh
    /// one that would lose its conversation), or a `command` agent from its
    /// start — then type "continue" through the action's keyed delivery
    /// (`wake`).
    async fn start_for(
        &self,
        a: &AgentAction,
        view: &TaskView,
        session: bool,
        wake: bool,
    ) -> ActionOutcome {
        let Some(execution) = view.execution.as_ref() else {
            return ended(Outcome::GaveUp("the agent never ran".into()), None);
        };
        let mode = if session {
            match self.resume_mode(view, execution).await {
                mode @ StartMode::Resume { .. } => mode,
                StartMode::Fresh { .. } => {
                    return ended(
                        Outcome::GaveUp(
                            "no provider session known: a fresh start would lose its conversation"
                                .into(),
                        ),
                        None,
                    );
                }
            }
        } else {
            StartMode::Fresh { prompt: None }
        };
        let how = match &mode {
            StartMode::Resume { session_id } => format!("resumed its session {session_id}"),
            StartMode::Fresh { .. } => "restarted it from its start".to_string(),
        };
        let started = tokio::time::timeout(START_MAX, self.start(&view.task.id, mode)).await;
        match started {
            Ok(Ok(new)) => {
                let mut out = ActionOutcome {
                    result: Some(format!("{how} (execution {})", new.id)),
                    started_execution_id: Some(new.id.clone()),
                    ..ActionOutcome::of(Outcome::Done)
                };
                if wake {
                    // Typed once the restarted agent reads keys (as a
                    // delivery's own restart waits): text typed into a
                    // Claude Code still starting sits unsent in its box.
                    if let Some(session) = self.live(&view.task.id) {
                        let _ready = self
                            .wait_until_ready(
                                &view.task.id,
                                &new.id,
                                view.task.agent.provider,
                                &session,
                            )
                            .await;
                    }
                    match self
                        .harness()
                        .deliveries()
                        .enqueue_input(&a.task_id, plan::CONTINUE, true, &delivery_key(&a.id))
                        .await
                    {
                        Ok((row, _)) => {
                            out.delivery_id = Some(row.id);
                            out.result =
                                Some(format!("{how} and typed “continue” (execution {})", new.id));
                        }
                        Err(err) => {
                            tracing::warn!(%err, task_id = %a.task_id, "resumed, but “continue” could not be queued");
                        }
                    }
                }
                out
            }
            // A start that lost to another one (a person, a reply's resume).
            Ok(Err(err)) if self.live(&view.task.id).is_some() => ended(
                Outcome::GaveUp(format!("its agent runs again already ({err})")),
                None,
            ),
            Ok(Err(err)) => ended(Outcome::Retry(err.client_message()), None),
            Err(_) => ended(
                Outcome::Unverified(format!(
                    "the start did not end within {} s",
                    START_MAX.as_secs()
                )),
                None,
            ),
        }
    }
}
