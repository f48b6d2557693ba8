use axum::{Json, Router, extract::State, routing::get};
use harness_core::{
    agent_states::AgentStateSettings, reminders::ReminderSchedule, settings::NotifyTarget,
};

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/settings/notify-targets", get(list).put(replace))
        .route("/settings/directive", get(directive).put(set_directive))
        .route("/settings/reminders", get(reminders).put(set_reminders))
        .route("/settings/reachability", get(reachability))
        .route(
            "/settings/agent-states",
            get(agent_states).put(set_agent_states),
        )
}

#[utoipa::path(
    get,
    path = "/api/settings/notify-targets",
    tag = "settings",
    responses(
        (status = 200, description = "The notify targets", body = Vec<harness_core::settings::NotifyTarget>)
    )
)]
async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<NotifyTarget>>> {
    Ok(Json(s.harness.settings().notify_targets().await?))
}

#[derive(utoipa::ToSchema, serde::Deserialize)]
struct Targets {
    targets: Vec<NotifyTarget>,
}

/// Body: `{"targets": [...]}` (an object, like every other body).
#[utoipa::path(
    put,
    path = "/api/settings/notify-targets",
    tag = "settings",
    request_body = Targets,
    responses(
        (status = 200, description = "The notify targets", body = Vec<harness_core::settings::NotifyTarget>)
    )
)]
async fn replace(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<Targets>,
) -> ApiResult<Json<Vec<NotifyTarget>>> {
    Ok(Json(
        s.harness
            .settings()
            .set_notify_targets(body.targets)
            .await?,
    ))
}

/// `GET /api/settings/directive` → `{directive}`: the system directive agents get.
#[utoipa::path(
    get,
    path = "/api/settings/directive",
    tag = "settings",
    responses(
        (status = 200, description = "The system directive", body = super::openapi::DirectiveResponse)
    )
)]
async fn directive(State(s): State<AppState>, _: Admin) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(
        serde_json::json!({"directive": s.harness.settings().system_directive().await?}),
    ))
}

#[derive(utoipa::ToSchema, serde::Deserialize)]
struct DirectiveBody {
    directive: Option<String>,
}

/// `PUT /api/settings/directive {directive}`; empty restores the built-in one.
#[utoipa::path(
    put,
    path = "/api/settings/directive",
    tag = "settings",
    request_body = DirectiveBody,
    responses(
        (status = 200, description = "The system directive", body = super::openapi::DirectiveResponse)
    )
)]
async fn set_directive(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<DirectiveBody>,
) -> ApiResult<Json<serde_json::Value>> {
    let directive = s
        .harness
        .settings()
        .set_system_directive(body.directive.as_deref())
        .await?;
    Ok(Json(serde_json::json!({"directive": directive})))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
/// When an OPEN ask that reached a chat is sent again.
#[utoipa::path(get, path = "/api/settings/reminders", tag = "settings",
    responses((status = 200, description = "Seconds after the ask, per urgency (the defaults until one is stored)", body = ReminderSchedule)))]
async fn reminders(State(s): State<AppState>, _: Admin) -> ApiResult<Json<ReminderSchedule>> {
    Ok(Json(s.harness.asks().reminder_schedule().await?))
}

#[utoipa::path(put, path = "/api/settings/reminders", tag = "settings", request_body = ReminderSchedule,
    responses((status = 200, description = "Stored; an invalid list is a 400 naming it", body = ReminderSchedule)))]
async fn set_reminders(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(schedule): JsonBody<ReminderSchedule>,
) -> ApiResult<Json<ReminderSchedule>> {
    Ok(Json(
        s.harness.asks().set_reminder_schedule(schedule).await?,
    ))
}

/// Per notify target: when its person last wrote, the platform's delivery
/// window and whether it passed, and the newest send failure.
#[utoipa::path(get, path = "/api/settings/reachability", tag = "settings",
    responses((status = 200, description = "Each notify target's reachability", body = Vec<harness_core::reachability::TargetReachability>)))]
async fn reachability(
    State(s): State<AppState>,
    _: Admin,
) -> ApiResult<Json<Vec<harness_core::reachability::TargetReachability>>> {
    Ok(Json(
        s.harness.asks().reachability(chrono::Utc::now()).await?,
    ))
}

/// When a working agent counts as stalled (`terminals::agent_watch`).
#[utoipa::path(get, path = "/api/settings/agent-states", tag = "settings",
    responses((status = 200, description = "The stall threshold (the server's default until one is stored)", body = AgentStateSettings)))]
async fn agent_states(State(s): State<AppState>, _: Admin) -> ApiResult<Json<AgentStateSettings>> {
    let after = s.terminals.stall_after().await?;
    Ok(Json(AgentStateSettings {
        stall_after_secs: after.as_secs(),
    }))
}

#[utoipa::path(put, path = "/api/settings/agent-states", tag = "settings", request_body = AgentStateSettings,
    responses((status = 200, description = "Stored; a threshold out of range is a 400 naming it", body = AgentStateSettings)))]
async fn set_agent_states(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(settings): JsonBody<AgentStateSettings>,
) -> ApiResult<Json<AgentStateSettings>> {
    Ok(Json(
        s.harness
            .agents()
            .set_agent_state_settings(settings)
            .await?,
    ))
}

#[derive(utoipa::OpenApi)]
#[openapi(paths(
    list,
    replace,
    directive,
    set_directive,
    reminders,
    set_reminders,
    reachability,
    agent_states,
    set_agent_states
))]
pub(super) struct Api;
