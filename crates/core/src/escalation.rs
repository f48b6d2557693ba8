//! Escalation: an ask still OPEN `escalateAfter`
//! seconds (default 1800) after its last scheduled reminder — or at once
//! when its chat can no longer be reached (`crate::reachability`) — goes to
//! the escalation targets of its scope (`escalateTo` in the setting
//! `harness.reminders`: scope → notify target labels or ids). It is
//! escalated ONCE: all the targets' outbound rows (dedup key
//! `escalation:<ask>:<n>`) and their `ask_escalations` rows in one
//! transaction, only while the ask is OPEN. The message quotes the question
//! with the same task token, so a reply from any chat answers the ask; the
//! first answer wins (the ask leaves OPEN once), and in the same
//! transaction as that answer every chat reached gets one short
//! "answered" notice (the store's trigger writes the rows; the text is
//! [`answered_notice`], stored with the escalation). Escalation rows not
//! sent when the ask stops waiting are dropped like reminders.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::asks::Asks;
use crate::{
    CoreError, CoreResult, ids,
    quiet_hours::{self, QuietHours},
    reminders::{MAX_OFFSET_SECS, MIN_OFFSET_SECS, waited_text},
    settings::NotifyTarget,
    store::{
        Dedup, EscalationReason, NewEscalation, NewOutbound, OutboundState, ReminderCandidate,
    },
};

/// The default wait after the last reminder.
pub const DEFAULT_AFTER_SECS: u64 = 1800;
/// At most this many targets per scope.
pub const MAX_TARGETS: usize = 5;

pub fn default_after() -> u64 {
    DEFAULT_AFTER_SECS
}

/// `escalateAfter`, `escalateTo` and `quietHours` checked on their own
/// (the names of targets are checked against the targets by
/// [`check_names`]).
pub fn check(
    after: u64,
    to: &BTreeMap<String, Vec<String>>,
    quiet: &BTreeMap<String, QuietHours>,
) -> CoreResult<()> {
    if !(MIN_OFFSET_SECS..=MAX_OFFSET_SECS).contains(&after) {
        return Err(CoreError::invalid(
            "escalateAfter",
            format!(
                "escalateAfter: {after} s is outside {MIN_OFFSET_SECS}..={MAX_OFFSET_SECS} seconds"
            ),
        ));
    }
    for (scope, names) in to {
        if scope != "work" && scope != "unattended" {
            return Err(CoreError::invalid(
                "escalateTo",
                format!("escalateTo: scope \"{scope}\" must be \"work\" or \"unattended\""),
            ));
        }
        if names.len() > MAX_TARGETS || names.iter().any(|n| n.trim().is_empty()) {
            return Err(CoreError::invalid(
                "escalateTo",
                format!("escalateTo.{scope}: 1 to {MAX_TARGETS} notify target labels"),
            ));
        }
    }
    for (name, q) in quiet {
        if let Some(problem) = q.problem() {
            return Err(CoreError::invalid(
                "quietHours",
                format!("quietHours.{name}: {problem}"),
            ));
        }
    }
    Ok(())
}

fn find<'a>(targets: &'a [NotifyTarget], name: &str) -> Option<&'a NotifyTarget> {
    let name = name.trim();
    targets
        .iter()
        .find(|t| t.id.as_deref() == Some(name) || t.label.trim() == name)
}

/// Every name in `escalateTo` and `quietHours` is a configured target.
pub fn check_names(
    targets: &[NotifyTarget],
    to: &BTreeMap<String, Vec<String>>,
    quiet: &BTreeMap<String, QuietHours>,
) -> CoreResult<()> {
    for (scope, names) in to {
        for name in names {
            if find(targets, name).is_none() {
                return Err(CoreError::invalid(
                    "escalateTo",
                    format!("escalateTo.{scope}: no notify target is labelled \"{name}\""),
                ));
            }
        }
    }
    for name in quiet.keys() {
        if find(targets, name).is_none() {
            return Err(CoreError::invalid(
                "quietHours",
                format!("quietHours: no notify target is labelled \"{name}\""),
            ));
        }
    }
    Ok(())
}

