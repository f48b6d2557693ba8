//! Approvals of risky tool calls: the policy (`policy`), where
//! it is stored (global default + per-project override, as settings), the
//! hook's check and a person's decision (`flow`).

pub mod audit;
pub mod chat;
pub mod flow;
pub mod glob;
pub mod interactive;
pub mod offline;
pub mod policy;
pub mod push;
pub mod shell;
mod shell_verdict;
pub(crate) mod text;

use chrono::Utc;
use serde::{Deserialize, Serialize};

pub use crate::store::{Approval, ApprovalState};
use crate::{CoreError, CoreResult, Harness, events::HarnessEvent, validate};
pub use flow::{CallDecision, CallVerdict, ToolCall};
pub use policy::{Action, Effective, Policy, Rule};

/// The approvals service (`Harness::approvals`): the approval policy (global
/// and per project, here), the pre-tool check and a person's decision
/// (`flow`), the push of an approval to the person's chat (`push`), a
/// chat reply read as a decision (`chat`), and the runs no check reached
/// (`crate::ungated`).
#[derive(Clone, Copy)]
pub struct Approvals<'h> {
    pub(crate) h: &'h Harness,
}

/// The stored global policy (absent: the built-in default rules).
pub const GLOBAL_POLICY_KEY: &str = "harness.approvalPolicy";
/// Most approvals one listing returns (`limit`).
pub const MAX_LIST_LIMIT: u32 = 500;
/// Longest reason of a decision.
pub const MAX_REASON_CHARS: usize = 2000;

/// The settings key of a project's override.
pub fn project_policy_key(project_id: &str) -> String {
    format!("{GLOBAL_POLICY_KEY}.project.{project_id}")
}

/// The audit export's filters as given (see [`Approvals::audit_approvals`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditFilter<'a> {
    pub task_id: Option<&'a str>,
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    pub before: Option<&'a str>,
    pub limit: Option<u32>,
}

fn time_param(field: &'static str, v: Option<&str>) -> CoreResult<Option<chrono::DateTime<Utc>>> {
    match v.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(t) => chrono::DateTime::parse_from_rfc3339(t)
            .map(|d| Some(d.with_timezone(&Utc)))
            .map_err(|_| {
                CoreError::invalid(
                    field,
                    format!("{field} must be an RFC 3339 time, e.g. 2026-12-04T05:00:00Z"),
                )
            }),
    }
}

/// The global policy as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobalPolicy {
    pub rules: Vec<Rule>,
    /// True while no global policy is stored: `rules` are the built-in ones.
    pub builtin: bool,
}

