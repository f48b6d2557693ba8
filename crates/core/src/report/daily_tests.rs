use chrono::{DateTime, Utc};
use jiff::civil::date;

use super::*;

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn at(time: &str, zone: &str) -> Schedule {
    match Schedule::parse(time, zone) {
        Ok(s) => s,
        Err(err) => panic!("{time} {zone}: {err}"),
    }
}

fn on(s: &Schedule, y: i16, m: i8, d: i8) -> Option<String> {
    s.on(date(y, m, d)).map(|t| t.to_rfc3339())
}

fn target(at: Option<&str>, zone: Option<&str>) -> NotifyTarget {
    NotifyTarget {
        id: Some("c0target".into()),
        label: "phone".into(),
        gateway: "openclaw".into(),
        downstream: Some("telegram".into()),
        dest: Some("-100".into()),
        profile: None,
        scope: "unattended".into(),
        active: true,
        include_screen: false,
        report_at: at.map(str::to_string),
        report_time_zone: zone.map(str::to_string),
        report_since: None,
        language: None,
    }
}

#[test]
fn a_plain_day_in_several_zones() {
    let s = |z| at("08:00", z);
    let z = "+00:00";
    assert_eq!(
        on(&s("Europe/Berlin"), 2026, 12, 5).as_deref(),
        Some(&*format!("2026-12-05T07:00:00{z}"))
    );
    assert_eq!(
        on(&s("Europe/Berlin"), 2026, 7, 5).as_deref(),
        Some(&*format!("2026-07-05T06:00:00{z}"))
    );
    assert_eq!(
        on(&s("Asia/Shanghai"), 2026, 12, 5).as_deref(),
        Some(&*format!("2026-12-05T00:00:00{z}"))
    );
    // Sydney is on summer time in December (UTC+11): the day before in UTC.
    assert_eq!(
        on(&s("Australia/Sydney"), 2026, 12, 5).as_deref(),
        Some(&*format!("2026-12-04T21:00:00{z}"))
    );
    assert_eq!(
        on(&s("Asia/Kolkata"), 2026, 12, 5).as_deref(),
        Some(&*format!("2026-12-05T02:30:00{z}"))
    );
    assert_eq!(
        on(&at("23:59", "America/Los_Angeles"), 2026, 12, 5).as_deref(),
        Some(&*format!("2026-12-06T07:59:00{z}"))
    );
    assert_eq!(
        on(&at("00:00", "UTC"), 2026, 12, 5).as_deref(),
        Some(&*format!("2026-12-05T00:00:00{z}"))
    );
}

#[test]
fn a_skipped_time_is_due_at_the_next_valid_minute() {
    // Berlin, 29 March 2026: 02:00 CET jumps to 03:00 CEST.
    let berlin = at("02:30", "Europe/Berlin");
    assert_eq!(
        on(&berlin, 2026, 3, 29).as_deref(),
        Some("2026-03-29T01:00:00+00:00")
    );
    // The day before and after: 02:30 exists.
    assert_eq!(
        on(&berlin, 2026, 3, 28).as_deref(),
        Some("2026-03-28T01:30:00+00:00")
    );
    assert_eq!(
        on(&berlin, 2026, 3, 30).as_deref(),
        Some("2026-03-30T00:30:00+00:00")
    );
    // The last minute before the gap and the first after it are kept.
    assert_eq!(
        on(&at("01:59", "Europe/Berlin"), 2026, 3, 29).as_deref(),
        Some("2026-03-29T00:59:00+00:00")
    );
    assert_eq!(
        on(&at("03:00", "Europe/Berlin"), 2026, 3, 29).as_deref(),
        Some("2026-03-29T01:00:00+00:00")
    );
    // New York, 8 March 2026: 02:00 EST jumps to 03:00 EDT.
    assert_eq!(
        on(&at("02:15", "America/New_York"), 2026, 3, 8).as_deref(),
        Some("2026-03-08T07:00:00+00:00")
    );
    // Samoa skipped 30 December 2011 entirely (UTC-10 → UTC+14): its
    // report is due at the next existing minute, 31 December 00:00.
    let apia = at("08:00", "Pacific/Apia");
    assert_eq!(
        on(&apia, 2011, 12, 30).as_deref(),
        Some("2011-12-30T10:00:00+00:00")
    );
    assert_eq!(
        on(&apia, 2011, 12, 31).as_deref(),
        Some("2011-12-30T18:00:00+00:00")
    );
}

