//! An approval pushed to the person's chat: the text —
//! the exact command or diff, the task, the working directory, how to
//! answer — and the outbound row, through the configured notify target,
//! with the task token. The row is written in the approval ask's own
//! transaction (`NewApproval::push`), under the key `approval:<id>`; it has
//! no message of its own, so its delivery mapping names the task; a reply
//! to it decides exactly this approval (the row's key names it,
//! `Harness::aimed_ask_of`) — "cancelled" when a newer question replaced
//! it, never the approval that replaced it. A push not sent
//! yet when the approval is decided is dropped (DEAD) by the decision.
//!
//! A push that reached the chat is reminded like an ask (`crate::reminders`):
//! on the `high` schedule — an approval holds an agent's step,
//! so its ask is recorded as high (10 min, 30 min, 2 h by default; high
//! reminders also go during quiet hours) — with [`reminder_text`], until
//! it is decided, cancelled or expired. The decision drops the push and
//! the reminders not sent yet in its own transaction; a row leased ahead
//! is skipped right before its send (`Harness::skip_before_send`).

use chrono::Utc;

use crate::{
    CoreResult, Harness, ids,
    model::Task,
    outbox::compose_body,
    settings::NotifyTarget,
    store::{Dedup, NewOutbound, approval_push_key},
};

/// How to answer, as the chat shows it.
pub const HOW_TO_ANSWER: &str = "Reply \"approve\" (or 1) to allow exactly this call once, or \
     \"deny\" (or 2) to refuse it — optionally \"deny: <reason>\". The first answer wins.";

/// The chat text of an approval: its question (the exact call, the task,
/// the working directory, the rule), then how to answer. The task token is
/// added by [`compose_body`].
pub fn push_text(question: &str) -> String {
    format!("[Approval needed] {}\n\n{HOW_TO_ANSWER}", question.trim())
}

/// A reminder of an approval still waiting (`crate::reminders`): one line,
/// then its push as it was sent — the exact call, how to answer, the same
/// task token — so a reply "approve" / "deny" to the reminder decides it.
pub fn reminder_text(seq: u32, waited_ms: i64, push_message: &str) -> String {
    format!(
        "Reminder {seq}: an approval is still waiting — the agent has been held {} for your \
         decision.\n\n{push_message}",
        crate::reminders::waited_text(waited_ms)
    )
}

/// The channel for a task's approvals: its own scope's active target
/// (`unattended` for an unattended task, else `work`, which needs a fixed
/// destination), else the `unattended` one. Only Hermes / OpenClaw send.
fn usable(target: &NotifyTarget) -> bool {
    let dest = target.dest.as_deref().is_some_and(|d| !d.trim().is_empty());
    (target.gateway == "hermes" || target.gateway == "openclaw")
        && (target.scope == "unattended" || dest)
}

fn clean(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Harness {
    /// The outbound row of approval `approval_id`'s push, or `None` when no
    /// usable channel is configured (the approval is still asked on
    /// `/harness` and in the task's inbox).
    pub(crate) async fn approval_push(
        &self,
        task: &Task,
        approval_id: &str,
        question: &str,
    ) -> CoreResult<Option<NewOutbound>> {
        let message = compose_body(Some(&task.title), &push_text(question), &task.id);
        let push = self
            .push_to_person(task, approval_push_key(approval_id), message, true)
            .await?;
        if push.is_none() {
            tracing::info!(task_id = %task.id, "no chat channel for the approval; asked in Harness only");
        }
        Ok(push)
    }

    /// An outbound row (no message of its own) carrying `message` to the
    /// person of `task` on the channel its approvals use, under `key`; `None`
    /// when no usable channel is configured. Also the ungated-run alert's
    /// (`crate::ungated`).
    pub(crate) async fn push_to_person(
        &self,
        task: &Task,
        key: String,
        message: String,
        expect_reply: bool,
    ) -> CoreResult<Option<NewOutbound>> {
        let own = if task.unattended {
            "unattended"
        } else {
            "work"
        };
        let mut target = self.active_target(own).await?.filter(usable);
        if target.is_none() && own != "unattended" {
            target = self.active_target("unattended").await?.filter(usable);
        }
        let Some(t) = target else {
            return Ok(None);
        };
        Ok(Some(NewOutbound {
            id: ids::new_id(),
            message_id: None,
            task_id: Some(task.id.clone()),
            dedup: Dedup::Explicit(key),
            gateway: t.gateway.clone(),
            downstream: clean(&t.downstream),
            dest: clean(&t.dest),
            requested_to: None,
            profile: clean(&t.profile),
            scope: t.scope.clone(),
            expect_reply,
            message,
            presentation: None,
            now: Utc::now(),
            choices: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_shows_the_call_and_how_to_answer() {
        let t = push_text(
            "Approve this Bash call?\n\n$ git push --force\n\nTask: t\nWorking directory: /repo",
        );
        assert!(
            t.starts_with("[Approval needed] Approve this Bash call?"),
            "{t}"
        );
        assert!(t.contains("$ git push --force"));
        assert!(t.contains("Working directory: /repo"));
        assert!(
            t.contains("\"approve\" (or 1)") && t.contains("\"deny\" (or 2)"),
            "{t}"
        );
        let body = compose_body(Some("title"), &t, "cabcdefghijklmnopqrstu");
        assert!(
            body.ends_with("Task ID: [[tower:task=cabcdefghijklmnopqrstu]]"),
            "{body}"
        );
    }

    #[test]
    fn a_reminder_says_an_approval_waits_and_quotes_the_push() {
        let push = compose_body(
            Some("Deploy"),
            &push_text("Approve this Bash call?\n\n$ git push --force"),
            "cabcdefghijklmnopqrstu",
        );
        let r = reminder_text(2, 30 * 60 * 1000, &push);
        assert!(
            r.starts_with(
                "Reminder 2: an approval is still waiting — the agent has been held 30 min"
            ),
            "{r}"
        );
        assert!(r.contains("$ git push --force") && r.contains("\"approve\" (or 1)"));
        assert!(r.ends_with("[[tower:task=cabcdefghijklmnopqrstu]]"), "{r}");
    }

    #[test]
    fn only_a_sending_gateway_with_a_destination_where_needed_is_used() {
        let t = |gateway: &str, scope: &str, dest: Option<&str>| NotifyTarget {
            id: None,
            label: String::new(),
            gateway: gateway.into(),
            downstream: None,
            dest: dest.map(str::to_string),
            profile: None,
            scope: scope.into(),
            active: true,
            report_at: None,
            report_time_zone: None,
            report_since: None,
        };
        assert!(usable(&t("openclaw", "unattended", None)));
        assert!(usable(&t("hermes", "work", Some("chat-1"))));
        assert!(
            !usable(&t("hermes", "work", None)),
            "work needs a destination"
        );
        assert!(!usable(&t("slack", "unattended", None)));
    }
}
