//! Reminders, escalation, quiet hours and reachability: the
//! Settings editor's server functions and what `/harness` shows per open
//! ask. Thin adapters: the rules are in `harness_core::{reminders,
//! escalation, quiet_hours, reachability}`.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// What was done for an open ask while it waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowUpInfo {
    /// Milliseconds since the ask, when the page was read.
    pub waited_ms: i64,
    pub reminders: u32,
    /// Labels of the targets it was escalated to.
    pub escalated_to: Vec<String>,
    /// Its chat's delivery window has passed.
    #[serde(default)]
    pub unreachable: bool,
    /// Unreachable with no escalation target: it waits, nobody told.
    #[serde(default)]
    pub no_escalation_target: bool,
}

/// Attach the follow-up of every OPEN ask (two queries).
#[cfg(feature = "ssr")]
pub(crate) async fn with_follow_ups(
    h: &harness_core::Harness,
    mut rows: Vec<super::Row>,
) -> Result<Vec<super::Row>, ServerFnError> {
    let ids: Vec<String> = rows
        .iter()
        .filter(|r| r.is_ask() && r.state == harness_types::MessageState::Open)
        .map(|r| r.id.clone())
        .collect();
    if ids.is_empty() {
        return Ok(rows);
    }
    let mut found = h.asks().follow_ups(&ids).await.map_err(ssr::to_sfn)?;
    let now = chrono::Utc::now().timestamp_millis();
    for row in rows
        .iter_mut()
        .filter(|r| r.is_ask() && r.state == harness_types::MessageState::Open)
    {
        let f = found.remove(&row.id).unwrap_or_default();
        row.follow_up = Some(FollowUpInfo {
            waited_ms: (now - row.sent_ms).max(0),
            reminders: f.reminders,
            escalated_to: f.escalated_to,
            unreachable: f.unreachable,
            no_escalation_target: f.no_escalation_target,
        });
    }
    Ok(rows)
}

/// One notify target's reachability, as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachLine {
    pub label: String,
    pub platform: String,
    /// `how long ago`, or empty when nobody is known to have written.
    pub last_wrote: String,
    pub warning: Option<String>,
    pub last_error: Option<String>,
    pub failed_attempts: Option<u32>,
    pub gave_up: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReminderSettingsData {
    /// The setting `harness.reminders` as pretty JSON.
    pub json: String,
    pub reachability: Vec<ReachLine>,
}

#[server(prefix = "/sfn", endpoint = "reminder_settings")]
pub async fn reminder_settings() -> Result<ReminderSettingsData, ServerFnError> {
    let h = ssr::harness()?;
    let schedule = h.asks().reminder_schedule().await.map_err(ssr::to_sfn)?;
    let json =
        serde_json::to_string_pretty(&schedule).map_err(|e| ServerFnError::new(e.to_string()))?;
    let now = chrono::Utc::now();
    let reachability = h
        .asks()
        .reachability(now)
        .await
        .map_err(ssr::to_sfn)?
        .into_iter()
        .map(|r| ReachLine {
            label: r.label,
            platform: r.platform.unwrap_or_default(),
            last_wrote: r
                .last_wrote
                .map(|t| harness_types::waited_text((now - t).num_milliseconds()))
                .unwrap_or_default(),
            warning: r.warning,
            last_error: r.last_error,
            failed_attempts: r.failed_attempts,
            gave_up: r.gave_up,
        })
        .collect();
    Ok(ReminderSettingsData { json, reachability })
}

/// Store the setting from its JSON text; an error names its field
/// (`escalateTo\u{1f}…`).
#[server(prefix = "/sfn", endpoint = "save_reminder_settings")]
pub async fn save_reminder_settings(settings: String) -> Result<(), ServerFnError> {
    use harness_core::CoreError;
    let schedule: harness_core::reminders::ReminderSchedule = serde_json::from_str(&settings)
        .map_err(|e| {
            super::settings::to_sfn_field(CoreError::invalid(
                "settings",
                format!(
                    "not a reminder setting ({{\"high\", \"normal\", \"low\", \"escalateAfter\", \
                     \"escalateTo\", \"quietHours\"}}): {e}"
                ),
            ))
        })?;
    ssr::harness()?
        .asks()
        .set_reminder_schedule(schedule)
        .await
        .map_err(super::settings::to_sfn_field)?;
    Ok(())
}
