//! `list_notify_targets` (docs/tower-messaging.md §4.3): the active channel of a
//! scope and ready-to-follow instructions with the task's token.

use serde::Serialize;

use super::token;
use crate::outbox::Outbox;
use crate::{CoreError, CoreResult, settings::NotifyTarget, validate};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveChannel {
    pub gateway: String,
    pub downstream: Option<String>,
    pub dest: Option<String>,
    pub profile: Option<String>,
    pub label: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetsAnswer {
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<ActiveChannel>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_channel_configured: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub capability_unavailable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub instructions: String,
}

fn blank(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Outbox<'_> {
    /// The first active target of `scope` (a target without a scope counts
    /// as unattended).
    pub async fn active_target(&self, scope: &str) -> CoreResult<Option<NotifyTarget>> {
        Ok(self
            .h
            .settings()
            .notify_targets()
            .await?
            .into_iter()
            .find(|t| t.active && !t.gateway.trim().is_empty() && t.scope == scope))
    }

    /// The scope's active channel and what to do with it. Read-only.
    pub async fn list_notify_targets(
        &self,
        task_id: &str,
        scope: Option<&str>,
    ) -> CoreResult<TargetsAnswer> {
        let task_id = validate::task_id(Some(task_id))?;
        let task = self
            .h
            .store()
            .get_task(&task_id)
            .await?
            .ok_or_else(|| CoreError::NotFound("task not found".into()))?;
        let scope = match scope.map(str::trim).filter(|s| !s.is_empty()) {
            Some(s @ ("work" | "unattended")) => s.to_string(),
            Some(_) => {
                return Err(CoreError::invalid(
                    "scope",
                    "scope must be \"work\" or \"unattended\"",
                ));
            }
            None => if task.task.unattended {
                "unattended"
            } else {
                "work"
            }
            .to_string(),
        };
        let tok = token::build(&task_id);
        let Some(target) = self.active_target(&scope).await? else {
            let hint = if scope == "work" {
                "No active work channel is configured: do not send. Ask the user to configure one \
                 in Settings → Notifications, or record the question with ask_human."
            } else {
                "No active unattended channel is configured: do not send and do not pretend a \
                 message went out. Tell the user; the question can still be recorded with ask_human."
            };
            return Ok(TargetsAnswer {
                scope,
                active: None,
                no_channel_configured: true,
                capability_unavailable: false,
                error: None,
                instructions: format!("{hint}\nTask token: {tok}"),
            });
        };
        if target.gateway != "hermes" && target.gateway != "openclaw" {
            return Ok(TargetsAnswer {
                scope,
                active: None,
                no_channel_configured: false,
                capability_unavailable: true,
                error: Some(format!("gateway {} is not supported", target.gateway)),
                instructions: "The active channel cannot be used by push_to_human; do not send."
                    .into(),
            });
        }
        let active = ActiveChannel {
            gateway: target.gateway.clone(),
            downstream: blank(&target.downstream),
            dest: blank(&target.dest),
            profile: blank(&target.profile),
            label: Some(target.label.clone()).filter(|l| !l.trim().is_empty()),
        };
        let unattended = scope == "unattended";
        let destination = match (&active.dest, active.gateway.as_str(), &active.downstream) {
            (Some(d), _, _) => d.clone(),
            (None, "hermes", Some(ds)) if unattended => format!("{ds} home channel"),
            _ => "<missing destination>".into(),
        };
        let mut lines = vec![
            format!(
                "Channel class: {} ({}).",
                scope,
                if unattended {
                    "nobody is watching; a reply resumes you"
                } else {
                    "the people you work with"
                }
            ),
            format!(
                "Active channel: {}{} via {}.",
                active
                    .label
                    .clone()
                    .map(|l| format!("{l} — "))
                    .unwrap_or_default(),
                active
                    .downstream
                    .clone()
                    .unwrap_or_else(|| "default platform".into()),
                active.gateway
            ),
            format!("Destination: {destination}."),
            format!(
                "Send with: push_to_human({{taskId: \"{task_id}\", message, scope: \"{scope}\",{} expectReply: {}}}).",
                if unattended { "" } else { " to," },
                unattended
            ),
        ];
        if !unattended && active.dest.is_none() {
            lines.push("This is the work scope without a fixed destination: you must pass `to` (a chat name, alias or id).".into());
        }
        if unattended {
            lines.push("After a question is sent with expectReply, end your turn and wait: the reply is typed into this terminal.".into());
        }
        lines.push(format!(
            "The message carries the task token {tok} so a reply finds this task."
        ));
        Ok(TargetsAnswer {
            scope,
            active: Some(active),
            no_channel_configured: false,
            capability_unavailable: false,
            error: None,
            instructions: lines.join("\n"),
        })
    }
}
