//! Quiet hours per notify target: a daily window
//! (`"22:00"`–`"07:00"`, it may wrap midnight) in an IANA time zone
//! (`"Europe/Berlin"`, read from the system tzdb). While a target's window
//! lasts, normal and low reminders and escalations to it wait (the next
//! pass after the window sends the latest due one); high ones still go.
//! Stored in the setting `harness.reminders` (`quietHours`: target label
//! or id → window); judged at the pass's `now`, so a test clock decides.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    settings::NotifyTarget,
    store::{Outbound, Urgency},
};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuietHours {
    /// Local start, `HH:MM`.
    pub start: String,
    /// Local end, `HH:MM` (before `start`: the window wraps midnight).
    pub end: String,
    /// IANA time zone, e.g. `Europe/Berlin`.
    pub time_zone: String,
}

/// `HH:MM` → minutes after midnight.
fn minutes(text: &str) -> Option<u32> {
    let (h, m) = text.trim().split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

impl QuietHours {
    /// Why the window is unusable, if it is.
    pub fn problem(&self) -> Option<String> {
        let (Some(start), Some(end)) = (minutes(&self.start), minutes(&self.end)) else {
            return Some(format!(
                "start and end must be HH:MM (got \"{}\" and \"{}\")",
                self.start, self.end
            ));
        };
        if start == end {
            return Some("start and end must differ".into());
        }
        if let Err(err) = jiff::tz::TimeZone::get(self.time_zone.trim()) {
            return Some(format!(
                "unknown time zone \"{}\" (an IANA name such as Europe/Berlin): {err}",
                self.time_zone
            ));
        }
        None
    }

    /// Whether `now` falls in the window (an unusable window never does).
    pub fn contains(&self, now: DateTime<Utc>) -> bool {
        let (Some(start), Some(end)) = (minutes(&self.start), minutes(&self.end)) else {
            return false;
        };
        let Ok(tz) = jiff::tz::TimeZone::get(self.time_zone.trim()) else {
            return false;
        };
        let Ok(ts) = jiff::Timestamp::from_millisecond(now.timestamp_millis()) else {
            return false;
        };
        let local = tz.to_datetime(ts);
        let at = u32::try_from(local.hour()).unwrap_or(0) * 60
            + u32::try_from(local.minute()).unwrap_or(0);
        if start < end {
            (start..end).contains(&at)
        } else {
            at >= start || at < end
        }
    }
}

fn clean(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// The notify target a sent row went to (same gateway, platform and
/// destination), if one is configured.
pub fn target_of<'a>(targets: &'a [NotifyTarget], row: &Outbound) -> Option<&'a NotifyTarget> {
    targets.iter().find(|t| {
        t.gateway.trim() == row.gateway
            && clean(&t.downstream) == clean(&row.downstream)
            && clean(&t.dest) == clean(&row.dest)
    })
}

/// The key a target is named by in the settings: its id when it has one
/// and the map uses it, else its label.
pub fn named<'a, V>(
    map: &'a std::collections::BTreeMap<String, V>,
    target: &NotifyTarget,
) -> Option<&'a V> {
    target
        .id
        .as_deref()
        .and_then(|id| map.get(id))
        .or_else(|| map.get(target.label.trim()))
}

/// Whether a reminder of `urgency` to `target` waits at `now`.
pub fn waits(
    quiet: &std::collections::BTreeMap<String, QuietHours>,
    target: Option<&NotifyTarget>,
    urgency: Urgency,
    now: DateTime<Utc>,
) -> bool {
    urgency != Urgency::High
        && target
            .and_then(|t| named(quiet, t))
            .is_some_and(|q| q.contains(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    fn q(start: &str, end: &str, tz: &str) -> QuietHours {
        QuietHours {
            start: start.into(),
            end: end.into(),
            time_zone: tz.into(),
        }
    }

    #[test]
    fn a_window_over_midnight_in_its_time_zone() {
        let night = q("22:00", "07:00", "Asia/Shanghai");
        // 23:30 in Shanghai is 15:30 UTC.
        assert!(night.contains(utc("2026-03-10T15:30:00Z")));
        // 06:59 there: still quiet; 07:00: over.
        assert!(night.contains(utc("2026-03-10T22:59:00Z")));
        assert!(!night.contains(utc("2026-03-10T23:00:00Z")));
        // Noon there.
        assert!(!night.contains(utc("2026-03-10T04:00:00Z")));
        let lunch = q("12:00", "13:00", "UTC");
        assert!(lunch.contains(utc("2026-03-10T12:30:00Z")));
        assert!(!lunch.contains(utc("2026-03-10T13:00:00Z")));
    }

    #[test]
    fn daylight_saving_is_the_zone_s() {
        let berlin = q("22:00", "07:00", "Europe/Berlin");
        // Winter: UTC+1 → 21:30 UTC is 22:30 local.
        assert!(berlin.contains(utc("2026-01-10T21:30:00Z")));
        // Summer: UTC+2 → 20:30 UTC is 22:30 local; 05:30 UTC is 07:30.
        assert!(berlin.contains(utc("2026-07-10T20:30:00Z")));
        assert!(!berlin.contains(utc("2026-07-10T05:30:00Z")));
    }

    #[test]
    fn an_unusable_window_is_named_and_never_quiet() {
        assert!(q("22:00", "07:00", "Europe/Berlin").problem().is_none());
        assert!(q("25:00", "07:00", "UTC").problem().is_some());
        assert!(q("7:00", "08:00", "UTC").problem().is_some());
        assert!(q("07:00", "07:00", "UTC").problem().is_some());
        let bad = q("22:00", "07:00", "Mars/Olympus");
        assert!(bad.problem().is_some_and(|p| p.contains("Mars/Olympus")));
        assert!(!bad.contains(utc("2026-01-10T23:30:00Z")));
    }

    #[test]
    fn high_still_goes() {
        let mut map = std::collections::BTreeMap::new();
        map.insert("phone".to_string(), q("00:00", "23:59", "UTC"));
        let t = NotifyTarget {
            id: None,
            label: "phone".into(),
            gateway: "hermes".into(),
            downstream: None,
            dest: None,
            profile: None,
            scope: "unattended".into(),
            active: true,
            include_screen: false,
            report_at: None,
            report_time_zone: None,
            report_since: None,
            language: None,
        };
        let now = utc("2026-01-10T12:00:00Z");
        assert!(waits(&map, Some(&t), Urgency::Normal, now));
        assert!(waits(&map, Some(&t), Urgency::Low, now));
        assert!(!waits(&map, Some(&t), Urgency::High, now));
        assert!(!waits(&map, None, Urgency::Normal, now));
    }
}
