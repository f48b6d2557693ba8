//! Agent states as Harness records and tells them (the rules are
//! `crate::agent_state`): a change the watcher reports is recorded with
//! what it says — the push and the parent's inbox event — in one
//! transaction ([`Agents::record_state_change`]); the recovery sends its
//! own state push through the same mechanism ([`Agents::push_agent_state`]);
//! a person's `restart` / `resume` / `stop` reply acts on the task's agent
//! ([`Agents::agent_reply`]); the stall threshold is a global setting
//! ([`STALL_KEY`]); the newest hook event whose kind of turn changed is
//! kept per execution ([`Agents::note_hook`]), so that a restart knows an
//! idle agent from a working one.
//!
//! What a change read off the agent's screen (its lines, the CLI's words) is
//! redacted here, before it is stored, pushed or put in a parent's inbox
//! ([`redacted_change`], [`redacted_record`]): the same secrets as the
//! evidence of a question (docs/evidence.md: the patterns of
//! `crate::redact` and the values of the agent's own environment), so that
//! no watcher can forget it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent_actions::Agents;
use crate::{
    CoreError, CoreResult,
    agent_state::{
        AgentState, HookEvent, StateChange, record_of,
        told::{self, Context, ReplyAction},
    },
    control::{AgentControl, StartRequest},
    events::HarnessEvent,
    ids,
    model::{AgentStateRecord, ExecutionStatus, TaskView},
    outbox::compose_body,
    redact,
    store::{AgentStateWrite, AgentStateWritten, EventKind, NewEvent, Outbound, Priority},
};

/// The setting that holds the stall threshold.
pub const STALL_KEY: &str = "harness.agentStates";
/// The shortest and longest stall threshold, in seconds.
pub const MIN_STALL_SECS: u64 = 1;
pub const MAX_STALL_SECS: u64 = 7 * 24 * 3600;

/// The agent states' global settings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentStateSettings {
    /// Seconds without output, hook or tool activity after which a working
    /// agent is stalled (1 … 604800).
    pub stall_after_secs: u64,
}

/// Screen lines without the secrets they show: redacted together (a key
/// block across lines is recognised as one), then split again.
pub fn redact_lines(lines: &[String], secrets: &[&str]) -> Vec<String> {
    if lines.is_empty() {
        return Vec::new();
    }
    redact::redact(&lines.join("\n"), secrets)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `change` with its screen lines redacted: what the recovery and the
/// person's words see.
pub fn redacted_change(change: &StateChange, secrets: &[&str]) -> StateChange {
    StateChange {
        lines: redact_lines(&change.lines, secrets),
        ..change.clone()
    }
}

/// The record of `change` as it is stored and told ([`record_of`]), with
/// every text read off the agent's screen redacted: its lines, its reason,
/// the CLI's words for an error, the reset time as printed, a dialog's
/// title and options.
pub fn redacted_record(change: &StateChange, secrets: &[&str]) -> AgentStateRecord {
    let mut r = record_of(change);
    let clean = |t: &str| redact::redact(t, secrets);
    r.lines = redact_lines(&r.lines, secrets);
    r.reason = clean(&r.reason);
    r.error_kind = r.error_kind.as_deref().map(clean);
    r.reset_text = r.reset_text.as_deref().map(clean);
    r.dialog_title = r.dialog_title.as_deref().map(clean);
    r.dialog_options = r.dialog_options.iter().map(|o| clean(o)).collect();
    r
}

/// A hook event's stored name.
pub fn hook_name(hook: HookEvent) -> &'static str {
    match hook {
        HookEvent::SessionStart => "session_start",
        HookEvent::UserPromptSubmit => "user_prompt_submit",
        HookEvent::PreToolUse => "pre_tool_use",
        HookEvent::PostToolUse => "post_tool_use",
        HookEvent::Stop => "stop",
        HookEvent::NeedsPerson => "needs_person",
        HookEvent::IdlePrompt => "idle_prompt",
    }
}

/// A stored hook name as the event.
pub fn hook_of(name: &str) -> Option<HookEvent> {
    Some(match name {
        "session_start" => HookEvent::SessionStart,
        "user_prompt_submit" => HookEvent::UserPromptSubmit,
        "pre_tool_use" => HookEvent::PreToolUse,
        "post_tool_use" => HookEvent::PostToolUse,
        "stop" => HookEvent::Stop,
        "needs_person" => HookEvent::NeedsPerson,
        "idle_prompt" => HookEvent::IdlePrompt,
        _ => return None,
    })
}

