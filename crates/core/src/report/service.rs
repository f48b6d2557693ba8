//! The report for a person, on demand or daily per notify target: built
//! from the facts of its window, kept with its numbered items
//! (`ReportStore::record_report`), and — for chat — sent through the outbox
//! as one message in parts at the platform's limit, in the report's own
//! transaction.

use crate::report::Reports;
use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::{
    build::{Frame, build},
    daily::{self, Schedule},
    facts::{Scope, WorkReader},
    model::Report,
    split::split,
    text::{in_lang, platform_limit, render},
};
use crate::{
    CoreError, CoreResult,
    auth::Identity,
    ids,
    ladder::Lang,
    outbox::{Outbound, platforms},
    settings::NotifyTarget,
    store::{
        Dedup, NewOutbound, NewReport, ReportChannel, StoreError, StoreResult, report_part_key,
    },
};

/// Without an earlier chat report, a report covers this long.
pub const DEFAULT_WINDOW: Duration = Duration::hours(24);
/// The longest window a report reads.
pub const MAX_WINDOW: Duration = Duration::days(31);

/// The longest `since` as typed.
pub const MAX_SINCE_CHARS: usize = 64;

/// A report's `since` as typed: an RFC 3339 time, or a duration back from
/// `now` (`12h`, `90m`, `2d`, `1h30m`).
pub fn parse_since(text: &str, now: DateTime<Utc>) -> CoreResult<DateTime<Utc>> {
    let text = text.trim();
    if text.chars().count() > MAX_SINCE_CHARS {
        return Err(CoreError::invalid(
            "since",
            format!("since is at most {MAX_SINCE_CHARS} characters"),
        ));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let bad = || {
        CoreError::invalid(
            "since",
            "since is an RFC 3339 time (2026-12-05T07:00:00Z) or a duration back from now \
             (12h, 90m, 2d, 1h30m)",
        )
    };
    let mut total = Duration::zero();
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: i64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        if n > 100_000 {
            return Err(bad());
        }
        total += match c {
            'd' => Duration::days(n),
            'h' => Duration::hours(n),
            'm' => Duration::minutes(n),
            _ => return Err(bad()),
        };
    }
    if !digits.is_empty() || total <= Duration::zero() {
        return Err(bad());
    }
    Ok(now - total)
}

/// A report's language as a query names it (`lang=en|zh`; unset:
/// English); anything else is refused naming `lang`.
pub fn parse_lang(text: Option<&str>) -> CoreResult<Lang> {
    match text.map(str::trim) {
        None | Some("") => Ok(Lang::En),
        Some(t) => Lang::parse(t)
            .ok_or_else(|| CoreError::invalid("lang", "lang must be \"en\" or \"zh\"")),
    }
}

/// The one "waits for you" count, and its parts ([`super::waits`]).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    pub total: u64,
    pub questions: u64,
    pub approvals: u64,
    pub agents: u64,
}

/// A report sent to chat.
#[derive(Debug, Clone)]
pub struct Sent {
    pub report: Report,
    /// Its parts' outbox rows.
    pub parts: Vec<Outbound>,
}

/// A daily report owed to a notify target (`daily`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyDue {
    /// The report's id, derived from the target and the local date.
    pub report_id: String,
    /// The target ([`daily::target_key`]).
    pub target: String,
    /// The local date it is the report of (`2026-12-05`).
    pub date: String,
    /// When it was due.
    pub at: DateTime<Utc>,
}

/// The daily report `t` is owed at `now`, if any: an active target with a
/// usable schedule whose time has passed today (`Schedule::owed`).
fn owed_to(t: &NotifyTarget, now: DateTime<Utc>) -> Option<DailyDue> {
    if !t.active || t.gateway.trim().is_empty() {
        return None;
    }
    let schedule = match Schedule::of(t) {
        Ok(s) => s?,
        Err(err) => {
            tracing::warn!(target_label = %t.label, %err, "a notify target's daily report \
                schedule is unusable");
            return None;
        }
    };
    let due = schedule.owed(now, t.report_since)?;
    let key = daily::target_key(t);
    Some(DailyDue {
        report_id: daily::report_id(&key, due.date),
        target: key,
        date: due.date.to_string(),
        at: due.at,
    })
}

