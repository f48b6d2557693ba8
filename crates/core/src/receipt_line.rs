//! A question's receipt in one line, for the morning report (docs/morning-report.md,
//! "The receipt of each answered question"): who answered and where, how fast, typed once or
//! UNVERIFIED, whether the agent went on — and, when a step stalled or
//! failed, where. Built from the timeline ([`super::build`]) as data
//! ([`ReceiptLine`]) and said in a language ([`ReceiptLine::words`], one
//! table per language).

use serde::{Deserialize, Serialize};

use super::{QuestionReceipt, StepKind, StepStatus};
use crate::ladder::Lang;

/// The receipt of an answered question, as the report carries it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptLine {
    /// `person` or `default`.
    pub by: Option<String>,
    /// `chat`, `web` (the web UI, REST or MCP) or `deadline`.
    pub surface: Option<String>,
    /// Minutes from the question to its answer.
    pub after_minutes: Option<i64>,
    /// How far typing the answer into the terminal got (`done`: once;
    /// `unverified`; `waiting`; `stalled`; `failed`; `skipped`: no agent
    /// ran to type into).
    pub typed: Option<StepStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    /// Whether the agent went on after it (`done`), not yet (`waiting`),
    /// not seen to (`stalled`) or stopped (`failed`).
    pub resumed: Option<StepStatus>,
    /// The first step that stalled or failed: where the question stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalled: Option<Stall>,
    /// The line in words (in the report's language).
    pub text: String,
}

/// Where a question stopped.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stall {
    pub step: StepKind,
    /// `stalled` or `failed`.
    pub status: StepStatus,
    /// Minutes since the step was owed (a stalled step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minutes: Option<i64>,
    /// The row's error, or the agent's state in words (as recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The phrases of one language; `{…}` are filled in.
struct Phrases {
    receipt: &'static str,
    in_chat: &'static str,
    on_the_web: &'static str,
    by_default: &'static str,
    answered: &'static str,
    after: &'static str,
    typed_once: &'static str,
    typed_unverified: &'static str,
    not_typed_yet: &'static str,
    nothing_typed: &'static str,
    went_on: &'static str,
    going_on: &'static str,
    stalled: &'static str,
    at_pushed: &'static str,
    at_escalated: &'static str,
    at_typed: &'static str,
    at_typed_failed: &'static str,
    at_resumed: &'static str,
    at_resumed_failed: &'static str,
    at_other: &'static str,
    why: &'static str,
    sep: &'static str,
}

const EN: Phrases = Phrases {
    receipt: "receipt: {parts}",
    in_chat: "answered in the chat",
    on_the_web: "answered on the web",
    by_default: "answered by its default at the deadline",
    answered: "answered",
    after: " after {d}",
    typed_once: "typed once",
    typed_unverified: "typed UNVERIFIED",
    not_typed_yet: "not typed yet",
    nothing_typed: "nothing typed (no agent ran)",
    went_on: "the agent went on",
    going_on: "waiting for the agent to go on",
    stalled: "stalled: {what}",
    at_pushed: "pushed {d} ago, never delivered by the gateway",
    at_escalated: "escalated {d} ago, never delivered by the gateway",
    at_typed: "answered {d} ago, never typed into the terminal",
    at_typed_failed: "not typed into the terminal",
    at_resumed: "typed {d} ago, the agent has not been seen going on since",
    at_resumed_failed: "the agent did not go on",
    at_other: "{step} did not happen",
    why: " ({error})",
    sep: " · ",
};

const ZH: Phrases = Phrases {
    receipt: "回执：{parts}",
    in_chat: "在聊天中回答",
    on_the_web: "在网页上回答",
    by_default: "到期时采用了默认答案",
    answered: "已回答",
    after: "，用时 {d}",
    typed_once: "已输入终端一次",
    typed_unverified: "输入未确认（UNVERIFIED）",
    not_typed_yet: "尚未输入终端",
    nothing_typed: "未输入（没有运行的智能体）",
    went_on: "智能体已继续工作",
    going_on: "等待智能体继续",
    stalled: "卡住：{what}",
    at_pushed: "推送已过 {d}，网关一直未送达",
    at_escalated: "升级通知已过 {d}，网关一直未送达",
    at_typed: "回答已过 {d}，一直未输入终端",
    at_typed_failed: "未能输入终端",
    at_resumed: "输入已过 {d}，此后未见智能体继续",
    at_resumed_failed: "智能体没有继续",
    at_other: "{step}未完成",
    why: "（{error}）",
    sep: " · ",
};

