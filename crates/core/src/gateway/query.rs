//! `route_gateway_query` (docs/tower-messaging.md §8.7, docs/tower-messaging.md §8.8): a NON_OWNER's
//! question about a project, answered from a bounded read of it — no
//! inbound row, session, Workbench event, reply or task is written, and the
//! channel's authorisation is read again on every call.
//!
//! Channel access is the setting `tower-agent.channel-access.v1`
//! (`{version: 1, channels: {"[\"<gw>\",\"<platform>\",\"<chat>\"]":
//! {status: AUTHORIZED|REVOKED, scope: {mode: ALL|WORKSPACE|PROJECTS, …}}}}`);
//! the OWNER is always allowed, with every project in scope.

use crate::gateway::Gateway;
use chrono::Utc;
use serde_json::{Value, json};

use super::{
    ids,
    owner::{Role, Sender},
    projects::{self, Ask, Resolution, Scope},
    route_input::QueryInput,
};
use crate::CoreResult;
use harness_types::ChatAccess;

pub const CHANNEL_ACCESS_KEY: &str = "tower-agent.channel-access.v1";
/// Most tasks a query answer lists.
const MAX_TASKS: usize = 50;

/// A channel's access decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    Allowed(Scope),
    /// `CHANNEL_UNAUTHORIZED`, `CHANNEL_REVOKED` or `SCOPE_INVALID`.
    Denied(&'static str),
}

/// The channel access key: a JSON array of the normalised gateway,
/// platform and chat.
pub fn channel_key(gateway: &str, platform: &str, chat_id: &str) -> String {
    json!([
        ids::normalize(gateway),
        ids::normalize(platform),
        ids::normalize_chat_id(platform, chat_id)
    ])
    .to_string()
}

fn scope_of(record: &Value) -> Option<Scope> {
    let scope = record.get("scope")?;
    match scope.get("mode").and_then(Value::as_str)? {
        "ALL" => Some(Scope::All),
        "WORKSPACE" => scope
            .get("workspaceId")
            .and_then(Value::as_str)
            .map(|w| Scope::Workspace(w.to_string())),
        "PROJECTS" => {
            let ids: Vec<String> = scope
                .get("projectIds")?
                .as_array()?
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            (!ids.is_empty()).then_some(Scope::Projects(ids))
        }
        _ => None,
    }
}

const DENIED_INSTRUCTIONS: &str = "This chat is not authorised to ask about projects: tell the \
person that the OWNER must authorise the chat first. Do not answer from other sources.";

impl Gateway<'_> {
    /// docs/tower-messaging.md §8.8 `decideGatewayChannelAccess`.
    pub async fn channel_access(
        &self,
        gateway: &str,
        platform: &str,
        chat_id: &str,
        sender_id: Option<&str>,
    ) -> CoreResult<Access> {
        let role = self
            .gateway_role(Sender {
                gateway,
                platform,
                sender_id,
            })
            .await?;
        if role == Role::Owner {
            return Ok(Access::Allowed(Scope::All));
        }
        let config = self.h.store().get_setting(CHANNEL_ACCESS_KEY).await?;
        let record = config
            .as_ref()
            .filter(|c| c.get("version").and_then(Value::as_i64) == Some(1))
            .and_then(|c| c.get("channels"))
            .and_then(|c| c.get(channel_key(gateway, platform, chat_id)))
            .cloned();
        let Some(record) = record else {
            return Ok(Access::Denied("CHANNEL_UNAUTHORIZED"));
        };
        if record.get("status").and_then(Value::as_str) != Some(ChatAccess::Authorized.as_str()) {
            return Ok(Access::Denied("CHANNEL_REVOKED"));
        }
        let Some(scope) = scope_of(&record) else {
            return Ok(Access::Denied("SCOPE_INVALID"));
        };
        // A scope naming a workspace or project that is gone is invalid.
        let projects = self.h.store().list_projects().await?;
        let valid = match &scope {
            Scope::All => true,
            Scope::Workspace(w) => projects.iter().any(|p| &p.workspace_id == w),
            Scope::Projects(wanted) => wanted.iter().all(|id| projects.iter().any(|p| &p.id == id)),
        };
        Ok(if valid {
            Access::Allowed(scope)
        } else {
            Access::Denied("SCOPE_INVALID")
        })
    }

    /// docs/tower-messaging.md §8.7, read-only.
    pub async fn route_gateway_query(&self, input: &QueryInput) -> CoreResult<Value> {
        let q = input.check()?;
        let access = self
            .channel_access(&q.gateway, &q.platform, &q.chat_id, q.sender_id.as_deref())
            .await?;
        let scope = match access {
            Access::Allowed(scope) => scope,
            Access::Denied(reason) => {
                return Ok(json!({"mode": "channel_access_denied", "noOp": true,
                    "reason": reason, "instructions": DENIED_INSTRUCTIONS}));
            }
        };
        let resolved = self
            .resolve_project(Ask {
                conv: None,
                project: q.project.as_deref(),
                scope: &scope,
                ignore_sessions: true,
                now: Utc::now(),
            })
            .await?;
        let (project, resolution) = match resolved {
            Resolution::Found {
                project,
                resolution,
                ..
            } => (project, resolution),
            Resolution::Candidates { candidates, reason } => {
                return Ok(json!({"mode": "needs_project_selection", "reason": reason,
                    "candidates": candidates.iter().map(projects::candidate).collect::<Vec<_>>(),
                    "instructions": "Ask which project is meant (one of the candidates)."}));
            }
        };
        let mut tasks: Vec<_> = self
            .h
            .store()
            .list_tasks(1000)
            .await?
            .into_iter()
            .filter(|t| t.task.project_id.as_deref() == Some(project.id.as_str()))
            .collect();
        tasks.sort_by_key(|t| std::cmp::Reverse(t.task.updated_at));
        let tasks: Vec<Value> = tasks
            .iter()
            .take(MAX_TASKS)
            .map(|t| {
                json!({"taskId": t.task.id, "title": t.task.title,
                "status": t.task.status, "updatedAt": t.task.updated_at})
            })
            .collect();
        Ok(
            json!({"mode": "project_query", "project": projects::candidate(&project),
            "resolution": resolution, "question": q.question, "tasks": tasks,
            "knowledge": {"query": q.question,
                "projects": [{"projectId": project.id, "name": project.name}],
                "facts": [], "notes": []},
            "instructions": "Answer only from this result. Do not create a task, type into a \
                terminal, start the Workbench or open a session: this chat may only ask."}),
        )
    }
}
