//! The approval policy's MCP tools: `get_approval_policy`,
//! `set_approval_policy`, `list_approvals`, `decide_approval`. The admin
//! profile only — never an agent (an agent is never a person: it could
//! approve its own step) nor a gateway (which answers an approval by
//! replying to its push). Thin adapters over `harness_core::approvals`.

use harness_core::{
    CoreError,
    approvals::{self, Policy},
    auth::Identity,
};
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    HarnessMcp,
    args::absent_not_null,
    params::{Caller, Parameters, ToolError},
};

/// The tools of this module (for the profile checks).
pub const APPROVAL_TOOLS: &[&str] = &[
    "get_approval_policy",
    "set_approval_policy",
    "list_approvals",
    "decide_approval",
];

#[derive(JsonSchema)]
#[schemars(inline, rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only: the adapter checks the word")]
enum DecisionWord {
    Approve,
    Deny,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct PolicyArgs {
    /// A project's own rules (tried before the global ones); without it the
    /// global policy.
    project_id: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct SetPolicyArgs {
    /// The project whose own rules are replaced; without it the global policy.
    project_id: Option<String>,
    /// The rules in order, first match wins: `{tool, pattern?,
    /// action: allow|ask|deny, note?}` — as `PUT /api/settings/approval-policy`.
    rules: Option<Vec<Value>>,
    /// True: the global policy back to the built-in rules (a project's: no
    /// rules of its own). `rules` must then be left out.
    reset: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct ListArgs {
    task_id: Option<String>,
    #[schemars(range(min = 1, max = approvals::MAX_LIST_LIMIT))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct DecideArgs {
    /// The approval's id (`approvalId` of the hook's verdict, or from list_approvals).
    #[schemars(required)]
    id: Option<String>,
    #[schemars(required, with = "Option<DecisionWord>")]
    decision: Option<String>,
    #[schemars(length(max = approvals::MAX_REASON_CHARS))]
    reason: Option<String>,
}

/// Only the admin token (the tool is not even listed for anyone else; this
/// holds should the profile lists change).
fn admin_only(who: &Identity) -> Result<(), ToolError> {
    if who.is_admin() {
        Ok(())
    } else {
        Err(CoreError::Forbidden("the approval tools are for the admin token only".into()).into())
    }
}

fn to_object<T: serde::Serialize>(v: &T) -> Result<Map<String, Value>, ToolError> {
    match serde_json::to_value(v) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Ok(Map::from_iter([("result".to_string(), other)])),
        Err(e) => Err(ToolError(e.to_string())),
    }
}

#[tool_router(router = approval_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Admin: the approval policy — the global rules (builtin: true while they are \
             the built-in ones) or, with projectId, the project's own rules (tried first) and the \
             global ones. Read-only."
    )]
    async fn get_approval_policy(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<PolicyArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        admin_only(&who)?;
        let global = self.harness.approvals().global_approval_policy().await?;
        Ok(Json(match a.project_id.as_deref() {
            Some(p) => {
                let own = self.harness.approvals().project_approval_policy(p).await?;
                to_object(&json!({"projectId": p, "rules": own.rules, "global": global}))?
            }
            None => to_object(&global)?,
        }))
    }

    #[tool(
        description = "Admin: replace the global approval rules (or, with projectId, a project's \
             own rules); reset: true restores the built-in rules. A bad rule is refused naming \
             its field; nothing is stored then."
    )]
    async fn set_approval_policy(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<SetPolicyArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        admin_only(&who)?;
        let reset = a.reset.unwrap_or(false);
        let policy = match (a.rules, reset) {
            (Some(_), true) => {
                return Err(CoreError::invalid("rules", "leave rules out with reset: true").into());
            }
            (None, false) => {
                return Err(CoreError::invalid("rules", "rules required (or reset: true)").into());
            }
            (None, true) => None,
            (Some(rules), false) => Some(
                serde_json::from_value::<Policy>(json!({ "rules": rules }))
                    .map_err(|e| CoreError::invalid("rules", format!("rules: {e}")))?,
            ),
        };
        Ok(Json(match a.project_id.as_deref() {
            Some(p) => {
                let stored = self
                    .harness
                    .approvals()
                    .set_project_approval_policy(p, policy.unwrap_or_default())
                    .await?;
                to_object(&json!({"projectId": p, "rules": stored.rules}))?
            }
            None => to_object(
                &self
                    .harness
                    .approvals()
                    .set_global_approval_policy(policy)
                    .await?,
            )?,
        }))
    }

    #[tool(
        description = "Admin: the approval audit, newest first (taskId narrows to one task): the \
             rule that matched, the exact call, who decided, when, from where, and what the agent \
             did next."
    )]
    async fn list_approvals(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<ListArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        admin_only(&who)?;
        let rows = self
            .harness
            .approvals()
            .list_approvals(a.task_id.as_deref(), a.limit)
            .await?;
        to_object(&json!({ "approvals": rows })).map(Json)
    }

    #[tool(
        description = "Admin: approve or deny an approval (a held tool call) as the operator. The \
             first decision wins; a later one is refused \"already decided\"."
    )]
    async fn decide_approval(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<DecideArgs>,
    ) -> Result<Json<Map<String, Value>>, ToolError> {
        admin_only(&who)?;
        let person = who.person()?;
        let approve = match a.decision.as_deref().map(str::trim) {
            Some("approve") => true,
            Some("deny") => false,
            _ => {
                return Err(CoreError::invalid(
                    "decision",
                    "decision must be \"approve\" or \"deny\"",
                )
                .into());
            }
        };
        let id =
            a.id.ok_or_else(|| CoreError::invalid("id", "id required"))?;
        let decided = self
            .harness
            .approvals()
            .decide_approval(&person, &id, approve, a.reason.as_deref(), "mcp")
            .await?;
        to_object(&decided).map(Json)
    }
}
