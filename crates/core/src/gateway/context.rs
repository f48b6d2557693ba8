//! `resolve_gateway_task_context` (docs/tower-messaging.md §8.3): which task a
//! chat message refers to, read-only — no inbound row, no state change.
//!
//! Order: the reply-to message's delivery mapping in this chat
//! (`harness_delivery`) → an explicit `taskId` (`explicit_task`) → the
//! token in the quoted text (`quoted_task_token`) → in the content
//! (`content_task_token`). Tokens are found case-insensitively (docs/decisions.md D11). The
//! reference's second step: the reply-to message is a delivered gateway
//! reply in this chat to a request whose task was created
//! (`gateway_delivery`, the producer is the Workbench).

use crate::gateway::Gateway;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids;
use crate::{
    CoreError, CoreResult,
    model::{ExecutionStatus, TaskStatus},
    outbox::token,
    validate,
};

pub const MAX_PLATFORM_CHARS: usize = 64;
pub const MAX_ID_CHARS: usize = 512;
pub const MAX_QUOTED_CHARS: usize = 16_000;
pub const MAX_TASK_ID_CHARS: usize = 128;

/// What the gateway knows about a message (REST body / MCP arguments).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskContextInput {
    /// `hermes` or `openclaw`.
    pub gateway: Option<String>,
    pub platform: Option<String>,
    pub chat_id: Option<String>,
    /// The platform id of the message this one replies to.
    pub reply_to_message_id: Option<String>,
    /// The text this message quotes.
    pub quoted_text: Option<String>,
    pub task_id: Option<String>,
}

/// The checked input.
#[derive(Debug, Clone)]
pub struct Lookup {
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub reply_to_message_id: Option<String>,
    pub quoted_text: Option<String>,
    pub task_id: Option<String>,
}

pub(crate) fn text(
    value: Option<&str>,
    field: &'static str,
    max: usize,
) -> CoreResult<Option<String>> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) if v.chars().count() > max => Err(CoreError::invalid(
            field,
            format!("{field}: at most {max} characters"),
        )),
        Some(v) if v.contains('\0') => Err(CoreError::invalid(
            field,
            format!("{field}: no NUL characters"),
        )),
        Some(v) => Ok(Some(v.to_string())),
    }
}

pub(crate) fn required(value: Option<&str>, field: &'static str, max: usize) -> CoreResult<String> {
    text(value, field, max)?.ok_or_else(|| CoreError::invalid(field, format!("{field} required")))
}

/// `hermes` / `openclaw` (lower-cased).
pub(crate) fn gateway_name(value: Option<&str>) -> CoreResult<String> {
    let gateway = ids::normalize(&required(value, "gateway", MAX_PLATFORM_CHARS)?);
    match gateway.as_str() {
        "hermes" | "openclaw" => Ok(gateway),
        _ => Err(CoreError::invalid(
            "gateway",
            "gateway must be hermes or openclaw",
        )),
    }
}

impl TaskContextInput {
    /// Check every field (400 naming it); one of `replyToMessageId`,
    /// `quotedText`, `taskId` is required.
    pub fn check(&self) -> CoreResult<Lookup> {
        let lookup = Lookup {
            gateway: gateway_name(self.gateway.as_deref())?,
            platform: ids::normalize(&required(
                self.platform.as_deref(),
                "platform",
                MAX_PLATFORM_CHARS,
            )?),
            chat_id: required(self.chat_id.as_deref(), "chatId", MAX_ID_CHARS)?,
            reply_to_message_id: text(
                self.reply_to_message_id.as_deref(),
                "replyToMessageId",
                MAX_ID_CHARS,
            )?,
            quoted_text: text(self.quoted_text.as_deref(), "quotedText", MAX_QUOTED_CHARS)?,
            task_id: text(self.task_id.as_deref(), "taskId", MAX_TASK_ID_CHARS)?
                .map(|t| validate::task_id(Some(&t.to_ascii_lowercase())))
                .transpose()?,
        };
        if lookup.reply_to_message_id.is_none()
            && lookup.quoted_text.is_none()
            && lookup.task_id.is_none()
        {
            return Err(CoreError::invalid(
                "replyToMessageId",
                "one of replyToMessageId, quotedText or taskId is required",
            ));
        }
        Ok(lookup)
    }
}

