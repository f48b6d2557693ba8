//! OWNER vs NON_OWNER (docs/tower-messaging.md §8.1): the sender of an inbound
//! message is the OWNER when its normalised id is among the owner ids
//! configured for the gateway (`harness.gatewayConfig.<gw>.accessPolicy.
//! ownerIds`) under a platform key that canonicalises to the message's
//! platform (`feishu` ≡ `lark`, `wechat` ≡ `weixin`; gateway `open-claw` ≡
//! `openclaw`; `ou_x` ≡ `feishu:ou_x` ≡ `user:ou_x`). No sender, no ids or
//! no match: NON_OWNER.
//!
//! A gateway's credential is a [`Person`] only as the OWNER: where the
//! sender is known (`continue_bound_task`), only when this rule says so;
//! where the reference's tool carries no sender (`reply_to_ask`,
//! `relay_channel_reply`), the gateway vouches for it — those tools are in
//! the OWNER tool surface the gateway hands only to OWNER senders (docs/tower-messaging.md §4.1).

use crate::gateway::Gateway;
use std::collections::BTreeMap;

use serde::Serialize;

use super::ids::{canonical_gateway, canonical_platform, normalize, normalize_sender_id};
use crate::{
    CoreError, CoreResult,
    auth::{Identity, Person},
    outbox::gateway::GatewayConfig,
};

/// The sender's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Role {
    Owner,
    NonOwner,
}

/// Who sent an inbound message.
#[derive(Debug, Clone, Copy)]
pub struct Sender<'a> {
    pub gateway: &'a str,
    pub platform: &'a str,
    pub sender_id: Option<&'a str>,
}

/// The role of `sender` under `config`.
pub fn role(config: &GatewayConfig, sender: Sender<'_>) -> Role {
    let gateway = canonical_gateway(sender.gateway);
    if !matches!(gateway.as_str(), "openclaw" | "hermes") {
        return Role::NonOwner;
    }
    let Some(id) = sender
        .sender_id
        .map(|s| normalize_sender_id(sender.platform, s))
        .filter(|s| !s.is_empty())
    else {
        return Role::NonOwner;
    };
    let platform = canonical_platform(sender.platform);
    let settings = config.get(&gateway);
    let owners = settings
        .access_policy
        .as_ref()
        .map(|p| &p.owner_ids)
        .into_iter()
        .flatten();
    for (key, ids) in owners {
        if canonical_platform(key) != platform {
            continue;
        }
        if ids
            .iter()
            .any(|owner| normalize_sender_id(sender.platform, owner) == id)
        {
            return Role::Owner;
        }
    }
    Role::NonOwner
}

/// Owner ids as stored: platform keys lower-case `^[a-z][a-z0-9_-]{0,63}$`,
/// ids trimmed, deduplicated, blanks and empty lists dropped.
pub(crate) fn clean_owner_ids(
    field: &'static str,
    owners: BTreeMap<String, Vec<String>>,
) -> CoreResult<BTreeMap<String, Vec<String>>> {
    if owners.len() > 64 {
        return Err(CoreError::invalid(
            field,
            "accessPolicy.ownerIds: at most 64 platforms",
        ));
    }
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, ids) in owners {
        let key = normalize(&key);
        let mut chars = key.chars();
        let key_ok = key.len() <= 64
            && matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !key_ok {
            return Err(CoreError::invalid(
                field,
                format!("accessPolicy.ownerIds: {key:?} is not a platform name"),
            ));
        }
        if ids.len() > 100 {
            return Err(CoreError::invalid(
                field,
                "accessPolicy.ownerIds: at most 100 ids per platform",
            ));
        }
        let list = out.entry(key).or_default();
        for id in ids {
            let id = id.trim().to_string();
            if id.chars().count() > 512 || id.contains('\0') {
                return Err(CoreError::invalid(
                    field,
                    "accessPolicy.ownerIds: an id is at most 512 characters",
                ));
            }
            if !id.is_empty() && !list.contains(&id) {
                list.push(id);
            }
        }
    }
    out.retain(|_, ids| !ids.is_empty());
    Ok(out)
}

