//! Browser-facing request checks (decisions D12, engineering-notes C.3):
//! the `Host` must be one of ours (DNS-rebinding defence) and a present
//! `Origin` must be same-origin. Applied to server functions, `/mcp` and
//! WebSockets. And the response headers every answer carries: no framing
//! (clickjacking), no MIME sniffing, no referrer.

use std::net::SocketAddr;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{error::error_body, state::AppState};

#[derive(Debug, Clone)]
pub struct OriginPolicy {
    /// Accepted `Host` authorities, lower-case (`127.0.0.1:7700`, `localhost:7700`, …).
    /// Empty = any host (only when explicitly configured for a public bind).
    hosts: Vec<String>,
}

impl OriginPolicy {
    /// Hosts for a bind address: the address itself, plus the loopback names
    /// when it is a loopback or unspecified address; plus `extra` hosts.
    pub fn for_bind(bind: SocketAddr, extra: &[String]) -> Self {
        let port = bind.port();
        let mut hosts = vec![authority(bind)];
        if bind.ip().is_loopback() || bind.ip().is_unspecified() {
            hosts.extend([
                format!("localhost:{port}"),
                format!("127.0.0.1:{port}"),
                format!("[::1]:{port}"),
            ]);
        }
        hosts.extend(extra.iter().map(|h| h.to_ascii_lowercase()));
        hosts.sort();
        hosts.dedup();
        Self { hosts }
    }

    /// `Ok` when the request is same-origin and addressed to us.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), &'static str> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase)
            .ok_or("missing Host header")?;
        if !self.hosts.is_empty() && !self.hosts.iter().any(|h| *h == host) {
            return Err("Host header is not allowed");
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().map_err(|_| "invalid Origin header")?;
            // Under `Referrer-Policy: no-referrer` browsers send `Origin: null`
            // on form posts; the browser-set `Sec-Fetch-Site` tells whether
            // the form was ours (scripts cannot forge it).
            if origin == "null" {
                return if same_origin_fetch(headers) {
                    Ok(())
                } else {
                    Err("cross-origin request refused")
                };
            }
            let origin_authority = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"))
                .ok_or("cross-origin request refused")?
                .trim_end_matches('/')
                .to_ascii_lowercase();
            if origin_authority != host {
                return Err("cross-origin request refused");
            }
        }
        Ok(())
    }
}

fn same_origin_fetch(headers: &HeaderMap) -> bool {
    headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes() == b"same-origin")
}

fn authority(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
    }
}

/// Middleware: 403 JSON unless [`OriginPolicy::check`] passes.
pub async fn same_origin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match state.origin.check(req.headers()) {
        Ok(()) => next.run(req).await,
        Err(reason) => {
            tracing::warn!(reason, path = %req.uri().path(), "refused request");
            (StatusCode::FORBIDDEN, axum::Json(error_body(reason, None))).into_response()
        }
    }
}

/// The policy of responses that set none themselves (JSON, files, errors):
/// nothing may load from them and nothing may frame them. Pages set their own
/// (`app::csp`, with a per-response nonce), the login form too (`login.rs`).
const DEFAULT_CSP: &str =
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Middleware (outermost): `X-Frame-Options: DENY`, `X-Content-Type-Options:
/// nosniff` on every response; `Referrer-Policy: no-referrer` and
/// [`DEFAULT_CSP`] unless the handler set its own (app pages: a nonce policy
/// and `same-origin`, so no referrer ever leaves for another origin).
pub async fn response_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if !h.contains_key(header::REFERRER_POLICY) {
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DEFAULT_CSP),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn loopback_policy() {
        let p = OriginPolicy::for_bind("127.0.0.1:7700".parse().unwrap(), &[]);
        assert!(p.check(&headers("127.0.0.1:7700", None)).is_ok());
        assert!(
            p.check(&headers("localhost:7700", Some("http://localhost:7700")))
                .is_ok()
        );
        assert!(p.check(&headers("evil.example:7700", None)).is_err());
        assert!(
            p.check(&headers("127.0.0.1:7700", Some("http://evil.example")))
                .is_err()
        );
        assert!(p.check(&headers("127.0.0.1:7700", Some("null"))).is_err());
        assert!(
            p.check(&headers("localhost:7700", Some("http://127.0.0.1:7700")))
                .is_err()
        );
        assert!(p.check(&headers("127.0.0.1:7701", None)).is_err());
    }
}
