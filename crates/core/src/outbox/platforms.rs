//! The chat platforms a notify target may name, and the shape of a
//! destination: what a channel needs before it can work ("Add"
//! with every field empty, a platform `carrier-pigeon` and a destination
//! `???` were accepted and could never send).

/// The platforms Hermes and OpenClaw send to (their `--to <platform:…>` /
/// `--channel <platform>` names), sorted. Listed in `docs/gateways.md`.
pub const PLATFORMS: &[&str] = &[
    "bluebubbles",
    "dingtalk",
    "discord",
    "email",
    "feishu",
    "googlechat",
    "homeassistant",
    "imessage",
    "irc",
    "lark",
    "line",
    "matrix",
    "mattermost",
    "msteams",
    "nextcloud-talk",
    "nostr",
    "ntfy",
    "qq",
    "signal",
    "slack",
    "sms",
    "synology-chat",
    "telegram",
    "tlon",
    "twitch",
    "wechat",
    "wecom",
    "weixin",
    "whatsapp",
    "zalo",
    "zalouser",
];

/// Whether `platform` (any case, trimmed) is one of [`PLATFORMS`].
pub fn known(platform: &str) -> bool {
    PLATFORMS
        .binary_search(&platform.trim().to_ascii_lowercase().as_str())
        .is_ok()
}

/// The error text of an unknown platform.
pub fn unknown_text(platform: &str) -> String {
    format!(
        "unknown platform \"{}\": use the gateway's name for it, e.g. telegram, slack, feishu, \
         discord, whatsapp, wechat ({} known, listed in docs/gateways.md)",
        platform.trim(),
        PLATFORMS.len()
    )
}

/// The platform a Hermes destination names itself (`telegram:-100123` →
/// `telegram`), if its prefix is a known one.
pub fn named_by(dest: &str) -> Option<&str> {
    dest.trim()
        .split_once(':')
        .map(|(p, _)| p)
        .filter(|p| known(p))
}

/// A destination reads as one: a chat id, user name or alias has at least
/// one letter or digit (`???` or `--` is none).
pub fn plausible_dest(dest: &str) -> bool {
    dest.chars().any(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_for_the_binary_search() {
        let mut sorted = PLATFORMS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, PLATFORMS);
    }

    #[test]
    fn platforms_and_destinations() {
        assert!(known("telegram") && known(" Telegram ") && known("ntfy"));
        assert!(!known("carrier-pigeon") && !known(""));
        assert_eq!(named_by("telegram:-100123"), Some("telegram"));
        assert_eq!(named_by("chat:oc_1"), None);
        assert_eq!(named_by("team"), None);
        assert!(plausible_dest("-100123") && plausible_dest("@ana") && plausible_dest("张三"));
        assert!(!plausible_dest("???") && !plausible_dest(" -- "));
    }
}
