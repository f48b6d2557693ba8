//! `GET /api/openapi.json`: the OpenAPI 3.1 document of the admin REST API
//! and the internal agent/gateway API, generated with `utoipa` from the
//! handlers' `#[utoipa::path]` annotations and the wire types (`ToSchema`).
//!
//! Each `routes/*.rs` module lists its operations next to its router
//! (`struct Api`, merged here). `tests/openapi.rs` compares the document
//! with the routes the axum router really has: a route missing from the
//! document fails it.
//!
//! Served with the same credential as the rest of `/api` (the admin
//! token): the document names every endpoint and body, which a stranger
//! has no need for.
//!
//! Every operation documents the error statuses any `/api` request can get
//! (400 bad input, 401 no/unknown credential, 403 wrong credential or
//! boundary, 404, 409, 413 body too large), each with the JSON error body;
//! ask, notify and outbound also 429 (a task's rate limit).

pub mod constraints;
pub mod rules;
mod schemas;
mod write;

use std::sync::OnceLock;

use axum::Json;
use utoipa::{
    Modify, OpenApi,
    openapi::{
        ContentBuilder, RefOr, ResponseBuilder,
        path::Operation,
        schema::Ref,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    },
};

pub use schemas::*;

use crate::extract::Admin;

/// The statuses every `/api` operation can answer with `ErrorBody`.
pub const ERROR_STATUSES: [&str; 6] = ["400", "401", "403", "404", "409", "413"];

/// The operations a task's rate limit can refuse (429 with `Retry-After`,
/// `harness_core::rate_limit`).
pub const RATE_LIMITED: [&str; 3] = [
    "/api/internal/harness/ask",
    "/api/internal/harness/notify",
    "/api/internal/harness/outbound",
];

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Harness API",
        description = "Admin REST API and the internal agent/gateway API of a Harness server. \
                       Authenticate with `Authorization: Bearer <token>`: the admin token \
                       (`<data-dir>/secrets/admin.token`) for everything; an agent's token for \
                       `/api/internal/...` on its own task."
    ),
    paths(serve),
    components(schemas(ErrorBody)),
    security(("bearer" = [])),
    tags(
        (name = "projects", description = "Projects and their task lists"),
        (name = "tasks", description = "Tasks and their agent terminals"),
        (name = "messages", description = "The notification center: asks and notifies"),
        (name = "deliveries", description = "Durable deliveries into agents' terminals"),
        (name = "outbox", description = "Messages to people through gateways"),
        (name = "settings", description = "Notify targets, gateways, the system directive"),
        (name = "analytics", description = "How long agents wait for people"),
        (name = "approvals", description = "Approvals of risky tool calls: policy, the hook's check, decisions, audit"),
        (name = "internal", description = "The agent and gateway API (admin or agent token)"),
        (name = "gateway", description = "What a person writes back from a chat (a signed request, the gateway token or the admin token)"),
        (name = "nodes", description = "The nodes of a cluster and their drain (admin)"),
        (name = "report", description = "The morning report: what happened, what waits (ranked), one reply for many items, the waiting count"),
        (name = "meta", description = "This document"),
    )
)]
struct Base;

/// The whole document (built once).
pub fn document() -> &'static utoipa::openapi::OpenApi {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = Base::openapi();
        for part in super::openapi_parts() {
            doc.merge(part);
        }
        Common.modify(&mut doc);
        doc
    })
}

/// The document as served: JSON, with the Link objects' field names as
/// OpenAPI spells them (utoipa 5 writes `operation_id`, `request_body`,
/// `operation_ref` in snake case; schemathesis then ignores the links), and
/// the constraints the validation enforces (`constraints.rs`).
pub fn document_json() -> &'static serde_json::Value {
    &served().0
}

/// The constraints of `constraints.rs` that name no field or parameter of
/// the document (empty unless one went stale).
pub fn unmatched_constraints() -> &'static [String] {
    &served().1
}

fn served() -> &'static (serde_json::Value, Vec<String>) {
    static JSON: OnceLock<(serde_json::Value, Vec<String>)> = OnceLock::new();
    JSON.get_or_init(|| {
        let mut json = serde_json::to_value(document()).unwrap_or_else(|err| {
            tracing::error!(%err, "cannot encode the OpenAPI document");
            serde_json::Value::Null
        });
        camel_case_links(&mut json);
        let unmatched = write::constraints(&mut json);
        if !unmatched.is_empty() {
            tracing::error!(?unmatched, "OpenAPI constraints name no field");
        }
        (json, unmatched)
    })
}

fn camel_case_links(doc: &mut serde_json::Value) {
    let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) else {
        return;
    };
    let links = paths
        .values_mut()
        .filter_map(|item| item.as_object_mut())
        .flat_map(|item| item.values_mut())
        .filter_map(|op| op.get_mut("responses").and_then(|r| r.as_object_mut()))
        .flat_map(|responses| responses.values_mut())
        .filter_map(|response| response.get_mut("links").and_then(|l| l.as_object_mut()))
        .flat_map(|links| links.values_mut())
        .filter_map(|link| link.as_object_mut());
    for link in links {
        for (from, to) in [
            ("operation_id", "operationId"),
            ("operation_ref", "operationRef"),
            ("request_body", "requestBody"),
        ] {
            if let Some(value) = link.remove(from) {
                link.insert(to.into(), value);
            }
        }
    }
}

/// `GET /api/openapi.json` (admin token).
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "meta",
    responses((status = 200, description = "This OpenAPI 3.1 document", body = Object))
)]
pub(super) async fn serve(_: Admin) -> Json<&'static serde_json::Value> {
    Json(document_json())
}

/// A unique operation id from the method and the path (handler names repeat
/// across modules): `POST /api/tasks/{id}/start` → `post_tasks_id_start`.
/// Response links (`links(...)` in the annotations) name these.
pub fn operation_id(method: &str, path: &str) -> String {
    let rest = path.strip_prefix("/api").unwrap_or(path);
    let words: Vec<String> = rest
        .split(['/', '-', '.', '{', '}'])
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    format!("{method}_{}", words.join("_"))
}

/// The bearer scheme, the common error responses, unique operation ids.
struct Common;

impl Modify for Common {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The admin token, or an agent's token (internal API, own task only)",
                    ))
                    .build(),
            ),
        );
        components.responses.insert(
            "Error".into(),
            RefOr::T(
                ResponseBuilder::new()
                    .description("An error: `{\"error\": \"...\", \"field\"?: \"...\"}`")
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            ),
        );
        for (path, item) in doc.paths.paths.iter_mut() {
            let operations: [(&str, &mut Option<Operation>); 8] = [
                ("get", &mut item.get),
                ("put", &mut item.put),
                ("post", &mut item.post),
                ("delete", &mut item.delete),
                ("options", &mut item.options),
                ("head", &mut item.head),
                ("patch", &mut item.patch),
                ("trace", &mut item.trace),
            ];
            for (method, op) in operations {
                let Some(op) = op else { continue };
                op.operation_id = Some(operation_id(method, path));
                let limited = RATE_LIMITED.contains(&path.as_str()).then_some("429");
                for status in ERROR_STATUSES.into_iter().chain(limited) {
                    op.responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| RefOr::Ref(Ref::from_response_name("Error")));
                }
            }
        }
    }
}
