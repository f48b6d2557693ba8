//! The automatic recovery (`harness_core::agent_actions`): its policy —
//! global, per project — and a task's effective policy with its timed
//! actions.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::get,
};
use harness_core::agent_actions::{AgentAction, RecoveryOverride, RecoveryPolicy};
use serde::Serialize;

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/settings/recovery", get(global).put(set_global))
        .route("/projects/{id}/recovery", get(project).put(set_project))
        .route("/tasks/{id}/recovery", get(task))
}

/// The global policy, with the defaults next to it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct GlobalRecovery {
    policy: RecoveryPolicy,
    defaults: RecoveryPolicy,
}

#[utoipa::path(get, path = "/api/settings/recovery", tag = "settings",
    responses((status = 200, description = "The global policy of the automatic recovery (the defaults until one is stored) and the defaults", body = GlobalRecovery)))]
async fn global(State(s): State<AppState>, _: Admin) -> ApiResult<Json<GlobalRecovery>> {
    Ok(Json(GlobalRecovery {
        policy: s.harness.agents().recovery_policy().await?,
        defaults: RecoveryPolicy::default(),
    }))
}

/// A value left out is its default.
#[utoipa::path(put, path = "/api/settings/recovery", tag = "settings", request_body = RecoveryOverride,
    responses((status = 200, description = "Stored; a value out of range is a 400 naming it", body = GlobalRecovery)))]
async fn set_global(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<RecoveryOverride>,
) -> ApiResult<Json<GlobalRecovery>> {
    Ok(Json(GlobalRecovery {
        policy: s.harness.agents().set_recovery_policy(body).await?,
        defaults: RecoveryPolicy::default(),
    }))
}

/// A project's override (`null`: none) and the policy its tasks get.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ProjectRecovery {
    #[serde(rename = "override")]
    overrides: Option<RecoveryOverride>,
    effective: RecoveryPolicy,
}

async fn project_answer(s: &AppState, id: &str) -> ApiResult<Json<ProjectRecovery>> {
    let overrides = s.harness.agents().project_recovery(id).await?;
    let global = s.harness.agents().recovery_policy().await?;
    let effective =
        harness_core::agent_actions::policy::effective(Some(&global), overrides.as_ref(), None);
    Ok(Json(ProjectRecovery {
        overrides,
        effective,
    }))
}

#[utoipa::path(get, path = "/api/projects/{id}/recovery", tag = "projects",
    params(("id" = String, Path, description = "The project's id (a CUID)")),
    responses((status = 200, description = "The project's override of the automatic recovery and the policy its tasks get", body = ProjectRecovery)))]
async fn project(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<ProjectRecovery>> {
    project_answer(&s, &id).await
}

/// The values the project sets over the global policy (`{}`: none).
#[utoipa::path(put, path = "/api/projects/{id}/recovery", tag = "projects",
    params(("id" = String, Path, description = "The project's id (a CUID)")),
    request_body = RecoveryOverride,
    responses((status = 200, description = "Stored; a value out of range is a 400 naming it", body = ProjectRecovery)))]
async fn set_project(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<RecoveryOverride>,
) -> ApiResult<Json<ProjectRecovery>> {
    let body = (body != RecoveryOverride::default()).then_some(body);
    s.harness.agents().set_project_recovery(&id, body).await?;
    project_answer(&s, &id).await
}

/// A task's effective policy and its timed actions, newest first.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct TaskRecovery {
    policy: RecoveryPolicy,
    actions: Vec<AgentAction>,
}

#[utoipa::path(get, path = "/api/tasks/{id}/recovery", tag = "tasks",
    params(("id" = String, Path, description = "The task's id (a CUID)")),
    responses((status = 200, description = "The task's policy of the automatic recovery and its automatic actions", body = TaskRecovery)))]
async fn task(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<TaskRecovery>> {
    let view = s.harness.tasks().get_task(&id).await?;
    Ok(Json(TaskRecovery {
        policy: s.harness.agents().task_recovery_policy(&view).await?,
        actions: s.harness.agents().agent_actions(&view.task.id).await?,
    }))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(global, set_global, project, set_project, task))]
pub(super) struct Api;
