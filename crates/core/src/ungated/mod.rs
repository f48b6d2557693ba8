//! An ungated run is noticed: an execution whose CLI ran a tool that no
//! pre-tool check reached is flagged, and the person alerted, once.
//!
//! The evidence, strongest first:
//!
//! * the CLI's own record of the session — Claude Code's transcript, Codex's
//!   session file — read by the server while the agent runs and after it
//!   ends (`server/src/ungated_watch.rs`; parsers in [`transcripts`]): it is
//!   written whether or not hooks run, so a run with its hooks switched off
//!   (`disableAllHooks`, Codex hooks not trusted, a replaced hook binary)
//!   shows calls the server never checked;
//! * the CLI's PostToolUse hook (`harness hook post-tool`): a call that ran
//!   with no check before it (the pre-tool hook alone removed or broken).
//!   When every hook is off it is silent too, hence the files.
//!
//! The server remembers every check it answered (allowed ones too) by the
//! call's id ([`call_key`]: the `tool_use_id` both CLIs give their hooks and
//! write into their files). A call counts once its hook has had its chance:
//! when the execution has ended, or [`SETTLE`] after the watch first saw it
//! (the CLI kills a hook after its timeout and then runs the call).
//!
//! Not counted: the native question tools (the escalation ladder denies them
//! before any check; they run nothing), Codex's `write_stdin` (no hook ever
//! sees it; its characters are judged by the policy instead, and the tty
//! shell it types into was asked for — `approvals::interactive`), a call of
//! a call the CLI says it did not run (a tool it does not have, a session
//! gone, an interrupt), and calls written before the execution started (a resumed
//! session's earlier turns: checked under their own execution).
//!
//! What this cannot see is written in docs/approvals.md ("An ungated run is noticed").

pub mod transcripts;

use crate::approvals::Approvals;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::{
    CoreResult,
    approvals::{Action, ToolCall, interactive, policy::SHELL_TOOLS},
    events::HarnessEvent,
    ids,
    model::{Execution, Task},
    outbox::compose_body,
    store::{NewToolCheck, NewUngatedFlag, UngatedEvidence, UngatedFlag, ungated_push_key},
};
pub use transcripts::SeenCall;

/// How long after the watch first saw a call it waits for that call's
/// check: longer than the pre-tool hook's timeout in the CLIs' settings
/// (60 s), after which the CLI has given up on the hook.
pub const SETTLE: Duration = Duration::from_secs(75);
/// A call written this long before its execution started is an earlier
/// execution's (clocks of the CLI and the server may differ a little).
const START_SLACK: chrono::Duration = chrono::Duration::seconds(5);
/// The longest call shown in a flag's detail.
const MAX_SHOWN: usize = 300;

/// What identifies a call: the CLI's id of it when it gave one (`id:<id>`),
/// else a digest of the tool and what it does (`sha256:<hex>`; a shell
/// tool's command only, because Codex names `exec_command` `Bash` to its
/// hook and passes only `{command}`).
pub fn call_key(call_id: Option<&str>, tool: &str, input: &Value) -> String {
    if let Some(id) = call_id.map(str::trim).filter(|id| !id.is_empty()) {
        return format!("id:{id}");
    }
    let hash = if SHELL_TOOLS.contains(&tool) {
        crate::approvals::flow::call_hash(
            "shell",
            &json!({"command": crate::approvals::policy::command_of(input)}),
        )
    } else {
        crate::approvals::flow::call_hash(tool, input)
    };
    format!("sha256:{hash}")
}

/// Whether a call of `tool` must have had a pre-tool check.
pub fn needs_check(tool: &str) -> bool {
    tool != interactive::STDIN_TOOL && !crate::ladder::BLOCKED_TOOLS.contains(&tool)
}

/// Whether a call first seen at `first_seen` counts now: its execution has
/// ended, or `settle` ([`SETTLE`] but in tests) has passed.
pub fn settled(
    first_seen: DateTime<Utc>,
    now: DateTime<Utc>,
    ended: bool,
    settle: Duration,
) -> bool {
    ended
        || chrono::Duration::from_std(settle)
            .map(|s| now - first_seen >= s)
            .unwrap_or(true)
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(MAX_SHOWN).collect();
    if s.chars().count() > MAX_SHOWN {
        out.push_str(" …");
    }
    out
}

