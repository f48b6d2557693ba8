//! The automatic recovery: the Settings section's server functions (the
//! global policy with its defaults) and a task's automatic actions for its
//! page. Thin adapters over `harness_core::agent_actions`.

use harness_types::{ActionKind, ActionReason, ActionState};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// One value of the policy as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyLine {
    /// The JSON name (`crashMaxPerHour`).
    pub name: String,
    pub value: String,
    pub default: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoverySettingsData {
    /// The global policy as pretty JSON (the defaults until one is stored).
    pub json: String,
    pub lines: Vec<PolicyLine>,
}

/// Each value of a policy as JSON text, with its name.
#[cfg(feature = "ssr")]
fn values(p: &harness_core::agent_actions::RecoveryPolicy) -> Vec<(String, String)> {
    match serde_json::to_value(p) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) if s.is_empty() => "—".to_string(),
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[server(prefix = "/sfn", endpoint = "recovery_settings")]
pub async fn recovery_settings() -> Result<RecoverySettingsData, ServerFnError> {
    use harness_core::agent_actions::RecoveryPolicy;
    let policy = ssr::harness()?
        .agents()
        .recovery_policy()
        .await
        .map_err(ssr::to_sfn)?;
    let json =
        serde_json::to_string_pretty(&policy).map_err(|e| ServerFnError::new(e.to_string()))?;
    let defaults: std::collections::HashMap<String, String> =
        values(&RecoveryPolicy::default()).into_iter().collect();
    let lines = values(&policy)
        .into_iter()
        .map(|(name, value)| PolicyLine {
            default: defaults.get(&name).cloned().unwrap_or_default(),
            name,
            value,
        })
        .collect();
    Ok(RecoverySettingsData { json, lines })
}

/// Store the global policy from its JSON text (a value left out is its
/// default); an error names its field (`crashMaxPerHour\u{1f}…`).
#[server(prefix = "/sfn", endpoint = "save_recovery_settings")]
pub async fn save_recovery_settings(settings: String) -> Result<(), ServerFnError> {
    use harness_core::CoreError;
    let o: harness_core::agent_actions::RecoveryOverride = serde_json::from_str(&settings)
        .map_err(|e| {
            super::settings::to_sfn_field(CoreError::invalid(
                "settings",
                format!("not a recovery policy: {e}"),
            ))
        })?;
    ssr::harness()?
        .agents()
        .set_recovery_policy(o)
        .await
        .map_err(super::settings::to_sfn_field)?;
    Ok(())
}

/// One automatic action as the task page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionInfo {
    pub id: String,
    pub action: ActionKind,
    pub reason: ActionReason,
    /// The engine's state.
    pub state: ActionState,
    pub due_ms: i64,
    pub done_ms: Option<i64>,
    pub updated_ms: i64,
    pub result: Option<String>,
    pub last_error: Option<String>,
}

#[server(prefix = "/sfn", endpoint = "task_actions")]
pub async fn task_actions(task_id: String) -> Result<Vec<ActionInfo>, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.agents()
        .agent_actions(&task_id)
        .await
        .map_err(ssr::to_sfn)?
        .into_iter()
        .map(|a| ActionInfo {
            id: a.id,
            action: a.action,
            reason: a.reason,
            state: a.state,
            due_ms: a.due_at.timestamp_millis(),
            done_ms: a.done_at.map(|t| t.timestamp_millis()),
            updated_ms: a.updated_at.timestamp_millis(),
            result: a.result,
            last_error: a.last_error,
        })
        .collect())
}
