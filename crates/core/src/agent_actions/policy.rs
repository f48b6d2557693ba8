//! The policy of the automatic recovery: what Harness does on its own when
//! an unattended agent stops, and how often. One global policy (the
//! defaults until one is stored), overridden per project and per task —
//! each override replaces only the values it sets
//! ([`RecoveryOverride`]). Pure: stored as settings (`harness.recoveryPolicy`,
//! `harness.recoveryPolicy.project.<id>`) and in the task's agent
//! configuration (`agent.recovery`) by `super`.

use serde::{Deserialize, Serialize};

pub use crate::model::RecoveryOverride;
use crate::{CoreError, CoreResult};

/// The settings key of the global policy.
pub const GLOBAL_KEY: &str = "harness.recoveryPolicy";

/// The settings key of a project's override.
pub fn project_key(project_id: &str) -> String {
    format!("{GLOBAL_KEY}.project.{project_id}")
}

/// The longest nudge text.
pub const MAX_NUDGE_CHARS: usize = 2000;
/// The longest of the waits and delays (a week).
pub const MAX_WAIT_SECS: u64 = 7 * 24 * 3600;
/// The highest per-hour cap.
pub const MAX_PER_HOUR: u32 = 60;

/// The effective policy of one task.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RecoveryPolicy {
    /// Usage limit: the agent is woken after the reset — "continue" typed,
    /// or resumed with its session when its process has exited.
    pub usage_limit_resume: bool,
    /// Without a printed reset time: wake it this long after the limit.
    pub usage_limit_wait_secs: u64,
    /// With one: this long after the printed time (it is to the minute).
    pub usage_limit_margin_secs: u64,
    /// A CLI that waits for its reset by itself (Claude Code's "Continuing
    /// automatically at …") is left alone and checked this long after the
    /// reset: still limited, "continue" is typed.
    pub self_wait_check_secs: u64,
    /// API error loop (the CLI stopped retrying): "continue" after a
    /// backoff.
    pub api_error_continue: bool,
    /// At most this many of those per task and hour; then the person is told.
    pub api_error_max_per_hour: u32,
    /// The first backoff; it doubles with each continue of the last hour.
    pub api_error_backoff_secs: u64,
    /// Crash or a non-zero exit: restarted with its session.
    pub crash_restart: bool,
    /// At most this many restarts per task and hour; then the person is told.
    pub crash_max_per_hour: u32,
    /// How long after the exit.
    pub crash_restart_delay_secs: u64,
    /// Typed once into a stalled agent (the person is told either way);
    /// empty: nothing is typed.
    pub stalled_nudge: String,
    /// A dialog of the CLI itself that blocks the terminal is answered with
    /// the option that keeps the task as configured (Codex's "Keep current
    /// model"); a dialog without one is told like a question.
    pub answer_dialogs: bool,
}

impl Default for RecoveryPolicy {
    fn default() -> Self {
        Self {
            usage_limit_resume: true,
            usage_limit_wait_secs: 3600,
            usage_limit_margin_secs: 60,
            self_wait_check_secs: 120,
            api_error_continue: true,
            api_error_max_per_hour: 3,
            api_error_backoff_secs: 60,
            crash_restart: true,
            crash_max_per_hour: 2,
            crash_restart_delay_secs: 10,
            stalled_nudge: String::new(),
            answer_dialogs: true,
        }
    }
}

impl RecoveryPolicy {
    /// This policy with `o`'s values over it.
    pub fn with(mut self, o: &RecoveryOverride) -> Self {
        macro_rules! over {
            ($($f:ident),+) => { $( if let Some(v) = o.$f { self.$f = v; } )+ };
        }
        over!(
            usage_limit_resume,
            usage_limit_wait_secs,
            usage_limit_margin_secs,
            self_wait_check_secs,
            api_error_continue,
            api_error_max_per_hour,
            api_error_backoff_secs,
            crash_restart,
            crash_max_per_hour,
            crash_restart_delay_secs,
            answer_dialogs
        );
        if let Some(text) = &o.stalled_nudge {
            self.stalled_nudge = text.trim().to_string();
        }
        self
    }

    /// The whole policy as an override (every value set).
    pub fn as_override(&self) -> RecoveryOverride {
        RecoveryOverride {
            usage_limit_resume: Some(self.usage_limit_resume),
            usage_limit_wait_secs: Some(self.usage_limit_wait_secs),
            usage_limit_margin_secs: Some(self.usage_limit_margin_secs),
            self_wait_check_secs: Some(self.self_wait_check_secs),
            api_error_continue: Some(self.api_error_continue),
            api_error_max_per_hour: Some(self.api_error_max_per_hour),
            api_error_backoff_secs: Some(self.api_error_backoff_secs),
            crash_restart: Some(self.crash_restart),
            crash_max_per_hour: Some(self.crash_max_per_hour),
            crash_restart_delay_secs: Some(self.crash_restart_delay_secs),
            stalled_nudge: Some(self.stalled_nudge.clone()),
            answer_dialogs: Some(self.answer_dialogs),
        }
    }

    /// The backoff before the `done`+1-th continue of the last hour after
    /// API errors: the base, doubled for each one done (capped at a day).
    pub fn api_error_backoff(&self, done: u32) -> u64 {
        self.api_error_backoff_secs
            .saturating_mul(1u64 << done.min(16))
            .min(24 * 3600)
    }

    /// The nudge text, if one is set.
    pub fn nudge(&self) -> Option<&str> {
        Some(self.stalled_nudge.as_str()).filter(|t| !t.is_empty())
    }
}

