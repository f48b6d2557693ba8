//! Settings stored as JSON values by key: notify targets (docs/contract.md §3).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{CoreError, CoreResult, Harness, events::HarnessEvent, ladder::Lang, validate};

/// The settings service (`Harness::settings`): the notify targets and the
/// system directive (here) and the edits of a list stored as one setting
/// (`crate::setting_lists`).
#[derive(Clone, Copy)]
pub struct Settings<'h> {
    pub(crate) h: &'h Harness,
}

pub const NOTIFY_TARGETS_KEY: &str = "harness.targets";

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifyTarget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub label: String,
    pub gateway: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downstream: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default = "default_scope")]
    pub scope: String,
    #[serde(default = "default_active")]
    pub active: bool,
    /// Whether a question pushed to this target carries the agent's
    /// screen (its evidence, redacted: docs/evidence.md). Off by default: a
    /// chat platform is a third party.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_screen: bool,
    /// The daily report's local time, `HH:MM` (`crate::report::daily`):
    /// the morning report goes to this target every day then. Unset: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_at: Option<String>,
    /// The IANA time zone of [`Self::report_at`] (`Europe/Berlin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_time_zone: Option<String>,
    /// When the daily report's time or zone was last set, written by
    /// Harness (a value sent is ignored): a time already past then starts
    /// the next day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(read_only))]
    pub report_since: Option<DateTime<Utc>>,
    /// The language of what Harness writes to this chat — questions,
    /// approvals and the report: `en` (unset) or `zh` (docs/gateways.md,
    /// "Chat language").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl NotifyTarget {
    /// The language its chat is written in (unset or unreadable: English).
    pub fn lang(&self) -> Lang {
        self.language
            .as_deref()
            .and_then(Lang::parse)
            .unwrap_or_default()
    }
}

/// A target's `language`: unset, `en` or `zh`.
pub(crate) fn check_language(language: &Option<String>) -> CoreResult<()> {
    match language.as_deref() {
        Some(l) if Lang::parse(l).is_none() => Err(CoreError::invalid(
            "language",
            format!("language must be \"en\" or \"zh\", not \"{}\"", l.trim()),
        )),
        _ => Ok(()),
    }
}

fn default_scope() -> String {
    "unattended".into()
}

fn default_active() -> bool {
    true
}

impl Settings<'_> {
    pub async fn notify_targets(&self) -> CoreResult<Vec<NotifyTarget>> {
        if let Some(targets) = self.h.cached_targets() {
            return Ok(targets);
        }
        let targets = match self.h.store().get_setting(NOTIFY_TARGETS_KEY).await? {
            None => Vec::new(),
            // A stored value we cannot read counts as "not configured" rather
            // than breaking every ask; it is logged so the operator can fix it.
            Some(value) => {
                serde_json::from_value::<Vec<NotifyTarget>>(value).unwrap_or_else(|err| {
                    tracing::warn!(%err, "stored notify targets are unreadable; treating as none");
                    Vec::new()
                })
            }
        };
        self.h.cache_targets(targets.clone());
        Ok(targets)
    }

    pub async fn set_notify_targets(
        &self,
        mut targets: Vec<NotifyTarget>,
    ) -> CoreResult<Vec<NotifyTarget>> {
        check_targets(&targets)?;
        // A schedule written again unchanged keeps when it was set.
        let before = self.notify_targets().await?;
        for t in &mut targets {
            crate::report::daily::stamp(t, before.iter(), Utc::now());
        }
        let value = serde_json::to_value(&targets)
            .map_err(|e| CoreError::invalid_body(format!("targets: {e}")))?;
        self.h
            .store()
            .put_setting(NOTIFY_TARGETS_KEY, &value, Utc::now())
            .await?;
        // Every cache of the targets (this one included) reloads on its next read.
        self.h.publish(HarnessEvent::SettingChanged {
            key: NOTIFY_TARGETS_KEY.into(),
        });
        Ok(targets)
    }
}

/// The rules every stored list of notify targets satisfies.
/// The most notify targets the list holds.
pub const MAX_TARGETS: usize = 64;

