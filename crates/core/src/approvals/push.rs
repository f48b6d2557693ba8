//! An approval pushed to the person's chat: the text —
//! the exact command or diff, the task, the working directory, how to
//! answer — and the outbound row, through the configured notify target,
//! with the task token. The row is written in the approval ask's own
//! transaction (`NewApproval::push`), under the key `approval:<id>`; it has
//! no message of its own, so its delivery mapping names the task; a reply
//! to it decides exactly this approval (the row's key names it,
//! `Approvals::aimed_ask_of`) — "cancelled" when a newer question replaced
//! it, never the approval that replaced it. A push not sent
//! yet when the approval is decided is dropped (DEAD) by the decision.
//!
//! A push that reached the chat is reminded like an ask (`crate::reminders`):
//! on the `high` schedule — an approval holds an agent's step,
//! so its ask is recorded as high (10 min, 30 min, 2 h by default; high
//! reminders also go during quiet hours) — with [`reminder_text`], until
//! it is decided, cancelled or expired. The decision drops the push and
//! the reminders not sent yet in its own transaction; a row leased ahead
//! is skipped right before its send (`Asks::skip_before_send`).

use crate::approvals::Approvals;
use chrono::Utc;

use crate::{
    CoreResult, ids,
    ladder::Lang,
    model::Task,
    outbox::{compose_body, screen_block},
    settings::NotifyTarget,
    store::{Dedup, NewOutbound, approval_push_key},
};

/// How to answer, as the chat shows it.
pub const HOW_TO_ANSWER: &str = "Reply \"approve\" (or 1) to allow exactly this call once, or \
     \"deny\" (or 2) to refuse it — optionally \"deny: <reason>\". The first answer wins.";

/// The same in Chinese (the reply words stay `approve` / `deny`).
pub const HOW_TO_ANSWER_ZH: &str = "回复 \"approve\"（或 1）只允许这一次调用，或回复 \"deny\"（或 2）\
     拒绝——也可以写 \"deny: <理由>\"。以最先的回答为准。";

/// The chat text of an approval: its question (the exact call, the task,
/// the working directory, the rule), then how to answer. The task token is
/// added by [`compose_body`].
pub fn push_text(question: &str) -> String {
    push_text_in(question, Lang::En)
}

/// [`push_text`] in `lang` (the notify target's language): in Chinese the
/// question's words are translated (`harness_types::approval_words`), the
/// call itself is shown as it is.
pub fn push_text_in(question: &str, lang: Lang) -> String {
    match lang {
        Lang::En => format!("[Approval needed] {}\n\n{HOW_TO_ANSWER}", question.trim()),
        Lang::Zh => {
            let question = question.trim();
            let shown = harness_types::approval_words::question_zh(question);
            format!(
                "[需要审批] {}\n\n{HOW_TO_ANSWER_ZH}",
                shown.as_deref().unwrap_or(question)
            )
        }
    }
}

/// An approval's chat text with the agent's screen after it (before the
/// task token [`compose_body`] adds) when `include` (the target allows it),
/// labelled in `lang`.
pub fn with_screen(text: String, screen: Option<&str>, include: bool, lang: Lang) -> String {
    match screen {
        Some(screen) if include => format!("{text}\n\n{}", screen_block(screen, lang)),
        _ => text,
    }
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

impl Approvals<'_> {
    /// The notify target that carries `task`'s approvals (see [`usable`]).
    pub(crate) async fn person_target(&self, task: &Task) -> CoreResult<Option<NotifyTarget>> {
        let own = if task.unattended {
            "unattended"
        } else {
            "work"
        };
        let mut target = self.h.outbox().active_target(own).await?.filter(usable);
        if target.is_none() && own != "unattended" {
            target = self
                .h
                .outbox()
                .active_target("unattended")
                .await?
                .filter(usable);
        }
        Ok(target)
    }

    /// The outbound row of approval `approval_id`'s push, or `None` when no
    /// usable channel is configured (the approval is still asked on
    /// `/harness` and in the task's inbox). `screen`: the approval's
    /// evidence (already bounded and redacted), carried only when the
    /// target says `includeScreen` (docs/evidence.md).
    pub(crate) async fn approval_push(
        &self,
        task: &Task,
        approval_id: &str,
        question: &str,
        screen: Option<&str>,
    ) -> CoreResult<Option<NewOutbound>> {
        let channel = self.person_channel(task).await;
        let target = channel.target();
        let lang = target.map(NotifyTarget::lang).unwrap_or_default();
        let include_screen = target.is_some_and(|t| t.include_screen);
        let text = with_screen(push_text_in(question, lang), screen, include_screen, lang);
        let message = compose_body(Some(&task.title), &text, &task.id);
        let push = channel.push(task, approval_push_key(approval_id), message, true)?;
        if push.is_none() {
            tracing::info!(task_id = %task.id, "no chat channel for the approval; asked in Harness only");
        }
        Ok(push)
    }

    /// The channel that tells `task`'s person, read once: its language for
    /// the words and then the row of the push (approvals, agent states,
    /// failed actions, the ungated-run alert).
    pub(crate) async fn person_channel(&self, task: &Task) -> PersonChannel {
        PersonChannel {
            target: self.person_target(task).await,
        }
    }
}

