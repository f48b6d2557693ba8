//! Gateway inbound as the `/gateway` page shows it (issue
//! 28.7): the channels with their owners and access, the sessions, the
//! inbound messages with their routing result and their replies, and the
//! gateway credential (masked, rotatable). Thin adapters over
//! `harness_core::gateway::{access, listing}` and the core's credential.

use harness_types::{
    ChatAccess, InboundIntent, InboundState, ReplyKind, ReplyState, SessionStatus,
};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// The OWNER ids of one gateway on one platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerRow {
    pub gateway: String,
    pub platform: String,
    pub ids: Vec<String>,
}

/// A chat's access record (docs/tower-messaging.md §8.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelRow {
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub chat_name: Option<String>,
    /// `None`: a record without a known status.
    pub status: Option<ChatAccess>,
    /// `ALL`, `WORKSPACE <name>` or the project names.
    pub scope: String,
    pub scope_valid: bool,
    pub updated_by: Option<String>,
    pub updated_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    pub id: String,
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub thread: Option<String>,
    pub sender: Option<String>,
    pub status: SessionStatus,
    pub project: String,
    pub workbench_task_id: Option<String>,
    pub last_activity_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyRow {
    pub id: String,
    pub kind: ReplyKind,
    pub state: ReplyState,
    pub content: String,
    pub last_error: Option<String>,
}

/// An inbound message with its routing result and its replies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboundRow {
    pub id: String,
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub sender: Option<String>,
    pub intent: InboundIntent,
    pub state: InboundState,
    /// The routing result's `mode` (`project_work`, `task_context`, …).
    pub mode: Option<String>,
    pub project: Option<String>,
    pub task_id: Option<String>,
    pub content: String,
    pub last_error: Option<String>,
    pub created_ms: i64,
    pub replies: Vec<ReplyRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayData {
    pub owners: Vec<OwnerRow>,
    pub channels: Vec<ChannelRow>,
    pub sessions: Vec<SessionRow>,
    pub inbound: Vec<InboundRow>,
    /// The gateway credential masked; `None`: there is none.
    pub token: Option<String>,
}