impl Approvals<'_> {
    async fn stored_policy(&self, key: &str) -> CoreResult<Option<Policy>> {
        // JSON null is what "back to the built-in rules" stores.
        let Some(value) = self
            .h
            .store()
            .get_setting(key)
            .await?
            .filter(|v| !v.is_null())
        else {
            return Ok(None);
        };
        match serde_json::from_value::<Policy>(value) {
            Ok(p) => Ok(Some(p)),
            Err(err) => {
                // Fail towards asking: an unreadable stored policy is the
                // built-in one, never "no rules".
                tracing::warn!(%err, key, "stored approval policy is unreadable; using the built-in rules");
                Ok(None)
            }
        }
    }

    async fn put_policy(&self, key: &str, policy: Option<&Policy>) -> CoreResult<()> {
        let value = match policy {
            Some(p) => {
                policy::validate(p)?;
                serde_json::to_value(p).map_err(|e| CoreError::invalid_body(e.to_string()))?
            }
            // A reset is stored as JSON null: read back as "nothing stored".
            None => serde_json::Value::Null,
        };
        self.h.store().put_setting(key, &value, Utc::now()).await?;
        self.h
            .publish(HarnessEvent::SettingChanged { key: key.into() });
        Ok(())
    }

    /// The global policy: the stored one, else the built-in rules.
    pub async fn global_approval_policy(&self) -> CoreResult<GlobalPolicy> {
        Ok(match self.stored_policy(GLOBAL_POLICY_KEY).await? {
            Some(p) => GlobalPolicy {
                rules: p.rules,
                builtin: false,
            },
            None => GlobalPolicy {
                rules: policy::default_rules(),
                builtin: true,
            },
        })
    }

    /// Replace the global policy; `None` restores the built-in rules.
    pub async fn set_global_approval_policy(
        &self,
        policy: Option<Policy>,
    ) -> CoreResult<GlobalPolicy> {
        self.put_policy(GLOBAL_POLICY_KEY, policy.as_ref()).await?;
        self.global_approval_policy().await
    }

    /// A project's own rules (tried before the global ones); empty when none.
    pub async fn project_approval_policy(&self, project_id: &str) -> CoreResult<Policy> {
        let project = self.h.tasks().project(project_id).await?;
        Ok(self
            .stored_policy(&project_policy_key(&project.id))
            .await?
            .unwrap_or_default())
    }

    pub async fn set_project_approval_policy(
        &self,
        project_id: &str,
        policy: Policy,
    ) -> CoreResult<Policy> {
        let project = self.h.tasks().project(project_id).await?;
        self.put_policy(&project_policy_key(&project.id), Some(&policy))
            .await?;
        self.project_approval_policy(&project.id).await
    }

    /// The policy in force for a task of `project_id`.
    pub async fn effective_policy(&self, project_id: Option<&str>) -> CoreResult<Effective> {
        let project = match project_id {
            Some(id) => self
                .stored_policy(&project_policy_key(id))
                .await?
                .map(|p| p.rules)
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let global = self
            .stored_policy(GLOBAL_POLICY_KEY)
            .await?
            .map(|p| p.rules);
        Ok(Effective { project, global })
    }

    /// Approvals, newest first (`task_id` narrows to one task; ≤ 500).
    pub async fn list_approvals(
        &self,
        task_id: Option<&str>,
        limit: Option<u32>,
    ) -> CoreResult<Vec<Approval>> {
        self.audit_approvals(AuditFilter {
            task_id,
            limit,
            ..AuditFilter::default()
        })
        .await
    }

    /// The audit export (`GET /api/approvals`): newest first, ≤ 500 a page;
    /// `since` / `until` (RFC 3339) bound the creation time, `before` (an
    /// approval id: the last row of the previous page) pages on. Bad values
    /// are 400s naming the field.
    pub async fn audit_approvals(&self, f: AuditFilter<'_>) -> CoreResult<Vec<Approval>> {
        let task_id = match f.task_id {
            Some(t) => Some(validate::task_id(Some(t))?),
            None => None,
        };
        let limit = f.limit.unwrap_or(100);
        if !(1..=MAX_LIST_LIMIT).contains(&limit) {
            return Err(CoreError::invalid(
                "limit",
                format!("limit must be 1..={MAX_LIST_LIMIT}"),
            ));
        }
        let since = time_param("since", f.since)?;
        let until = time_param("until", f.until)?;
        if let (Some(s), Some(u)) = (since, until)
            && s >= u
        {
            return Err(CoreError::invalid("until", "until must be after since"));
        }
        let before = match f.before.map(str::trim).filter(|b| !b.is_empty()) {
            Some(b) => {
                let id = validate::cuid("before", b)?;
                if self.h.store().get_approval(&id).await?.is_none() {
                    return Err(CoreError::invalid(
                        "before",
                        "before must be the id of an approval (the last row of the previous page)",
                    ));
                }
                Some(id)
            }
            None => None,
        };
        Ok(self
            .h
            .store()
            .list_approvals(&crate::store::ApprovalQuery {
                task_id,
                since,
                until,
                before,
                limit,
            })
            .await?)
    }

    pub async fn approval(&self, id: &str) -> CoreResult<Approval> {
        let id = validate::cuid("id", id.trim())?;
        self.h
            .store()
            .get_approval(&id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Approval not found".into()))
    }
}
