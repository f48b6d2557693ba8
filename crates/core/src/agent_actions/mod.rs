//! Recovered on its own, within a policy: what Harness does by itself when
//! an unattended agent stops — a usage limit is parked until its reset and
//! woken with "continue" (resumed with its session when its process has
//! exited), an API error loop gets "continue" after a backoff, a crash is
//! restarted with its session, a stalled agent may get a nudge, a CLI's own
//! dialog is answered as the task is configured — each at most N times per
//! hour, then the person is told.
//!
//! The watcher reports every change of a live agent's state
//! ([`StateChange`]); [`Agents::plan_recovery`] decides what it calls for
//! ([`plan::decide`], with the policy of [`policy`]) and writes the action
//! as a durable row (`agent_actions`, one per execution and state episode:
//! idempotent across the watcher's repeats, restarts and nodes). The row
//! is work on the engine (`crate::work`, kind `AgentActions`): the action
//! worker (`server/src/workers/agent_actions.rs`) claims it when it is due
//! and performs [`plan::step`] — text is typed through a keyed delivery
//! (at most once), a restart goes through the terminals' start —; a crash
//! mid-attempt leaves it UNVERIFIED, never done twice. A person acting
//! first (a reply, input, Stop, Start/Resume/Restart, a chat continuation)
//! cancels the task's due actions ([`Agents::cancel_agent_actions`]).
//! Never anything automatic for an attended task.

pub mod plan;
pub mod policy;

use chrono::{DateTime, Utc};

pub use plan::{Decision, Facts, Step, Tell};
pub use policy::{RecoveryOverride, RecoveryPolicy};

pub use crate::store::{
    ActionKind, ActionReason, ActionSettle, ActionState, ActionTurn, AgentAction, NewAction,
};
use crate::{
    CoreError, CoreResult, Harness,
    agent_state::StateChange,
    events::HarnessEvent,
    ids,
    ladder::Lang,
    model::TaskView,
    validate,
    work::{AGENT_ACTIONS, Kind, Outcome},
};

/// The agents service (`Harness::agents`): what Harness does by itself
/// for an agent — the recovery actions, their policy and their rows
/// (here), an agent's recorded states, the pushes that tell them and a
/// person's reply acting on the agent (`crate::agent_states`), and the
/// resumes after a reboot (`crate::reboot`).
#[derive(Clone, Copy)]
pub struct Agents<'h> {
    pub(crate) h: &'h Harness,
}

/// What [`Agents::plan_recovery`] decided for one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPlan {
    /// What to tell the person (the watcher's push carries it out).
    pub tell: Tell,
    /// The action planned for the change (the existing one when the change
    /// was planned before).
    pub action: Option<AgentAction>,
    /// Whether this call wrote the action (false: planned by an earlier
    /// call for the same state episode — already told).
    pub created: bool,
    /// Due actions of the execution this change cancelled.
    pub cancelled: usize,
}

/// How one attempt at an action ended: the engine's outcome and what was
/// done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionOutcome {
    pub outcome: Outcome,
    pub result: Option<String>,
    pub delivery_id: Option<String>,
    pub started_execution_id: Option<String>,
}

impl ActionOutcome {
    pub fn of(outcome: Outcome) -> Self {
        Self {
            outcome,
            result: None,
            delivery_id: None,
            started_execution_id: None,
        }
    }
}

/// What the store records for `row`'s attempt that ended with `o` at `now`.
pub fn settle_of(row: &AgentAction, o: &ActionOutcome, now: DateTime<Utc>) -> ActionSettle {
    // `attempts` already counts this attempt (counted at the claim).
    let after = AGENT_ACTIONS.after(&o.outcome, row.attempts, AGENT_ACTIONS.retry(), now);
    ActionSettle {
        id: row.id.clone(),
        state: ActionState::parse(after.state).unwrap_or(ActionState::GaveUp),
        next_attempt_at: after.next_attempt_at,
        last_error: after.error,
        result: o.result.clone(),
        delivery_id: o.delivery_id.clone(),
        started_execution_id: o.started_execution_id.clone(),
    }
}