impl Agents<'_> {
    /// Record `change` and what it says (`told::after_change`) in one
    /// transaction, then publish it. `plan_active`: a task-list loop is
    /// active in the agent's working directory.
    pub async fn record_state_change(
        &self,
        change: &StateChange,
        plan_active: bool,
    ) -> CoreResult<AgentStateWritten> {
        let view = self.h.tasks().get_task(&change.task_id).await?;
        // Nothing read off the screen goes further unredacted.
        let secrets = self.h.asks().agent_secrets(&view.task);
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let change = &redacted_change(change, &secrets);
        let record = redacted_record(change, &secrets);
        let channel = self.h.approvals().person_channel(&view.task).await;
        let lang = channel.lang(&view.task.id);
        let said = told::after_change_in(
            lang,
            change,
            &record,
            Context {
                view: &view,
                plan_active,
            },
        );
        // The recovery first (its action is written once per state episode:
        // a crash before the record below finds it again when the change is
        // reported anew), then what the person is told in its light.
        let tell = match self.plan_recovery(change).await {
            Ok(plan) => plan.tell,
            Err(err) => {
                tracing::warn!(task_id = %change.task_id, %err,
                    "the recovery could not be planned; the person is told as without it");
                // A usage limit is told by the recovery: without it, as an alarm.
                match change.state {
                    AgentState::UsageLimited { .. } => {
                        crate::agent_actions::Tell::Alarm { escalated: false }
                    }
                    _ => crate::agent_actions::Tell::NotMine,
                }
            }
        };
        let words =
            told::with_recovery_in(lang, said.push, tell, change, &record, view.task.unattended);
        let push = match words {
            Some(words) => {
                let message = compose_body(Some(&view.task.title), &words.text, &view.task.id);
                channel.push(&view.task, words.key, message, false)?
            }
            None => None,
        };
        let parent_event = said.parent.map(|p| NewEvent {
            id: ids::new_id(),
            parent_task_id: p.parent_task_id,
            source_task_id: view.task.id.clone(),
            execution_id: Some(change.execution_id.clone()),
            kind: EventKind::ChildExecutionFailed,
            priority: Priority::High,
            dedup_key: p.dedup_key,
            fallback: false,
            execution_review_key: None,
            payload: p.payload,
            now: change.at,
        });
        let written = self
            .h
            .store()
            .write_agent_state(AgentStateWrite {
                record: Some(record),
                push,
                parent_event,
            })
            .await
            .map_err(crate::messaging::task_missing)?;
        self.after_state_write(&change.task_id, &written);
        tracing::info!(task_id = %change.task_id, execution_id = %change.execution_id,
            state = change.state.name().as_str(), pushed = written.push.is_some(),
            parent = written.event.is_some(), "agent state recorded");
        Ok(written)
    }

    /// Push the state of `change` to the person of its task (unattended
    /// tasks with a chat channel), once per execution and state, with
    /// `more` in its words (e.g. "It will resume at 9:57am"). The one
    /// push of agent states, for the recovery too (a usage limit is told
    /// by it). `None`: attended, no channel, or pushed before.
    pub async fn push_agent_state(
        &self,
        change: &StateChange,
        more: Option<&str>,
    ) -> CoreResult<Option<Outbound>> {
        let view = self.h.tasks().get_task(&change.task_id).await?;
        if !view.task.unattended {
            return Ok(None);
        }
        let secrets = self.h.asks().agent_secrets(&view.task);
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let record = redacted_record(change, &secrets);
        let channel = self.h.approvals().person_channel(&view.task).await;
        let text = told::alarm_text_in(channel.lang(&view.task.id), &record, more);
        let message = compose_body(Some(&view.task.title), &text, &view.task.id);
        let key = told::push_key(&change.execution_id, change.state.name());
        let Some(push) = channel.push(&view.task, key, message, false)? else {
            return Ok(None);
        };
        let written = self
            .h
            .store()
            .write_agent_state(AgentStateWrite {
                record: None,
                push: Some(push),
                parent_event: None,
            })
            .await
            .map_err(crate::messaging::task_missing)?;
        self.after_state_write(&change.task_id, &written);
        Ok(written.push)
    }

    fn after_state_write(&self, task_id: &str, written: &AgentStateWritten) {
        if let Some(row) = &written.push {
            self.h.outbox().outbound_changed(row);
            self.h.outbox().wake_outbox();
        }
        if let Some(event) = &written.event {
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: event.parent_task_id.clone(),
            });
            self.h.wake(crate::work::Kind::Inbox);
        }
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: task_id.to_string(),
        });
    }

    /// An execution's recorded state.
    pub async fn agent_state(&self, execution_id: &str) -> CoreResult<Option<AgentStateRecord>> {
        Ok(self.h.store().agent_state(execution_id).await?)
    }

    /// The recorded state as an [`AgentState`] (what a change is compared
    /// with after a restart).
    pub async fn recorded_state(&self, execution_id: &str) -> CoreResult<Option<AgentState>> {
        Ok(self
            .agent_state(execution_id)
            .await?
            .as_ref()
            .map(crate::agent_state::state_of))
    }

    /// Keep `hook` as the execution's newest hook event (the caller writes
    /// only when the kind of turn changed: a `Stop`, or the first event
    /// after one).
    pub async fn note_hook(&self, execution_id: &str, hook: HookEvent) -> CoreResult<()> {
        Ok(self
            .h
            .store()
            .note_hook(execution_id, hook_name(hook), Utc::now())
            .await?)
    }

    /// The execution's newest kept hook event and when it came.
    pub async fn last_hook(
        &self,
        execution_id: &str,
    ) -> CoreResult<Option<(HookEvent, DateTime<Utc>)>> {
        Ok(self
            .h
            .store()
            .last_hook(execution_id)
            .await?
            .and_then(|(name, at)| hook_of(&name).map(|h| (h, at))))
    }

    /// The stall threshold: the stored setting, else `default` (the
    /// server's configuration, `HARNESS_STALL_AFTER_SECS`, else 20 min).
    pub async fn stall_after(&self, default: Duration) -> CoreResult<Duration> {
        Ok(match self.h.store().get_setting(STALL_KEY).await? {
            None => default,
            Some(v) => match serde_json::from_value::<AgentStateSettings>(v) {
                Ok(s) => Duration::from_secs(s.stall_after_secs),
                Err(err) => {
                    tracing::warn!(%err, "stored agent-state settings are unreadable; using the default");
                    default
                }
            },
        })
    }

    /// Store the stall threshold (a 400 naming the field when out of range).
    pub async fn set_agent_state_settings(
        &self,
        settings: AgentStateSettings,
    ) -> CoreResult<AgentStateSettings> {
        if !(MIN_STALL_SECS..=MAX_STALL_SECS).contains(&settings.stall_after_secs) {
            return Err(CoreError::invalid(
                "stallAfterSecs",
                format!("must be {MIN_STALL_SECS} to {MAX_STALL_SECS} seconds"),
            ));
        }
        let value = serde_json::to_value(&settings)
            .map_err(|e| CoreError::invalid_body(format!("agent states: {e}")))?;
        self.h
            .store()
            .put_setting(STALL_KEY, &value, Utc::now())
            .await?;
        self.h.publish(HarnessEvent::SettingChanged {
            key: STALL_KEY.into(),
        });
        Ok(settings)
    }

    /// A person's reply to a state push: `restart` / `resume` start the
    /// task's agent again with its session (a live one is stopped first),
    /// `stop` stops it. Returns the task as it is after.
    pub async fn agent_reply(
        &self,
        control: &dyn AgentControl,
        task_id: &str,
        action: ReplyAction,
    ) -> CoreResult<TaskView> {
        let view = self.h.tasks().get_task(task_id).await?;
        let id = view.task.id.as_str();
        let live = view.execution.as_ref().is_some_and(|e| {
            matches!(e.status, ExecutionStatus::Running | ExecutionStatus::Paused)
        });
        match action {
            ReplyAction::Stop => {
                if live {
                    control.stop(id).await?;
                }
            }
            ReplyAction::Resume => {
                if view.execution.is_none() {
                    return Err(CoreError::Conflict(
                        "the task's agent never ran: start it".into(),
                    ));
                }
                if live {
                    control.stop(id).await?;
                }
                control.start(id, StartRequest::Resume).await?;
            }
        }
        tracing::info!(task_id = id, ?action, "a person's reply acted on the agent");
        self.h.tasks().get_task(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-PLANTEDfakeKEY0123456789abcdefXYZ";

    fn change(state: AgentState, lines: &[&str]) -> StateChange {
        StateChange {
            task_id: "t".into(),
            execution_id: "e".into(),
            previous: None,
            state,
            lines: lines.iter().map(|l| l.to_string()).collect(),
            reset_at: None,
            at: Utc::now(),
        }
    }

    #[test]
    fn an_exits_lines_lose_keys_blocks_and_the_agents_own_values() {
        let c = change(
            AgentState::Exited { code: 3 },
            &[
                &format!("using key {KEY}"),
                "hint correct-horse-battery-staple",
                "-----BEGIN PRIVATE KEY-----",
                "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo",
                "-----END PRIVATE KEY-----",
                "mysql --password=hunter2 -u root",
                "Error: boom",
            ],
        );
        let secrets = ["correct-horse-battery-staple"];
        let r = redacted_record(&c, &secrets);
        assert_eq!(
            r.lines,
            [
                "using key sk-ant-[REDACTED]",
                "hint [REDACTED]",
                "[REDACTED]",
                "mysql --password=[REDACTED] -u root",
                "Error: boom",
            ]
        );
        assert_eq!(r.exit_code, Some(3));
        assert_eq!(r.reason, record_of(&c).reason, "nothing secret in it");
        assert_eq!(redacted_change(&c, &secrets).lines, r.lines);
        let words = told::alarm_text(&r, None);
        assert!(
            !words.contains("PLANTED") && !words.contains("horse"),
            "{words}"
        );
        assert!(words.contains("> Error: boom"), "{words}");
    }

    #[test]
    fn a_dialogs_words_are_redacted_too_and_no_lines_stay_none() {
        let c = change(
            AgentState::WaitingForPerson {
                dialog: Some((
                    format!("Use {KEY}?"),
                    vec!["1. Yes".into(), "2. token=abcdef123456".into()],
                )),
            },
            &[],
        );
        let r = redacted_record(&c, &[]);
        assert!(r.lines.is_empty());
        assert_eq!(r.dialog_title.as_deref(), Some("Use sk-ant-[REDACTED]?"));
        assert_eq!(r.dialog_options, ["1. Yes", "2. token=[REDACTED]"]);
        assert!(redact_lines(&[], &["secret-value"]).is_empty());
    }
}
