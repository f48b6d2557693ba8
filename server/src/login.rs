//! Browser sessions on every bind (like Jupyter): every UI page,
//! server function, live-event stream and terminal WebSocket needs a session
//! (or `Authorization: Bearer <admin token>` for scripts). The admin token is
//! exchanged once — `GET /login?token=…` (the URL `harness serve` prints and
//! `harness open` opens) or the login form — for a random session id in an
//! HttpOnly, SameSite=Strict cookie (`Secure` over TLS). Sessions are stored
//! hashed with an expiry (`harness_core::sessions`); `/logout` revokes one or
//! all. Failed logins are throttled per client address (429, the core's
//! `Sessions::login_from`), the right token always logs in, and `next=` is a same-site
//! path or a 400 page (point 8).
//!
//! A cookie-authenticated request that changes state (any method but
//! GET/HEAD, and every WebSocket) must carry an `Origin` (the same-origin
//! check itself is `security::OriginPolicy`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::{
    Form,
    extract::{
        ConnectInfo, FromRequestParts, Query, Request, State,
        rejection::{FormRejection, QueryRejection},
    },
    http::{HeaderMap, HeaderValue, Method, StatusCode, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use harness_core::sessions::Sessions;

use crate::{
    error::error_body,
    login_page::{Alert, locale, login_form},
    state::AppState,
};

pub const COOKIE: &str = harness_core::sessions::COOKIE;

/// Failed logins answered 401 from one client address before 429 (the
/// core's `rate_limit::FAILED_LOGINS`).
pub const MAX_FAILURES: u32 = harness_core::rate_limit::FAILED_LOGINS.burst;

/// Browser sessions (shared by all requests; their failed-login limit is
/// the core's).
#[derive(Clone)]
pub struct Login {
    pub sessions: Sessions,
}

impl Login {
    pub fn new(sessions: Sessions) -> Self {
        Self { sessions }
    }
}

/// Paths that never need a session: they have their own credentials (REST,
/// MCP), are public assets, or are the login itself.
fn exempt(path: &str) -> bool {
    path == "/healthz"
        || path == "/metrics"
        || path == "/login"
        || path == "/logout"
        || path == "/favicon.ico"
        || path.starts_with("/pkg/")
        || path.starts_with("/api/")
        // Node-to-node calls: their own credential (`node_call::verify`).
        || path.starts_with(crate::node_call::PREFIX)
        || path == "/mcp"
        || path.starts_with("/mcp/")
}

fn cookie_value(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// How a UI request is authenticated.
#[derive(Debug, PartialEq, Eq)]
enum Auth {
    /// `Authorization: Bearer <admin token>` (scripts, tests): no CSRF risk.
    Bearer,
    /// A live session cookie (a browser).
    Session,
    None,
}

async fn authenticate(login: &Login, headers: &HeaderMap) -> Auth {
    if bearer(headers).is_some_and(|t| login.sessions.is_admin_token(t)) {
        return Auth::Bearer;
    }
    let Some(id) = cookie_value(headers) else {
        return Auth::None;
    };
    match login.sessions.check(&id).await {
        Ok(true) => Auth::Session,
        Ok(false) => Auth::None,
        Err(err) => {
            tracing::error!(error = ?err, "cannot check a session");
            Auth::None
        }
    }
}

fn is_page(req: &Request) -> bool {
    let path = req.uri().path();
    req.method() == Method::GET
        && !path.starts_with("/sfn/")
        && !path.starts_with("/ws/")
        && !path.starts_with("/events/")
}

/// A browser request that changes state: it must say where it comes from.
fn changes_state(req: &Request) -> bool {
    !matches!(*req.method(), Method::GET | Method::HEAD) || req.uri().path().starts_with("/ws/")
}

fn json_error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(error_body(message, None))).into_response()
}

