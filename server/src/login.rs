//! Browser login for non-loopback binds (decisions D12). On 127.0.0.1 the
//! UI is open to the local user; on any other address every UI page, server
//! function, live-event stream and terminal WebSocket needs the admin token,
//! given once at `/login` and kept in an HttpOnly, SameSite=Strict cookie.

use axum::{
    Form,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::Next,
    response::{Html, IntoResponse, Redirect, Response},
};
use harness_core::ids;

use crate::state::AppState;

pub const COOKIE: &str = "harness_session";

/// Paths that never need the browser login (they have their own credentials
/// or are public assets).
fn exempt(path: &str) -> bool {
    path == "/healthz"
        || path == "/login"
        || path == "/favicon.ico"
        || path.starts_with("/pkg/")
        || path.starts_with("/api/")
        || path == "/mcp"
        || path.starts_with("/mcp/")
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

fn is_admin(state: &AppState, token: &str) -> bool {
    ids::secure_eq(
        ids::token_hash(token).as_bytes(),
        state.harness.config().admin_token_hash.as_bytes(),
    )
}

/// Middleware: when login is required, UI requests without a valid session
/// cookie are sent to `/login` (pages) or refused with 401 (everything else).
pub async fn require(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !state.login_required || exempt(req.uri().path()) {
        return next.run(req).await;
    }
    if cookie_token(req.headers()).is_some_and(|t| is_admin(&state, &t)) {
        return next.run(req).await;
    }
    let is_page = req.method() == axum::http::Method::GET
        && !req.uri().path().starts_with("/sfn/")
        && !req.uri().path().starts_with("/ws/")
        && !req.uri().path().starts_with("/events/");
    if is_page {
        Redirect::to("/login").into_response()
    } else {
        (
            StatusCode::UNAUTHORIZED,
            axum::Json(crate::error::error_body("login required", None)),
        )
            .into_response()
    }
}

const PAGE: &str = r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Harness · Log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"></head>
<body style="font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem">
<h1>Harness</h1><p>This server is reachable from the network. Paste the admin token
(<code>secrets/admin.token</code> in the data directory) to continue.</p>
<form method="post" action="/login"><label>Admin token<br><input name="token" type="password" required autofocus style="width:100%"></label>
<p><button type="submit">Log in</button></p></form>{{error}}</body></html>"#;

pub async fn page() -> Html<String> {
    Html(PAGE.replace("{{error}}", ""))
}

#[derive(serde::Deserialize)]
pub struct LoginForm {
    token: String,
}

pub async fn submit(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    if let Err(reason) = state.origin.check(&headers) {
        return (StatusCode::FORBIDDEN, reason).into_response();
    }
    let token = form.token.trim();
    if !is_admin(&state, token) {
        tracing::warn!("failed browser login");
        return (
            StatusCode::UNAUTHORIZED,
            Html(PAGE.replace(
                "{{error}}",
                "<p role=\"alert\" style=\"color:#b42318\">Wrong token.</p>",
            )),
        )
            .into_response();
    }
    let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000");
    let mut response = Redirect::to("/harness").into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
