//! Gateway inbound: what a person writes back from a chat
//! reaches the right task, acts at most once, and is refused without a
//! gateway credential.
//!
//! - [`access`]: `manage_gateway_channel_access` and the channel list (docs/tower-messaging.md §8.8);
//! - [`ids`]: identity normalisation, the delivery mapping's chat rule,
//!   inbound dedup keys (docs/tower-messaging.md §2.11, docs/tower-messaging.md §2.12, docs/tower-messaging.md §8.3);
//! - [`owner`]: OWNER vs NON_OWNER from the configured owner ids (docs/tower-messaging.md §8.1);
//! - [`signing`]: the HMAC-signed request rule (docs/tower-messaging.md §5.1, docs/decisions.md D12);
//! - [`context`]: `resolve_gateway_task_context` (docs/tower-messaging.md §8.3, read-only);
//! - [`relay`]: `relay_channel_reply` (docs/tower-messaging.md §8.6, answers only an OPEN ask);
//! - [`continuation`]: `continue_bound_task` (docs/tower-messaging.md §8.4, OWNER, once per
//!   platform message);
//! - [`completion`]: the gateway's own `PATCH /gateway` (docs/tower-messaging.md §5.7: any → PROCESSED);
//! - [`replies`]: gateway replies, owed work on the engine (docs/tower-messaging.md §2.6, docs/tower-messaging.md §8.12);
//! - [`reply_actions`]: a person's retry / mark-delivered of a reply (docs/decisions.md D7);
//! - [`route`]: `route_gateway_message` (docs/tower-messaging.md §8.2, OWNER, once per platform
//!   message), its input ([`route_input`]), the project it is about
//!   ([`projects`], docs/tower-messaging.md §8.5) and the conversation's session ([`sessions`]);
//! - [`query`]: `route_gateway_query` (docs/tower-messaging.md §8.7, NON_OWNER, read-only) and
//!   channel access (docs/tower-messaging.md §8.8);
//! - [`recovery`]: the Workbench start a queued request wants, and the
//!   recovery of rows left in an intermediate state (docs/tower-messaging.md §8.13);
//! - [`listing`]: the inbound rows with their replies, the sessions (reads);
//! - [`workbench_callbacks`]: the bound Workbench's `confirm_gateway_task_created`,
//!   `complete_gateway_discussion`, `complete_gateway_work` (docs/tower-messaging.md §8.9–§8.11).

pub mod access;
pub mod completion;
pub mod context;
pub mod continuation;
pub mod ids;
pub mod listing;
pub mod owner;
pub mod projects;
pub mod query;
pub mod recovery;
pub mod relay;
pub mod replies;
pub mod reply_actions;
pub mod route;
pub mod route_input;
pub mod sessions;
pub mod signing;
pub mod workbench_callbacks;

use crate::{CoreResult, Harness, store::DeliveryMapping};

/// The gateway service (`Harness::gateway`): what arrives from a chat
/// gateway and what goes back to it — signed requests, routing of owner
/// messages and non-owner queries, relays and continuations of bound tasks,
/// the Workbench callbacks, the replies owed to the gateway and the recovery
/// of inbound rows left half-way. Its methods live in this module's files,
/// one concern each (listed above).
#[derive(Clone, Copy)]
pub struct Gateway<'h> {
    pub(crate) h: &'h Harness,
}

impl Gateway<'_> {
    /// The delivery mapping of a platform message Harness sent through
    /// `gateway` into `chat_id` — never another chat's message with the
    /// same id. `None` when any part is blank.
    pub async fn delivery_mapping(
        &self,
        gateway: &str,
        platform: &str,
        chat_id: &str,
        platform_message_id: &str,
    ) -> CoreResult<Option<DeliveryMapping>> {
        let gateway = ids::normalize(gateway);
        let platform = ids::normalize(platform);
        let pmid = platform_message_id.trim();
        if gateway.is_empty() || platform.is_empty() || pmid.is_empty() || chat_id.trim().is_empty()
        {
            return Ok(None);
        }
        let candidates = self
            .h
            .store()
            .delivery_mappings(&gateway, &platform, pmid)
            .await?;
        Ok(candidates
            .into_iter()
            .find(|m| ids::same_chat(&platform, &m.chat_id, chat_id)))
    }
}
