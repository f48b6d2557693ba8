//! HMAC-signed gateway requests (docs/tower-messaging.md §5.1, docs/decisions.md D12):
//! the reference's headers, its status codes and messages; the nonce is
//! remembered in the database (`GatewayStore::remember_nonce`), so a replay
//! is refused after a restart too — the reference kept it in memory.
//!
//! Headers: `x-tower-timestamp` (ms epoch), `x-tower-nonce` (36-char UUID,
//! `[0-9a-f-]`), `x-tower-body-sha256` (64 hex: SHA-256 of the raw body),
//! `x-tower-signature` (64 hex: HMAC-SHA256 with the key of
//! `secrets/internal-api.key` over
//! `timestamp \n nonce \n METHOD \n path+query \n bodyHash`).
//!
//! | Problem | Status | Error |
//! |---|---|---|
//! | a header missing or malformed, timestamp off by more than 5 min, wrong signature | 401 | `Unauthorized internal request` |
//! | body hash ≠ SHA-256 of the body | 401 | `Invalid internal request body` |
//! | no key configured | 503 | `Internal request signing is not initialized` |
//! | nonce seen before (until its window has passed) | 409 | `Replayed internal request` |

use crate::gateway::Gateway;
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::{CoreError, CoreResult, auth::Identity, ids};

pub const TIMESTAMP: &str = "x-tower-timestamp";
pub const NONCE: &str = "x-tower-nonce";
pub const BODY_SHA256: &str = "x-tower-body-sha256";
pub const SIGNATURE: &str = "x-tower-signature";

/// How far a request's timestamp may be from the server's clock.
pub fn window() -> Duration {
    Duration::minutes(5)
}

pub const UNAUTHORIZED: &str = "Unauthorized internal request";
pub const BAD_BODY: &str = "Invalid internal request body";
pub const NOT_INITIALIZED: &str = "Internal request signing is not initialized";
pub const REPLAYED: &str = "Replayed internal request";

/// A request as the signature sees it.
#[derive(Debug, Clone, Copy)]
pub struct SignedRequest<'a> {
    pub timestamp: Option<&'a str>,
    pub nonce: Option<&'a str>,
    pub body_sha256: Option<&'a str>,
    pub signature: Option<&'a str>,
    /// Upper-case HTTP method.
    pub method: &'a str,
    /// The path with its query string (`/api/…?a=b`).
    pub path_and_query: &'a str,
    pub body: &'a [u8],
}

impl SignedRequest<'_> {
    /// Whether the request carries any of the signature headers (then it
    /// is judged as a signed request, never as a bearer one).
    pub fn claims_signature(&self) -> bool {
        self.timestamp.is_some()
            || self.nonce.is_some()
            || self.body_sha256.is_some()
            || self.signature.is_some()
    }
}

fn hex64(value: Option<&str>) -> Option<String> {
    let v = value?.trim().to_ascii_lowercase();
    (v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit())).then_some(v)
}

fn nonce_ok(value: Option<&str>) -> Option<&str> {
    let v = value?.trim();
    (v.len() == 36 && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')).then_some(v)
}

fn timestamp_ok(value: Option<&str>) -> Option<DateTime<Utc>> {
    let v = value?.trim();
    if v.is_empty() || v.len() > 16 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    DateTime::from_timestamp_millis(v.parse().ok()?)
}

/// The signature of a request (lower-case hex).
pub fn signature(
    key: &[u8],
    timestamp: &str,
    nonce: &str,
    method: &str,
    path_and_query: &str,
    body_sha256: &str,
) -> String {
    // HMAC takes a key of any length: `new_from_slice` cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(
        format!(
            "{timestamp}\n{nonce}\n{}\n{path_and_query}\n{body_sha256}",
            method.to_ascii_uppercase()
        )
        .as_bytes(),
    );
    hex::encode(mac.finalize().into_bytes())
}

