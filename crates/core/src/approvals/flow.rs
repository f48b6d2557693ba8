//! The hook's check of one tool call and a person's decision. An
//! approval is an ask with the options `Approve` / `Deny`
//! (docs/contract.md §4), recorded through the ask path (so the parent-first
//! ladder and the notification center apply), plus an `approvals` row: the
//! audit record and the one-time grant for exactly that call (same tool,
//! same input hash), used once by an atomic consume in the store.

use crate::approvals::Approvals;
use std::time::Duration;

use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{policy::Action, text};
use crate::{
    CoreError, CoreResult,
    auth::{Person, PersonKind},
    events::HarnessEvent,
    ids,
    messaging::{Aim, ReplyOutcome, ResumeMode},
    model::MessageState,
    options::ChoicesInput,
    store::{Approval, ApprovalDecision, ApprovalState, NewApproval, NewInput},
};

/// The longest tool name a checked call may carry.
pub const MAX_CALL_TOOL_CHARS: usize = 200;
/// The longest the server holds one check (the hook's own timeout is longer).
pub const MAX_WAIT: Duration = Duration::from_secs(120);
/// How long a derived task's approval waits for its parent before the
/// person's chat is pushed (`HarnessConfig::approval_parent_step`).
pub const PARENT_STEP: Duration = Duration::from_secs(300);

/// One tool call as the pre-tool hook saw it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub tool: String,
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub cwd: Option<String>,
    /// The CLI's id of the call (its hooks' `tool_use_id`): what the
    /// ungated-run watch matches the CLI's own record against.
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallDecision {
    Allow,
    Deny,
}

/// The answer to the hook.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallVerdict {
    pub decision: CallDecision,
    /// Shown to the agent on a deny.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The rule's action (`allow`, `ask`, `deny`), `None`: no rule matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_action: Option<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// True when the hook stopped waiting: the step waits for a person.
    pub waiting: bool,
}

impl CallVerdict {
    fn allow(rule_action: Option<Action>) -> Self {
        Self {
            decision: CallDecision::Allow,
            reason: None,
            rule_action,
            approval_id: None,
            request_id: None,
            waiting: false,
        }
    }

    fn deny(reason: String, rule_action: Option<Action>) -> Self {
        Self {
            decision: CallDecision::Deny,
            reason: Some(reason),
            ..Self::allow(rule_action)
        }
    }

    fn of(mut self, a: &Approval) -> Self {
        self.approval_id = Some(a.id.clone());
        self.request_id = Some(a.request_id.clone());
        self
    }
}

/// `{"a":…}` with object keys sorted at every level (independent of how
/// serde_json keeps maps), the text a grant's hash is taken over.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// What a grant is for: sha256 of the tool name and what the call does —
/// a shell tool's command (and its `workdir`, when the input names one),
/// a file tool's input without its `description`, any other tool's whole
/// canonical input. A retry that only rewords Claude Code's Bash
/// `description` (or changes its timeout) is the same call.
pub fn call_hash(tool: &str, input: &Value) -> String {
    let subject = if super::policy::SHELL_TOOLS.contains(&tool) {
        let workdir = ["workdir", "cwd"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .unwrap_or_default();
        canonical(&json!({"command": super::policy::command_of(input), "workdir": workdir}))
    } else if super::policy::FILE_TOOLS.contains(&tool) {
        let mut input = input.clone();
        if let Some(map) = input.as_object_mut() {
            map.remove("description");
        }
        canonical(&input)
    } else {
        canonical(input)
    };
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update(b"\n");
    h.update(subject.as_bytes());
    hex::encode(h.finalize())
}

fn person_name(by: &Person) -> &'static str {
    match by.kind() {
        PersonKind::Admin => "admin",
        PersonKind::Browser => "browser",
        PersonKind::GatewayOwner => "gateway-owner",
    }
}