/// The dedup key of the `n`-th action of `reason` for an execution.
pub fn dedup_key(execution_id: &str, reason: ActionReason, n: u32) -> String {
    format!("agent-action:{execution_id}:{}:{n}", reason.as_str())
}

/// The idempotency key of the delivery that types an action's text.
pub fn delivery_key(action_id: &str) -> String {
    format!("agent-action:{action_id}")
}

/// The most actions a task's listing shows.
pub const MAX_LISTED: u32 = 100;

impl Agents<'_> {
    /// What a change of an agent's state calls for (the watcher calls it
    /// after every change, and again after a restart with `previous:
    /// None`): the action written once per execution and state episode —
    /// a repeat, on any node, finds the row the first call wrote —, the
    /// execution's due actions that no longer apply cancelled, and what the
    /// person is to be told.
    pub async fn plan_recovery(&self, change: &StateChange) -> CoreResult<RecoveryPlan> {
        let view = self.h.tasks().get_task(&change.task_id).await?;
        let policy = self.task_recovery_policy(&view).await?;
        let store = self.h.store();
        let open = store.open_actions(&change.execution_id).await?;
        let hour_ago = change.at - chrono::Duration::hours(1);
        let api_continues = store
            .actions_done_since(&view.task.id, ActionReason::ApiErrors, hour_ago)
            .await?;
        let restarts = store
            .actions_done_since(&view.task.id, ActionReason::Crash, hour_ago)
            .await?;
        let decision = plan::decide(&Facts {
            change,
            view: &view,
            policy: &policy,
            open: &open,
            api_continues,
            restarts,
        });
        let mut out = RecoveryPlan {
            tell: decision.tell,
            action: None,
            created: false,
            cancelled: 0,
        };
        if let Some(why) = decision.cancel {
            let cancelled = store
                .cancel_actions(&view.task.id, Some(&change.execution_id), why, Utc::now())
                .await?;
            out.cancelled = cancelled.len();
            for a in &cancelled {
                self.action_changed(a);
            }
        }
        let Some(planned) = decision.planned else {
            return Ok(out);
        };
        // The episode's action is already planned (a repeat of the change).
        if let Some(existing) = open.iter().find(|a| a.reason == planned.reason) {
            out.tell = tell_of(out.tell, existing);
            out.action = Some(existing.clone());
            return Ok(out);
        }
        let n = store
            .closed_action_count(&change.execution_id, planned.reason)
            .await?;
        let node_id = if planned.on_its_node {
            view.execution.as_ref().and_then(|e| e.node_id.clone())
        } else {
            None
        };
        let new = NewAction {
            id: ids::new_id(),
            task_id: view.task.id.clone(),
            execution_id: change.execution_id.clone(),
            node_id,
            action: planned.action,
            reason: planned.reason,
            text: planned.text,
            due_at: planned.due_at,
            dedup_key: dedup_key(&change.execution_id, planned.reason, n),
            now: Utc::now(),
        };
        let (row, created) = store
            .plan_action(new, Some("replaced by the agent's newer state"))
            .await?;
        if created {
            tracing::info!(task_id = %row.task_id, action = row.action.as_str(),
                reason = row.reason.as_str(), due_at = %row.due_at, "automatic action planned");
            self.action_changed(&row);
            self.h.wake(Kind::AgentActions);
        }
        out.tell = tell_of(out.tell, &row);
        out.action = Some(row);
        out.created = created;
        Ok(out)
    }

    /// A person acted on the task first (a reply, input, Stop, a start):
    /// its due automatic actions are cancelled with `why`. Returns how many.
    pub async fn cancel_agent_actions(&self, task_id: &str, why: &str) -> CoreResult<usize> {
        let task_id = validate::task_id(Some(task_id))?;
        let cancelled = self
            .h
            .store()
            .cancel_actions(&task_id, None, why, Utc::now())
            .await?;
        for a in &cancelled {
            tracing::info!(task_id = %a.task_id, action_id = %a.id, why, "automatic action cancelled");
            self.action_changed(a);
        }
        Ok(cancelled.len())
    }

    /// One turn of the action worker of node `node`: record the attempts
    /// that ended, give back `released`, lease up to `limit` due rows for
    /// `lease` — one transaction.
    pub async fn settle_and_claim_actions(
        &self,
        owner: &str,
        node: &str,
        done: Vec<(AgentAction, ActionOutcome)>,
        released: Vec<String>,
        lease: chrono::Duration,
        limit: u32,
    ) -> CoreResult<Vec<AgentAction>> {
        let now = Utc::now();
        let settles: Vec<ActionSettle> = done.iter().map(|(r, o)| settle_of(r, o, now)).collect();
        let claimed = self
            .h
            .store()
            .settle_and_claim_actions(ActionTurn {
                owner: owner.to_string(),
                node: node.to_string(),
                settles: settles.clone(),
                released,
                lease_until: now.checked_add_signed(lease).unwrap_or(now),
                now,
                limit,
            })
            .await?;
        for ((row, _), settle) in done.iter().zip(&settles) {
            tracing::info!(task_id = %row.task_id, action_id = %row.id,
                state = settle.state.as_str(), error = ?settle.last_error, "automatic action ended");
            self.h.publish(HarnessEvent::AgentActionChanged {
                id: row.id.clone(),
                task_id: row.task_id.clone(),
                state: settle.state,
            });
        }
        for row in &claimed {
            self.action_changed(row);
        }
        for ((row, _), settle) in done.iter().zip(&settles) {
            if matches!(settle.state, ActionState::GaveUp | ActionState::Unverified)
                && let Err(err) = self.tell_action_failed(row, settle).await
            {
                tracing::warn!(task_id = %row.task_id, action_id = %row.id, %err,
                    "the person could not be told of a failed automatic action");
            }
        }
        Ok(claimed)
    }

    /// An automatic action that gave up (or whose effect is unknown after a
    /// crash mid-attempt) is the person's now: one push per action, with
    /// what it tried and why it failed, and the replies of a state push.
    async fn tell_action_failed(&self, row: &AgentAction, settle: &ActionSettle) -> CoreResult<()> {
        let view = self.h.tasks().get_task(&row.task_id).await?;
        if !view.task.unattended {
            return Ok(());
        }
        let channel = self.h.approvals().person_channel(&view.task).await;
        let text = failed_text_in(channel.lang(&view.task.id), row, settle);
        let message = crate::outbox::compose_body(Some(&view.task.title), &text, &view.task.id);
        let key = format!("agent-action-failed:{}", row.id);
        let Some(push) = channel.push(&view.task, key, message, false)? else {
            return Ok(());
        };
        let written = self
            .h
            .store()
            .write_agent_state(crate::store::AgentStateWrite {
                record: None,
                push: Some(push),
                parent_event: None,
            })
            .await
            .map_err(crate::messaging::task_missing)?;
        if let Some(out) = &written.push {
            self.h.outbox().outbound_changed(out);
            self.h.outbox().wake_outbox();
        }
        Ok(())
    }

    /// A task's automatic actions, newest first (its timeline).
    pub async fn agent_actions(&self, task_id: &str) -> CoreResult<Vec<AgentAction>> {
        let task_id = validate::task_id(Some(task_id))?;
        Ok(self.h.store().task_actions(&task_id, MAX_LISTED).await?)
    }

    /// One action (404 when there is none).
    pub async fn agent_action(&self, id: &str) -> CoreResult<AgentAction> {
        let id = validate::cuid("id", id.trim())?;
        self.h
            .store()
            .get_action(&id)
            .await?
            .ok_or_else(|| CoreError::NotFound("automatic action not found".into()))
    }

    /// Publish a change of an action (after its commit).
    pub fn action_changed(&self, a: &AgentAction) {
        self.h.publish(HarnessEvent::AgentActionChanged {
            id: a.id.clone(),
            task_id: a.task_id.clone(),
            state: a.state,
        });
    }

    /// The global policy: the stored one, else the defaults.
    pub async fn recovery_policy(&self) -> CoreResult<RecoveryPolicy> {
        Ok(self
            .stored_recovery(policy::GLOBAL_KEY)
            .await?
            .map(|o| RecoveryPolicy::default().with(&o))
            .unwrap_or_default())
    }

    /// Store the global policy (every value; absent ones are the
    /// defaults).
    pub async fn set_recovery_policy(&self, o: RecoveryOverride) -> CoreResult<RecoveryPolicy> {
        policy::check(&o)?;
        let whole = RecoveryPolicy::default().with(&o);
        self.put_recovery(policy::GLOBAL_KEY, Some(&whole.as_override()))
            .await?;
        Ok(whole)
    }

    /// A project's override (none stored: `None`).
    pub async fn project_recovery(&self, project_id: &str) -> CoreResult<Option<RecoveryOverride>> {
        let project = self.h.tasks().project(project_id).await?;
        self.stored_recovery(&policy::project_key(&project.id))
            .await
    }

    /// Store a project's override (`None`: the global policy applies).
    pub async fn set_project_recovery(
        &self,
        project_id: &str,
        o: Option<RecoveryOverride>,
    ) -> CoreResult<Option<RecoveryOverride>> {
        let project = self.h.tasks().project(project_id).await?;
        if let Some(o) = &o {
            policy::check(o)?;
        }
        self.put_recovery(&policy::project_key(&project.id), o.as_ref())
            .await?;
        Ok(o)
    }

    /// The policy that applies to a task: global ← project ← task.
    pub async fn task_recovery_policy(&self, view: &TaskView) -> CoreResult<RecoveryPolicy> {
        let global = self.recovery_policy().await?;
        let project = match &view.task.project_id {
            Some(id) => self.stored_recovery(&policy::project_key(id)).await?,
            None => None,
        };
        Ok(policy::effective(
            Some(&global),
            project.as_ref(),
            view.task.agent.recovery.as_ref(),
        ))
    }

    async fn stored_recovery(&self, key: &str) -> CoreResult<Option<RecoveryOverride>> {
        let Some(value) = self
            .h
            .store()
            .get_setting(key)
            .await?
            .filter(|v| !v.is_null())
        else {
            return Ok(None);
        };
        match serde_json::from_value::<RecoveryOverride>(value) {
            Ok(o) => Ok(Some(o)),
            Err(err) => {
                // Unreadable: as if none were stored (the defaults hold).
                tracing::warn!(%err, key, "stored recovery settings are unreadable; ignored");
                Ok(None)
            }
        }
    }

    async fn put_recovery(&self, key: &str, o: Option<&RecoveryOverride>) -> CoreResult<()> {
        let value = match o {
            Some(o) => {
                serde_json::to_value(o).map_err(|e| CoreError::invalid_body(e.to_string()))?
            }
            None => serde_json::Value::Null,
        };
        self.h.store().put_setting(key, &value, Utc::now()).await?;
        self.h
            .publish(HarnessEvent::SettingChanged { key: key.into() });
        Ok(())
    }
}

