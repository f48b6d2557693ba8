//! The morning report (`harness_core::report`): the report of the caller's
//! scope (`GET /api/report`), sent to chat on demand, a reply that answers
//! its numbered items, and the one "waits for you" count. Thin.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};
use chrono::Utc;
use harness_core::{
    report::{
        BatchOutcome, ReplyFrom, Report, Waiting,
        service::{parse_lang, parse_since},
        text::in_lang,
    },
    store::ReportChannel,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    error::ApiResult,
    extract::{Caller, JsonBody, QueryParams},
    report_work::LocalWork,
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/report", get(report))
        .route("/report/send", post(send))
        .route("/report/{id}/reply", post(reply))
        .route("/waiting", get(waiting))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ReportQuery {
    /// From when: an RFC 3339 time or a duration back from now (`12h`);
    /// default the end of the last report sent to chat, else 24 h ago.
    since: Option<String>,
    /// The language of its phrases (`text`, each waiting item's `why`,
    /// each receipt's `text`): `en` (default) or `zh`.
    lang: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ReplyQuery {
    /// The language the outcome is said in (its `text` and each item's
    /// words): `en` (default) or `zh`.
    lang: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SendBody {
    since: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReplyBody {
    /// `1 B · 2 approve · 3 deny: reason · 4 later`, or one item per line.
    text: String,
}

fn since(text: Option<&str>) -> ApiResult<Option<chrono::DateTime<Utc>>> {
    Ok(text
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| parse_since(s, Utc::now()))
        .transpose()?)
}

#[utoipa::path(get, path = "/api/report", tag = "report", params(ReportQuery),
    responses((status = 200, description = "The report of the caller's scope (the admin: everything; an agent: its task and its children), kept so that a reply can name its items", body = Report),
        (status = 400, description = "A bad `since` or `lang`, named in `field`")))]
async fn report(
    State(s): State<AppState>,
    Caller(who): Caller,
    QueryParams(q): QueryParams<ReportQuery>,
) -> ApiResult<Json<Report>> {
    let since = since(q.since.as_deref())?;
    let lang = parse_lang(q.lang.as_deref())?;
    let report = s
        .harness
        .reports()
        .report(&who, since, ReportChannel::Api, &LocalWork)
        .await?;
    Ok(Json(in_lang(report, lang)))
}

#[utoipa::path(post, path = "/api/report/send", tag = "report", request_body = SendBody,
    responses((status = 200, description = "Sent to the active unattended notify target: {report, outboundIds}"),
        (status = 409, description = "No active unattended notify target")))]
async fn send(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<SendBody>,
) -> ApiResult<Json<Value>> {
    let since = since(body.since.as_deref())?;
    let sent = s
        .harness
        .reports()
        .send_report(&who, since, &LocalWork)
        .await?;
    let ids: Vec<&str> = sent.parts.iter().map(|p| p.id.as_str()).collect();
    Ok(Json(json!({"report": sent.report, "outboundIds": ids})))
}

#[utoipa::path(post, path = "/api/report/{id}/reply", tag = "report", request_body = ReplyBody,
    params(("id" = String, Path, description = "The report's id"), ReplyQuery),
    responses((status = 200, description = "Per numbered item: taken or not, and why; `malformed` when nothing was read", body = BatchOutcome),
        (status = 400, description = "A bad `lang`, named in `field`"),
        (status = 403, description = "Not a person (an agent's token)"),
        (status = 404, description = "No such report")))]
async fn reply(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    QueryParams(q): QueryParams<ReplyQuery>,
    JsonBody(body): JsonBody<ReplyBody>,
) -> ApiResult<Json<BatchOutcome>> {
    let by = who.person()?;
    let lang = parse_lang(q.lang.as_deref())?;
    let from = ReplyFrom {
        by: &by,
        sender: None,
        via: "report",
    };
    Ok(Json(
        s.harness
            .reports()
            .answer_report_in(from, &id, &body.text, Some(&s.terminals), lang)
            .await?,
    ))
}

#[utoipa::path(get, path = "/api/waiting", tag = "report",
    responses((status = 200, description = "The one \"waits for you\" count: open questions + pending approvals + agents that need a person", body = Waiting)))]
async fn waiting(State(s): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Waiting>> {
    Ok(Json(s.harness.reports().waiting(&who).await?))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(report, send, reply, waiting))]
pub(super) struct Api;
