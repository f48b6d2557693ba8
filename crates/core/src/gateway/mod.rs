//! Gateway inbound (issue 28): what a person writes back from a chat
//! reaches the right task, acts at most once, and is refused without a
//! gateway credential.
//!
//! - [`access`]: `manage_gateway_channel_access` and the channel list (§8.8);
//! - [`ids`]: identity normalisation, the delivery mapping's chat rule,
//!   inbound dedup keys (tower-messaging.md §2.11, §2.12, §8.3);
//! - [`owner`]: OWNER vs NON_OWNER from the configured owner ids (§8.1);
//! - [`signing`]: the HMAC-signed request rule (§5.1, decisions D12);
//! - [`context`]: `resolve_gateway_task_context` (§8.3, read-only);
//! - [`relay`]: `relay_channel_reply` (§8.6, answers only an OPEN ask);
//! - [`continuation`]: `continue_bound_task` (§8.4, OWNER, once per
//!   platform message);
//! - [`completion`]: the gateway's own `PATCH /gateway` (§5.7: any → PROCESSED);
//! - [`replies`]: gateway replies, owed work on the engine (§2.6, §8.12);
//! - [`reply_actions`]: a person's retry / mark-delivered of a reply (D7);
//! - [`route`]: `route_gateway_message` (§8.2, OWNER, once per platform
//!   message), its input ([`route_input`]), the project it is about
//!   ([`projects`], §8.5) and the conversation's session ([`sessions`]);
//! - [`query`]: `route_gateway_query` (§8.7, NON_OWNER, read-only) and
//!   channel access (§8.8);
//! - [`recovery`]: the Workbench start a queued request wants, and the
//!   recovery of rows left in an intermediate state (§8.13);
//! - [`listing`]: the inbound rows with their replies, the sessions (reads);
//! - [`workbench_callbacks`]: the bound Workbench's `confirm_gateway_task_created`,
//!   `complete_gateway_discussion`, `complete_gateway_work` (§8.9–§8.11).

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

impl Harness {
    /// The delivery mapping of a platform message Harness sent through
    /// `gateway` into `chat_id` — never another chat's message with the
    /// same id (issue 28.2). `None` when any part is blank.
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
            .store()
            .delivery_mappings(&gateway, &platform, pmid)
            .await?;
        Ok(candidates
            .into_iter()
            .find(|m| ids::same_chat(&platform, &m.chat_id, chat_id)))
    }
}