#[test]
fn a_repeated_time_is_due_once_at_its_first() {
    // Berlin, 25 October 2026: 03:00 CEST falls back to 02:00 CET, so
    // 02:30 happens at 00:30 and again at 01:30 UTC.
    let berlin = at("02:30", "Europe/Berlin");
    assert_eq!(
        on(&berlin, 2026, 10, 25).as_deref(),
        Some("2026-10-25T00:30:00+00:00")
    );
    let first = berlin.owed(utc("2026-10-25T00:30:00Z"), None);
    let second = berlin.owed(utc("2026-10-25T01:30:00Z"), None);
    assert_eq!(first, second, "the second 02:30 owes the same report");
    assert_eq!(
        first.map(|d| d.date.to_string()).as_deref(),
        Some("2026-10-25")
    );
    assert!(berlin.owed(utc("2026-10-25T00:29:59Z"), None).is_none());
    // New York, 1 November 2026: 01:30 happens twice (EDT, then EST).
    assert_eq!(
        on(&at("01:30", "America/New_York"), 2026, 11, 1).as_deref(),
        Some("2026-11-01T05:30:00+00:00")
    );
}

#[test]
fn owed_once_its_time_passed_on_the_same_local_day_only() {
    let s = at("08:00", "Europe/Berlin");
    let owed = |now: &str| {
        s.owed(utc(now), None)
            .map(|d| (d.date.to_string(), d.at.to_rfc3339()))
    };
    // 07:59 in Berlin: not yet.
    assert_eq!(owed("2026-12-05T06:59:59Z"), None);
    let today = Some((
        "2026-12-05".to_string(),
        "2026-12-05T07:00:00+00:00".to_string(),
    ));
    assert_eq!(owed("2026-12-05T07:00:00Z"), today);
    // A late wake-up (a server down at 08:00) the same day: the same report.
    assert_eq!(owed("2026-12-05T22:59:00Z"), today);
    // After midnight in Berlin: that day's is no longer owed, the new
    // day's not yet.
    assert_eq!(owed("2026-12-05T23:30:00Z"), None);
    assert_eq!(
        owed("2026-12-06T07:00:00Z").map(|d| d.0).as_deref(),
        Some("2026-12-06")
    );
    // A server down for two days owes the day it is back, not the missed.
    assert_eq!(
        owed("2026-12-08T12:00:00Z").map(|d| d.0).as_deref(),
        Some("2026-12-08")
    );
    // The local date decides, not UTC's: Shanghai's 08:00 is midnight UTC.
    let shanghai = at("08:00", "Asia/Shanghai");
    let due = shanghai.owed(utc("2026-12-05T15:59:00Z"), None);
    assert_eq!(
        due.map(|d| d.date.to_string()).as_deref(),
        Some("2026-12-05")
    );
    assert!(shanghai.owed(utc("2026-12-05T16:00:00Z"), None).is_none());
}

#[test]
fn a_time_already_past_when_set_starts_the_next_day() {
    let s = at("08:00", "Europe/Berlin");
    // Set at 10:30 Berlin: nothing today, tomorrow at 08:00.
    let set = Some(utc("2026-12-05T09:30:00Z"));
    assert!(s.owed(utc("2026-12-05T09:31:00Z"), set).is_none());
    assert_eq!(
        s.owed(utc("2026-12-06T07:00:00Z"), set)
            .map(|d| d.date.to_string())
            .as_deref(),
        Some("2026-12-06")
    );
    // Set during its own minute: due at once.
    let set = Some(utc("2026-12-05T07:00:40Z"));
    assert!(s.owed(utc("2026-12-05T07:00:41Z"), set).is_some());
}