/// How the task was found.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BindingSource {
    HarnessDelivery,
    GatewayDelivery,
    ExplicitTask,
    QuotedTaskToken,
    ContentTaskToken,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextProject {
    pub project_id: String,
    pub name: String,
    pub alias: Option<String>,
    pub workspace_id: String,
    pub workspace_name: String,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LatestExecution {
    pub execution_id: String,
    pub status: ExecutionStatus,
    pub summary: Option<String>,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

/// GatewayTaskContextResult: `bound: false` with `reason`, or the task.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskContext {
    pub bound: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_source: Option<BindingSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workbench_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_status: Option<TaskStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_open_ask: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ContextProject>,
    /// `null` when the task never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_execution: Option<Option<LatestExecution>>,
}

impl TaskContext {
    fn not_found() -> Self {
        Self {
            bound: false,
            reason: Some("not_found".into()),
            binding_source: None,
            subject_task_id: None,
            producer_task_id: None,
            workbench_task_id: None,
            parent_task_id: None,
            task_title: None,
            task_status: None,
            has_open_ask: None,
            project: None,
            latest_execution: None,
        }
    }
}

impl Gateway<'_> {
    /// docs/tower-messaging.md §8.3, read-only. `content` is the message's own text (continuation).
    pub async fn resolve_gateway_task_context(
        &self,
        input: &TaskContextInput,
    ) -> CoreResult<TaskContext> {
        let lookup = input.check()?;
        self.task_context(&lookup, None).await
    }

    pub(crate) async fn task_context(
        &self,
        lookup: &Lookup,
        content: Option<&str>,
    ) -> CoreResult<TaskContext> {
        let mut found: Option<(String, BindingSource)> = None;
        if let Some(reply_to) = &lookup.reply_to_message_id
            && let Some(mapping) = self
                .delivery_mapping(&lookup.gateway, &lookup.platform, &lookup.chat_id, reply_to)
                .await?
            && let Some(task) = mapping.task_id
        {
            found = Some((task, BindingSource::HarnessDelivery));
        }
        let mut producer: Option<String> = None;
        if found.is_none()
            && let Some(reply_to) = &lookup.reply_to_message_id
            && let Some((_, task, workbench)) = self
                .h
                .store()
                .tasks_of_reply(&lookup.gateway, &lookup.platform, reply_to)
                .await?
                .into_iter()
                .find(|(chat, _, _)| ids::same_chat(&lookup.platform, chat, &lookup.chat_id))
        {
            producer = workbench;
            found = Some((task, BindingSource::GatewayDelivery));
        }
        if found.is_none()
            && let Some(task) = &lookup.task_id
        {
            found = Some((task.clone(), BindingSource::ExplicitTask));
        }
        if found.is_none()
            && let Some(task) = lookup.quoted_text.as_deref().and_then(token::extract)
        {
            found = Some((task, BindingSource::QuotedTaskToken));
        }
        if found.is_none()
            && let Some(task) = content.and_then(token::extract)
        {
            found = Some((task, BindingSource::ContentTaskToken));
        }
        let Some((task_id, source)) = found else {
            return Ok(TaskContext::not_found());
        };
        let view = match self.h.tasks().get_task(&task_id).await {
            Ok(view) => view,
            Err(CoreError::NotFound(_) | CoreError::Invalid { .. }) => {
                return Ok(TaskContext::not_found());
            }
            Err(other) => return Err(other),
        };
        let task = &view.task;
        let project = match &task.project_id {
            Some(id) => Some(self.h.tasks().project(id).await?),
            None => None,
        };
        let workbench = match (&task.parent_task_id, &project) {
            (Some(parent), Some(p)) => self
                .h
                .tasks()
                .project_workbench(&p.id)
                .await?
                .map(|w| w.task.id)
                .filter(|w| w == parent),
            _ => None,
        };
        Ok(TaskContext {
            bound: true,
            reason: None,
            binding_source: Some(source),
            subject_task_id: Some(task.id.clone()),
            producer_task_id: Some(match source {
                BindingSource::HarnessDelivery => task.id.clone(),
                BindingSource::GatewayDelivery => producer.unwrap_or_else(|| task.id.clone()),
                _ => task
                    .parent_task_id
                    .clone()
                    .unwrap_or_else(|| task.id.clone()),
            }),
            workbench_task_id: workbench,
            parent_task_id: task.parent_task_id.clone(),
            task_title: Some(task.title.clone()),
            task_status: Some(task.status),
            has_open_ask: Some(view.open_ask),
            project: project.map(|p| ContextProject {
                project_id: p.id,
                name: p.name,
                alias: None,
                workspace_id: p.workspace_id,
                workspace_name: p.workspace,
            }),
            latest_execution: Some(view.execution.as_ref().map(|e| LatestExecution {
                execution_id: e.id.clone(),
                status: e.status,
                summary: None,
                started_at: e.created_at,
                ended_at: e.ended_at,
            })),
        })
    }
}
