//! The report for a person, on demand: built from the facts of its window,
//! kept with its numbered items (`ReportStore::record_report`), and — for
//! chat — sent through the outbox as one message in parts at the
//! platform's limit, in the report's own transaction.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::{
    build::{Frame, build},
    facts::{NoWork, Scope, WorkReader},
    model::Report,
    split::split,
    text::{platform_limit, render},
};
use crate::{
    CoreError, CoreResult, Harness,
    auth::Identity,
    ids,
    outbox::{Outbound, platforms},
    store::{Dedup, NewOutbound, NewReport, ReportChannel, report_part_key},
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

/// The one "waits for you" count, and its parts.
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

impl Harness {
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
        let (report, new) = self.compose(who, since, channel, work, now).await?;
        self.store().record_report(new).await?;
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
        let Some(target) = self.active_target("unattended").await? else {
            return Err(CoreError::Conflict(
                "no active unattended notify target: add one in Settings to send the report to \
                 chat"
                    .into(),
            ));
        };
        let (report, mut new) = self
            .compose(who, since, ReportChannel::Chat, work, Utc::now())
            .await?;
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
                scope: "unattended".into(),
                expect_reply: !report.waiting.is_empty(),
                message: text,
                presentation: None,
                now,
                choices: None,
            })
            .collect();
        let parts = self.store().record_report(new).await?;
        for row in &parts {
            tracing::info!(outbound_id = %row.id, report_id = %report.id, "report part queued");
            self.outbound_changed(row);
        }
        if !parts.is_empty() {
            self.wake_outbox();
        }
        Ok(Sent { report, parts })
    }

    /// The one "waits for you" count of `who`'s scope: open questions,
    /// pending approvals and agents that need a person — the same items,
    /// by the same code, as the report's "what waits for you".
    pub async fn waiting(&self, who: &Identity) -> CoreResult<Waiting> {
        let now = Utc::now();
        let facts = self
            .report_facts(&Scope::of(who), now, now, &NoWork)
            .await?;
        let frame = Frame {
            id: String::new(),
            scope: Scope::of(who).key(),
            since: now,
            until: now,
        };
        let (report, _) = build(&frame, &facts);
        let count = |k: crate::store::ItemKind| {
            report.waiting.iter().filter(|w| w.kind == k).count() as u64
        };
        Ok(Waiting {
            total: report.waiting_count,
            questions: count(crate::store::ItemKind::Question),
            approvals: count(crate::store::ItemKind::Approval),
            agents: count(crate::store::ItemKind::Agent),
        })
    }

    async fn compose(
        &self,
        who: &Identity,
        since: Option<DateTime<Utc>>,
        channel: ReportChannel,
        work: &dyn WorkReader,
        now: DateTime<Utc>,
    ) -> CoreResult<(Report, NewReport)> {
        let scope = Scope::of(who);
        let since = match since {
            Some(s) => s,
            None => self
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
            id: ids::new_id(),
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
}
