//! The daily report per notify target, the rule: its schedule (a local time
//! of day `HH:MM` in an IANA time zone; off unless both are set), the
//! instant it is due on a local date, and the one report a target is owed
//! at `now`. Pure: the zone database is jiff's bundled one, `now` is given.
//!
//! * A time the day skips (the spring-forward gap) is due at the first
//!   minute that exists after it (`02:30` on a day that jumps from 02:00 to
//!   03:00 is due at 03:00); a zone that skipped a whole day, at that
//!   day's next existing minute.
//! * A time the day has twice (the fall-back fold) is due once, at its
//!   first occurrence.
//! * Owed: the report of `now`'s local date once its instant has passed,
//!   on that same local date only (a server down at 08:00 sends when it
//!   comes back that day; one down until the next day sends that day's
//!   report at its time, never the missed one), and not before the
//!   schedule was set (a time already past when it was set starts the next
//!   day).
//!
//! Each owed report has its id ([`report_id`]): derived from the target and
//! the local date, so its chat parts' outbox keys (`report:<id>:<part>`)
//! are per target and date — a restart, a second node or a late wake-up
//! finds it written and never sends it twice.

use chrono::{DateTime, Utc};
use jiff::{
    Span, Timestamp,
    civil::{Date, DateTime as Civil},
    tz::{AmbiguousOffset, TimeZone},
};
use sha2::{Digest, Sha256};

use crate::{CoreError, CoreResult, settings::NotifyTarget};

/// The longest time zone name accepted (IANA names are far shorter).
pub const MAX_ZONE_CHARS: usize = 64;

/// `HH:MM`, 00:00 to 23:59 (the API document states it).
pub const TIME_PATTERN: &str = r"^([01][0-9]|2[0-3]):[0-5][0-9]$";

/// How far a skipped time is followed to the next existing minute: two
/// days of minutes covers every gap the tz database knows (a whole skipped
/// day included).
const MAX_GAP_MINUTES: u32 = 2 * 24 * 60;

/// A target's daily report: at `hour:minute` in `zone`.
#[derive(Debug, Clone)]
pub struct Schedule {
    hour: i8,
    minute: i8,
    zone: TimeZone,
}

/// The report a target is owed: of local `date`, due at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    pub date: Date,
    pub at: DateTime<Utc>,
}

/// `HH:MM` → (hour, minute).
fn hour_minute(text: &str) -> Option<(i8, i8)> {
    let (h, m) = text.trim().split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    ((0..24).contains(&h) && (0..60).contains(&m)).then_some((h, m))
}

fn blank(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn to_chrono(ts: Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ts.as_millisecond())
}

fn to_jiff(t: DateTime<Utc>) -> Option<Timestamp> {
    Timestamp::from_millisecond(t.timestamp_millis()).ok()
}

impl Schedule {
    /// The schedule of a time and a zone; each error names its field
    /// (`reportAt`, `reportTimeZone`).
    pub fn parse(at: &str, time_zone: &str) -> CoreResult<Self> {
        let (hour, minute) = hour_minute(at).ok_or_else(|| {
            CoreError::invalid(
                "reportAt",
                format!(
                    "the daily report's time is HH:MM, from 00:00 to 23:59 (got \"{}\")",
                    at.trim()
                ),
            )
        })?;
        Ok(Self {
            hour,
            minute,
            zone: zone(time_zone)?,
        })
    }

    /// A target's schedule: `None` when it has no time (off). A time
    /// without a zone, a malformed time or an unknown zone is an error
    /// naming its field.
    pub fn of(target: &NotifyTarget) -> CoreResult<Option<Self>> {
        let Some(at) = blank(&target.report_at) else {
            return Ok(None);
        };
        let Some(tz) = blank(&target.report_time_zone) else {
            return Err(CoreError::invalid(
                "reportTimeZone",
                "a daily report time needs its time zone: an IANA name such as Europe/Berlin, \
                 Asia/Shanghai or UTC",
            ));
        };
        Self::parse(at, tz).map(Some)
    }

    /// The instant the report of local `date` is due (see the module's
    /// rules for skipped and repeated times).
    pub fn on(&self, date: Date) -> Option<DateTime<Utc>> {
        let mut local: Civil = date.at(self.hour, self.minute, 0, 0);
        for _ in 0..MAX_GAP_MINUTES {
            let ambiguous = self.zone.to_ambiguous_timestamp(local);
            match ambiguous.offset() {
                AmbiguousOffset::Gap { .. } => {
                    local = local.checked_add(Span::new().minutes(1)).ok()?;
                }
                AmbiguousOffset::Unambiguous { .. } | AmbiguousOffset::Fold { .. } => {
                    return to_chrono(ambiguous.earlier().ok()?);
                }
            }
        }
        None
    }

