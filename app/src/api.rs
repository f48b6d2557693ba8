//! Server functions and the DTOs they exchange with the browser.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One pending question as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskRow {
    pub id: String,
    pub task_id: String,
    pub task_title: String,
    pub workspace: Option<String>,
    pub project: Option<String>,
    pub content: String,
    /// RFC 3339, UTC.
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverviewData {
    pub pending: u64,
    pub tasks: usize,
}

/// The outcome of a reply, as shown to the person who sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyResult {
    pub task_id: String,
    /// `continued`, `already_running` or `not_running`.
    pub mode: String,
    pub deduped: bool,
}

#[cfg(feature = "ssr")]
mod ssr {
    use harness_core::{CoreError, Harness};
    use leptos::prelude::*;

    pub fn harness() -> Result<Harness, ServerFnError> {
        use_context::<Harness>().ok_or_else(|| ServerFnError::new("server is not initialised"))
    }

    /// Client-facing text for a core error, with the HTTP status of its class
    /// (the same mapping as the REST API); storage details stay in the log.
    pub fn to_sfn(err: CoreError) -> ServerFnError {
        use http::StatusCode;
        let status = match &err {
            CoreError::Invalid { .. } => StatusCode::BAD_REQUEST,
            CoreError::NotFound(_) => StatusCode::NOT_FOUND,
            CoreError::Conflict(_) => StatusCode::CONFLICT,
            CoreError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            CoreError::Forbidden(_) => StatusCode::FORBIDDEN,
            CoreError::Store(inner) => {
                tracing::error!(error = %inner, "server function failed");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(status);
        }
        if status.is_server_error() {
            ServerFnError::new("internal error")
        } else {
            ServerFnError::new(err.to_string())
        }
    }
}

#[server(prefix = "/sfn", endpoint = "overview")]
pub async fn get_overview() -> Result<OverviewData, ServerFnError> {
    let h = ssr::harness()?;
    Ok(OverviewData {
        pending: h.pending_count().await.map_err(ssr::to_sfn)?,
        tasks: h.list_tasks().await.map_err(ssr::to_sfn)?.len(),
    })
}

#[server(prefix = "/sfn", endpoint = "pending_asks")]
pub async fn pending_asks() -> Result<Vec<AskRow>, ServerFnError> {
    use harness_core::model::{MessageQuery, MessageView};
    let h = ssr::harness()?;
    let page = h
        .list_messages(MessageQuery {
            view: MessageView::Pending,
            limit: 200,
            ..Default::default()
        })
        .await
        .map_err(ssr::to_sfn)?;
    Ok(page
        .rows
        .into_iter()
        .map(|r| AskRow {
            id: r.message.id,
            task_id: r.message.task_id,
            task_title: r.task_title,
            workspace: r.workspace_name,
            project: r.project_name,
            content: r.message.content,
            created_at: r.message.created_at.to_rfc3339(),
        })
        .collect())
}

/// Answer a task's open question; the task resumes.
#[server(prefix = "/sfn", endpoint = "reply_ask")]
pub async fn reply_ask(task_id: String, text: String) -> Result<ReplyResult, ServerFnError> {
    let h = ssr::harness()?;
    let out = h
        .reply(&task_id, Some(&text), true)
        .await
        .map_err(ssr::to_sfn)?;
    let mode = serde_json::to_value(out.mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    Ok(ReplyResult {
        task_id: out.task_id,
        mode,
        deduped: out.deduped,
    })
}