/// Who decided, as the audit records it, when more is known than the
/// token's person: the gateway's sender of a reply from chat
/// (`gateway:<id>`), a UI session (`browser:session:<12 hex>`).
fn decider(by: &Person, sender: Option<&str>, who: Option<&str>) -> Option<String> {
    match (sender, who) {
        (Some(sender), _) => Some(format!("gateway:{sender}")),
        (None, Some(who)) => Some(format!("{}:{who}", person_name(by))),
        (None, None) => None,
    }
}

/// `Approve` / `1` / `yes` → approve; `Deny` / `2` / `no` (optionally
/// followed by a reason: `deny: not on main`) → deny with that reason.
pub fn parse_answer(text: &str) -> Option<(bool, Option<String>)> {
    let t = text.trim();
    let lower = t.to_lowercase();
    let word_end = lower
        .find(|c: char| !c.is_alphanumeric())
        .unwrap_or(lower.len());
    let (word, rest) = lower.split_at(word_end);
    let reason = t[word_end..]
        .trim_start_matches(|c: char| {
            c == '.' || c == ':' || c == ',' || c == '-' || c.is_whitespace()
        })
        .trim();
    let reason = (!reason.is_empty()).then(|| reason.to_string());
    match word {
        "1" | "approve" | "approved" | "yes" | "y" | "allow"
            if rest.trim_matches('.').trim().is_empty() =>
        {
            Some((true, None))
        }
        "2" | "deny" | "denied" | "no" | "n" | "reject" => Some((false, reason)),
        _ => None,
    }
}