/// The call in a few words (`Bash: git push`, `mcp__x__y {…}`).
fn shown(tool: &str, input: &Value) -> String {
    let what = if SHELL_TOOLS.contains(&tool) || tool == interactive::STDIN_TOOL {
        input
            .get("command")
            .or_else(|| input.get("cmd"))
            .or_else(|| input.get("chars"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| crate::approvals::policy::command_of(input))
    } else {
        input.to_string()
    };
    clip(&format!("{tool}: {}", what.trim()))
}

/// The alert's words (the notice on `/harness`; the push adds the title
/// and the task token).
pub fn alert_text(execution_id: &str, evidence: UngatedEvidence, detail: &str) -> String {
    let seen = match evidence {
        UngatedEvidence::Transcript => "its CLI's own session record shows",
        UngatedEvidence::PostTool => "its CLI reported after the fact",
        UngatedEvidence::Typed => "its CLI's session record shows",
    };
    format!(
        "[Ungated run] This task's agent ran a tool that Harness's approval check never saw \
         (execution {execution_id}; {seen}): {detail}. Its hooks may be switched off (a \
         disableAllHooks setting, Codex hooks not trusted, a replaced hook binary) or \
         worked around: what it runs now is not held for approval. Stop the task and check \
         its work, its settings files and its working directory."
    )
}

impl Approvals<'_> {
    /// Remember a pre-tool check (every one, allowed too) so that the watch
    /// can tell a checked call from an ungated one. A failure is logged:
    /// it can only make the watch flag a call it should not have.
    pub(crate) async fn note_tool_check(
        &self,
        task_id: &str,
        execution_id: Option<&str>,
        call: &ToolCall,
    ) {
        let check = NewToolCheck {
            task_id: task_id.to_string(),
            execution_id: execution_id.map(str::to_string),
            call_key: call_key(call.tool_use_id.as_deref(), &call.tool, &call.input),
            tool: call.tool.chars().take(200).collect(),
            now: Utc::now(),
        };
        if let Err(err) = self.h.store().record_tool_check(check).await {
            tracing::warn!(error = ?err, task_id, "cannot remember a pre-tool check");
        }
    }

    /// The PostToolUse hook's report: `call` ran. No check of it → the
    /// execution is flagged (once). `execution_id`: the reporting agent's
    /// (an admin's report names none: the task's live execution).
    pub async fn tool_ran(
        &self,
        task_id: &str,
        execution_id: Option<&str>,
        call: &ToolCall,
    ) -> CoreResult<Option<UngatedFlag>> {
        let task_id = crate::validate::task_id(Some(task_id))?;
        let tool = call.tool.trim();
        let max = crate::approvals::flow::MAX_CALL_TOOL_CHARS;
        if tool.is_empty() || tool.chars().count() > max {
            return Err(crate::CoreError::invalid(
                "tool",
                format!("tool must be 1..={max} characters"),
            ));
        }
        if !needs_check(tool) {
            return Ok(None);
        }
        let execution = match execution_id {
            Some(id) => Some(id.to_string()),
            None => self.h.store().live_execution(&task_id).await?.map(|e| e.id),
        };
        let Some(execution_id) = execution else {
            return Ok(None);
        };
        let key = call_key(call.tool_use_id.as_deref(), tool, &call.input);
        if !self
            .h
            .store()
            .checked_calls(&task_id, std::slice::from_ref(&key))
            .await?
            .is_empty()
        {
            return Ok(None);
        }
        let task = self.h.tasks().get_task(&task_id).await?.task;
        let detail = format!("{} ran with no pre-tool check", shown(tool, &call.input));
        self.flag(
            &task,
            &execution_id,
            tool,
            &key,
            UngatedEvidence::PostTool,
            &detail,
        )
        .await
        .map(Some)
    }

    /// The watch's reading of `execution`'s session record: `calls` as the
    /// CLI wrote them, each with whether it counts yet ([`settled`]). The
    /// first call that needed a check and had none — or characters typed
    /// into a session that the task's policy would have held — flags the
    /// execution (once). `None`: nothing unchecked (yet).
    pub async fn review_calls(
        &self,
        execution: &Execution,
        calls: &[(SeenCall, bool)],
    ) -> CoreResult<Option<UngatedFlag>> {
        let since = execution.created_at - START_SLACK;
        let counted: Vec<&SeenCall> = calls
            .iter()
            .filter(|(c, settled)| {
                *settled && !c.not_run && c.at.is_none_or(|at| at >= since) && !c.tool.is_empty()
            })
            .map(|(c, _)| c)
            .collect();
        if counted.is_empty() {
            return Ok(None);
        }
        let keys: Vec<String> = counted
            .iter()
            .filter(|c| needs_check(&c.tool))
            .map(|c| call_key(c.call_id.as_deref(), &c.tool, &c.input))
            .collect();
        let checked: std::collections::HashSet<String> = self
            .h
            .store()
            .checked_calls(&execution.task_id, &keys)
            .await?
            .into_iter()
            .collect();
        let task = self.h.tasks().get_task(&execution.task_id).await?.task;
        let gated = task.unattended || task.parent_task_id.is_some();
        let policy = if gated {
            Some(self.effective_policy(task.project_id.as_deref()).await?)
        } else {
            None
        };
        let mut first: Option<(&SeenCall, String, UngatedEvidence, String)> = None;
        let mut unchecked = 0usize;
        for c in &counted {
            if needs_check(&c.tool) {
                let key = call_key(c.call_id.as_deref(), &c.tool, &c.input);
                if checked.contains(&key) {
                    continue;
                }
                unchecked += 1;
                if first.is_none() {
                    let detail = shown(&c.tool, &c.input);
                    first = Some((c, key, UngatedEvidence::Transcript, detail));
                }
            } else if c.tool == interactive::STDIN_TOOL
                && let Some(policy) = &policy
                && first.is_none()
            {
                let v = interactive::evaluate(policy, &c.tool, &c.input, None);
                if v.action != Action::Allow {
                    let key = call_key(c.call_id.as_deref(), &c.tool, &c.input);
                    let detail = format!(
                        "{} typed into a running session, which no hook sees; the policy would \
                         have {} it",
                        shown(&c.tool, &c.input),
                        if v.action == Action::Deny {
                            "denied"
                        } else {
                            "asked for"
                        }
                    );
                    first = Some((c, key, UngatedEvidence::Typed, detail));
                }
            }
        }
        let Some((c, key, evidence, mut detail)) = first else {
            return Ok(None);
        };
        if unchecked > 1 {
            detail.push_str(&format!(" (and {} more unchecked calls)", unchecked - 1));
        }
        self.flag(&task, &execution.id, &c.tool, &key, evidence, &detail)
            .await
            .map(Some)
    }

    /// Flag `execution_id` once: the flag, its notice on `/harness` and its
    /// push to the person's chat in one transaction (a retry, another
    /// node's watch or a restart finds the flag and writes nothing).
    async fn flag(
        &self,
        task: &Task,
        execution_id: &str,
        tool: &str,
        key: &str,
        evidence: UngatedEvidence,
        detail: &str,
    ) -> CoreResult<UngatedFlag> {
        let text = alert_text(execution_id, evidence, detail);
        let push = self.person_channel(task).await.push(
            task,
            ungated_push_key(execution_id),
            compose_body(Some(&task.title), &text, &task.id),
            false,
        )?;
        let flagged = self
            .h
            .store()
            .flag_ungated(NewUngatedFlag {
                execution_id: execution_id.to_string(),
                task_id: task.id.clone(),
                tool: tool.chars().take(200).collect(),
                call_key: key.to_string(),
                evidence,
                detail: detail.to_string(),
                message_id: ids::new_id(),
                message: text,
                push,
                now: Utc::now(),
            })
            .await
            .map_err(crate::messaging::task_missing)?;
        if flagged.created {
            tracing::warn!(task_id = %task.id, execution_id, evidence = evidence.as_str(), %detail,
                "ungated run: a tool ran with no pre-tool check");
            if let Some(message_id) = &flagged.flag.message_id {
                self.h.publish(HarnessEvent::MessageChanged {
                    id: message_id.clone(),
                    task_id: task.id.clone(),
                });
            }
            if let Some(row) = &flagged.push {
                self.h.outbox().outbound_changed(row);
                self.h.outbox().wake_outbox();
            }
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: task.id.clone(),
            });
        }
        Ok(flagged.flag)
    }

    /// A task's ungated-run flags, oldest first.
    pub async fn ungated_flags(&self, task_id: &str) -> CoreResult<Vec<UngatedFlag>> {
        let task_id = crate::validate::task_id(Some(task_id))?;
        Ok(self.h.store().ungated_flags(&task_id).await?)
    }

    /// The executions this node's watch reads: live, or ended at or after
    /// `ended_after`, not flagged yet (≤ `limit`).
    pub async fn watched_executions(
        &self,
        ended_after: DateTime<Utc>,
        limit: u32,
    ) -> CoreResult<Vec<Execution>> {
        Ok(self
            .h
            .store()
            .watched_executions(&self.h.config().node_id, ended_after, limit)
            .await?)
    }
}

#[cfg(test)]
mod tests;
