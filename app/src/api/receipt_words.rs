//! A question's receipt in the page's language: each step of
//! `harness_core::receipt::QuestionReceipt` as the core gives it (kind,
//! status, what its row holds) said here, on the server, as the report's
//! phrases are (`report_words`). Server-only texts (`EN_SERVER` /
//! `ZH_SERVER`).

use chrono::{DateTime, Utc};
use harness_core::receipt::{QuestionReceipt, ReceiptStep, StepKind, StepStatus};
use harness_types::MessageState;

use super::receipt::{ReceiptData, StepData};
use crate::i18n::Locale;

fn step_key(k: StepKind) -> &'static str {
    match k {
        StepKind::Asked => "receipt.step.asked",
        StepKind::Pushed => "receipt.step.pushed",
        StepKind::Reminded => "receipt.step.reminded",
        StepKind::Escalated => "receipt.step.escalated",
        StepKind::Answered => "receipt.step.answered",
        StepKind::Typed => "receipt.step.typed",
        StepKind::Resumed => "receipt.step.resumed",
        StepKind::ScreenAfter => "receipt.step.screen_after",
    }
}

/// The words of one step.
fn say(l: Locale, state: MessageState, s: &ReceiptStep, now: DateTime<Utc>) -> String {
    let ago =
        s.at.map(|at| harness_types::waited_text((now - at).num_milliseconds()))
            .unwrap_or_default();
    let error = s.error.clone().unwrap_or_default();
    let why = if error.is_empty() {
        String::new()
    } else {
        l.t("receipt.why").replace("{error}", &error)
    };
    let fill = |key: &'static str| {
        l.t(key)
            .replace("{gateway}", s.gateway.as_deref().unwrap_or("?"))
            .replace(
                "{chat}",
                s.chat_id
                    .as_deref()
                    .or(s.platform.as_deref())
                    .unwrap_or("?"),
            )
            .replace("{target}", s.target.as_deref().unwrap_or("?"))
            .replace("{n}", &s.seq.unwrap_or(0).to_string())
            .replace("{id}", s.delivery_id.as_deref().unwrap_or("?"))
            .replace("{ago}", &ago)
            .replace("{why}", &why)
            .replace("{error}", &error)
    };
    use StepKind as K;
    use StepStatus as S;
    match (s.step, s.status) {
        (K::Asked, _) => fill("receipt.asked"),
        (K::Pushed, S::Done) => {
            let mut t = fill("receipt.pushed.done");
            if let Some(m) = &s.platform_message_id {
                t.push_str(&l.t("receipt.message_id").replace("{id}", m));
            }
            t
        }
        (K::Pushed, S::Unverified) => fill("receipt.pushed.unverified"),
        (K::Pushed, S::Stalled | S::Failed) => fill("receipt.pushed.stalled"),
        (K::Pushed, _) => fill("receipt.pushed.waiting"),
        (K::Reminded, S::Done) => fill("receipt.reminded.done"),
        (K::Reminded, _) => fill("receipt.reminded.waiting"),
        (K::Escalated, S::Done | S::Unverified) => fill("receipt.escalated.done"),
        (K::Escalated, S::Stalled | S::Failed) => fill("receipt.escalated.stalled"),
        (K::Escalated, _) => fill("receipt.escalated.waiting"),
        (K::Answered, S::Done) => match s.surface.as_deref() {
            Some("chat") => fill("receipt.answered.chat"),
            Some("deadline") => fill("receipt.answered.default"),
            _ => fill("receipt.answered.web"),
        },
        (K::Answered, _) => fill(match state {
            MessageState::Open => "receipt.answered.waiting",
            MessageState::PendingDelivery => "receipt.answered.pending",
            MessageState::Expired => "receipt.answered.expired",
            MessageState::Ignored => "receipt.answered.ignored",
            _ => "receipt.answered.cancelled",
        }),
        (K::Typed, S::Done) => fill("receipt.typed.done"),
        (K::Typed, S::Unverified) => fill("receipt.typed.unverified"),
        (K::Typed, S::Failed) => fill("receipt.typed.failed"),
        (K::Typed, S::Stalled) => fill("receipt.typed.stalled"),
        (K::Typed, S::Skipped) => fill("receipt.typed.skipped"),
        (K::Typed, _) => fill("receipt.typed.waiting"),
        (K::Resumed, S::Done) => fill("receipt.resumed.done"),
        (K::Resumed, S::Failed) => fill("receipt.resumed.failed"),
        (K::Resumed, S::Stalled) => fill("receipt.resumed.stalled"),
        (K::Resumed, _) => fill("receipt.resumed.waiting"),
        (K::ScreenAfter, S::Done) => fill("receipt.screen_after.done"),
        (K::ScreenAfter, S::Skipped) => fill("receipt.screen_after.skipped"),
        (K::ScreenAfter, _) => fill("receipt.screen_after.waiting"),
    }
}

/// The receipt as the page shows it, in `l`.
pub fn receipt(l: Locale, r: QuestionReceipt, now: DateTime<Utc>) -> ReceiptData {
    let steps = r
        .steps
        .iter()
        .map(|s| StepData {
            kind: s.step,
            status: s.status,
            text: say(l, r.state, s, now),
            at_ms: s.at.map(|t| t.timestamp_millis()),
            screen: s.screen.clone(),
        })
        .collect();
    ReceiptData {
        screen_title: l.t("receipt.screen_title").into(),
        screen: r.screen,
        no_screen: l.t("receipt.no_screen").into(),
        title: l.t("receipt.title").into(),
        steps,
        stalled: r
            .stalled_at
            .map(|k| l.t("receipt.stalled").replace("{step}", l.t(step_key(k)))),
        after_title: l.t("receipt.after_title").into(),
    }
}