impl Approvals<'_> {
    /// The pre-tool hook's check of one call of `task_id`'s agent (issue
    /// 31). An attended, top-level task → allow (today's behaviour);
    /// policy `allow` → allow; `deny` → deny; `ask`: a decision not
    /// used yet for exactly this call is used once, else an approval is
    /// asked (or the pending one for this call reused) and waited for at
    /// most `wait`; still undecided → deny, telling the agent to end its turn.
    #[tracing::instrument(skip_all, fields(task_id, tool = %call.tool))]
    pub async fn check_tool_call(
        &self,
        task_id: &str,
        execution_id: Option<&str>,
        call: &ToolCall,
        wait: Duration,
    ) -> CoreResult<CallVerdict> {
        let tool = call.tool.trim();
        if tool.is_empty() || tool.chars().count() > MAX_CALL_TOOL_CHARS {
            return Err(CoreError::invalid(
                "tool",
                format!("tool must be 1..={MAX_CALL_TOOL_CHARS} characters"),
            ));
        }
        let view = self.h.tasks().get_task(task_id).await?;
        let task = &view.task;
        self.note_tool_check(task_id, execution_id, call).await;
        if task.parent_task_id.is_none() && !task.unattended {
            // Attended, top-level: the person watching decides as today.
            // The database says so, never the agent's signal file (which an
            // agent without isolation could delete).
            return Ok(CallVerdict::allow(None));
        }
        let effective = self.effective_policy(task.project_id.as_deref()).await?;
        let verdict =
            super::interactive::evaluate(&effective, tool, &call.input, call.cwd.as_deref());
        let short = text::short_why(tool, &call.input, verdict.matched.as_ref());
        let matched = match (verdict.action, verdict.matched) {
            (Action::Allow, m) => return Ok(CallVerdict::allow(m.map(|_| Action::Allow))),
            (Action::Deny, m) => {
                let note = m
                    .as_ref()
                    .and_then(|m| m.rule.note.clone())
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default();
                return Ok(CallVerdict::deny(
                    format!(
                        "Harness: the approval policy denies {short}{note}. Do not run it; choose another way or end your turn."
                    ),
                    Some(Action::Deny),
                ));
            }
            (Action::Ask, Some(m)) => m,
            (Action::Ask, None) => return Ok(CallVerdict::allow(None)),
        };
        let hash = call_hash(tool, &call.input);
        if let Some(used) = self.use_decision(task_id, &hash).await? {
            return Ok(used);
        }
        let events = self.h.subscribe();
        let approval = match self
            .h
            .store()
            .pending_approval_for_call(task_id, &hash)
            .await?
        {
            Some(a) => a,
            None => {
                let question = text::question(
                    tool,
                    &call.input,
                    call.cwd.as_deref(),
                    &task.title,
                    &matched,
                );
                let choices = ChoicesInput {
                    options: Some(json!([
                        {"label": "Approve", "description": "run exactly this call, once"},
                        {"label": "Deny", "description": "the agent must not run it"}
                    ])),
                    urgency: Some(json!("high")),
                    ..ChoicesInput::default()
                };
                // The ask path: a derived task's question also reaches its
                // parent's inbox first (the escalation ladder). The ask and
                // its approval row are one transaction.
                let mut prepared = self
                    .h
                    .asks()
                    .prepare_native_ask(task, tool, Some(&question), &choices)
                    .await?;
                // The parent's prompt says it is an approval: not the
                // parent's to approve (crate::inbox_prompt).
                if let Some(event) = prepared.event.as_mut() {
                    event.payload["approval"] = json!(true);
                }
                let Some(choices) = prepared.choices else {
                    return Err(CoreError::Conflict(
                        "an approval's options were not recorded".into(),
                    ));
                };
                let approval_id = ids::new_id();
                // Pushed to the person's chat in the same transaction, with
                // the agent's screen when the target allows it.
                let screen = prepared.ask.evidence.clone();
                let push = self
                    .approval_push(task, &approval_id, &question, screen.as_deref())
                    .await?;
                let new = NewApproval {
                    id: approval_id,
                    task_id: task_id.to_string(),
                    execution_id: execution_id.map(str::to_string),
                    request_id: prepared.ask.id.clone(),
                    tool: tool.to_string(),
                    input: call.input.to_string(),
                    input_hash: hash.clone(),
                    cwd: call.cwd.clone(),
                    rule: serde_json::to_string(&matched).unwrap_or_default(),
                    now: Utc::now(),
                    // A derived task asks its parent first: the person's
                    // chat only after the ladder's step (the parent cannot
                    // approve; the person decides on /harness meanwhile).
                    push_not_before: task.parent_task_id.as_ref().and_then(|_| {
                        chrono::Duration::from_std(self.h.config().approval_parent_step)
                            .ok()
                            .filter(|d| !d.is_zero())
                            .map(|d| Utc::now() + d)
                    }),
                    push,
                };
                let asked = self
                    .h
                    .store()
                    .record_approval_ask(prepared.ask, choices, prepared.event, new)
                    .await
                    .map_err(crate::messaging::task_missing)?;
                let a = asked.approval;
                if let Some(row) = &asked.push {
                    tracing::info!(approval_id = %a.id, outbound_id = %row.id, "approval pushed to chat");
                    self.h.outbox().outbound_changed(row);
                    self.h.outbox().wake_outbox();
                }
                self.h
                    .asks()
                    .native_asked(&task.id, prepared.parent, asked.recorded, asked.event_added)
                    .await?;
                tracing::info!(approval_id = %a.id, request_id = %a.request_id, "approval asked");
                self.h.publish(HarnessEvent::TaskChanged {
                    task_id: task_id.to_string(),
                });
                a
            }
        };
        let wait = wait.min(MAX_WAIT).min(self.h.config().approval_wait_max);
        self.wait_for_decision(approval, &hash, &short, wait, events)
            .await
    }

    /// A decision for exactly this call, used once.
    async fn use_decision(&self, task_id: &str, hash: &str) -> CoreResult<Option<CallVerdict>> {
        let Some(a) = self
            .h
            .store()
            .consume_approval(task_id, hash, Utc::now())
            .await?
        else {
            return Ok(None);
        };
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: task_id.to_string(),
        });
        let call = text::short(
            &a.tool,
            &serde_json::from_str(&a.input).unwrap_or(Value::Null),
        );
        Ok(Some(match a.state {
            ApprovalState::Approved => CallVerdict::allow(Some(Action::Ask)).of(&a),
            _ => CallVerdict::deny(text::denied_reason(&a, &call), Some(Action::Ask)).of(&a),
        }))
    }

    async fn wait_for_decision(
        &self,
        approval: Approval,
        hash: &str,
        short: &str,
        wait: Duration,
        events: tokio::sync::broadcast::Receiver<HarnessEvent>,
    ) -> CoreResult<CallVerdict> {
        // Woken by any change (answers publish MessageChanged), else polled.
        let check = || async {
            let now_row = self.h.store().get_approval(&approval.id).await?;
            if let Some(a) = &now_row
                && a.state != ApprovalState::Pending
                && let Some(used) = self.use_decision(&a.task_id, hash).await?
            {
                return Ok(Some(used));
            }
            // The carrying ask was cancelled (task stopped, superseded…).
            if let Some(m) = self.h.store().get_message(&approval.request_id).await?
                && !matches!(m.state, MessageState::Open | MessageState::Answered)
            {
                return Ok(Some(CallVerdict::deny(
                    format!("Harness: the approval request for {short} was cancelled ({:?}); do not run it. End your turn.", m.state),
                    Some(Action::Ask),
                )
                .of(&approval)));
            }
            Ok(None)
        };
        let tick = Some(Duration::from_millis(500));
        if let Some(verdict) =
            crate::work::until_settled(wait, tick, events, |_| true, check).await?
        {
            return Ok(verdict);
        }
        // Stop waiting; a decision from now on is typed into the terminal.
        match self
            .h
            .store()
            .park_approval(&approval.id, Utc::now())
            .await?
        {
            Some(a) if a.state != ApprovalState::Pending => {
                if let Some(used) = self.use_decision(&a.task_id, hash).await? {
                    return Ok(used);
                }
            }
            _ => {}
        }
        let mut v = CallVerdict::deny(
            text::waiting_reason(short, &approval.request_id),
            Some(Action::Ask),
        )
        .of(&approval);
        v.waiting = true;
        Ok(v)
    }

    /// A person's decision on approval `id` (REST `POST
    /// /api/approvals/{id}/decide`, and a reply to its ask). First decision
    /// wins; a later one is a Conflict "already decided".
    pub async fn decide_approval(
        &self,
        by: &Person,
        id: &str,
        approve: bool,
        reason: Option<&str>,
        via: &str,
    ) -> CoreResult<Approval> {
        Ok(self.decide(by, None, id, approve, reason, via).await?.0)
    }

    /// `named`: who decided when more is known than the token's person
    /// (see [`decider`]).
    async fn decide(
        &self,
        by: &Person,
        named: Option<String>,
        id: &str,
        approve: bool,
        reason: Option<&str>,
        via: &str,
    ) -> CoreResult<(Approval, Option<crate::deliveries::Delivery>)> {
        let current = self.approval(id).await?;
        let reason = crate::validate::optional_text("reason", reason, super::MAX_REASON_CHARS)?;
        // Decided by the person writing in the chat.
        let from_chat = by.kind() == PersonKind::GatewayOwner;
        let by = named.unwrap_or_else(|| person_name(by).to_string());
        let now = Utc::now();
        // What is typed into the terminal if the hook has stopped waiting
        // (the store writes it only then, in the decision's transaction).
        let mut prospective = current.clone();
        prospective.state = if approve {
            ApprovalState::Approved
        } else {
            ApprovalState::Denied
        };
        prospective.decided_by = Some(by.clone());
        prospective.reason = reason.clone();
        let call = text::short(
            &current.tool,
            &serde_json::from_str(&current.input).unwrap_or(Value::Null),
        );
        let typed = NewInput {
            id: ids::new_id(),
            task_id: current.task_id.clone(),
            node_id: self.h.tasks().execution_node(&current.task_id).await?,
            text: text::typed_decision(&prospective, &call),
            submit: true,
            dedup_key: format!("approval:{}", current.id),
            // A terminal gone meanwhile (a server restart): the agent is
            // resumed from its session and reads the decision.
            resume: true,
            now,
        };
        let decision = ApprovalDecision {
            approve,
            by,
            via: via.chars().take(32).collect(),
            reason,
            reply_text: if approve { "Approve" } else { "Deny" }.to_string(),
            typed: Some(typed),
            now,
            from_chat,
        };
        let Some(done) = self
            .h
            .store()
            .decide_approval(&current.id, &decision)
            .await?
        else {
            let now = self.approval(&current.id).await?;
            let at = now.decided_at.map(|t| t.to_rfc3339()).unwrap_or_default();
            return Err(CoreError::Conflict(match now.state {
                ApprovalState::Cancelled | ApprovalState::Expired => format!(
                    "{} this approval's question was {} at {at} (task stopped, a newer \
                     question, or its time ran out); the agent was told not to run the call, \
                     nothing to decide",
                    super::chat::CANCELLED,
                    now.state.as_str().to_lowercase()
                ),
                _ => format!(
                    "{}: {} by {} at {at}",
                    super::chat::ALREADY_DECIDED,
                    now.state.as_str(),
                    now.decided_by.as_deref().unwrap_or("?"),
                ),
            }));
        };
        let decided = done.approval;
        for row in &done.dropped {
            tracing::info!(approval_id = %decided.id, outbound_id = %row.id,
                dedup_key = %row.dedup_key, "unsent approval push or reminder dropped");
            self.h.outbox().outbound_changed(row);
        }
        tracing::info!(approval_id = %decided.id, state = decided.state.as_str(), via, "approval decided");
        self.h.publish(HarnessEvent::MessageChanged {
            id: decided.request_id.clone(),
            task_id: decided.task_id.clone(),
        });
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: decided.task_id.clone(),
        });
        // Parked: the hook gave up and the agent ended its turn, waiting;
        // the decision's delivery (committed with it) types it in.
        let delivery = match done.delivery {
            Some((row, created)) => {
                if created {
                    self.h.deliveries().delivery_changed(&row);
                    self.h.deliveries().wake_deliveries();
                }
                Some(row)
            }
            None => None,
        };
        Ok((decided, delivery))
    }

    /// A reply to an approval's ask (REST `/reply`, MCP `reply_to_ask`, the
    /// UI's answer): mapped to a decision. `aim.request_id`: the ask the
    /// person answered (see [`Self::aimed_approval`]). `None` when the reply is not
    /// about an approval.
    pub(crate) async fn reply_to_approval(
        &self,
        by: &Person,
        task_id: &str,
        text: &str,
        sender: Option<&str>,
        aim: Aim<'_>,
    ) -> CoreResult<Option<ReplyOutcome>> {
        let Some(approval) = self.aimed_approval(task_id, aim.request_id).await? else {
            return Ok(None);
        };
        let Some((approve, reason)) = parse_answer(text) else {
            return Err(CoreError::invalid(
                "text",
                "this question is an approval: answer Approve (1) or Deny (2), optionally \"Deny: <reason>\"",
            ));
        };
        let (decided, delivery) = self
            .decide(
                by,
                decider(by, sender, aim.who),
                &approval.id,
                approve,
                reason.as_deref(),
                match (aim.via, sender) {
                    (Some(via), _) => via,
                    (None, Some(_)) => "chat",
                    (None, None) => "reply",
                },
            )
            .await?;
        let running = self.h.store().live_execution(task_id).await?.is_some();
        Ok(Some(ReplyOutcome {
            task_id: task_id.to_string(),
            request_id: decided.request_id,
            mode: if running {
                ResumeMode::Continued
            } else {
                ResumeMode::NotRunning
            },
            injected: false,
            deduped: false,
            resumed: Vec::new(),
            delivery_id: delivery.as_ref().map(|d| d.id.clone()),
            delivery: match &delivery {
                Some(d) => crate::deliveries::status_word(d.state),
                None => "none",
            },
            delivery_state: delivery.as_ref().map(|d| d.state),
            delivery_error: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_decisions() {
        for t in ["Approve", "approve", "1", "1.", " yes ", "APPROVED"] {
            assert_eq!(parse_answer(t), Some((true, None)), "{t}");
        }
        assert_eq!(parse_answer("Deny"), Some((false, None)));
        assert_eq!(parse_answer("2"), Some((false, None)));
        assert_eq!(
            parse_answer("Deny: not on main"),
            Some((false, Some("not on main".into())))
        );
        assert_eq!(
            parse_answer("no, use a branch"),
            Some((false, Some("use a branch".into())))
        );
        assert_eq!(
            parse_answer("approve the other one"),
            None,
            "an approval is only a plain yes"
        );
        assert_eq!(parse_answer("maybe"), None);
        assert_eq!(parse_answer("3"), None);
    }

    #[test]
    fn the_hash_is_canonical() {
        let a = json!({"command": "git push", "description": "x", "n": {"b": 1, "a": [1, {"z": 0, "y": 1}]}});
        let b = json!({"n": {"a": [1, {"y": 1, "z": 0}], "b": 1}, "description": "x", "command": "git push"});
        assert_eq!(call_hash("Bash", &a), call_hash("Bash", &b));
        assert_ne!(call_hash("Bash", &a), call_hash("shell", &a));
        assert_ne!(
            call_hash("Bash", &json!({"command": "git push"})),
            call_hash("Bash", &json!({"command": "git push "}))
        );
        let n = json!({"n": {"b": 1, "a": [1, {"z": 0, "y": 1}]}});
        let m = json!({"n": {"a": [1, {"y": 1, "z": 0}], "b": 1}});
        assert_eq!(call_hash("mcp__x__y", &n), call_hash("mcp__x__y", &m));
    }

    #[test]
    fn a_shell_grant_is_for_the_command_not_its_description() {
        let first = json!({"command": "git push --force", "description": "Push the branch"});
        let retry = json!({"command": "git push --force", "description": "Force-push again",
            "timeout": 60000});
        assert_eq!(call_hash("Bash", &first), call_hash("Bash", &retry));
        assert_ne!(
            call_hash("Bash", &first),
            call_hash("Bash", &json!({"command": "git push --force origin main"}))
        );
        // Codex: the argv, and where it runs.
        let codex = |dir: &str| json!({"command": ["bash", "-lc", "rm -rf build"], "workdir": dir, "timeout_ms": 1});
        assert_eq!(
            call_hash("shell", &codex("/a")),
            call_hash("shell", &{
                let mut c = codex("/a");
                c["timeout_ms"] = json!(9);
                c
            })
        );
        assert_ne!(
            call_hash("shell", &codex("/a")),
            call_hash("shell", &codex("/b"))
        );
        // File tools: the path and the content, nothing else.
        let edit = |d: &str, new: &str| json!({"file_path": "/r/.env", "old_string": "A=1", "new_string": new, "description": d});
        assert_eq!(
            call_hash("Edit", &edit("x", "A=2")),
            call_hash("Edit", &edit("y", "A=2"))
        );
        assert_ne!(
            call_hash("Edit", &edit("x", "A=2")),
            call_hash("Edit", &edit("x", "A=3"))
        );
        assert_ne!(
            call_hash("Write", &json!({"file_path": "/r/a", "content": "x"})),
            call_hash("Write", &json!({"file_path": "/r/b", "content": "x"}))
        );
    }
}
