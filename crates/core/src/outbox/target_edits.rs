//! Notify targets edited one at a time (compare-and-set on the stored list,
//! so two concurrent edits of different targets both stand), and the
//! "send a test message" action, which goes through the real outbox.

use chrono::Utc;

use super::{Outbound, PushOutcome, gateway, platforms};
use crate::outbox::Outbox;
use crate::{
    CoreError, CoreResult, ids,
    report::daily,
    setting_lists::{ListEntry, position},
    settings::{NOTIFY_TARGETS_KEY, NotifyTarget, check_targets},
    store::{Dedup, NewOutbound},
};

/// The dedup key prefix of a test message ("send a test message").
const TEST_KEY_PREFIX: &str = "harness:test:";

/// A test message is tried once: when the page has said FAILED, it is not
/// sent again in the background; "retry now" still can.
pub(crate) fn is_test_message(row: &Outbound) -> bool {
    row.task_id.is_none() && row.dedup_key.starts_with(TEST_KEY_PREFIX)
}

impl ListEntry for NotifyTarget {
    fn entry_id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// The rules of one added or edited target, each error naming its field
/// (the settings form shows it next to that input): a known gateway and
/// scope, OpenClaw needs its platform (`downstream`), a work target needs a
/// destination, and the lengths of the stored list.
pub fn check_one(t: &NotifyTarget) -> CoreResult<()> {
    let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    if !matches!(t.gateway.trim(), "hermes" | "openclaw") {
        return Err(CoreError::invalid(
            "gateway",
            "gateway must be \"hermes\" or \"openclaw\"",
        ));
    }
    if !matches!(t.scope.trim(), "work" | "unattended") {
        return Err(CoreError::invalid(
            "scope",
            "scope must be \"work\" or \"unattended\"",
        ));
    }
    if t.label.chars().count() > crate::validate::MAX_NAME_CHARS {
        return Err(CoreError::invalid(
            "label",
            format!(
                "label too long (at most {} characters)",
                crate::validate::MAX_NAME_CHARS
            ),
        ));
    }
    if t.gateway.trim() == "openclaw" && blank(&t.downstream) {
        return Err(CoreError::invalid(
            "downstream",
            "OpenClaw needs the platform (the chat app), e.g. telegram, slack, feishu",
        ));
    }
    if t.scope.trim() == "work" && blank(&t.dest) {
        return Err(CoreError::invalid(
            "dest",
            "a work target needs a destination (a chat id, name or alias)",
        ));
    }
    // Hermes sends to a platform's home channel, or to a destination.
    if t.gateway.trim() == "hermes" && blank(&t.downstream) && blank(&t.dest) {
        return Err(CoreError::invalid(
            "downstream",
            "Hermes needs the platform (its home channel there), e.g. telegram, or a destination",
        ));
    }
    if let Some(p) = t.downstream.as_deref().filter(|p| !p.trim().is_empty())
        && !platforms::known(p)
    {
        return Err(CoreError::invalid("downstream", platforms::unknown_text(p)));
    }
    if let Some(d) = t.dest.as_deref().filter(|d| !d.trim().is_empty())
        && !platforms::plausible_dest(d)
    {
        return Err(CoreError::invalid(
            "dest",
            format!(
                "\"{}\" is not a destination: give a chat id, a user name or an alias",
                d.trim()
            ),
        ));
    }
    daily::Schedule::of(t)?;
    crate::settings::check_language(&t.language)?;
    for (field, value, max) in [
        ("downstream", &t.downstream, 128),
        ("dest", &t.dest, 1024),
        ("profile", &t.profile, 256),
    ] {
        if value.as_ref().is_some_and(|v| v.chars().count() > max) {
            return Err(CoreError::invalid(
                field,
                format!("{field} too long (at most {max} characters)"),
            ));
        }
    }
    Ok(())
}

impl Outbox<'_> {
    /// One compare-and-set edit of the target list ([`Settings::edit_setting_list`]).
    async fn edit_targets<F>(&self, edit: F) -> CoreResult<Option<NotifyTarget>>
    where
        F: FnMut(&mut Vec<NotifyTarget>) -> CoreResult<Option<NotifyTarget>>,
    {
        self.h
            .settings()
            .edit_setting_list(NOTIFY_TARGETS_KEY, "notify targets", check_targets, edit)
            .await
    }

    /// Append a target (it gets an id).
    pub async fn add_notify_target(&self, mut target: NotifyTarget) -> CoreResult<NotifyTarget> {
        check_one(&target)?;
        target.id = Some(ids::new_id());
        daily::stamp(&mut target, std::iter::empty(), Utc::now());
        let added = self
            .edit_targets(|list| {
                list.push(target.clone());
                Ok(Some(target.clone()))
            })
            .await?;
        added.ok_or_else(|| CoreError::Conflict("target not added".into()))
    }

