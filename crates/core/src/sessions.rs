//! Browser sessions: the admin token is exchanged once (at `/login`) for a
//! random session id kept in a cookie. Only the id's hash is stored; a
//! session expires, and can be revoked alone (logout) or all at once ("log
//! out everywhere"). The [`SessionStore`] port (`crate::store`) is implemented in
//! `harness-store`; the HTTP side (cookie, throttling) is the server's.

use std::{sync::Arc, time::Duration};

use chrono::Utc;

pub use crate::store::SessionStore;
use crate::{CoreResult, ids};

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