/// SHA-256 of a body (lower-case hex).
pub fn body_hash(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

/// The four headers of a request signed with `key` at `now` (what a
/// gateway's client sends; used by the tests and the stand-ins).
pub fn sign(
    key: &[u8],
    now: DateTime<Utc>,
    nonce: &str,
    method: &str,
    path_and_query: &str,
    body: &[u8],
) -> [(&'static str, String); 4] {
    let timestamp = now.timestamp_millis().to_string();
    let hash = body_hash(body);
    let sig = signature(key, &timestamp, nonce, method, path_and_query, &hash);
    [
        (TIMESTAMP, timestamp),
        (NONCE, nonce.to_string()),
        (BODY_SHA256, hash),
        (SIGNATURE, sig),
    ]
}

/// A verified request: its nonce and until when it must be remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub nonce: String,
    pub remember_until: DateTime<Utc>,
}

/// Everything but the replay check (pure): the headers' shapes, the
/// window, the body hash and the signature, compared in constant time.
pub fn verify(
    req: &SignedRequest<'_>,
    key: Option<&[u8]>,
    now: DateTime<Utc>,
) -> CoreResult<Verified> {
    let unauthorized = || CoreError::Unauthorized(UNAUTHORIZED.into());
    let (Some(at), Some(nonce), Some(claimed_hash), Some(claimed_sig)) = (
        timestamp_ok(req.timestamp),
        nonce_ok(req.nonce),
        hex64(req.body_sha256),
        hex64(req.signature),
    ) else {
        return Err(unauthorized());
    };
    if (now - at).abs() > window() {
        return Err(unauthorized());
    }
    if !ids::secure_eq(body_hash(req.body).as_bytes(), claimed_hash.as_bytes()) {
        return Err(CoreError::Unauthorized(BAD_BODY.into()));
    }
    let key = key
        .filter(|k| !k.is_empty())
        .ok_or_else(|| CoreError::Unavailable(NOT_INITIALIZED.into()))?;
    let timestamp = req.timestamp.unwrap_or_default().trim();
    let expected = signature(
        key,
        timestamp,
        nonce,
        req.method,
        req.path_and_query,
        &claimed_hash,
    );
    if !ids::secure_eq(expected.as_bytes(), claimed_sig.as_bytes()) {
        return Err(unauthorized());
    }
    // Accepted while `now` is within the window of its timestamp: remember
    // the nonce at least that long.
    Ok(Verified {
        nonce: nonce.to_ascii_lowercase(),
        remember_until: at.max(now) + window(),
    })
}

impl Gateway<'_> {
    /// A signed gateway request: verified, then its nonce remembered
    /// durably (a second use → 409 `Replayed internal request`, after a
    /// restart too). The caller is the gateway.
    pub async fn accept_signed(&self, req: &SignedRequest<'_>) -> CoreResult<Identity> {
        let now = Utc::now();
        let verified = verify(req, self.h.config().internal_api_key.as_deref(), now)?;
        let fresh = self
            .h
            .store()
            .remember_nonce(&verified.nonce, verified.remember_until, now)
            .await?;
        if !fresh {
            return Err(CoreError::Conflict(REPLAYED.into()));
        }
        Ok(Identity::Gateway)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"test-key";
    const NONCE_1: &str = "0123abcd-0123-4567-89ab-0123456789ab";

    fn request<'a>(headers: &'a [(&'static str, String); 4], body: &'a [u8]) -> SignedRequest<'a> {
        SignedRequest {
            timestamp: Some(&headers[0].1),
            nonce: Some(&headers[1].1),
            body_sha256: Some(&headers[2].1),
            signature: Some(&headers[3].1),
            method: "POST",
            path_and_query: "/api/internal/harness/gateway-task",
            body,
        }
    }

    #[test]
    fn a_signed_request_verifies_and_every_tampering_is_refused() {
        let now = Utc::now();
        let body = br#"{"a":1}"#;
        let h = sign(
            KEY,
            now,
            NONCE_1,
            "post",
            "/api/internal/harness/gateway-task",
            body,
        );
        let ok = verify(&request(&h, body), Some(KEY), now).unwrap();
        assert_eq!(ok.nonce, NONCE_1);
        assert!(ok.remember_until >= now + window());

        let message = |r: CoreResult<Verified>| match r {
            Err(e) => (e.http_status(), e.to_string()),
            Ok(_) => (200, String::new()),
        };
        // Another body, key, path or method.
        assert_eq!(
            message(verify(&request(&h, b"{}"), Some(KEY), now)),
            (401, BAD_BODY.into())
        );
        assert_eq!(
            message(verify(&request(&h, body), Some(b"other"), now)),
            (401, UNAUTHORIZED.into())
        );
        let mut moved = request(&h, body);
        moved.path_and_query = "/api/internal/harness/gateway";
        assert_eq!(
            message(verify(&moved, Some(KEY), now)),
            (401, UNAUTHORIZED.into())
        );
        let mut method = request(&h, body);
        method.method = "PUT";
        assert_eq!(
            message(verify(&method, Some(KEY), now)),
            (401, UNAUTHORIZED.into())
        );
        // Outside the window, either way.
        for skew in [Duration::minutes(6), Duration::minutes(-6)] {
            assert_eq!(
                message(verify(&request(&h, body), Some(KEY), now + skew)),
                (401, UNAUTHORIZED.into())
            );
        }
        // Malformed headers.
        let mut bad = request(&h, body);
        bad.nonce = Some("not-a-uuid");
        assert_eq!(
            message(verify(&bad, Some(KEY), now)),
            (401, UNAUTHORIZED.into())
        );
        let mut none = request(&h, body);
        none.signature = None;
        assert_eq!(
            message(verify(&none, Some(KEY), now)),
            (401, UNAUTHORIZED.into())
        );
        // No key.
        assert_eq!(
            message(verify(&request(&h, body), None, now)),
            (503, NOT_INITIALIZED.into())
        );
    }
}