#[cfg(feature = "ssr")]
fn text(v: &serde_json::Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

#[cfg(feature = "ssr")]
fn scope_text(c: &serde_json::Value) -> String {
    let scope = &c["scope"];
    match scope["mode"].as_str().unwrap_or_default() {
        "WORKSPACE" => format!(
            "WORKSPACE {}",
            c["workspace"]["name"]
                .as_str()
                .or(scope["workspaceId"].as_str())
                .unwrap_or_default()
        ),
        "PROJECTS" => c["projects"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        p["name"]
                            .as_str()
                            .or(p["id"].as_str())
                            .unwrap_or_default()
                            .to_string()
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default(),
        other => other.to_string(),
    }
}

#[cfg(feature = "ssr")]
async fn inbound_rows(
    h: &harness_core::Harness,
    state: Option<InboundState>,
    limit: u32,
) -> Result<Vec<InboundRow>, ServerFnError> {
    let rows = h
        .gateway()
        .gateway_inbound(state.map(InboundState::as_str), Some(limit))
        .await
        .map_err(ssr::to_sfn)?;
    Ok(rows
        .into_iter()
        .map(|v| {
            let i = v.inbound;
            InboundRow {
                id: i.id,
                gateway: i.gateway,
                platform: i.platform,
                chat_id: i.chat_id,
                sender: i.sender_id,
                intent: i.intent,
                state: i.state,
                mode: text(&v.result["mode"]),
                project: text(&v.result["project"]["name"]),
                task_id: text(&v.result["taskId"]).or(i.created_task_id),
                content: i.content,
                last_error: i.last_error,
                created_ms: i.created_at.timestamp_millis(),
                replies: v
                    .replies
                    .into_iter()
                    .map(|r| ReplyRow {
                        id: r.id,
                        kind: r.kind,
                        state: r.state,
                        content: r.content,
                        last_error: r.last_error,
                    })
                    .collect(),
            }
        })
        .collect())
}

/// Everything the `/gateway` page shows (`state`: only inbound rows in it).
#[server(prefix = "/sfn", endpoint = "gateway_page")]
pub async fn gateway_page(state: Option<InboundState>) -> Result<GatewayData, ServerFnError> {
    let h = ssr::harness()?;
    let channels = h.gateway().gateway_channels().await.map_err(ssr::to_sfn)?;
    let mut owners = Vec::new();
    if let Some(map) = channels["owners"].as_object() {
        for (gateway, platforms) in map {
            for (platform, ids) in platforms.as_object().into_iter().flatten() {
                owners.push(OwnerRow {
                    gateway: gateway.clone(),
                    platform: platform.clone(),
                    ids: ids
                        .as_array()
                        .map(|a| a.iter().filter_map(text).collect())
                        .unwrap_or_default(),
                });
            }
        }
    }
    let channel_rows = channels["channels"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| ChannelRow {
                    gateway: text(&c["gateway"]).unwrap_or_default(),
                    platform: text(&c["platform"]).unwrap_or_default(),
                    chat_id: text(&c["chatId"]).unwrap_or_default(),
                    chat_name: text(&c["chatName"]),
                    status: c["status"].as_str().and_then(ChatAccess::parse),
                    scope: scope_text(c),
                    scope_valid: c["scopeValid"].as_bool().unwrap_or(false),
                    updated_by: text(&c["updatedBy"]),
                    updated_at: text(&c["updatedAt"]),
                })
                .collect()
        })
        .unwrap_or_default();
    let projects = h.tasks().list_projects().await.map_err(ssr::to_sfn)?;
    let sessions = h
        .gateway()
        .gateway_sessions(Some(100))
        .await
        .map_err(ssr::to_sfn)?
        .into_iter()
        .map(|s| SessionRow {
            project: projects
                .iter()
                .find(|p| p.id == s.project_id)
                .map(|p| p.name.clone())
                .unwrap_or(s.project_id),
            id: s.id,
            gateway: s.gateway,
            platform: s.platform,
            chat_id: s.chat_id,
            thread: s.thread_id.or(s.root_message_id),
            sender: s.sender_id,
            status: s.status,
            workbench_task_id: s.workbench_task_id,
            last_activity_ms: s.last_activity_at.timestamp_millis(),
        })
        .collect();
    Ok(GatewayData {
        owners,
        channels: channel_rows,
        sessions,
        inbound: inbound_rows(&h, state, 100).await?,
        token: h.access().gateway_token_preview(),
    })
}

/// The latest inbound messages with their routing result and replies
/// (`/harness`'s list, at most `limit`, 1–50).
#[server(prefix = "/sfn", endpoint = "recent_inbound")]
pub async fn recent_inbound(limit: u32) -> Result<Vec<InboundRow>, ServerFnError> {
    let h = ssr::harness()?;
    inbound_rows(&h, None, limit.clamp(1, 50)).await
}

/// Replace the gateway credential: the new token, shown once.
#[server(prefix = "/sfn", endpoint = "rotate_gateway_token")]
pub async fn rotate_gateway_token() -> Result<String, ServerFnError> {
    let h = ssr::harness()?;
    tokio::task::spawn_blocking(move || h.access().rotate_gateway_token())
        .await
        .map_err(|e| ServerFnError::new(e.to_string()))?
        .map_err(ssr::to_sfn)
}

/// "Retry now" for a FAILED, DEAD or SENT_UNVERIFIED reply: its new state.
#[server(prefix = "/sfn", endpoint = "retry_gateway_reply")]
pub async fn retry_gateway_reply(id: String) -> Result<ReplyState, ServerFnError> {
    let h = ssr::harness()?;
    let row = h
        .gateway()
        .retry_gateway_reply(&id)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(row.state)
}

/// "Mark as delivered" for a SENT_UNVERIFIED reply: its new state.
#[server(prefix = "/sfn", endpoint = "mark_gateway_reply_delivered")]
pub async fn mark_gateway_reply_delivered(id: String) -> Result<ReplyState, ServerFnError> {
    let h = ssr::harness()?;
    let row = h
        .gateway()
        .mark_gateway_reply_delivered(&id)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(row.state)
}
