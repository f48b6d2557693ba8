//! The morning report on the web (`/report`): the browser-side copy of
//! `harness_core::report::Report` and of a batch reply's outcome, and the
//! two server functions over the core's `Reports::report` and
//! `Reports::answer_report` (the same calls as `GET /api/report` and
//! `POST /api/report/{id}/reply`). Times arrive written in UTC, so the
//! server's render and the browser's agree.

use harness_types::{AskedState, ExecutionStatus};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// `question`, `approval` or `agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WaitKind {
    Question,
    Approval,
    Agent,
}

impl WaitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Question => "question",
            Self::Approval => "approval",
            Self::Agent => "agent",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunData {
    pub execution_id: String,
    pub status: ExecutionStatus,
    pub started: String,
    pub ended: Option<String>,
    pub exit_code: Option<i64>,
    pub end_reason: Option<String>,
    pub minutes: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressData {
    pub at: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedData {
    pub id: String,
    pub kind: WaitKind,
    pub text: String,
    pub asked: String,
    /// A question's state or an approval's.
    pub state: AskedState,
    pub answer: Option<String>,
    pub by: Option<String>,
    pub after_minutes: Option<i64>,
    pub reminders: u32,
    /// An answered question's receipt line, in the page's language.
    pub receipt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitsData {
    pub branch: String,
    pub count: u32,
    pub shortstat: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionData {
    pub task_id: String,
    pub title: String,
    pub project_name: Option<String>,
    pub link: String,
    pub runs: Vec<RunData>,
    pub progress: Vec<ProgressData>,
    pub asked: Vec<AskedData>,
    pub resumed: Vec<String>,
    pub commits: Option<CommitsData>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingData {
    pub number: u32,
    pub kind: WaitKind,
    pub task_id: String,
    pub task_title: String,
    pub link: String,
    pub text: String,
    pub options: Vec<String>,
    pub waiting_since: String,
    pub default_at: Option<String>,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportData {
    /// A batch reply names it.
    pub id: String,
    pub since: String,
    pub until: String,
    pub tasks: Vec<SectionData>,
    pub waiting: Vec<WaitingData>,
    pub waiting_count: u64,
}

/// One numbered part of a batch reply: taken or not, and why (the core's
/// words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemOutcomeData {
    pub number: u32,
    pub taken: bool,
    pub detail: String,
    pub task_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchData {
    /// Set when nothing was read (nothing changed).
    pub malformed: Option<String>,
    pub items: Vec<ItemOutcomeData>,
}

#[cfg(feature = "ssr")]
mod convert {
    use chrono::{DateTime, Utc};
    use harness_core::{
        report::{BatchOutcome, Report, model},
        store::ItemKind,
    };

    use super::*;
    use crate::{api::report_words as words, i18n::Locale};

    fn at(t: DateTime<Utc>) -> String {
        t.format("%Y-%m-%d %H:%M UTC").to_string()
    }

    fn kind(k: ItemKind) -> WaitKind {
        match k {
            ItemKind::Question => WaitKind::Question,
            ItemKind::Approval => WaitKind::Approval,
            ItemKind::Agent => WaitKind::Agent,
        }
    }

    fn run(l: Locale, r: model::Run) -> RunData {
        RunData {
            execution_id: r.execution_id,
            status: r.status,
            started: at(r.started_at),
            ended: r.ended_at.map(at),
            exit_code: r.exit_code,
            end_reason: r.end_reason.map(|e| words::end_reason(l, &e)),
            minutes: r.minutes,
        }
    }

    fn asked(l: Locale, a: model::Asked) -> AskedData {
        AskedData {
            receipt: a.receipt.as_ref().map(|r| words::receipt(l, r)),
            id: a.id,
            kind: kind(a.kind),
            text: a.text,
            asked: at(a.asked_at),
            state: a.state,
            answer: a.answer,
            by: a.by.as_deref().map(|b| words::by(l, b)),
            after_minutes: a.after_minutes,
            reminders: a.reminders,
        }
    }

    fn section(l: Locale, t: model::TaskSection) -> SectionData {
        SectionData {
            task_id: t.task_id,
            title: t.title,
            project_name: t.project_name,
            link: t.link,
            runs: t.runs.into_iter().map(|r| run(l, r)).collect(),
            progress: t
                .progress
                .into_iter()
                .map(|p| ProgressData {
                    at: at(p.at),
                    text: p.text,
                })
                .collect(),
            asked: t.asked.into_iter().map(|a| asked(l, a)).collect(),
            resumed: words::resumed(l, &t.resumed_notes),
            commits: t.commits.map(|c| CommitsData {
                branch: c.branch,
                count: c.count,
                shortstat: c.shortstat,
            }),
        }
    }

    fn waiting(l: Locale, w: model::WaitingItem) -> WaitingData {
        WaitingData {
            number: w.number,
            kind: kind(w.kind),
            task_id: w.task_id,
            task_title: w.task_title,
            link: w.link,
            text: w.text,
            options: w.options,
            waiting_since: at(w.waiting_since),
            default_at: w.default_at.map(at),
            why: words::why(l, &w.blocks),
        }
    }

    /// The report as the page shows it, the core's phrases in `l`.
    pub fn report(l: Locale, r: Report) -> ReportData {
        ReportData {
            id: r.id,
            since: at(r.since),
            until: at(r.until),
            tasks: r.tasks.into_iter().map(|t| section(l, t)).collect(),
            waiting: r.waiting.into_iter().map(|w| waiting(l, w)).collect(),
            waiting_count: r.waiting_count,
        }
    }

    /// A batch reply's outcome, said in `l`.
    pub fn batch(l: Locale, o: BatchOutcome) -> BatchData {
        BatchData {
            malformed: o
                .malformed_why
                .as_ref()
                .map(|m| words::malformed(l, m))
                .or(o.malformed),
            items: o
                .items
                .into_iter()
                .map(|i| ItemOutcomeData {
                    number: i.number,
                    taken: i.taken,
                    detail: words::said(l, &i.said),
                    task_id: i.task_id,
                })
                .collect(),
        }
    }
}

/// What the report reads of an agent's work (the server's `git` reader),
/// handed to the server functions as context; without it a report shows
/// no commits.
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct ReportWork(pub std::sync::Arc<dyn harness_core::report::WorkReader>);

/// The report of the signed-in person, from the last report sent to chat
/// (or `since`: an RFC 3339 time or `12h`) until now, kept so that a batch
/// reply can name its items.
#[server(prefix = "/sfn", endpoint = "report")]
pub async fn get_report(since: Option<String>) -> Result<ReportData, ServerFnError> {
    let h = ssr::harness()?;
    let now = chrono::Utc::now();
    let since = since
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| harness_core::report::service::parse_since(s, now))
        .transpose()
        .map_err(ssr::to_sfn)?;
    let work = use_context::<ReportWork>();
    let none = harness_core::report::NoWork;
    let reader: &dyn harness_core::report::WorkReader = match &work {
        Some(w) => w.0.as_ref(),
        None => &none,
    };
    let report = h
        .reports()
        .report(
            &harness_core::auth::Identity::Browser,
            since,
            harness_core::store::ReportChannel::Web,
            reader,
        )
        .await
        .map_err(ssr::to_sfn)?;
    Ok(convert::report(crate::i18n::Locale::detect(), report))
}

/// One reply answering the report's numbered items (`1 B · 2 approve · 3
/// deny: not on Friday`), each by the same core rule as a direct answer.
#[server(prefix = "/sfn", endpoint = "answer_report")]
pub async fn answer_report(report_id: String, text: String) -> Result<BatchData, ServerFnError> {
    let h = ssr::harness()?;
    let by = harness_core::auth::Identity::Browser
        .person()
        .map_err(ssr::to_sfn)?;
    let from = harness_core::report::ReplyFrom {
        by: &by,
        sender: None,
        via: "report",
    };
    let control = use_context::<std::sync::Arc<dyn harness_core::control::AgentControl>>();
    let out = h
        .reports()
        .answer_report(from, &report_id, &text, control.as_deref())
        .await
        .map_err(ssr::to_sfn)?;
    Ok(convert::batch(crate::i18n::Locale::detect(), out))
}
