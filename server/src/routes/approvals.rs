//! Approvals of risky tool calls: the policy (global and per
//! project), the pre-tool hook's check, the audit list and a person's
//! decision. Thin: every rule is in `harness_core::approvals`.

use std::time::Duration;

use axum::{
    Json, Router,
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use harness_core::approvals::{
    Approval, AuditFilter, CallVerdict, GlobalPolicy, Policy, ToolCall, audit, flow::MAX_WAIT,
};
use serde::Deserialize;

use crate::{
    error::ApiResult,
    extract::{Admin, Caller, JsonBody, QueryParams},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/settings/approval-policy",
            get(global).put(put_global).delete(reset_global),
        )
        .route(
            "/projects/{id}/approval-policy",
            get(project).put(put_project),
        )
        .route("/internal/approvals/check", post(check))
        .route("/approvals", get(list))
        .route("/approvals/{id}", get(one))
        .route("/approvals/{id}/decide", post(decide))
}

#[utoipa::path(get, path = "/api/settings/approval-policy", tag = "approvals",
    responses((status = 200, description = "The global rules (built-in until one is stored)", body = GlobalPolicy)))]
async fn global(State(s): State<AppState>, _: Admin) -> ApiResult<Json<GlobalPolicy>> {
    Ok(Json(s.harness.approvals().global_approval_policy().await?))
}

#[utoipa::path(put, path = "/api/settings/approval-policy", tag = "approvals", request_body = Policy,
    responses((status = 200, description = "Stored; errors name the field and the rule", body = GlobalPolicy)))]
async fn put_global(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(policy): JsonBody<Policy>,
) -> ApiResult<Json<GlobalPolicy>> {
    Ok(Json(
        s.harness
            .approvals()
            .set_global_approval_policy(Some(policy))
            .await?,
    ))
}

#[utoipa::path(delete, path = "/api/settings/approval-policy", tag = "approvals",
    responses((status = 200, description = "Back to the built-in rules", body = GlobalPolicy)))]
async fn reset_global(State(s): State<AppState>, _: Admin) -> ApiResult<Json<GlobalPolicy>> {
    Ok(Json(
        s.harness
            .approvals()
            .set_global_approval_policy(None)
            .await?,
    ))
}

#[utoipa::path(get, path = "/api/projects/{id}/approval-policy", tag = "approvals",
    params(("id" = String, Path, description = "The project's id")),
    responses((status = 200, description = "The project's own rules, tried before the global ones", body = Policy)))]
async fn project(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Policy>> {
    Ok(Json(
        s.harness.approvals().project_approval_policy(&id).await?,
    ))
}

#[utoipa::path(put, path = "/api/projects/{id}/approval-policy", tag = "approvals", request_body = Policy,
    params(("id" = String, Path, description = "The project's id")),
    responses((status = 200, description = "Stored", body = Policy)))]
async fn put_project(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(policy): JsonBody<Policy>,
) -> ApiResult<Json<Policy>> {
    Ok(Json(
        s.harness
            .approvals()
            .set_project_approval_policy(&id, policy)
            .await?,
    ))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CheckBody {
    task_id: Option<String>,
    #[serde(flatten)]
    call: ToolCall,
    /// How long to hold the call for a decision (seconds, ≤ 120).
    wait_seconds: Option<u64>,
}

/// The pre-tool hook's check (agent token: its own task).
#[utoipa::path(post, path = "/api/internal/approvals/check", tag = "approvals", request_body = CheckBody,
    responses((status = 200, description = "allow or deny, with the reason", body = CallVerdict)))]
async fn check(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<CheckBody>,
) -> ApiResult<Json<CallVerdict>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let execution = who.bind_execution(None)?;
    let wait = Duration::from_secs(body.wait_seconds.unwrap_or(0)).min(MAX_WAIT);
    s.terminals
        .note_hook(
            &task_id,
            execution.as_deref(),
            harness_core::agent_state::HookEvent::PreToolUse,
        )
        .await;
    Ok(Json(
        s.harness
            .approvals()
            .check_tool_call(&task_id, execution.as_deref(), &body.call, wait)
            .await?,
    ))
}

#[derive(utoipa::IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    task_id: Option<String>,
    /// At most this many rows (1..=500, default 100).
    limit: Option<u32>,
    /// Only approvals created at or after this time (RFC 3339).
    since: Option<String>,
    /// Only approvals created before this time (RFC 3339).
    until: Option<String>,
    /// The next page: the id of the last approval of the previous page
    /// (rows older than it, newest first).
    before: Option<String>,
    /// `json` (default) or `csv` (a download, RFC 4180, one row per approval).
    format: Option<String>,
}

#[utoipa::path(get, path = "/api/approvals", tag = "approvals", params(ListQuery),
    responses((status = 200, description = "The audit, newest first: JSON, or CSV (text/csv) with `format=csv`; page on with `before` = the last id, or bound it with `since` / `until`", body = Vec<Approval>),
        (status = 400, description = "A bad `limit`, `since`, `until` or `before`, named in `field`")))]
async fn list(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<ListQuery>,
) -> ApiResult<Response> {
    let format = audit::Format::parse(q.format.as_deref())?;
    let rows = s
        .harness
        .approvals()
        .audit_approvals(AuditFilter {
            task_id: q.task_id.as_deref(),
            since: q.since.as_deref(),
            until: q.until.as_deref(),
            before: q.before.as_deref(),
            limit: q.limit,
        })
        .await?;
    Ok(match format {
        audit::Format::Json => Json(rows).into_response(),
        audit::Format::Csv => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"harness-approvals.csv\"",
                ),
            ],
            audit::csv(&rows),
        )
            .into_response(),
    })
}

#[utoipa::path(get, path = "/api/approvals/{id}", tag = "approvals",
    params(("id" = String, Path, description = "The approval's id")),
    responses((status = 200, description = "One approval", body = Approval)))]
async fn one(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Approval>> {
    Ok(Json(s.harness.approvals().approval(&id).await?))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DecideBody {
    /// `approve` or `deny`.
    decision: Option<String>,
    reason: Option<String>,
}

/// A person's decision (an agent's token: 403); the first wins, a later one
/// is 409 "already decided".
#[utoipa::path(post, path = "/api/approvals/{id}/decide", tag = "approvals", request_body = DecideBody,
    params(("id" = String, Path, description = "The approval's id")),
    responses((status = 200, description = "Decided", body = Approval)))]
async fn decide(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<DecideBody>,
) -> ApiResult<Json<Approval>> {
    let person = who.person()?;
    let approve = match body.decision.as_deref().map(str::trim) {
        Some("approve") => true,
        Some("deny") => false,
        _ => {
            return Err(harness_core::CoreError::invalid(
                "decision",
                "decision must be \"approve\" or \"deny\"",
            )
            .into());
        }
    };
    Ok(Json(
        s.harness
            .approvals()
            .decide_approval(&person, &id, approve, body.reason.as_deref(), "rest")
            .await?,
    ))
}

/// These routes in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    global,
    put_global,
    reset_global,
    project,
    put_project,
    check,
    list,
    one,
    decide
))]
pub(super) struct Api;
