//! The Content-Security-Policy of every server-rendered page (server side).
//!
//! Scripts and WebAssembly come from this origin only; the one inline script
//! (Leptos' hydration bootstrap, plus any resource data it streams) carries a
//! per-response nonce. No page can be framed (`frame-ancestors 'none'`).
//! Styles allow inline attributes: the plan tree indents with a CSS variable
//! and the browser terminal adds its own `<style>`; styles cannot run code.

use http::header::{CONTENT_SECURITY_POLICY, HeaderValue, REFERRER_POLICY};
use leptos::{
    nonce::{provide_nonce, use_nonce},
    prelude::use_context,
};

/// The policy for a page whose inline scripts carry `nonce`.
pub fn policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Gives this response a fresh nonce (read by `HydrationScripts`), the
/// matching `Content-Security-Policy` header and its referrer policy.
pub fn apply() {
    if use_nonce().is_none() {
        provide_nonce();
    }
    let Some(nonce) = use_nonce() else {
        return;
    };
    if let (Some(response), Ok(value)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        HeaderValue::from_str(&policy(&nonce)),
    ) {
        response.insert_header(CONTENT_SECURITY_POLICY, value);
        // Other origins get no referrer (every other response says
        // `no-referrer`); our own plain-HTML forms need the same-origin one:
        // a server function posted without JavaScript redirects back to it.
        response.insert_header(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    }
}
