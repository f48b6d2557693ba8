//! Reminders: an OPEN ask that reached a person's chat is
//! sent again, through the outbox, on a schedule that depends on its
//! urgency (defaults: high after 10 min, 30 min and 2 h; normal after 1 h
//! and 4 h; low never), editable as the setting `harness.reminders`.
//!
//! A reminder quotes the first message (the question, its options and the
//! task token, so a reply to it answers the ask) behind one line saying how
//! long the agent has waited. It goes to the same gateway and destination
//! as the first message. Each reminder number is written at most once
//! ([`crate::store::ReminderStore::record_reminder`]: the `ask_reminders`
//! row and its outbound row in one transaction, only while the ask is OPEN);
//! the outbox sends it with its own guarantees. A reminder not sent yet
//! when the ask stops waiting (answered, cancelled, expired, defaulted) is
//! dropped, never sent. After a long downtime only the latest due reminder
//! goes out, not every missed one.
//!
//! A PENDING approval whose push (`approval:<id>`) reached the chat is a
//! candidate too: its ask is recorded as `high`, so it follows the high
//! schedule, and its reminder says an approval is still waiting and quotes
//! the push ([`reminder_text_in`], in the target's language) with the same task
//! token, so a reply "approve" to it decides the approval.
//!
//! The pass runs in the loop of the ask deadlines (`crate::deadline`, at
//! most every 30 s); its state is the rows, so it is restart-safe.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::asks::Asks;
use crate::{
    CoreError, CoreResult, escalation,
    events::HarnessEvent,
    ids,
    ladder::Lang,
    quiet_hours::{self, QuietHours},
    store::{Dedup, EscalationReason, NewOutbound, NewReminder, ReminderCandidate, Urgency},
};

pub const REMINDERS_KEY: &str = "harness.reminders";
/// Asks read per page (a pass reads every page).
const BATCH: u32 = 200;
/// At most this many reminders per urgency.
pub const MAX_REMINDERS: usize = 10;
/// The shortest and longest offset, in seconds.
pub const MIN_OFFSET_SECS: u64 = 60;
pub const MAX_OFFSET_SECS: u64 = 7 * 24 * 3600;

/// Seconds after the ask at which each reminder is due, per urgency.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReminderSchedule {
    pub high: Vec<u64>,
    pub normal: Vec<u64>,
    pub low: Vec<u64>,
    /// Seconds after the last reminder before the ask is escalated
    /// (`crate::escalation`).
    #[serde(default = "escalation::default_after")]
    pub escalate_after: u64,
    /// Per scope (`work` / `unattended`): the notify targets (labels or
    /// ids) an unanswered ask is escalated to. None: no escalation.
    #[serde(default)]
    pub escalate_to: BTreeMap<String, Vec<String>>,
    /// Per notify target (label or id): its quiet hours
    /// (`crate::quiet_hours`).
    #[serde(default)]
    pub quiet_hours: BTreeMap<String, QuietHours>,
}

impl Default for ReminderSchedule {
    fn default() -> Self {
        Self {
            high: vec![600, 1800, 7200],
            normal: vec![3600, 14_400],
            low: Vec::new(),
            escalate_after: escalation::DEFAULT_AFTER_SECS,
            escalate_to: BTreeMap::new(),
            quiet_hours: BTreeMap::new(),
        }
    }
}

impl ReminderSchedule {
    pub fn offsets(&self, urgency: Urgency) -> &[u64] {
        match urgency {
            Urgency::High => &self.high,
            Urgency::Normal => &self.normal,
            Urgency::Low => &self.low,
        }
    }

    /// Each list: at most [`MAX_REMINDERS`], strictly increasing, every
    /// offset within [`MIN_OFFSET_SECS`]..=[`MAX_OFFSET_SECS`].
    pub fn check(&self) -> CoreResult<()> {
        for (field, list) in [
            ("high", &self.high),
            ("normal", &self.normal),
            ("low", &self.low),
        ] {
            if list.len() > MAX_REMINDERS {
                return Err(CoreError::invalid(
                    field,
                    format!("{field}: at most {MAX_REMINDERS} reminders"),
                ));
            }
            for (i, &s) in list.iter().enumerate() {
                if !(MIN_OFFSET_SECS..=MAX_OFFSET_SECS).contains(&s) {
                    return Err(CoreError::invalid(
                        field,
                        format!(
                            "{field}[{i}]: {s} s is outside {MIN_OFFSET_SECS}..={MAX_OFFSET_SECS} seconds after the ask"
                        ),
                    ));
                }
                if i > 0 && s <= list[i - 1] {
                    return Err(CoreError::invalid(
                        field,
                        format!(
                            "{field}[{i}]: offsets must increase ({s} s after {} s)",
                            list[i - 1]
                        ),
                    ));
                }
            }
        }
        escalation::check(self.escalate_after, &self.escalate_to, &self.quiet_hours)
    }
}