/// Middleware: UI requests without a session are sent to `/login` (pages)
/// or refused with 401 (server functions, events, sockets).
pub async fn require(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if exempt(req.uri().path()) {
        return next.run(req).await;
    }
    match authenticate(&state.login, req.headers()).await {
        Auth::Bearer => next.run(req).await,
        Auth::Session => {
            if changes_state(&req) && !req.headers().contains_key(header::ORIGIN) {
                tracing::warn!(path = %req.uri().path(), "refused a request without Origin");
                return json_error(
                    StatusCode::FORBIDDEN,
                    "Origin header required for this request",
                );
            }
            next.run(req).await
        }
        Auth::None if is_page(&req) => {
            let target = req
                .uri()
                .path_and_query()
                .map_or("/harness", |p| p.as_str());
            let query = serde_urlencoded::to_string([("next", target)]).unwrap_or_default();
            Redirect::to(&format!("/login?{query}")).into_response()
        }
        Auth::None => json_error(StatusCode::UNAUTHORIZED, "login required"),
    }
}

/// Where to go after login: a same-site path only. `None` (absent or empty)
/// is Home (whose first action is a newcomer's first step); `Err` is a `next` that is not one — a URL or
/// `//host` (another site), a backslash (`/\\host` is another site to some
/// browsers), a control character, a space or a non-ASCII byte (a header
/// value must not carry them: `/%0a` once ended in a plain-text 500), or the
/// login/logout pages themselves.
pub fn safe_next(next: Option<&str>) -> Result<&str, &'static str> {
    let next = match next {
        None | Some("") => return Ok("/"),
        Some(n) => n,
    };
    if !next.starts_with('/') || next.starts_with("//") {
        return Err("next must be a path on this site (starting with one /)");
    }
    if next.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err("next must not contain spaces, control or non-ASCII characters");
    }
    if next.contains('\\') {
        return Err("next must not contain a backslash");
    }
    let path = next.split(['?', '#']).next().unwrap_or_default();
    if path == "/login" || path == "/logout" {
        return Ok("/");
    }
    Ok(next)
}

/// A `next` that is not a same-site path: a clean 400 (the login page with
/// the reason), never a redirect.
fn bad_next(headers: &HeaderMap, reason: &'static str) -> Response {
    login_form(
        locale(headers),
        StatusCode::BAD_REQUEST,
        "/",
        Alert::BadNext(reason),
    )
}

/// A redirect to a same-site path checked by [`safe_next`]; a value that is
/// still not a header value is a 400 (never a panic).
fn redirect(headers: &HeaderMap, next: &str) -> Response {
    match HeaderValue::from_str(next) {
        Ok(location) => {
            let mut response = StatusCode::SEE_OTHER.into_response();
            response.headers_mut().insert(header::LOCATION, location);
            response
        }
        Err(_) => bad_next(headers, "next is not a valid path"),
    }
}

/// The client's address (from the accept loop's `ConnectInfo`; one shared
/// bucket when unknown).
pub struct ClientIp(IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |ConnectInfo(a)| a.ip()),
        ))
    }
}

fn session_cookie(value: &str, max_age: u64, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"
    ))
    .ok()
}

/// Checks `token` for `ip` (throttled) and, when right, opens a session and
/// redirects to `next` with the cookie set.
async fn open_session(
    state: &AppState,
    ip: IpAddr,
    headers: &HeaderMap,
    token: &str,
    next: &str,
) -> Response {
    let login = &state.login;
    // The core's rule: the right token always logs in; failures from one
    // address past the limit are refused (429) until a token comes back.
    let id = match login
        .sessions
        .login_from(&ip.to_string(), token.trim())
        .await
    {
        Ok(Some(id)) => id,
        Ok(None) => {
            tracing::warn!(%ip, "failed browser login");
            return login_form(
                locale(headers),
                StatusCode::UNAUTHORIZED,
                next,
                Alert::WrongToken,
            );
        }
        Err(harness_core::CoreError::RateLimited {
            retry_after_secs: wait,
            ..
        }) => {
            tracing::warn!(%ip, "failed browser login (throttled)");
            let mut response = login_form(
                locale(headers),
                StatusCode::TOO_MANY_REQUESTS,
                next,
                Alert::Throttled(wait),
            );
            if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            return response;
        }
        Err(err) => {
            tracing::error!(error = ?err, "cannot open a session");
            return login_form(
                locale(headers),
                StatusCode::SERVICE_UNAVAILABLE,
                next,
                Alert::Unavailable,
            );
        }
    };
    let mut response = redirect(headers, next);
    if let Some(cookie) = session_cookie(
        &id,
        login.sessions.ttl().as_secs(),
        crate::security::over_tls(headers),
    ) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[derive(serde::Deserialize)]
pub struct LoginQuery {
    token: Option<String>,
    next: Option<String>,
}

/// `GET /login`: the form, or with `?token=` a direct login (the URL printed
/// by `harness serve`).
pub async fn page(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    query: Result<Query<LoginQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return bad_next(&headers, "the query string is not valid");
    };
    let next = match safe_next(query.next.as_deref()) {
        Ok(next) => next.to_string(),
        Err(reason) => return bad_next(&headers, reason),
    };
    match query.token {
        Some(token) => open_session(&state, ip, &headers, &token, &next).await,
        None => login_form(locale(&headers), StatusCode::OK, &next, Alert::None),
    }
}

