//! Browser sessions: the admin token is exchanged once (at `/login`) for a
//! random session id kept in a cookie. Only the id's hash is stored; a
//! session expires, and can be revoked alone (logout) or all at once ("log
//! out everywhere"). Failed logins are slowed down per client address
//! (`crate::rate_limit::FAILED_LOGINS`); the right token always logs in.
//! The [`SessionStore`] port (`crate::store`) is implemented in
//! `harness-store`; the HTTP side (cookie, form, `Retry-After`) is the
//! server's.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::Utc;

pub use crate::store::SessionStore;
use crate::{
    CoreResult, ids,
    rate_limit::{RateAction, RateLimiter, RateLimits},
};

/// The session cookie's name.
pub const COOKIE: &str = "harness_session";

/// Who a UI request is, as the approval audit records it:
/// `session:<12 hex>` — the start of the stored hash of the session id
/// from the `Cookie` header, never the id (the secret). `None`: no session
/// cookie (a script with the admin bearer token).
pub fn ui_session_label(cookie_header: &str) -> Option<String> {
    let id = cookie_header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty())?;
    let hash = ids::token_hash(id);
    Some(format!("session:{}", hash.get(..12).unwrap_or(&hash)))
}

/// The session rules: who may open one, how long it lives.
#[derive(Clone)]
pub struct Sessions {
    store: Arc<dyn SessionStore>,
    admin_token_hash: String,
    ttl: Duration,
    /// Failed logins per client address.
    failures: Arc<RateLimiter>,
}

/// Prefix of session ids (they are bearer secrets like the tokens).
const PREFIX: &str = "hs_";

impl Sessions {
    pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

    pub fn new(store: Arc<dyn SessionStore>, admin_token_hash: String, ttl: Duration) -> Self {
        Self {
            store,
            admin_token_hash,
            ttl,
            failures: Arc::default(),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Whether `token` is the admin token (constant time).
    pub fn is_admin_token(&self, token: &str) -> bool {
        ids::secure_eq(
            ids::token_hash(token).as_bytes(),
            self.admin_token_hash.as_bytes(),
        )
    }

    /// Exchanges the admin token for a new session id (returned once, stored
    /// hashed). `None` when the token is wrong.
    pub async fn login(&self, admin_token: &str) -> CoreResult<Option<String>> {
        if !self.is_admin_token(admin_token) {
            return Ok(None);
        }
        let now = Utc::now();
        // Dead rows never accumulate past one TTL.
        self.store.purge_sessions(now).await?;
        let id = ids::new_token(PREFIX);
        let ttl = chrono::Duration::from_std(self.ttl).unwrap_or(chrono::Duration::days(30));
        self.store
            .insert_session(&ids::token_hash(&id), now, now + ttl)
            .await?;
        Ok(Some(id))
    }

    /// [`Self::login`] from a browser at `client` (its address). The right
    /// token always opens a session, however many wrong ones came first:
    /// failed guesses — an `<img src="/login?token=x">` on any local page
    /// makes them — must never lock the owner out. A wrong token counts
    /// against `client`; past `rate_limit::FAILED_LOGINS` the answer is
    /// `CoreError::RateLimited` (HTTP 429 with `Retry-After`) instead of
    /// `Ok(None)`.
    pub async fn login_from(&self, client: &str, admin_token: &str) -> CoreResult<Option<String>> {
        let opened = self.login(admin_token).await?;
        if opened.is_none() {
            self.failures.take(
                &RateLimits::default(),
                client,
                RateAction::FailedLogin,
                Instant::now(),
            )?;
        }
        Ok(opened)
    }

    /// Whether the session id from a cookie is a live session.
    pub async fn check(&self, id: &str) -> CoreResult<bool> {
        if !id.starts_with(PREFIX) || id.len() > 128 {
            return Ok(false);
        }
        Ok(self
            .store
            .session_alive(&ids::token_hash(id), Utc::now())
            .await?)
    }

    /// Ends one session.
    pub async fn logout(&self, id: &str) -> CoreResult<bool> {
        Ok(self
            .store
            .revoke_session(&ids::token_hash(id), Utc::now())
            .await?)
    }

    /// Ends every session (every browser must log in again).
    pub async fn logout_everywhere(&self) -> CoreResult<u64> {
        Ok(self.store.revoke_all_sessions(Utc::now()).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ui_session_is_named_by_its_hash_never_its_id() {
        let label = ui_session_label("a=1; harness_session=secret-id; b=2").unwrap_or_default();
        assert_eq!(
            label,
            format!("session:{}", &ids::token_hash("secret-id")[..12])
        );
        assert!(!label.contains("secret"));
        assert_eq!(ui_session_label("a=1"), None);
        assert_eq!(ui_session_label("harness_session="), None);
    }
}