/// The notify target of a task's person as read once
/// ([`Approvals::person_channel`]).
pub(crate) struct PersonChannel {
    target: CoreResult<Option<NotifyTarget>>,
}

impl PersonChannel {
    /// The target; `None` when no usable channel is configured or it
    /// could not be read (then [`Self::push`] fails with the read's error).
    pub(crate) fn target(&self) -> Option<&NotifyTarget> {
        self.target.as_ref().ok().and_then(Option::as_ref)
    }

    /// The language of the person's words: the target's, English when
    /// there is none or it could not be read (what is recorded is recorded
    /// all the same; the push then fails with the read's error).
    pub(crate) fn lang(&self, task_id: &str) -> Lang {
        match &self.target {
            Ok(target) => target.as_ref().map(NotifyTarget::lang).unwrap_or_default(),
            Err(err) => {
                tracing::warn!(task_id, %err, "the notify target's language could not be read");
                Lang::default()
            }
        }
    }

    /// An outbound row (no message of its own) carrying `message` to the
    /// person of `task` under `key`; `None` when no usable channel is
    /// configured.
    pub(crate) fn push(
        self,
        task: &Task,
        key: String,
        message: String,
        expect_reply: bool,
    ) -> CoreResult<Option<NewOutbound>> {
        let Some(t) = self.target? else {
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
    fn in_chinese_the_call_is_shown_as_it_is_and_the_reply_words_stay() {
        let t = push_text_in("Approve this Bash call?\n\n$ git push --force", Lang::Zh);
        assert!(
            t.starts_with("[需要审批] 批准这次 Bash 调用吗？\n\n$ git push --force"),
            "{t}"
        );
        assert!(t.contains("$ git push --force"), "{t}");
        assert!(t.ends_with(HOW_TO_ANSWER_ZH), "{t}");
        assert!(t.contains("\"approve\"（或 1）") && t.contains("\"deny\"（或 2）"));
        assert!(
            !t.contains("Approval needed") && !t.contains("Reply"),
            "{t}"
        );
        assert_eq!(push_text_in("x", Lang::En), push_text("x"));
    }

    #[test]
    fn the_screen_is_carried_only_when_the_target_allows_it() {
        let text = push_text("Approve this Bash call?\n\n$ git push --force");
        let screen = "$ cargo test\nkey sk-ant-[REDACTED]";
        assert_eq!(
            with_screen(text.clone(), Some(screen), false, Lang::En),
            text
        );
        assert_eq!(with_screen(text.clone(), None, true, Lang::En), text);
        let with = with_screen(text.clone(), Some(screen), true, Lang::En);
        assert!(with.starts_with(&text), "{with}");
        assert!(
            with.ends_with(
                "Agent's screen (redacted):\n```\n$ cargo test\nkey sk-ant-[REDACTED]\n```"
            ),
            "{with}"
        );
        let zh = with_screen(push_text_in("x", Lang::Zh), Some(screen), true, Lang::Zh);
        assert!(
            zh.ends_with("智能体的屏幕（已脱敏）：\n```\n$ cargo test\nkey sk-ant-[REDACTED]\n```"),
            "{zh}"
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
            include_screen: false,
            report_at: None,
            report_time_zone: None,
            report_since: None,
            language: None,
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