/// The reminder due for an ask asked at `asked_at` that had `sent`
/// reminders: the highest number whose offset has passed, if it is later
/// than `sent` (a pass after a downtime sends the latest one only).
pub fn due(offsets: &[u64], asked_at: DateTime<Utc>, now: DateTime<Utc>, sent: u32) -> Option<u32> {
    let waited = (now - asked_at).num_seconds();
    let passed = offsets
        .iter()
        .take_while(|&&s| i64::try_from(s).is_ok_and(|s| s <= waited))
        .count();
    let passed = u32::try_from(passed).ok()?;
    (passed > sent).then_some(passed)
}

/// "2 h 5 min", "45 min", "30 s" (the shared vocabulary's, also in the browser).
pub use harness_types::waited_text;

/// What a reminder follows up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reminding {
    /// An open question.
    Question,
    /// A pending approval (its push is quoted).
    Approval,
}

/// A reminder's first line, one table per language (the notify target's
/// `language`); `{seq}` and `{waited}` are filled in.
struct Phrases {
    question: &'static str,
    approval: &'static str,
    /// Seconds, minutes, hours, days.
    units: [&'static str; 4],
}

const EN: Phrases = Phrases {
    question: "Reminder {seq}: the agent has been waiting {waited} for your answer.",
    approval: "Reminder {seq}: an approval is still waiting — the agent has been held {waited} \
               for your decision.",
    units: ["{n} s", "{n} min", "{n} h", "{n} d"],
};

const ZH: Phrases = Phrases {
    question: "提醒 {seq}：智能体已等待你的回答 {waited}。",
    approval: "提醒 {seq}：一个审批仍在等待——智能体已被挂起 {waited}，等待你的决定。",
    units: ["{n} 秒", "{n} 分钟", "{n} 小时", "{n} 天"],
};

fn phrases(lang: Lang) -> &'static Phrases {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

/// [`waited_text`] in `lang`: the two largest units, rounded down.
pub fn waited_in(lang: Lang, ms: i64) -> String {
    let [s, min, h, day] = phrases(lang).units;
    let unit = |u: &str, n: i64| u.replace("{n}", &n.to_string());
    let secs = ms.max(0) / 1000;
    let (d, hh, m) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60);
    match (d, hh, m) {
        (0, 0, 0) => unit(s, secs),
        (0, 0, m) => unit(min, m),
        (0, hh, 0) => unit(h, hh),
        (0, hh, m) => format!("{} {}", unit(h, hh), unit(min, m)),
        (d, 0, _) => unit(day, d),
        (d, hh, _) => format!("{} {}", unit(day, d), unit(h, hh)),
    }
}

/// The reminder's text, in English: one line, then the first message as it
/// was sent (question, options, task token).
pub fn reminder_text(seq: u32, waited_ms: i64, first_message: &str) -> String {
    reminder_text_in(Lang::En, Reminding::Question, seq, waited_ms, first_message)
}

/// The reminder's text in `lang`: its first line (of a question, or of an
/// approval), then the first message as it was sent.
pub fn reminder_text_in(
    lang: Lang,
    what: Reminding,
    seq: u32,
    waited_ms: i64,
    first_message: &str,
) -> String {
    let p = phrases(lang);
    let line = match what {
        Reminding::Question => p.question,
        Reminding::Approval => p.approval,
    };
    let line = line
        .replace("{seq}", &seq.to_string())
        .replace("{waited}", &waited_in(lang, waited_ms));
    format!("{line}\n\n{first_message}")
}

