//! Identity normalisation of inbound platform messages (docs/tower-messaging.md
//! docs/tower-messaging.md §2.11), the chat rule of the delivery mapping (docs/tower-messaging.md §8.3: a mapping answers a
//! reply only from its own chat), and the dedup key of an inbound message
//! (docs/tower-messaging.md §2.12). The one place these rules live.

/// Platform prefixes a chat or sender id may carry (`feishu:oc_x`).
const PLATFORM_PREFIXES: [&str; 4] = ["feishu:", "lark:", "wechat:", "weixin:"];

/// Trim + lower-case.
pub fn normalize(value: &str) -> String {
    value.trim().to_lowercase()
}

fn strip_platform(value: &str, platform: &str) -> String {
    let mut v = normalize(value);
    let own = format!("{}:", normalize(platform));
    for prefix in PLATFORM_PREFIXES.iter().copied().chain([own.as_str()]) {
        if prefix.len() > 1
            && let Some(rest) = v.strip_prefix(prefix)
        {
            v = rest.to_string();
            break;
        }
    }
    v
}

/// A chat id as compared: normalised, the platform prefix (`feishu:`,
/// `lark:`, `wechat:`, `weixin:` or the message's own platform, e.g.
/// `telegram:`) and then `chat:` stripped.
pub fn normalize_chat_id(platform: &str, chat_id: &str) -> String {
    let v = strip_platform(chat_id, platform);
    v.strip_prefix("chat:").map(str::to_string).unwrap_or(v)
}

/// A sender id as compared: normalised, the platform prefix and then
/// `user:` stripped (`ou_x` ≡ `feishu:ou_x` ≡ `user:ou_x`).
pub fn normalize_sender_id(platform: &str, sender_id: &str) -> String {
    let v = strip_platform(sender_id, platform);
    v.strip_prefix("user:").map(str::to_string).unwrap_or(v)
}

/// `lark` → `feishu`, `weixin` → `wechat` (owner detection).
pub fn canonical_platform(platform: &str) -> String {
    match normalize(platform).as_str() {
        "lark" => "feishu".into(),
        "weixin" => "wechat".into(),
        other => other.into(),
    }
}

/// Every character but `[a-z0-9]` removed (`open-claw` → `openclaw`).
pub fn canonical_gateway(gateway: &str) -> String {
    normalize(gateway)
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .collect()
}

/// Whether a delivery recorded for `mapped_chat` answers a reply from
/// `chat` on `platform`: the same normalised chat, or on Feishu/Lark the
/// P2P alias (one side `oc_…`, the other `ou_…`, after `user:` is stripped:
/// a private chat is addressed by the user but replied from the chat).
pub fn same_chat(platform: &str, mapped_chat: &str, chat: &str) -> bool {
    let a = normalize_chat_id(platform, mapped_chat);
    let b = normalize_chat_id(platform, chat);
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    let feishu = matches!(canonical_platform(platform).as_str(), "feishu");
    let user = |s: &str| s.strip_prefix("user:").unwrap_or(s).to_string();
    let (a, b) = (user(&a), user(&b));
    feishu
        && ((a.starts_with("oc_") && b.starts_with("ou_"))
            || (a.starts_with("ou_") && b.starts_with("oc_")))
}

/// `gateway-inbound:<gateway>:<platform>:<chat>:<platformMessageId>`
/// (docs/tower-messaging.md §2.12), of normalised parts.
pub fn inbound_dedup_key(
    gateway: &str,
    platform: &str,
    chat_id: &str,
    platform_message_id: &str,
) -> String {
    format!(
        "gateway-inbound:{}:{}:{}:{}",
        normalize(gateway),
        normalize(platform),
        normalize_chat_id(platform, chat_id),
        platform_message_id.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_and_sender_ids() {
        assert_eq!(normalize_chat_id("feishu", " Feishu:chat:OC_A "), "oc_a");
        assert_eq!(normalize_chat_id("lark", "lark:oc_a"), "oc_a");
        assert_eq!(normalize_chat_id("telegram", "telegram:-100123"), "-100123");
        assert_eq!(normalize_chat_id("telegram", "-100123"), "-100123");
        assert_eq!(normalize_sender_id("feishu", "feishu:user:ou_x"), "ou_x");
        assert_eq!(normalize_sender_id("feishu", "user:ou_x"), "ou_x");
        assert_eq!(normalize_sender_id("feishu", "OU_X"), "ou_x");
        assert_eq!(canonical_gateway("Open-Claw"), "openclaw");
        assert_eq!(canonical_platform("Lark"), "feishu");
        assert_eq!(canonical_platform("weixin"), "wechat");
    }

    #[test]
    fn the_chat_rule() {
        assert!(same_chat("telegram", "-100123", "telegram:-100123"));
        assert!(!same_chat("telegram", "-100123", "-100999"));
        assert!(!same_chat("telegram", "", ""));
        // Feishu P2P: recorded under the chat, replied as the user.
        assert!(same_chat("feishu", "feishu:oc_p2p", "user:ou_me"));
        assert!(!same_chat("feishu", "oc_group_a", "oc_group_b"));
        assert!(!same_chat("telegram", "oc_a", "ou_b"));
    }
}