/// Whether an ask whose reminders are all written is due for escalation:
/// `after` seconds past its last scheduled reminder. An urgency without
/// reminders (low, by default) is not escalated on a schedule.
pub fn due(offsets: &[u64], c: &ReminderCandidate, after: u64, now: DateTime<Utc>) -> bool {
    let Some(&last) = offsets.last() else {
        return false;
    };
    let waited = (now - c.asked_at).num_seconds();
    usize::try_from(c.sent).is_ok_and(|sent| sent >= offsets.len())
        && i64::try_from(last.saturating_add(after)).is_ok_and(|at| waited >= at)
}

/// The escalated message: who did not answer, for how long, then the
/// question as first sent (options, task token).
pub fn escalation_text(first_label: Option<&str>, waited_ms: i64, first_message: &str) -> String {
    let who = first_label.map_or_else(|| "The person asked".to_string(), |l| format!("\"{l}\""));
    format!(
        "Escalated to you: {who} has not answered for {}. Can you answer for them?\n\n{first_message}",
        waited_text(waited_ms)
    )
}

/// The one short message every chat reached gets once the ask is answered.
pub fn answered_notice(first_message: &str) -> String {
    let question = first_message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('['))
        .unwrap_or("");
    let short: String = question.chars().take(80).collect();
    let more = if question.chars().count() > 80 {
        "…"
    } else {
        ""
    };
    format!("Answered — no reply needed any more: \"{short}{more}\"")
}

/// What was done for an ask that waits (the `/harness` page): reminders
/// sent (that reached the chat) and to whom it was escalated.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowUp {
    pub reminders: u32,
    pub escalated_to: Vec<String>,
    /// Its chat's delivery window has passed (`crate::reachability`):
    /// reminders are not sent there.
    pub unreachable: bool,
    /// Its scope names no escalation target: unreachable and not
    /// escalated, it waits with nobody told.
    pub no_escalation_target: bool,
}