impl Reports<'_> {
    /// The report `who` may read (see [`Scope::of`]) of `[since, now)`,
    /// kept as shown on `channel`. `since`: by default the end of the
    /// scope's last chat report, else [`DEFAULT_WINDOW`] ago.
    pub async fn report(
        &self,
        who: &Identity,
        since: Option<DateTime<Utc>>,
        channel: ReportChannel,
        work: &dyn WorkReader,
    ) -> CoreResult<Report> {
        self.report_at(who, since, channel, work, Utc::now()).await
    }

    /// [`Self::report`] ending at `now` (a report of a seeded night reads
    /// the same every time).
    pub async fn report_at(
        &self,
        who: &Identity,
        since: Option<DateTime<Utc>>,
        channel: ReportChannel,
        work: &dyn WorkReader,
        now: DateTime<Utc>,
    ) -> CoreResult<Report> {
        let (report, new) = self
            .compose(who, since, channel, work, now, ids::new_id())
            .await?;
        self.h.store().record_report(new).await?;
        Ok(report)
    }

    /// The report of `who`'s scope sent to the active unattended notify
    /// target, as one message in "(i/n)" parts at its platform's limit.
    pub async fn send_report(
        &self,
        who: &Identity,
        since: Option<DateTime<Utc>>,
        work: &dyn WorkReader,
    ) -> CoreResult<Sent> {
        let Some(target) = self.h.outbox().active_target("unattended").await? else {
            return Err(CoreError::Conflict(
                "no active unattended notify target: add one in Settings to send the report to \
                 chat"
                    .into(),
            ));
        };
        let (report, new) = self
            .compose(
                who,
                since,
                ReportChannel::Chat,
                work,
                Utc::now(),
                ids::new_id(),
            )
            .await?;
        Ok(self.send_to(report, new, &target).await?)
    }

    /// The daily reports owed at `now` and not yet written: one per active
    /// notify target whose schedule owes one (`daily::Schedule::owed`).
    /// `sent`: the caller's memo of reports known written, skipped without
    /// a read (those found written are added to it).
    pub async fn owed_daily_reports(
        &self,
        now: DateTime<Utc>,
        sent: &mut HashSet<String>,
    ) -> CoreResult<Vec<DailyDue>> {
        let mut owed = Vec::new();
        for t in self.h.settings().notify_targets().await? {
            let Some(due) = owed_to(&t, now) else {
                continue;
            };
            if sent.contains(&due.report_id) {
                continue;
            }
            if self.h.store().get_report(&due.report_id).await?.is_some() {
                sent.insert(due.report_id);
                continue;
            }
            owed.push(due);
        }
        Ok(owed)
    }

    /// Send `due`'s report to its target — the report of everything
    /// (`Identity::Admin`'s scope) since the last one sent to chat, by the
    /// same call as a report sent on demand — under its derived id, so the
    /// report and its parts are written once. `None`: nothing to send, it
    /// is written already (another worker or node, an earlier boot) or no
    /// longer owed (the target was removed, switched off or rescheduled).
    pub async fn send_daily_report(
        &self,
        due: &DailyDue,
        work: &dyn WorkReader,
    ) -> CoreResult<Option<Sent>> {
        let now = Utc::now();
        let target = self
            .h
            .settings()
            .notify_targets()
            .await?
            .into_iter()
            .find(|t| owed_to(t, now).is_some_and(|d| d.report_id == due.report_id));
        let Some(target) = target else {
            return Ok(None);
        };
        if self.h.store().get_report(&due.report_id).await?.is_some() {
            return Ok(None);
        }
        let (report, new) = self
            .compose(
                &Identity::Admin,
                None,
                ReportChannel::Chat,
                work,
                now,
                due.report_id.clone(),
            )
            .await?;
        match self.send_to(report, new, &target).await {
            Ok(sent) => Ok(Some(sent)),
            // Its id is taken: another worker wrote it first.
            Err(StoreError::Duplicate(_)) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Keep `report` with its parts for `target`, one outbox row per part
    /// at the target's platform's limit, in one transaction; then wake the
    /// outbox.
    async fn send_to(
        &self,
        mut report: Report,
        mut new: NewReport,
        target: &NotifyTarget,
    ) -> StoreResult<Sent> {
        // Written in the target's language (docs/morning-report.md).
        let lang = target.lang();
        if lang != Lang::En {
            report = in_lang(report, lang);
            new.content = report.text.clone();
        }
        let clean = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        // OpenClaw names the platform as its channel, Hermes in the
        // destination (`telegram:-100123`).
        let platform = target
            .downstream
            .as_deref()
            .filter(|d| platforms::known(d))
            .or_else(|| target.dest.as_deref().and_then(platforms::named_by))
            .map(str::to_string);
        let now = new.now;
        new.parts = split(&report.text, platform_limit(platform.as_deref()))
            .into_iter()
            .enumerate()
            .map(|(i, text)| NewOutbound {
                id: ids::new_id(),
                message_id: None,
                task_id: None,
                dedup: Dedup::Explicit(report_part_key(&report.id, i)),
                gateway: target.gateway.trim().to_string(),
                downstream: clean(&target.downstream),
                dest: clean(&target.dest),
                requested_to: None,
                profile: clean(&target.profile),
                scope: target.scope.trim().to_string(),
                expect_reply: !report.waiting.is_empty(),
                message: text,
                presentation: None,
                now,
                choices: None,
            })
            .collect();
        let parts = self.h.store().record_report(new).await?;
        for row in &parts {
            tracing::info!(outbound_id = %row.id, report_id = %report.id, "report part queued");
            self.h.outbox().outbound_changed(row);
        }
        if !parts.is_empty() {
            self.h.outbox().wake_outbox();
        }
        Ok(Sent { report, parts })
    }

    async fn compose(
        &self,
        who: &Identity,
        since: Option<DateTime<Utc>>,
        channel: ReportChannel,
        work: &dyn WorkReader,
        now: DateTime<Utc>,
        id: String,
    ) -> CoreResult<(Report, NewReport)> {
        let scope = Scope::of(who);
        let since = match since {
            Some(s) => s,
            None => self
                .h
                .store()
                .last_report_until(ReportChannel::Chat, &scope.key())
                .await?
                .unwrap_or(now - DEFAULT_WINDOW),
        };
        if since >= now {
            return Err(CoreError::invalid("since", "since must be in the past"));
        }
        let since = since.max(now - MAX_WINDOW);
        let frame = Frame {
            id,
            scope: scope.key(),
            since,
            until: now,
        };
        let facts = self.report_facts(&scope, since, now, work).await?;
        let (mut report, items) = build(&frame, &facts);
        report.text = render(&report);
        let new = NewReport {
            id: report.id.clone(),
            channel,
            scope: report.scope.clone(),
            since,
            until: now,
            content: report.text.clone(),
            items,
            parts: Vec::new(),
            now,
        };
        Ok((report, new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_a_time_or_a_duration_back() {
        let now = DateTime::parse_from_rfc3339("2026-12-05T07:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let at = |s: &str| parse_since(s, now).map(|t| t.to_rfc3339());
        assert_eq!(at("12h").ok().as_deref(), Some("2026-12-04T19:00:00+00:00"));
        assert_eq!(
            at("1h30m").ok().as_deref(),
            Some("2026-12-05T05:30:00+00:00")
        );
        assert_eq!(at("2d").ok().as_deref(), Some("2026-12-03T07:00:00+00:00"));
        assert_eq!(
            at("2026-12-04T20:00:00+01:00").ok().as_deref(),
            Some("2026-12-04T19:00:00+00:00")
        );
        for bad in ["", "12", "h", "12x", "0h", "-1h", "999999999d"] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn lang_is_en_or_zh_and_english_when_unset() {
        assert_eq!(parse_lang(None).ok(), Some(Lang::En));
        assert_eq!(parse_lang(Some("")).ok(), Some(Lang::En));
        assert_eq!(parse_lang(Some("en")).ok(), Some(Lang::En));
        assert_eq!(parse_lang(Some(" zh ")).ok(), Some(Lang::Zh));
        for bad in ["fr", "ZH", "zh-CN", "english"] {
            let err = parse_lang(Some(bad)).unwrap_err();
            assert_eq!(err.field(), Some("lang"), "{bad}: {err}");
        }
    }
}