    /// Replace one target (its id stays).
    pub async fn update_notify_target(
        &self,
        id: &str,
        target: NotifyTarget,
    ) -> CoreResult<NotifyTarget> {
        let id = id.trim().to_string();
        self.edit_targets(|list| {
            // An unknown target is a 404 whatever the body says.
            let at = position(list, &id)
                .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))?;
            check_one(&target)?;
            let mut t = target.clone();
            t.id = list[at].id.clone().or_else(|| Some(ids::new_id()));
            daily::stamp(&mut t, std::iter::once(&list[at]), Utc::now());
            list[at] = t.clone();
            Ok(Some(t))
        })
        .await?
        .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))
    }

    /// Set one target's daily report (`at` `HH:MM` in `time_zone`), or
    /// switch it off (no time), and — when given — the language its chat is
    /// written in (`en`, `zh`); the rest of the target is untouched.
    pub async fn set_notify_target_report(
        &self,
        id: &str,
        at: Option<&str>,
        time_zone: Option<&str>,
        language: Option<&str>,
    ) -> CoreResult<NotifyTarget> {
        let language = language.map(|l| l.trim().to_string());
        crate::settings::check_language(&language)?;
        let id = id.trim().to_string();
        self.edit_targets(|list| {
            let pos = position(list, &id)
                .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))?;
            let mut t = list[pos].clone();
            t.report_at = at.map(str::to_string);
            t.report_time_zone = time_zone.map(str::to_string);
            if language.is_some() {
                t.language = language.clone();
            }
            daily::Schedule::of(&t)?;
            daily::stamp(&mut t, std::iter::once(&list[pos]), Utc::now());
            list[pos] = t.clone();
            Ok(Some(t))
        })
        .await?
        .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))
    }

    /// Whether questions pushed to one target carry the agent's screen
    /// (docs/evidence.md); the rest of the target is untouched.
    pub async fn set_notify_target_screen(&self, id: &str, on: bool) -> CoreResult<NotifyTarget> {
        let id = id.trim().to_string();
        self.edit_targets(|list| {
            let pos = position(list, &id)
                .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))?;
            list[pos].include_screen = on;
            Ok(Some(list[pos].clone()))
        })
        .await?
        .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))
    }

    pub async fn delete_notify_target(&self, id: &str) -> CoreResult<()> {
        let id = id.trim().to_string();
        self.edit_targets(|list| {
            let at = position(list, &id)
                .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))?;
            Ok(Some(list.remove(at)))
        })
        .await
        .map(|_| ())
    }

    /// Send a test message to one target through the outbox (no task: it
    /// neither opens an ask nor parks anything).
    pub async fn send_test_message(&self, id: &str) -> CoreResult<PushOutcome> {
        let targets = self.h.settings().notify_targets().await?;
        let at = position(&targets, id.trim())
            .ok_or_else(|| CoreError::NotFound("Notify target not found".into()))?;
        let t = targets[at].clone();
        let clean = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let dest = clean(&t.dest);
        if t.scope == "work" && dest.is_none() {
            return Err(CoreError::invalid(
                "dest",
                "a work target needs a destination to test",
            ));
        }
        let config = self.gateway_config().await?;
        let title = config
            .get(&t.gateway)
            .display_name
            .unwrap_or_else(|| "Harness".into());
        let label = if t.label.trim().is_empty() {
            t.gateway.clone()
        } else {
            t.label.clone()
        };
        let id = ids::new_id();
        let new = NewOutbound {
            id: id.clone(),
            message_id: None,
            task_id: None,
            dedup: Dedup::Explicit(format!("{TEST_KEY_PREFIX}{id}")),
            gateway: t.gateway.clone(),
            downstream: clean(&t.downstream),
            dest,
            requested_to: None,
            profile: clean(&t.profile),
            scope: t.scope.clone(),
            expect_reply: false,
            message: format!(
                "{title}: test message for \"{label}\" ({})",
                Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
            ),
            presentation: None,
            now: Utc::now(),
            choices: None,
        };
        // Refuse what the worker could not send anyway.
        let probe = super::Outbound {
            gateway: new.gateway.clone(),
            downstream: new.downstream.clone(),
            dest: new.dest.clone(),
            message: new.message.clone(),
            ..super::Outbound::blank()
        };
        gateway::argv(&probe, &config.get(&t.gateway))
            .map_err(|e| CoreError::invalid("dest", e))?;
        self.enqueue_and_wait(new, None).await
    }
}