impl Asks<'_> {
    /// The schedule (the defaults until one is stored; an unreadable stored
    /// value counts as the defaults and is logged).
    pub async fn reminder_schedule(&self) -> CoreResult<ReminderSchedule> {
        Ok(match self.h.store().get_setting(REMINDERS_KEY).await? {
            None => ReminderSchedule::default(),
            Some(v) => serde_json::from_value(v).unwrap_or_else(|err| {
                tracing::warn!(%err, "stored reminder schedule is unreadable; using the defaults");
                ReminderSchedule::default()
            }),
        })
    }

    pub async fn set_reminder_schedule(
        &self,
        schedule: ReminderSchedule,
    ) -> CoreResult<ReminderSchedule> {
        schedule.check()?;
        escalation::check_names(
            &self.h.settings().notify_targets().await?,
            &schedule.escalate_to,
            &schedule.quiet_hours,
        )?;
        let value = serde_json::to_value(&schedule)
            .map_err(|e| CoreError::invalid_body(format!("reminders: {e}")))?;
        self.h
            .store()
            .put_setting(REMINDERS_KEY, &value, Utc::now())
            .await?;
        self.h.publish(HarnessEvent::SettingChanged {
            key: REMINDERS_KEY.into(),
        });
        Ok(schedule)
    }

    /// One pass judged at `now` (the wall clock in the server; tests pass
    /// their own): drop reminders and escalations whose ask stopped
    /// waiting, then per waiting ask: escalate at once when its chat can no
    /// longer be reached; else write the due reminder (each at most once;
    /// normal and low ones wait out the target's quiet hours); else
    /// escalate when `escalateAfter` has passed since the last reminder.
    /// Returns how many rows were queued.
    pub async fn send_due_reminders(&self, now: DateTime<Utc>) -> CoreResult<usize> {
        for row in self.h.store().drop_stale_reminders(now).await? {
            tracing::info!(outbound_id = %row.id, "reminder dropped: its ask no longer waits");
            self.h.outbox().outbound_changed(&row);
        }
        let schedule = self.reminder_schedule().await?;
        let targets = self.h.settings().notify_targets().await?;
        let mut queued = 0;
        // Every page, oldest first: asks with nothing left to do (low ones,
        // those reminded and escalated) never hide newer ones.
        let mut after: Option<ReminderCandidate> = None;
        loop {
            let page = self
                .h
                .store()
                .reminder_candidates(after.as_ref(), BATCH)
                .await?;
            let full = page.len() >= BATCH as usize;
            for c in &page {
                queued += self.follow_up(c, &schedule, &targets, now).await?;
            }
            after = page.into_iter().last();
            if !full || after.is_none() {
                break;
            }
        }
        if queued > 0 {
            self.h.outbox().wake_outbox();
        }
        Ok(queued)
    }

    /// The pass for one waiting ask: how many rows it queued.
    async fn follow_up(
        &self,
        c: &ReminderCandidate,
        schedule: &ReminderSchedule,
        targets: &[crate::settings::NotifyTarget],
        now: DateTime<Utc>,
    ) -> CoreResult<usize> {
        let offsets = schedule.offsets(c.urgency);
        let due_seq = due(offsets, c.asked_at, now, c.sent);
        let can_escalate = !c.escalated && schedule.escalate_to.contains_key(&c.first.scope);
        if due_seq.is_none() && !can_escalate {
            // Nothing to send, whether its chat is reachable or not.
            return Ok(0);
        }
        let mut queued = 0;
        if self.chat_unreachable(&c.first, now).await? {
            if !c.escalated {
                queued += self
                    .escalate(
                        c,
                        EscalationReason::Unreachable,
                        &schedule.escalate_to,
                        &schedule.quiet_hours,
                        targets,
                        now,
                    )
                    .await?;
            }
            // Reminders nobody would receive are not sent.
            return Ok(queued);
        }
        if let Some(seq) = due_seq {
            let target = quiet_hours::target_of(targets, &c.first);
            if quiet_hours::waits(&schedule.quiet_hours, target, c.urgency, now) {
                tracing::debug!(request_id = %c.message_id, seq, "reminder waits for the end of the quiet hours");
                return Ok(0);
            }
            let lang = target.map(|t| t.lang()).unwrap_or_default();
            let reminder = new_reminder(c, seq, now, lang);
            if let Some(row) = self.h.store().record_reminder(reminder).await? {
                tracing::info!(request_id = %c.message_id, task_id = %c.task_id, seq,
                    outbound_id = %row.id, "reminder queued");
                self.h.outbox().outbound_changed(&row);
                queued += 1;
            }
            return Ok(queued);
        }
        if !c.escalated && escalation::due(offsets, c, schedule.escalate_after, now) {
            queued += self
                .escalate(
                    c,
                    EscalationReason::Schedule,
                    &schedule.escalate_to,
                    &schedule.quiet_hours,
                    targets,
                    now,
                )
                .await?;
        }
        Ok(queued)
    }
}