    /// The local date of `t` in the schedule's zone.
    fn date_of(&self, t: DateTime<Utc>) -> Option<Date> {
        Some(self.zone.to_datetime(to_jiff(t)?).date())
    }

    /// The first due instant at or after `now`.
    pub fn next_due(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let today = self.date_of(now)?;
        let mut date = today.yesterday().ok()?;
        for _ in 0..4 {
            if let Some(at) = self.on(date).filter(|at| *at >= now) {
                return Some(at);
            }
            date = date.tomorrow().ok()?;
        }
        None
    }

    /// The report owed at `now`: the one due on `now`'s local date whose
    /// instant has passed — its own date's, or the day before's when a
    /// skipped time moved it onto today — and is not before `not_before`'s
    /// minute (when the schedule was set).
    pub fn owed(&self, now: DateTime<Utc>, not_before: Option<DateTime<Utc>>) -> Option<Due> {
        let today = self.date_of(now)?;
        let floor = not_before.map(|t| {
            let secs = t.timestamp();
            DateTime::from_timestamp(secs - secs.rem_euclid(60), 0).unwrap_or(t)
        });
        for date in [Some(today), today.yesterday().ok()].into_iter().flatten() {
            let Some(at) = self.on(date) else { continue };
            if at <= now && self.date_of(at) == Some(today) && floor.is_none_or(|f| at >= f) {
                return Some(Due { date, at });
            }
        }
        None
    }
}

/// An IANA time zone by name, or an error naming `reportTimeZone`.
pub fn zone(name: &str) -> CoreResult<TimeZone> {
    let name = name.trim();
    let unknown = || {
        CoreError::invalid(
            "reportTimeZone",
            format!(
                "unknown time zone \"{name}\": give an IANA name such as Europe/Berlin, \
                 Asia/Shanghai or UTC"
            ),
        )
    };
    if name.is_empty() || name.chars().count() > MAX_ZONE_CHARS {
        return Err(unknown());
    }
    TimeZone::get(name).map_err(|_| unknown())
}

/// What identifies a target for its reports: its id, else (a target
/// written without one) its gateway, platform, destination and scope.
pub fn target_key(t: &NotifyTarget) -> String {
    match blank(&t.id) {
        Some(id) => id.to_string(),
        None => format!(
            "{}|{}|{}|{}",
            t.gateway.trim(),
            blank(&t.downstream).unwrap_or(""),
            blank(&t.dest).unwrap_or(""),
            t.scope.trim()
        ),
    }
}

/// Keep `t`'s schedule tidy (trimmed, blank is unset) and stamp when it was
/// set: the stamp of the same target in `before` while its time and zone
/// are unchanged, else `now`; none without a time.
pub fn stamp<'a>(
    t: &mut NotifyTarget,
    mut before: impl Iterator<Item = &'a NotifyTarget>,
    now: DateTime<Utc>,
) {
    t.report_at = blank(&t.report_at).map(str::to_string);
    t.report_time_zone = blank(&t.report_time_zone).map(str::to_string);
    if t.report_at.is_none() {
        t.report_since = None;
        return;
    }
    let key = target_key(t);
    let same = |o: &NotifyTarget| {
        blank(&o.report_at) == t.report_at.as_deref()
            && blank(&o.report_time_zone) == t.report_time_zone.as_deref()
    };
    t.report_since = match before.find(|o| target_key(o) == key) {
        Some(old) if same(old) => old.report_since,
        _ => Some(now),
    };
}

/// The id of `target`'s daily report of local `date`: CUID-shaped (`c` and
/// 24 base-36 characters), derived, so every worker names it alike.
pub fn report_id(target: &str, date: Date) -> String {
    let digest = Sha256::digest(format!("daily-report\n{target}\n{date}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    let mut value = u128::from_be_bytes(bytes);
    const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = vec![b'0'; 24];
    for slot in out.iter_mut().rev() {
        *slot = BASE36[(value % 36) as usize];
        value /= 36;
    }
    let mut id = String::with_capacity(25);
    id.push('c');
    id.extend(out.into_iter().map(char::from));
    id
}

#[cfg(test)]
#[path = "daily_tests.rs"]
mod tests;