impl Asks<'_> {
    /// The reminders and escalations of these asks, by ask, and whether
    /// the chat each one went to can no longer be reached (now).
    pub async fn follow_ups(&self, ask_ids: &[String]) -> CoreResult<BTreeMap<String, FollowUp>> {
        let mut out: BTreeMap<String, FollowUp> = BTreeMap::new();
        if ask_ids.is_empty() {
            return Ok(out);
        }
        for r in self.h.store().reminders_for(ask_ids).await? {
            let f = out.entry(r.message_id).or_default();
            // Those that reached the chat: after a downtime only the
            // latest due one goes out, and a dropped one never did.
            f.reminders += u32::from(r.sent);
        }
        for e in self.h.store().escalations_for(ask_ids).await? {
            out.entry(e.message_id)
                .or_default()
                .escalated_to
                .push(e.target);
        }
        let schedule = self.reminder_schedule().await?;
        let now = Utc::now();
        for chunk in ask_ids.chunks(500) {
            for row in self.h.store().outbound_for_messages(chunk).await? {
                let Some(ask) = row.message_id.clone() else {
                    continue;
                };
                let sent = matches!(
                    row.state,
                    OutboundState::Delivered | OutboundState::SentUnverified
                );
                if sent && self.chat_unreachable(&row, now).await? {
                    let f = out.entry(ask).or_default();
                    f.unreachable = true;
                    f.no_escalation_target = schedule
                        .escalate_to
                        .get(&row.scope)
                        .is_none_or(Vec::is_empty);
                }
            }
        }
        Ok(out)
    }

    /// Escalate `c` to its scope's targets (those not in quiet hours when
    /// it is not high — if all are, it waits). Returns how many rows were
    /// queued (0: nothing to do, or escalated already).
    pub(crate) async fn escalate(
        &self,
        c: &ReminderCandidate,
        reason: EscalationReason,
        to: &BTreeMap<String, Vec<String>>,
        quiet: &BTreeMap<String, QuietHours>,
        targets: &[NotifyTarget],
        now: DateTime<Utc>,
    ) -> CoreResult<usize> {
        let f = &c.first;
        let Some(names) = to.get(&f.scope) else {
            return Ok(0);
        };
        let first_target = quiet_hours::target_of(targets, f);
        let chosen: Vec<&NotifyTarget> = names
            .iter()
            .filter_map(|n| find(targets, n))
            .filter(|t| !first_target.is_some_and(|ft| std::ptr::eq(ft, *t)))
            .filter(|t| !t.gateway.trim().is_empty())
            .collect();
        if chosen.is_empty() {
            return Ok(0);
        }
        let awake: Vec<&NotifyTarget> = chosen
            .iter()
            .copied()
            .filter(|t| !quiet_hours::waits(quiet, Some(*t), c.urgency, now))
            .collect();
        if awake.is_empty() {
            return Ok(0);
        }
        let waited_ms = (now - c.asked_at).num_milliseconds();
        let first_label = first_target
            .map(|t| t.label.trim())
            .filter(|l| !l.is_empty());
        let message = escalation_text(first_label, waited_ms, &f.message);
        let clean = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let rows = awake
            .iter()
            .map(|t| {
                let label = if t.label.trim().is_empty() {
                    t.gateway.trim().to_string()
                } else {
                    t.label.trim().to_string()
                };
                let row = NewOutbound {
                    id: ids::new_id(),
                    message_id: None,
                    task_id: Some(c.task_id.clone()),
                    dedup: Dedup::Explicit(String::new()),
                    gateway: t.gateway.trim().to_string(),
                    downstream: clean(&t.downstream),
                    dest: clean(&t.dest),
                    requested_to: None,
                    profile: clean(&t.profile),
                    scope: f.scope.clone(),
                    expect_reply: true,
                    message: message.clone(),
                    presentation: f.presentation.clone(),
                    // Due at once on the sender's wall clock (see reminders).
                    now: Utc::now(),
                    choices: None,
                };
                (label, row)
            })
            .collect();
        let written = self
            .h
            .store()
            .record_escalation(NewEscalation {
                message_id: c.message_id.clone(),
                reason,
                notice: answered_notice(&f.message),
                rows,
            })
            .await?;
        for row in &written {
            tracing::info!(request_id = %c.message_id, task_id = %c.task_id, outbound_id = %row.id,
                gateway = %row.gateway, reason = reason.as_str(), "ask escalated");
            self.h.outbox().outbound_changed(row);
        }
        Ok(written.len())
    }

    /// Asked by the outbox right before a send: a row that asks a question
    /// no longer waiting — a reminder or escalation whose ask was answered
    /// (or cancelled, expired) while the row was leased ahead, an approval's
    /// push whose approval was decided (or ended) meanwhile — is not sent.
    /// `Some(reason)`: skip it (the row ends DEAD).
    pub async fn skip_before_send(&self, row: &crate::store::Outbound) -> Option<String> {
        let key = row.dedup_key.as_str();
        let approval = key.starts_with("approval:");
        if !(approval || key.starts_with("reminder:") || key.starts_with("escalation:")) {
            return None;
        }
        match self.h.store().question_closed(&row.id).await {
            Ok(true) if approval => {
                Some("not sent: the approval was no longer waiting for a decision".into())
            }
            Ok(true) => Some("not sent: the ask was no longer waiting for an answer".into()),
            Ok(false) => None,
            Err(err) => {
                // Unknown: send (the row is owed; a stale reminder is the
                // smaller harm than a lost one).
                tracing::warn!(outbound_id = %row.id, error = ?err, "cannot check the question of the row; sending");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_is_short_and_names_the_question() {
        let n = answered_notice("Nightly build\nPostgres or SQLite?\n\nTask ID: [[tower:task=x]]");
        assert_eq!(n, "Answered — no reply needed any more: \"Nightly build\"");
        let long = "x".repeat(200);
        assert!(answered_notice(&long).ends_with("…\""));
    }

    #[test]
    fn the_settings_are_checked_naming_the_field() {
        let none: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let quiet: BTreeMap<String, QuietHours> = BTreeMap::new();
        assert!(check(1800, &none, &quiet).is_ok());
        assert!(matches!(
            check(5, &none, &quiet),
            Err(CoreError::Invalid {
                field: Some("escalateAfter"),
                ..
            })
        ));
        let mut to = BTreeMap::new();
        to.insert("elsewhere".to_string(), vec!["boss".to_string()]);
        assert!(matches!(
            check(1800, &to, &quiet),
            Err(CoreError::Invalid {
                field: Some("escalateTo"),
                ..
            })
        ));
    }
}