fn new_reminder(c: &ReminderCandidate, seq: u32, now: DateTime<Utc>, lang: Lang) -> NewReminder {
    let waited_ms = (now - c.asked_at).num_milliseconds();
    let f = &c.first;
    NewReminder {
        message_id: c.message_id.clone(),
        seq,
        waited_ms,
        outbound: NewOutbound {
            id: ids::new_id(),
            // The ask's own row is the first one (one per message).
            message_id: None,
            task_id: Some(c.task_id.clone()),
            dedup: Dedup::Explicit(format!("reminder:{}:{seq}", c.message_id)),
            gateway: f.gateway.clone(),
            downstream: f.downstream.clone(),
            dest: f.dest.clone(),
            requested_to: f.requested_to.clone(),
            profile: f.profile.clone(),
            scope: f.scope.clone(),
            expect_reply: f.expect_reply,
            message: reminder_text_in(
                lang,
                match &c.approval_id {
                    Some(_) => Reminding::Approval,
                    None => Reminding::Question,
                },
                seq,
                waited_ms,
                &f.message,
            ),
            presentation: f.presentation.clone(),
            // Written on the wall clock, which the sender runs on: due at
            // once even when the pass is judged at another `now` (a test
            // clock, a pass that catches up).
            now: Utc::now(),
            choices: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap_or_default()
    }

    #[test]
    fn the_schedule_per_urgency() {
        let s = ReminderSchedule::default();
        let high = s.offsets(Urgency::High);
        assert_eq!(due(high, at(0), at(599), 0), None);
        assert_eq!(due(high, at(0), at(600), 0), Some(1));
        assert_eq!(due(high, at(0), at(1799), 1), None);
        assert_eq!(due(high, at(0), at(1800), 1), Some(2));
        assert_eq!(due(high, at(0), at(7200), 2), Some(3));
        assert_eq!(
            due(high, at(0), at(100_000), 3),
            None,
            "after the last, none"
        );
        let normal = s.offsets(Urgency::Normal);
        assert_eq!(due(normal, at(0), at(1800), 0), None);
        assert_eq!(due(normal, at(0), at(3600), 0), Some(1));
        assert_eq!(due(normal, at(0), at(14_400), 1), Some(2));
        assert_eq!(due(s.offsets(Urgency::Low), at(0), at(1_000_000), 0), None);
    }

    #[test]
    fn after_a_downtime_only_the_latest_due_reminder() {
        let s = ReminderSchedule::default();
        assert_eq!(due(s.offsets(Urgency::High), at(0), at(8000), 0), Some(3));
        assert_eq!(due(s.offsets(Urgency::High), at(0), at(8000), 3), None);
    }

    #[test]
    fn a_schedule_is_checked_naming_the_field() {
        let mut s = ReminderSchedule::default();
        assert!(s.check().is_ok());
        s.normal = vec![3600, 3600];
        let err = s.check().unwrap_err();
        assert!(
            matches!(&err, CoreError::Invalid { field: Some("normal"), message } if message.contains("normal[1]")),
            "{err:?}"
        );
        s.normal = vec![10];
        assert!(matches!(
            s.check(),
            Err(CoreError::Invalid {
                field: Some("normal"),
                ..
            })
        ));
        s.normal = Vec::new();
        s.high = (1..=11).map(|i| i * 600).collect();
        assert!(matches!(
            s.check(),
            Err(CoreError::Invalid {
                field: Some("high"),
                ..
            })
        ));
    }

    #[test]
    fn the_text_says_how_long_and_quotes_the_question() {
        let ms = Duration::minutes(125).num_milliseconds();
        let text = reminder_text(2, ms, "Which DB?\n[[tower:task=abc]]");
        assert!(
            text.starts_with("Reminder 2: the agent has been waiting 2 h 5 min"),
            "{text}"
        );
        assert!(text.ends_with("Which DB?\n[[tower:task=abc]]"));
        assert_eq!(waited_text(45_000), "45 s");
        assert_eq!(waited_text(3_600_000), "1 h");
        assert_eq!(waited_text(90_000_000), "1 d 1 h");
    }

    #[test]
    fn the_first_line_in_each_language_for_a_question_and_an_approval() {
        let ms = Duration::minutes(125).num_milliseconds();
        let first = "Which DB?\n[[tower:task=abc]]";
        let cases = [
            (
                Lang::En,
                Reminding::Question,
                "Reminder 2: the agent has been waiting 2 h 5 min for your answer.",
            ),
            (
                Lang::En,
                Reminding::Approval,
                "Reminder 2: an approval is still waiting — the agent has been held 2 h 5 min \
                 for your decision.",
            ),
            (
                Lang::Zh,
                Reminding::Question,
                "提醒 2：智能体已等待你的回答 2 小时 5 分钟。",
            ),
            (
                Lang::Zh,
                Reminding::Approval,
                "提醒 2：一个审批仍在等待——智能体已被挂起 2 小时 5 分钟，等待你的决定。",
            ),
        ];
        for (lang, what, line) in cases {
            let text = reminder_text_in(lang, what, 2, ms, first);
            assert_eq!(text, format!("{line}\n\n{first}"));
        }
        // The approval's English line is the approvals' own.
        assert_eq!(
            reminder_text_in(Lang::En, Reminding::Approval, 2, ms, first),
            crate::approvals::push::reminder_text(2, ms, first)
        );
        // The same rounding as the shared vocabulary, in either language.
        for ms in [
            -5, 45_000, 60_000, 3_600_000, 5_460_000, 86_400_000, 90_060_000,
        ] {
            assert_eq!(waited_in(Lang::En, ms), waited_text(ms), "{ms}");
        }
        assert_eq!(waited_in(Lang::Zh, 45_000), "45 秒");
        assert_eq!(waited_in(Lang::Zh, 90_000_000), "1 天 1 小时");
    }
}