/// The push of an automatic action that failed, in English.
pub fn failed_text(row: &AgentAction, settle: &ActionSettle) -> String {
    failed_text_in(Lang::En, row, settle)
}

/// [`failed_text`] in `lang` (the notify target's language); the error is
/// quoted as recorded.
pub fn failed_text_in(lang: Lang, row: &AgentAction, settle: &ActionSettle) -> String {
    let unknown = settle.state == ActionState::Unverified;
    let mut text = match lang {
        Lang::En => format!(
            "[Agent recovery failed] Harness's automatic {} of this task's agent (after: {}) {}.",
            row.action.as_str().replace('_', " "),
            row.reason.as_str().replace('_', " "),
            if unknown {
                "may or may not have happened (Harness stopped in the middle of it)"
            } else {
                "did not work"
            }
        ),
        Lang::Zh => format!(
            "[智能体恢复失败] Harness 对这个任务的智能体的自动{}（起因：{}）{}。",
            action_zh(row.action),
            reason_zh(row.reason),
            if unknown {
                "可能已经执行，也可能没有（Harness 在执行中途停止了）"
            } else {
                "没有成功"
            }
        ),
    };
    if let Some(err) = settle
        .last_error
        .as_deref()
        .filter(|e| !e.trim().is_empty())
    {
        text.push_str(match lang {
            Lang::En => "\n\nWhy: ",
            Lang::Zh => "\n\n原因：",
        });
        text.push_str(err.trim());
    }
    text.push_str("\n\n");
    text.push_str(crate::agent_state::told::replies(lang));
    text
}