#[derive(serde::Deserialize)]
pub struct LoginForm {
    token: String,
    next: Option<String>,
}

/// `POST /login`: the form (same-origin, with an Origin header).
pub async fn submit(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    form: Result<Form<LoginForm>, FormRejection>,
) -> Response {
    if let Err(reason) = require_origin(&headers) {
        return json_error(StatusCode::FORBIDDEN, reason);
    }
    let Ok(Form(form)) = form else {
        return bad_next(&headers, "the form is not valid (a token is required)");
    };
    let next = match safe_next(form.next.as_deref()) {
        Ok(next) => next.to_string(),
        Err(reason) => return bad_next(&headers, reason),
    };
    open_session(&state, ip, &headers, &form.token, &next).await
}

/// A state-changing browser request: an `Origin` must be present (the Host
/// and same-origin check already ran on every route).
fn require_origin(headers: &HeaderMap) -> Result<(), &'static str> {
    if headers.contains_key(header::ORIGIN) {
        Ok(())
    } else {
        Err("Origin header required for this request")
    }
}

/// `GET /logout`: the two logout buttons.
pub async fn logout_page(headers: HeaderMap) -> Response {
    crate::login_page::logout_page(locale(&headers))
}

#[derive(serde::Deserialize)]
pub struct LogoutForm {
    everywhere: Option<String>,
}

/// `POST /logout`: revokes this session (or, with `everywhere`, all of
/// them), clears the cookie and goes back to `/login`.
pub async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let form: LogoutForm =
        serde_urlencoded::from_bytes(&body).unwrap_or(LogoutForm { everywhere: None });
    let auth = authenticate(&state.login, &headers).await;
    if auth == Auth::Session
        && let Err(reason) = require_origin(&headers)
    {
        return json_error(StatusCode::FORBIDDEN, reason);
    }
    if auth == Auth::None {
        return json_error(StatusCode::UNAUTHORIZED, "login required");
    }
    let sessions = &state.login.sessions;
    let result = if form.everywhere.is_some_and(|v| !v.is_empty()) {
        sessions.logout_everywhere().await.map(|n| {
            tracing::info!(sessions = n, "logged out everywhere");
        })
    } else if let Some(id) = cookie_value(&headers) {
        sessions.logout(&id).await.map(|_| ())
    } else {
        Ok(())
    };
    if let Err(err) = result {
        tracing::error!(error = ?err, "cannot revoke sessions");
        return json_error(StatusCode::SERVICE_UNAVAILABLE, "cannot log out right now");
    }
    let mut response = Redirect::to("/login").into_response();
    if let Some(cookie) = session_cookie("", 0, crate::security::over_tls(&headers)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_a_same_site_path() {
        assert_eq!(safe_next(Some("/tasks/x?y=1")), Ok("/tasks/x?y=1"));
        assert_eq!(safe_next(Some("/login?token=x")), Ok("/"));
        assert_eq!(safe_next(Some("/logout")), Ok("/"));
        assert_eq!(safe_next(None), Ok("/"));
        assert_eq!(safe_next(Some("")), Ok("/"));
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil.example",
            "/\\/evil.example",
            "/\n",
            "/\r\nSet-Cookie: x=1",
            "/\t/evil.example",
            "/a b",
            "/\u{7f}",
            "/caf\u{e9}",
            "evil",
        ] {
            assert!(safe_next(Some(bad)).is_err(), "{bad:?} accepted");
        }
    }
}