#[test]
fn the_next_due_instant() {
    let s = at("08:00", "Europe/Berlin");
    let next = |now: &str| s.next_due(utc(now)).map(|t| t.to_rfc3339());
    assert_eq!(
        next("2026-12-05T07:00:00Z").as_deref(),
        Some("2026-12-05T07:00:00+00:00")
    );
    assert_eq!(
        next("2026-12-05T07:00:01Z").as_deref(),
        Some("2026-12-06T07:00:00+00:00")
    );
    // Across the spring-forward night: the gap moves 02:30 to 03:00.
    let gap = at("02:30", "Europe/Berlin");
    assert_eq!(
        gap.next_due(utc("2026-03-28T12:00:00Z"))
            .map(|t| t.to_rfc3339())
            .as_deref(),
        Some("2026-03-29T01:00:00+00:00")
    );
    // Sydney's next morning is the evening before in UTC.
    let sydney = at("08:00", "Australia/Sydney");
    assert_eq!(
        sydney
            .next_due(utc("2026-12-05T12:00:00Z"))
            .map(|t| t.to_rfc3339())
            .as_deref(),
        Some("2026-12-05T21:00:00+00:00")
    );
}

#[test]
fn a_malformed_schedule_names_its_field() {
    let field = |r: CoreResult<Schedule>| r.err().and_then(|e| e.field());
    for bad in ["8:00", "24:00", "08:60", "08-00", "", "0800", "08:00:00"] {
        assert_eq!(
            field(Schedule::parse(bad, "UTC")),
            Some("reportAt"),
            "{bad}"
        );
    }
    for bad in ["Mars/Olympus", "", "Europe/", &"A".repeat(200)] {
        assert_eq!(
            field(Schedule::parse("08:00", bad)),
            Some("reportTimeZone"),
            "{bad}"
        );
    }
    assert!(Schedule::parse(" 08:00 ", " Europe/Berlin ").is_ok());
    // Off unless a time is set; a time needs its zone.
    assert!(matches!(Schedule::of(&target(None, None)), Ok(None)));
    assert!(matches!(
        Schedule::of(&target(Some(" "), Some("UTC"))),
        Ok(None)
    ));
    assert_eq!(
        Schedule::of(&target(Some("08:00"), None))
            .err()
            .and_then(|e| e.field()),
        Some("reportTimeZone")
    );
    assert!(matches!(
        Schedule::of(&target(Some("08:00"), Some("Asia/Shanghai"))),
        Ok(Some(_))
    ));
}

#[test]
fn a_daily_report_id_is_derived_from_its_target_and_date() {
    let a = report_id("c0target", date(2026, 12, 5));
    assert!(crate::ids::is_cuid(&a), "{a}");
    assert_eq!(a.len(), 25);
    assert_eq!(a, report_id("c0target", date(2026, 12, 5)));
    assert_ne!(a, report_id("c0target", date(2026, 12, 6)));
    assert_ne!(a, report_id("c1target", date(2026, 12, 5)));
    let keyless = NotifyTarget {
        id: None,
        ..target(None, None)
    };
    assert_eq!(target_key(&keyless), "openclaw|telegram|-100|unattended");
    assert_eq!(target_key(&target(None, None)), "c0target");
}

#[test]
fn the_stamp_moves_only_when_the_schedule_changes() {
    let t0 = utc("2026-12-05T09:00:00Z");
    let t1 = utc("2026-12-05T10:00:00Z");
    let mut first = target(Some(" 08:00 "), Some(" Europe/Berlin "));
    stamp(&mut first, std::iter::empty(), t0);
    assert_eq!(first.report_at.as_deref(), Some("08:00"));
    assert_eq!(first.report_time_zone.as_deref(), Some("Europe/Berlin"));
    assert_eq!(first.report_since, Some(t0));
    // The same schedule written again keeps its stamp (a value sent is ignored).
    let mut again = target(Some("08:00"), Some("Europe/Berlin"));
    again.report_since = Some(utc("2020-01-01T00:00:00Z"));
    stamp(&mut again, std::iter::once(&first), t1);
    assert_eq!(again.report_since, Some(t0));
    // Another time or zone starts from now.
    let mut moved = target(Some("09:00"), Some("Europe/Berlin"));
    stamp(&mut moved, std::iter::once(&first), t1);
    assert_eq!(moved.report_since, Some(t1));
    let mut zoned = target(Some("08:00"), Some("Asia/Shanghai"));
    stamp(&mut zoned, std::iter::once(&first), t1);
    assert_eq!(zoned.report_since, Some(t1));
    // Off: no time, no stamp (a zone alone is kept).
    let mut off = target(Some(" "), Some("UTC"));
    stamp(&mut off, std::iter::once(&first), t1);
    assert_eq!(
        (
            off.report_at,
            off.report_time_zone.as_deref(),
            off.report_since
        ),
        (None, Some("UTC"), None)
    );
}
