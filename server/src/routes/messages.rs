//! The notification center's data: `GET /api/harness/messages` (keyset paged),
//! plus ignore and dismiss.

use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::{delete, get, post},
};
use harness_core::{
    CoreError,
    model::{Cursor, Message, MessagePage, MessageQuery, MessageView},
    validate,
};
use serde::Deserialize;

use crate::{
    error::ApiResult,
    extract::{Admin, QueryParams},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/harness/messages", get(list))
        .route("/harness/messages/{id}/ignore", post(ignore))
        .route("/harness/messages/{id}", delete(dismiss))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListParams {
    view: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
    q: Option<String>,
    task_id: Option<String>,
    /// `children`: only messages of derived children.
    from: Option<String>,
}

fn parse(p: ListParams) -> Result<MessageQuery, CoreError> {
    let view = match p.view.as_deref() {
        None | Some("") => MessageView::Pending,
        Some(v) => MessageView::parse(v)
            .ok_or_else(|| CoreError::invalid("view", "view must be pending, answered or all"))?,
    };
    let cursor = match p.cursor.as_deref() {
        None | Some("") => None,
        Some(c) => Some(
            Cursor::decode(c).ok_or_else(|| CoreError::invalid("cursor", "malformed cursor"))?,
        ),
    };
    let limit = match p.limit.as_deref() {
        None | Some("") => 50,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=harness_core::messaging::MAX_PAGE_ROWS).contains(n))
            .ok_or_else(|| {
                CoreError::invalid(
                    "limit",
                    format!(
                        "limit must be an integer from 1 to {}",
                        harness_core::messaging::MAX_PAGE_ROWS
                    ),
                )
            })?,
    };
    let task_id = match p.task_id.as_deref() {
        None | Some("") => None,
        Some(t) => Some(validate::cuid("taskId", t)?),
    };
    let from_children = match p.from.as_deref() {
        None | Some("") | Some("all") => false,
        Some("children") => true,
        Some(_) => return Err(CoreError::invalid("from", "from must be children or all")),
    };
    Ok(MessageQuery {
        view,
        search: p.q,
        task_id,
        cursor,
        limit,
        from_children,
    })
}

#[utoipa::path(
    get,
    path = "/api/harness/messages",
    tag = "messages",
    params(
        ("view" = Option<harness_core::model::MessageView>, Query, description = "pending (default), answered or all"),
        ("cursor" = Option<String>, Query, description = "The previous page's nextCursor"),
        ("limit" = Option<u32>, Query, description = "Rows per page (default 50)"),
        ("q" = Option<String>, Query, description = "Search text"),
        ("taskId" = Option<String>, Query, description = "Only this task's messages"),
        ("from" = Option<String>, Query, description = "children: only derived children's messages; all (default)")
    ),
    responses(
        (status = 200, description = "A page of messages, newest first", body = harness_core::model::MessagePage)
    )
)]
async fn list(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(p): QueryParams<ListParams>,
) -> ApiResult<Json<serde_json::Value>> {
    let page: MessagePage = s.harness.asks().list_messages(parse(p)?).await?;
    let ids: Vec<String> = page.rows.iter().map(|r| r.message.id.clone()).collect();
    let choices = s.harness.asks().choices_for(&ids).await?;
    let mut body = serde_json::to_value(&page)
        .map_err(|e| CoreError::invalid_body(format!("cannot encode the page: {e}")))?;
    // Structured questions: each ask's choices, and who answered.
    if let Some(rows) = body
        .get_mut("rows")
        .and_then(serde_json::Value::as_array_mut)
    {
        for (row, r) in rows.iter_mut().zip(&page.rows) {
            let c = choices.get(&r.message.id);
            // options, multiSelect, default, deadlineAt, urgency (docs/contract.md §4).
            if let Some(serde_json::Value::Object(fields)) =
                c.map(serde_json::to_value).and_then(Result::ok)
                && let Some(row) = row.as_object_mut()
            {
                row.extend(fields);
            }
            if r.message.state == harness_core::model::MessageState::Answered {
                row["answeredBy"] = match c.and_then(|c| c.answered_by.clone()) {
                    Some(by) => serde_json::Value::String(by),
                    None => "human".into(),
                };
            }
        }
    }
    Ok(Json(body))
}

#[utoipa::path(
    post,
    path = "/api/harness/messages/{id}/ignore",
    tag = "messages",
    params(
        ("id" = String, Path, description = "The message's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The message, ignored", body = harness_core::model::Message)
    )
)]
async fn ignore(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Message>> {
    Ok(Json(s.harness.asks().ignore(&id).await?))
}

#[utoipa::path(
    delete,
    path = "/api/harness/messages/{id}",
    tag = "messages",
    params(
        ("id" = String, Path, description = "The message's id (a CUID)")
    ),
    responses(
        (status = 204, description = "Dismissed")
    )
)]
async fn dismiss(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    s.harness.asks().dismiss(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(
    paths(list, ignore, dismiss),
    components(schemas(harness_core::model::MessageView))
)]
pub(super) struct Api;