fn phrases(lang: Lang) -> &'static Phrases {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

impl ReceiptLine {
    /// The line of `r` (an answered question's receipt) at `now`, its
    /// `text` in `lang`.
    pub fn of(r: &QuestionReceipt, now: chrono::DateTime<chrono::Utc>, lang: Lang) -> Self {
        let step = |k: StepKind| r.steps.iter().find(|s| s.step == k);
        let answered = step(StepKind::Answered);
        let asked_at = step(StepKind::Asked).and_then(|s| s.at);
        let typed = step(StepKind::Typed);
        let stalled = r
            .steps
            .iter()
            .find(|s| matches!(s.status, StepStatus::Stalled | StepStatus::Failed))
            .map(|s| Stall {
                step: s.step,
                status: s.status,
                minutes: (s.status == StepStatus::Stalled)
                    .then(|| s.at.map(|at| (now - at).num_minutes().max(0)))
                    .flatten(),
                error: s.error.clone().filter(|e| !e.trim().is_empty()),
            });
        let mut line = Self {
            by: answered.and_then(|s| s.by.clone()),
            surface: answered.and_then(|s| s.surface.clone()),
            after_minutes: match (asked_at, answered.and_then(|s| s.at)) {
                (Some(asked), Some(at)) => Some((at - asked).num_minutes().max(0)),
                _ => None,
            },
            typed: typed.map(|s| s.status),
            delivery_id: typed.and_then(|s| s.delivery_id.clone()),
            resumed: step(StepKind::Resumed).map(|s| s.status),
            stalled,
            text: String::new(),
        };
        line.text = line.words(lang);
        line
    }

    /// The line in `lang`: "receipt: answered in the chat after 12 min ·
    /// typed once · the agent went on", or "… · stalled: answered 40 min
    /// ago, never typed into the terminal".
    pub fn words(&self, lang: Lang) -> String {
        let p = phrases(lang);
        let d = |m: i64| crate::report::text::duration_in(lang, m);
        let mut parts = Vec::new();
        let mut answered = match self.surface.as_deref() {
            Some("chat") => p.in_chat,
            Some("web") => p.on_the_web,
            Some("deadline") => p.by_default,
            _ => p.answered,
        }
        .to_string();
        if let Some(m) = self.after_minutes {
            answered.push_str(&p.after.replace("{d}", &d(m)));
        }
        parts.push(answered);
        let stalled_at = self.stalled.as_ref().map(|s| s.step);
        match self.typed {
            _ if stalled_at == Some(StepKind::Typed) => {}
            Some(StepStatus::Done) => parts.push(p.typed_once.into()),
            Some(StepStatus::Unverified) => parts.push(p.typed_unverified.into()),
            Some(StepStatus::Skipped) => parts.push(p.nothing_typed.into()),
            Some(_) => parts.push(p.not_typed_yet.into()),
            None => {}
        }
        match self.resumed {
            _ if stalled_at == Some(StepKind::Resumed) => {}
            Some(StepStatus::Done) => parts.push(p.went_on.into()),
            Some(StepStatus::Waiting) => parts.push(p.going_on.into()),
            _ => {}
        }
        if let Some(s) = &self.stalled {
            parts.push(p.stalled.replace("{what}", &stall(lang, s)));
        }
        p.receipt.replace("{parts}", &parts.join(p.sep))
    }
}

/// Where a question stopped, in words.
fn stall(lang: Lang, s: &Stall) -> String {
    let p = phrases(lang);
    let d = crate::report::text::duration_in(lang, s.minutes.unwrap_or(0));
    let failed = s.status == StepStatus::Failed;
    let mut what = match (s.step, failed) {
        (StepKind::Pushed, _) => p.at_pushed.replace("{d}", &d),
        (StepKind::Escalated, _) => p.at_escalated.replace("{d}", &d),
        (StepKind::Typed, false) => p.at_typed.replace("{d}", &d),
        (StepKind::Typed, true) => p.at_typed_failed.to_string(),
        (StepKind::Resumed, false) => p.at_resumed.replace("{d}", &d),
        (StepKind::Resumed, true) => p.at_resumed_failed.to_string(),
        (other, _) => p.at_other.replace("{step}", other.as_str()),
    };
    if let Some(e) = &s.error {
        what.push_str(&p.why.replace("{error}", &one_line(e)));
    }
    what
}

/// An error on one line, at most 120 characters.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 120 {
        flat
    } else {
        let mut cut: String = flat.chars().take(119).collect();
        cut.push('…');
        cut
    }
}