pub(crate) fn check_targets(targets: &[NotifyTarget]) -> CoreResult<()> {
    if targets.len() > MAX_TARGETS {
        return Err(CoreError::invalid(
            "targets",
            format!("at most {MAX_TARGETS} targets"),
        ));
    }
    for (i, t) in targets.iter().enumerate() {
        if !matches!(t.gateway.as_str(), "hermes" | "openclaw") {
            return Err(CoreError::invalid(
                "gateway",
                format!("target {i}: gateway must be \"hermes\" or \"openclaw\""),
            ));
        }
        if !matches!(t.scope.as_str(), "work" | "unattended") {
            return Err(CoreError::invalid(
                "scope",
                format!("target {i}: scope must be \"work\" or \"unattended\""),
            ));
        }
        if let Err(err) = crate::report::daily::Schedule::of(t) {
            return Err(CoreError::invalid(
                err.field().unwrap_or("reportAt"),
                format!("target {i}: {err}"),
            ));
        }
        check_language(&t.language)?;
        validate::optional_text("label", Some(&t.label), validate::MAX_NAME_CHARS)?;
        for (field, value, max) in [
            (
                "downstream",
                &t.downstream,
                crate::outbox::MAX_DOWNSTREAM_CHARS,
            ),
            ("dest", &t.dest, crate::outbox::MAX_DEST_CHARS),
            ("profile", &t.profile, crate::outbox::MAX_PROFILE_CHARS),
        ] {
            if value.as_ref().is_some_and(|v| v.chars().count() > max) {
                return Err(CoreError::invalid(
                    field,
                    format!("target {i}: {field} too long"),
                ));
            }
        }
    }
    Ok(())
}

pub const DIRECTIVE_KEY: &str = "harness.systemDirective";

impl Settings<'_> {
    /// The system directive given to agents at fresh start and on resume:
    /// the override from settings, else the built-in ladder directive.
    pub async fn system_directive(&self) -> CoreResult<String> {
        let stored = self.h.store().get_setting(DIRECTIVE_KEY).await?;
        Ok(stored
            .as_ref()
            .and_then(|v| v.as_str())
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| {
                crate::ladder::default_directive(crate::ladder::Lang::En).to_string()
            }))
    }

    /// Override the directive; an empty text restores the built-in one.
    pub async fn set_system_directive(&self, text: Option<&str>) -> CoreResult<String> {
        let text = validate::optional_text("directive", text, 20_000)?;
        let value = serde_json::Value::String(text.unwrap_or_default());
        self.h
            .store()
            .put_setting(DIRECTIVE_KEY, &value, Utc::now())
            .await?;
        self.h.publish(HarnessEvent::SettingChanged {
            key: DIRECTIVE_KEY.into(),
        });
        self.system_directive().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_targets_language_is_en_or_zh_and_english_when_unset() {
        let mut t: NotifyTarget = serde_json::from_value(
            serde_json::json!({"gateway": "hermes", "downstream": "telegram"}),
        )
        .unwrap();
        assert_eq!((t.language.as_deref(), t.lang()), (None, Lang::En));
        assert!(check_targets(std::slice::from_ref(&t)).is_ok());
        for (language, lang) in [("zh", Lang::Zh), ("en", Lang::En)] {
            t.language = Some(language.into());
            assert_eq!(t.lang(), lang);
            assert!(crate::outbox::target_edits::check_one(&t).is_ok());
            let json = serde_json::to_value(&t).unwrap();
            assert_eq!(json["language"], language);
        }
        t.language = Some("fr".into());
        for err in [
            crate::outbox::target_edits::check_one(&t).unwrap_err(),
            check_targets(std::slice::from_ref(&t)).unwrap_err(),
        ] {
            assert_eq!(err.field(), Some("language"), "{err}");
            assert!(err.to_string().contains("\"en\" or \"zh\""), "{err}");
        }
        // An unreadable stored value is written in English.
        assert_eq!(t.lang(), Lang::En);
    }
}
