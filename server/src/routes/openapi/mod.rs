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
//! boundary, 404, 409, 413 body too large), each with the JSON error body.

mod schemas;

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
        (name = "internal", description = "The agent and gateway API (admin or agent token)"),
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

/// `GET /api/openapi.json` (admin token).
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "meta",
    responses((status = 200, description = "This OpenAPI 3.1 document", body = Object))
)]
pub(super) async fn serve(_: Admin) -> Json<&'static utoipa::openapi::OpenApi> {
    Json(document())
}

/// The bearer scheme and the common error responses.
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
        for item in doc.paths.paths.values_mut() {
            let operations: [&mut Option<Operation>; 8] = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.options,
                &mut item.head,
                &mut item.patch,
                &mut item.trace,
            ];
            for op in operations.into_iter().flatten() {
                for status in ERROR_STATUSES {
                    op.responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| RefOr::Ref(Ref::from_response_name("Error")));
                }
            }
        }
    }
}
