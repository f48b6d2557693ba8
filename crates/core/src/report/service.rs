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
        let (report, new) = self.compose(who, since, channel, work).await?;
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
            .compose(who, since, ReportChannel::Chat, work)
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
    ) -> CoreResult<(Report, NewReport)> {
        let scope = Scope::of(who);
        let now = Utc::now();
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
