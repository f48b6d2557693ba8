//! Browser-facing request checks (docs/decisions.md D12, engineering-notes C.3):
//! the `Host` must be one of ours (DNS-rebinding defence) and a present
//! `Origin` must be same-origin, scheme included. Applied to every route. And the response headers every answer carries: no framing
//! (clickjacking), no MIME sniffing, no referrer.

use std::net::{IpAddr, SocketAddr};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{error::error_body, state::AppState};

#[derive(Debug, Clone)]
pub struct OriginPolicy {
    /// Accepted `Host` authorities, lower-case (`127.0.0.1:7700`, `localhost:7700`, …).
    hosts: Vec<String>,
    /// Bound to a non-loopback address: a request from another machine may
    /// name us however it reached us (an IP, a DNS name). It still needs a
    /// session or a token, and cookies are per host, so a rebinding name gets
    /// nothing. Requests over loopback keep the strict list.
    network: bool,
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
        Self {
            hosts,
            network: !bind.ip().is_loopback(),
        }
    }

    /// `Ok` when the request is addressed to us (`Host`) and, if it has an
    /// `Origin`, same-origin: same authority and same scheme (`https` only
    /// when a TLS proxy says so with `X-Forwarded-Proto`). `peer` is the
    /// client's address: only a non-loopback peer on a network bind may use
    /// a `Host` outside the list.
    pub fn check(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Result<(), &'static str> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase)
            .ok_or("missing Host header")?;
        let from_network = self.network && peer.is_some_and(|ip| !ip.is_loopback());
        if !from_network && !self.hosts.contains(&host) {
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
            let scheme = if over_tls(headers) {
                "https://"
            } else {
                "http://"
            };
            let origin_authority = origin
                .strip_prefix(scheme)
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

/// The request came through a TLS-terminating proxy (`X-Forwarded-Proto:
/// https`). Only used to expect `https` origins and to mark cookies
/// `Secure`: it can make a check stricter, never open one.
pub fn over_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
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

/// The client's address, as the accept loop recorded it.
pub fn peer_ip(req: &Request) -> Option<IpAddr> {
    req.extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
}

/// Middleware on EVERY route (pages, files, `/api`, `/mcp`, `/sfn`, events,
/// sockets): 403 JSON unless [`OriginPolicy::check`] passes. This is the
/// DNS-rebinding defence: a page on `rebind.example` resolving to 127.0.0.1
/// gets no byte of ours.
pub async fn same_origin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match state.origin.check(req.headers(), peer_ip(&req)) {
        Ok(()) => next.run(req).await,
        Err(reason) => {
            // Under `nest_service` the URI is stripped of its prefix (`/mcp` → `/`).
            let path = req
                .extensions()
                .get::<axum::extract::OriginalUri>()
                .map_or_else(|| req.uri().path(), |u| u.0.path())
                .to_string();
            tracing::warn!(reason, path, "refused request");
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
        let local = Some(IpAddr::from([127, 0, 0, 1]));
        assert!(p.check(&headers("127.0.0.1:7700", None), local).is_ok());
        assert!(
            p.check(
                &headers("localhost:7700", Some("http://localhost:7700")),
                local
            )
            .is_ok()
        );
        assert!(p.check(&headers("evil.example:7700", None), local).is_err());
        assert!(
            p.check(
                &headers("127.0.0.1:7700", Some("http://evil.example")),
                local
            )
            .is_err()
        );
        assert!(
            p.check(&headers("127.0.0.1:7700", Some("null")), local)
                .is_err()
        );
        assert!(
            p.check(
                &headers("localhost:7700", Some("http://127.0.0.1:7700")),
                local
            )
            .is_err()
        );
        assert!(p.check(&headers("127.0.0.1:7701", None), local).is_err());
        // The scheme counts too.
        assert!(
            p.check(
                &headers("127.0.0.1:7700", Some("https://127.0.0.1:7700")),
                local
            )
            .is_err()
        );
    }

    #[test]
    fn network_bind_accepts_any_name_from_the_network_only() {
        let p = OriginPolicy::for_bind("0.0.0.0:7700".parse().unwrap(), &[]);
        let remote = Some(IpAddr::from([192, 0, 2, 7]));
        let local = Some(IpAddr::from([127, 0, 0, 1]));
        assert!(p.check(&headers("box.lan:7700", None), remote).is_ok());
        assert!(
            p.check(
                &headers("box.lan:7700", Some("http://box.lan:7700")),
                remote
            )
            .is_ok()
        );
        assert!(
            p.check(
                &headers("box.lan:7700", Some("http://evil.example")),
                remote
            )
            .is_err()
        );
        assert!(
            p.check(&headers("rebind.example:7700", None), local)
                .is_err()
        );
        assert!(p.check(&headers("127.0.0.1:7700", None), local).is_ok());
        // A loopback bind never trusts the network rule.
        let p = OriginPolicy::for_bind("127.0.0.1:7700".parse().unwrap(), &[]);
        assert!(p.check(&headers("box.lan:7700", None), remote).is_err());
    }

    #[test]
    fn a_null_origin_passes_only_from_our_own_page() {
        let p = OriginPolicy::for_bind("127.0.0.1:7700".parse().unwrap(), &[]);
        let local = Some(IpAddr::from([127, 0, 0, 1]));
        let mut h = headers("127.0.0.1:7700", Some("null"));
        assert!(p.check(&h, local).is_err());
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(p.check(&h, local).is_err());
        h.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(p.check(&h, local).is_ok());
    }

    #[test]
    fn tls_proxy_expects_https_origins() {
        let p = OriginPolicy::for_bind(
            "127.0.0.1:7700".parse().unwrap(),
            &["harness.example.com".into()],
        );
        let local = Some(IpAddr::from([127, 0, 0, 1]));
        let mut h = headers("harness.example.com", Some("https://harness.example.com"));
        assert!(p.check(&h, local).is_err());
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(p.check(&h, local).is_ok());
    }
}
