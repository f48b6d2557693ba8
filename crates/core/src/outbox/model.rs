//! The outbox's rows: an outbound message, its states, and the platform
//! message id → task mapping. The types are the store port's
//! ([`crate::store`]); the outbox's own constructors live here.

use chrono::Utc;

pub use crate::store::{DeliveryMapping, Outbound, OutboundState};

impl Outbound {
    /// Whether the current attempt's CLI was (or may have been) spawned
    /// (its started mark is committed).
    pub fn attempt_started(&self) -> bool {
        self.started_attempt == Some(self.attempts)
    }

    /// An empty row (for checks that need only a few fields).
    pub(crate) fn blank() -> Self {
        let now = Utc::now();
        Self {
            id: String::new(),
            dedup_key: String::new(),
            task_id: None,
            execution_id: None,
            message_id: None,
            gateway: String::new(),
            downstream: None,
            dest: None,
            requested_to: None,
            profile: None,
            scope: "work".into(),
            expect_reply: false,
            message: String::new(),
            presentation: None,
            state: OutboundState::Pending,
            attempts: 0,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            platform: None,
            platform_chat_id: None,
            platform_message_id: None,
            last_error: None,
            delivered_at: None,
            created_at: now,
            updated_at: now,
            started_attempt: None,
        }
    }
}

#[cfg(test)]
impl Outbound {
    pub(crate) fn sample(
        gateway: &str,
        downstream: Option<&str>,
        dest: Option<&str>,
        message: &str,
    ) -> Self {
        let now = Utc::now();
        Self {
            id: "c0".into(),
            dedup_key: "k".into(),
            task_id: None,
            execution_id: None,
            message_id: None,
            gateway: gateway.into(),
            downstream: downstream.map(Into::into),
            dest: dest.map(Into::into),
            requested_to: None,
            profile: None,
            scope: "work".into(),
            expect_reply: false,
            message: message.into(),
            presentation: None,
            state: OutboundState::Pending,
            attempts: 0,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            platform: None,
            platform_chat_id: None,
            platform_message_id: None,
            last_error: None,
            delivered_at: None,
            created_at: now,
            updated_at: now,
            started_attempt: None,
        }
    }
}
