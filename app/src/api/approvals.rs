//! Settings → Approvals: the global approval policy edited as
//! JSON text (the rules, their validation and storage are the core's), and
//! a task's approvals for its page.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// The global rules as pretty JSON (`{"rules": […]}`); `builtin`: no
/// policy is stored, these are the built-in rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyText {
    pub json: String,
    pub builtin: bool,
}

#[server(prefix = "/sfn", endpoint = "approval_policy")]
pub async fn approval_policy() -> Result<PolicyText, ServerFnError> {
    let p = ssr::harness()?
        .approvals()
        .global_approval_policy()
        .await
        .map_err(ssr::to_sfn)?;
    let policy = harness_core::approvals::Policy { rules: p.rules };
    let json =
        serde_json::to_string_pretty(&policy).map_err(|e| ServerFnError::new(e.to_string()))?;
    Ok(PolicyText {
        json,
        builtin: p.builtin,
    })
}

/// Store `rules` (the JSON text) as the global policy; an error names its
/// field and the rule's index (`tool\u{1f}rules[1]: …`).
#[server(prefix = "/sfn", endpoint = "save_approval_policy")]
pub async fn save_approval_policy(rules: String) -> Result<(), ServerFnError> {
    use harness_core::CoreError;
    let policy: harness_core::approvals::Policy = serde_json::from_str(&rules).map_err(|e| {
        super::settings::to_sfn_field(CoreError::invalid(
            "rules",
            format!("not a policy ({{\"rules\": [{{\"tool\", \"pattern\", \"action\", \"note\"}}]}}): {e}"),
        ))
    })?;
    ssr::harness()?
        .approvals()
        .set_global_approval_policy(Some(policy))
        .await
        .map_err(super::settings::to_sfn_field)?;
    Ok(())
}

/// Back to the built-in rules.
#[server(prefix = "/sfn", endpoint = "reset_approval_policy")]
pub async fn reset_approval_policy() -> Result<(), ServerFnError> {
    ssr::harness()?
        .approvals()
        .set_global_approval_policy(None)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(())
}

/// A project's own rules as pretty JSON (`{"rules": […]}`, empty when it
/// has none); `builtin` is always false here.
#[server(prefix = "/sfn", endpoint = "project_approval_policy")]
pub async fn project_approval_policy(project_id: String) -> Result<PolicyText, ServerFnError> {
    let p = ssr::harness()?
        .approvals()
        .project_approval_policy(&project_id)
        .await
        .map_err(ssr::to_sfn)?;
    let json = serde_json::to_string_pretty(&p).map_err(|e| ServerFnError::new(e.to_string()))?;
    Ok(PolicyText {
        json,
        builtin: false,
    })
}

/// Store `rules` (the JSON text) as the project's own rules (tried before
/// the global ones); `{"rules": []}` removes them. Errors as
/// [`save_approval_policy`]'s.
#[server(prefix = "/sfn", endpoint = "save_project_approval_policy")]
pub async fn save_project_approval_policy(
    project_id: String,
    rules: String,
) -> Result<(), ServerFnError> {
    use harness_core::CoreError;
    let policy: harness_core::approvals::Policy = serde_json::from_str(&rules).map_err(|e| {
        super::settings::to_sfn_field(CoreError::invalid(
            "rules",
            format!("not a policy ({{\"rules\": [{{\"tool\", \"pattern\", \"action\", \"note\"}}]}}): {e}"),
        ))
    })?;
    ssr::harness()?
        .approvals()
        .set_project_approval_policy(&project_id, policy)
        .await
        .map_err(super::settings::to_sfn_field)?;
    Ok(())
}

/// One approval of a task, as its page lists it (the audit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalLine {
    pub id: String,
    pub tool: String,
    pub input: String,
    pub state: harness_types::ApprovalState,
    /// The rule that matched: `tool "pattern" → action (source #index)`.
    pub rule: String,
    pub cwd: Option<String>,
    /// `who via where at when`, or empty while pending.
    pub decided: String,
    pub reason: Option<String>,
    pub outcome: Option<String>,
    pub created_ms: i64,
}

#[server(prefix = "/sfn", endpoint = "task_approvals")]
pub async fn task_approvals(task_id: String) -> Result<Vec<ApprovalLine>, ServerFnError> {
    let rows = ssr::harness()?
        .approvals()
        .list_approvals(Some(&task_id), Some(50))
        .await
        .map_err(ssr::to_sfn)?;
    Ok(rows
        .into_iter()
        .map(|a| ApprovalLine {
            decided: match (&a.decided_by, &a.decided_via, a.decided_at) {
                (Some(by), via, Some(at)) => format!(
                    "{by} via {} at {}",
                    via.as_deref().unwrap_or("?"),
                    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ),
                _ => String::new(),
            },
            rule: rule_text(&a.rule),
            cwd: a.cwd,
            id: a.id,
            tool: a.tool,
            input: a.input,
            state: a.state,
            reason: a.reason,
            outcome: a.outcome,
            created_ms: a.created_at.timestamp_millis(),
        })
        .collect())
}

/// The matched rule (stored as `policy::Matched` JSON) in one line.
#[cfg(feature = "ssr")]
fn rule_text(json: &str) -> String {
    match serde_json::from_str::<harness_core::approvals::policy::Matched>(json) {
        Ok(m) => format!(
            "{} {}→ {} ({} #{})",
            m.rule.tool,
            m.rule
                .pattern
                .map(|p| format!("\"{p}\" "))
                .unwrap_or_default(),
            m.rule.action.as_str(),
            serde_json::to_value(m.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            m.index
        ),
        Err(_) => json.to_string(),
    }
}