impl Gateway<'_> {
    /// The role of a sender under the stored gateway settings.
    pub async fn gateway_role(&self, sender: Sender<'_>) -> CoreResult<Role> {
        Ok(role(&self.h.outbox().gateway_config().await?, sender))
    }

    /// `who` as a person answering through a gateway: the admin and a
    /// browser session are people; a gateway is the OWNER when `sender`
    /// is (403 otherwise), or — `sender` unknown — the OWNER the gateway
    /// vouches for by offering an OWNER tool (module docs); an agent never.
    pub async fn gateway_person(
        &self,
        who: &Identity,
        sender: Option<Sender<'_>>,
    ) -> CoreResult<Person> {
        match (who, sender) {
            (Identity::Gateway, None) => Ok(Person::gateway_owner()),
            (Identity::Gateway, Some(sender)) => match self.gateway_role(sender).await? {
                Role::Owner => Ok(Person::gateway_owner()),
                Role::NonOwner => Err(CoreError::Forbidden(
                    "Only the configured platform OWNER may do this".into(),
                )),
            },
            (other, _) => other.person(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::gateway::{AccessPolicy, GatewaySettings};

    fn config(gateway: &str, platform: &str, ids: &[&str]) -> GatewayConfig {
        let settings = GatewaySettings {
            access_policy: Some(AccessPolicy {
                owner_ids: [(
                    platform.to_string(),
                    ids.iter().map(|s| s.to_string()).collect(),
                )]
                .into(),
            }),
            ..Default::default()
        };
        match gateway {
            "hermes" => GatewayConfig {
                hermes: Some(settings),
                ..Default::default()
            },
            _ => GatewayConfig {
                openclaw: Some(settings),
                ..Default::default()
            },
        }
    }

    fn sender<'a>(gateway: &'a str, platform: &'a str, id: Option<&'a str>) -> Sender<'a> {
        Sender {
            gateway,
            platform,
            sender_id: id,
        }
    }

    #[test]
    fn owner_ids_match_across_aliases_and_prefixes() {
        let c = config("openclaw", "feishu", &["ou_owner"]);
        for (gw, platform, id) in [
            ("openclaw", "feishu", "ou_owner"),
            ("Open-Claw", "lark", "feishu:ou_owner"),
            ("openclaw", "FEISHU", "user:OU_OWNER"),
        ] {
            assert_eq!(
                role(&c, sender(gw, platform, Some(id))),
                Role::Owner,
                "{gw} {platform} {id}"
            );
        }
        for (gw, platform, id) in [
            ("openclaw", "feishu", Some("ou_other")),
            ("openclaw", "telegram", Some("ou_owner")),
            ("hermes", "feishu", Some("ou_owner")),
            ("openclaw", "feishu", None),
            ("openclaw", "feishu", Some("  ")),
            ("slack-bot", "feishu", Some("ou_owner")),
        ] {
            assert_eq!(
                role(&c, sender(gw, platform, id)),
                Role::NonOwner,
                "{gw} {platform} {id:?}"
            );
        }
        // No owner ids: everybody is NON_OWNER.
        assert_eq!(
            role(
                &GatewayConfig::default(),
                sender("openclaw", "feishu", Some("ou_owner"))
            ),
            Role::NonOwner
        );
        let tg = config("hermes", "telegram", &["42"]);
        assert_eq!(
            role(&tg, sender("hermes", "telegram", Some("telegram:42"))),
            Role::Owner
        );
    }

    #[test]
    fn owner_ids_are_cleaned_and_checked() {
        let cleaned = clean_owner_ids(
            "openclaw",
            [
                (
                    "Feishu".to_string(),
                    vec![" ou_a ".into(), "ou_a".into(), "".into()],
                ),
                ("telegram".to_string(), vec![" ".into()]),
            ]
            .into(),
        )
        .unwrap();
        assert_eq!(
            cleaned,
            [("feishu".to_string(), vec!["ou_a".to_string()])].into()
        );
        let err = clean_owner_ids("openclaw", [("9bad".to_string(), vec!["x".into()])].into())
            .unwrap_err();
        assert_eq!(err.field(), Some("openclaw"));
    }
}