fn action_zh(action: ActionKind) -> &'static str {
    match action {
        ActionKind::Continue => "继续",
        ActionKind::Resume => "恢复",
        ActionKind::Restart => "重启",
        ActionKind::Nudge => "提醒",
        ActionKind::AnswerDialog => "回答对话框",
    }
}

fn reason_zh(reason: ActionReason) -> &'static str {
    match reason {
        ActionReason::UsageLimit => "用量限制",
        ActionReason::UsageLimitSelfWait => "用量限制（CLI 自行等待）",
        ActionReason::ApiErrors => "API 错误",
        ActionReason::Crash => "崩溃",
        ActionReason::Stalled => "停滞",
        ActionReason::Dialog => "对话框",
    }
}

/// The tell of a decision whose action is `row` (a repeat tells the time
/// the first call planned).
fn tell_of(tell: Tell, row: &AgentAction) -> Tell {
    match tell {
        Tell::WillResumeAt(_) => Tell::WillResumeAt(row.due_at),
        Tell::ContinuesByItself { cli, reset, .. } => Tell::ContinuesByItself {
            cli,
            reset,
            check: row.due_at,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_has_its_state_and_the_cap_gives_up() {
        let now = Utc::now();
        let mut row = AgentAction {
            id: "a".into(),
            task_id: "t".into(),
            execution_id: "e".into(),
            node_id: None,
            action: ActionKind::Continue,
            reason: ActionReason::UsageLimit,
            text: None,
            due_at: now,
            dedup_key: dedup_key("e", ActionReason::UsageLimit, 0),
            state: ActionState::Running,
            attempts: 1,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            last_error: None,
            result: None,
            delivery_id: None,
            started_execution_id: None,
            created_at: now,
            updated_at: now,
            done_at: None,
        };
        assert_eq!(row.dedup_key, "agent-action:e:usage_limit:0");
        let o = |outcome| ActionOutcome::of(outcome);
        assert_eq!(
            settle_of(&row, &o(Outcome::Done), now).state,
            ActionState::Done
        );
        let failed = settle_of(&row, &o(Outcome::Retry("x".into())), now);
        assert_eq!(failed.state, ActionState::Failed);
        assert_eq!(
            failed.next_attempt_at.map(|t| (t - now).num_seconds()),
            Some(2)
        );
        assert_eq!(
            settle_of(&row, &o(Outcome::Unverified("x".into())), now).state,
            ActionState::Unverified
        );
        assert_eq!(
            settle_of(&row, &o(Outcome::GaveUp("x".into())), now).state,
            ActionState::GaveUp
        );
        row.attempts = AGENT_ACTIONS.max_attempts;
        assert_eq!(
            settle_of(&row, &o(Outcome::Retry("x".into())), now).state,
            ActionState::GaveUp
        );
        // The push of a failed action, in the target's language.
        let mut settle = settle_of(&row, &o(Outcome::GaveUp("no live terminal".into())), now);
        settle.last_error = Some("no live terminal".into());
        let en = failed_text(&row, &settle);
        assert!(
            en.starts_with(
                "[Agent recovery failed] Harness's automatic continue of this task's agent \
                 (after: usage limit) did not work.\n\nWhy: no live terminal"
            ),
            "{en}"
        );
        let zh = failed_text_in(Lang::Zh, &row, &settle);
        assert!(
            zh.starts_with(
                "[智能体恢复失败] Harness 对这个任务的智能体的自动继续（起因：用量限制）没有成功。\
                 \n\n原因：no live terminal"
            ),
            "{zh}"
        );
        assert!(
            zh.ends_with(crate::agent_state::told::replies(Lang::Zh)),
            "{zh}"
        );
        settle.state = ActionState::Unverified;
        assert!(failed_text_in(Lang::Zh, &row, &settle).contains("可能已经执行，也可能没有"));
    }
}
