//! Reachability: per notify target, when its person last
//! wrote (the gateway inbound messages from its chat and the answers to
//! asks that reached it — read from those rows, nothing else to keep in
//! step), the platform's known delivery window (WeChat, Weixin, WhatsApp:
//! 24 hours after the person last wrote), and the newest failure of a send
//! to it since its last delivery. `GET /api/settings/reachability` shows
//! it; the reminder pass escalates an ask at once when its chat's window
//! has passed (reminders nobody would receive are not sent).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::asks::Asks;
use crate::{CoreResult, store::Outbound};

/// Seconds after the person last wrote within which `platform` delivers a
/// bot's message, for the platforms known to have such a window.
pub fn window_secs(platform: Option<&str>) -> Option<i64> {
    match platform?.trim().to_ascii_lowercase().as_str() {
        "wechat" | "weixin" | "whatsapp" => Some(24 * 3600),
        _ => None,
    }
}

/// Whether the window has passed at `now` (never when the platform has
/// none, or nobody is known to have written: then nothing is known).
pub fn window_passed(
    platform: Option<&str>,
    last_wrote: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    match (window_secs(platform), last_wrote) {
        (Some(w), Some(at)) => (now - at).num_seconds() > w,
        _ => false,
    }
}

/// One target as the settings page shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetReachability {
    pub label: String,
    pub gateway: String,
    pub platform: Option<String>,
    pub dest: Option<String>,
    pub scope: String,
    pub last_wrote: Option<DateTime<Utc>>,
    /// The platform's delivery window, in seconds (none: no known window).
    pub window_secs: Option<i64>,
    pub window_passed: bool,
    /// A sentence for the person, when something is wrong.
    pub warning: Option<String>,
    /// The newest send failure since the last delivery.
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub failed_attempts: Option<u32>,
    /// The failing row gave up (DEAD).
    pub gave_up: bool,
}

fn clean(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Asks<'_> {
    /// Whether the chat `row` went to can no longer be reached at `now`
    /// (its platform's window passed since its person last wrote).
    pub async fn chat_unreachable(&self, row: &Outbound, now: DateTime<Utc>) -> CoreResult<bool> {
        // The configured platform first (a receipt's may be another name).
        let platform = clean(&row.downstream).or_else(|| row.platform.clone());
        if window_secs(platform.as_deref()).is_none() {
            return Ok(false);
        }
        let Some(platform) = platform else {
            return Ok(false);
        };
        // The chat as the receipt named it and as configured, each without a
        // `<platform>:` prefix (gateways write either form).
        let mut chats: Vec<String> = Vec::new();
        for c in [row.platform_chat_id.clone(), clean(&row.dest)]
            .into_iter()
            .flatten()
        {
            let bare = c
                .strip_prefix(&format!("{platform}:"))
                .map_or_else(|| c.clone(), str::to_string);
            if !chats.contains(&bare) {
                chats.push(bare);
            }
        }
        let mut last_wrote = None;
        for chat in &chats {
            let activity = self
                .h
                .store()
                .chat_activity(&row.gateway, &platform, chat, row.dest.as_deref())
                .await?;
            last_wrote = last_wrote.max(activity.last_wrote);
        }
        Ok(window_passed(Some(&platform), last_wrote, now))
    }

    /// Every notify target with its reachability at `now`.
    pub async fn reachability(&self, now: DateTime<Utc>) -> CoreResult<Vec<TargetReachability>> {
        let mut out = Vec::new();
        for t in self.h.settings().notify_targets().await? {
            let (platform, dest) = (clean(&t.downstream), clean(&t.dest));
            let p = platform.as_deref().unwrap_or("");
            let chat = dest.as_deref().unwrap_or("");
            let chat = chat.strip_prefix(&format!("{p}:")).unwrap_or(chat);
            let activity = self
                .h
                .store()
                .chat_activity(t.gateway.trim(), p, chat, dest.as_deref())
                .await?;
            let window = window_secs(platform.as_deref());
            let passed = window_passed(platform.as_deref(), activity.last_wrote, now);
            let label = if t.label.trim().is_empty() {
                t.gateway.clone()
            } else {
                t.label.clone()
            };
            let warning = match (window, activity.last_wrote) {
                (Some(w), Some(at)) if passed => Some(format!(
                    "{} delivers a bot's message only within {} h after the person last wrote; \
                     they last wrote {} ago: asks to this chat are escalated at once",
                    platform.as_deref().unwrap_or(""),
                    w / 3600,
                    crate::reminders::waited_text((now - at).num_milliseconds())
                )),
                (Some(w), None) => Some(format!(
                    "{} delivers a bot's message only within {} h after the person last wrote; \
                     nobody is known to have written from this chat yet",
                    platform.as_deref().unwrap_or(""),
                    w / 3600
                )),
                _ => None,
            };
            let failure = activity.last_failure;
            out.push(TargetReachability {
                label,
                gateway: t.gateway.clone(),
                platform,
                dest,
                scope: t.scope.clone(),
                last_wrote: activity.last_wrote,
                window_secs: window,
                window_passed: passed,
                warning,
                last_error: failure.as_ref().map(|f| f.error.clone()),
                last_error_at: failure.as_ref().map(|f| f.at),
                failed_attempts: failure.as_ref().map(|f| f.attempts),
                gave_up: failure.as_ref().is_some_and(|f| f.dead),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;

    #[test]
    fn the_known_windows() {
        let now = Utc::now();
        assert_eq!(window_secs(Some("WeChat")), Some(86_400));
        assert_eq!(window_secs(Some("whatsapp")), Some(86_400));
        assert_eq!(window_secs(Some("telegram")), None);
        assert!(window_passed(
            Some("weixin"),
            Some(now - Duration::hours(25)),
            now
        ));
        assert!(!window_passed(
            Some("weixin"),
            Some(now - Duration::hours(23)),
            now
        ));
        assert!(!window_passed(Some("weixin"), None, now));
        assert!(!window_passed(
            Some("telegram"),
            Some(now - Duration::days(30)),
            now
        ));
    }
}
