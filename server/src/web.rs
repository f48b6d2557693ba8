//! Leptos wiring: SSR routes, server functions (under `/sfn`, same-origin
//! only). The static site (`/pkg`, favicon) is `crate::assets`.

use std::{net::SocketAddr, path::Path};

use app::page_preloads::PagePreloads;
use app::{App, OUTPUT_NAME, shell};
use axum::{
    Router,
    extract::Request,
    http::StatusCode,
    middleware::Next,
    response::{IntoResponse, Response},
};
use leptos::{config::LeptosOptions, prelude::provide_context};
use leptos_axum::{LeptosRoutes, generate_route_list};

use crate::{assets::Site, error::error_body, state::AppState};

pub fn leptos_options(site_root: &Path, addr: SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_root(site_root.to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .site_addr(addr)
        .build()
}

/// The preload hints for lazy pages: a page that opens on a lazy route
/// gets `<link rel="preload">` for that route's chunks (looked up in the
/// build's split manifest), so they download with the main module instead
/// of after it. The shell renders them (`app::page_preloads`, which says
/// why not Leptos' own `WasmSplitManifest`); the manifest comes from the
/// served site, which the one-file binary embeds.
fn split_preloads(site: &Site, options: &LeptosOptions) -> Option<PagePreloads> {
    let manifest = site.split_manifest()?;
    let preloads = PagePreloads {
        pkg_root: format!("/{}", options.site_pkg_dir),
        manifest: std::sync::Arc::new(manifest.clone()),
        // The loader, `modulepreload`ed with the chunks.
        loader: format!("{}_split.js", options.output_name),
    };
    let unmapped = preloads.unmapped();
    if !unmapped.is_empty() {
        tracing::warn!(
            ?unmapped,
            "lazy pages without a path in app::page_preloads::LAZY_PAGES; they are not preloaded"
        );
    }
    Some(preloads)
}

/// The UI router: pages, server functions and static files.
pub fn router(state: &AppState, site: &Site) -> Router<AppState> {
    let harness = state.harness.clone();
    let fallback_harness = state.harness.clone();
    // The UI's task buttons reach the terminals through the core's port.
    let control: std::sync::Arc<dyn harness_core::control::AgentControl> =
        std::sync::Arc::new(state.terminals.clone());
    let fallback_control = control.clone();
    // The report page reads the agents' commits as `GET /api/report` does.
    let report_work =
        app::api::report::ReportWork(std::sync::Arc::new(crate::report_work::LocalWork));
    let routes = generate_route_list(App);
    let preloads = split_preloads(site, &state.leptos);
    let options = state.leptos.clone();
    let fallback_options = state.leptos.clone();
    Router::new()
        .leptos_routes_with_context(
            state,
            routes,
            move || {
                provide_context(harness.clone());
                provide_context(control.clone());
                provide_context(report_work.clone());
                if let Some(preloads) = &preloads {
                    provide_context(preloads.clone());
                }
            },
            move || shell(options.clone()),
        )
        // Unknown paths render the app's "not found" page; files are never
        // read from disk here (the site is `crate::assets`).
        .fallback(leptos_axum::render_app_to_stream_with_context(
            move || {
                provide_context(fallback_harness.clone());
                provide_context(fallback_control.clone());
            },
            move || shell(fallback_options.clone()),
        ))
}

/// Server functions change state: only same-origin requests with a session
/// reach them (`security::same_origin`, `login::require`).
/// Malformed arguments are the caller's fault: leptos answers them with 500,
/// we turn that into 400.
pub async fn guard_server_fns(req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/sfn/") {
        return next.run(req).await;
    }
    let response = next.run(req).await;
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(error_body("internal error", None)),
        )
            .into_response();
    };
    let client_fault = [
        "Args|",
        "Deserialization|",
        "Request|",
        "MissingArg|",
        "UnsupportedRequestMethod|",
    ]
    .iter()
    .any(|prefix| bytes.starts_with(prefix.as_bytes()));
    if client_fault {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}