/// The values an override may set, checked field by field (the error
/// names the field, as the settings forms show it).
pub fn check(o: &RecoveryOverride) -> CoreResult<()> {
    let secs = [
        ("usageLimitWaitSecs", o.usage_limit_wait_secs, 60),
        ("usageLimitMarginSecs", o.usage_limit_margin_secs, 0),
        ("selfWaitCheckSecs", o.self_wait_check_secs, 0),
        ("apiErrorBackoffSecs", o.api_error_backoff_secs, 1),
        ("crashRestartDelaySecs", o.crash_restart_delay_secs, 0),
    ];
    for (field, value, min) in secs {
        if let Some(v) = value
            && !(min..=MAX_WAIT_SECS).contains(&v)
        {
            return Err(CoreError::invalid(
                field,
                format!("{field} must be {min}..={MAX_WAIT_SECS} seconds"),
            ));
        }
    }
    for (field, value) in [
        ("apiErrorMaxPerHour", o.api_error_max_per_hour),
        ("crashMaxPerHour", o.crash_max_per_hour),
    ] {
        if value.is_some_and(|v| v > MAX_PER_HOUR) {
            return Err(CoreError::invalid(
                field,
                format!("{field} must be 0..={MAX_PER_HOUR}"),
            ));
        }
    }
    if let Some(text) = &o.stalled_nudge {
        if text.chars().count() > MAX_NUDGE_CHARS {
            return Err(CoreError::invalid(
                "stalledNudge",
                format!("stalledNudge: at most {MAX_NUDGE_CHARS} characters"),
            ));
        }
        if text.chars().any(char::is_control) {
            return Err(CoreError::invalid(
                "stalledNudge",
                "stalledNudge: one line of text (no control characters)",
            ));
        }
    }
    Ok(())
}

/// One task's policy: the global policy (stored, else the defaults) with
/// its project's override and its own over it.
pub fn effective(
    global: Option<&RecoveryPolicy>,
    project: Option<&RecoveryOverride>,
    task: Option<&RecoveryOverride>,
) -> RecoveryPolicy {
    let mut policy = global.cloned().unwrap_or_default();
    for o in [project, task].into_iter().flatten() {
        policy = policy.with(o);
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_documented_ones() {
        let p = RecoveryPolicy::default();
        assert!(p.usage_limit_resume && p.api_error_continue && p.crash_restart);
        assert_eq!(
            p.usage_limit_wait_secs, 3600,
            "a settable wait, default 1 h"
        );
        assert_eq!(p.api_error_max_per_hour, 3);
        assert_eq!(p.crash_max_per_hour, 2);
        assert_eq!(p.nudge(), None, "the nudge is off by default");
        assert!(p.answer_dialogs);
    }

    #[test]
    fn a_task_overrides_its_project_which_overrides_the_global_policy() {
        let global = RecoveryPolicy {
            crash_max_per_hour: 5,
            ..RecoveryPolicy::default()
        };
        let project = RecoveryOverride {
            crash_max_per_hour: Some(1),
            api_error_max_per_hour: Some(7),
            stalled_nudge: Some("  keep going  ".into()),
            ..RecoveryOverride::default()
        };
        let task = RecoveryOverride {
            api_error_max_per_hour: Some(0),
            ..RecoveryOverride::default()
        };
        let p = effective(Some(&global), Some(&project), Some(&task));
        assert_eq!(p.crash_max_per_hour, 1, "the project's");
        assert_eq!(p.api_error_max_per_hour, 0, "the task's");
        assert_eq!(p.nudge(), Some("keep going"));
        assert_eq!(p.usage_limit_wait_secs, 3600, "untouched: the default");
        assert_eq!(effective(None, None, None), RecoveryPolicy::default());
        // An empty nudge of a task switches its project's off.
        let off = RecoveryOverride {
            stalled_nudge: Some(String::new()),
            ..RecoveryOverride::default()
        };
        assert_eq!(effective(None, Some(&project), Some(&off)).nudge(), None);
        assert_eq!(
            RecoveryPolicy::default().with(&p.as_override()),
            p,
            "a whole policy as an override is that policy"
        );
    }

    #[test]
    fn the_backoff_doubles_with_each_continue_of_the_last_hour() {
        let p = RecoveryPolicy::default();
        assert_eq!(
            [0, 1, 2].map(|n| p.api_error_backoff(n)),
            [60, 120, 240],
            "60 s, then doubling"
        );
        assert_eq!(p.api_error_backoff(40), 24 * 3600);
    }

    #[test]
    fn out_of_range_values_name_their_field() {
        let field = |o: RecoveryOverride| match check(&o) {
            Err(CoreError::Invalid {
                field: Some(field), ..
            }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(RecoveryOverride {
                usage_limit_wait_secs: Some(5),
                ..RecoveryOverride::default()
            }),
            "usageLimitWaitSecs"
        );
        assert_eq!(
            field(RecoveryOverride {
                crash_max_per_hour: Some(61),
                ..RecoveryOverride::default()
            }),
            "crashMaxPerHour"
        );
        assert_eq!(
            field(RecoveryOverride {
                stalled_nudge: Some("go\u{1b}[A".into()),
                ..RecoveryOverride::default()
            }),
            "stalledNudge"
        );
        assert!(check(&RecoveryPolicy::default().as_override()).is_ok());
        let unknown = serde_json::from_str::<RecoveryOverride>(r#"{"crashRestrat": false}"#);
        assert!(
            unknown.is_err(),
            "a misspelt setting is refused, not ignored"
        );
    }
}
