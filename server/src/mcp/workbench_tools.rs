//! MCP `ack_workbench_batch` / `heartbeat_workbench_batch` /
//! `resolve_workbench_batch` (docs/tower-workbench.md §2.8): `{batchId,
//! leaseToken}`, bound to the calling terminal's task (the parent); the
//! rules are `harness_core::deliveries::Deliveries::batch_transition`.

use harness_core::{auth::Identity, inbox::BatchAction, validate::MAX_BATCH_ARG_CHARS};
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    HarnessMcp,
    outputs::BatchOut,
    params::{Caller, Parameters, ToolError},
};

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchArgs {
    #[schemars(length(min = 1, max = MAX_BATCH_ARG_CHARS))]
    batch_id: String,
    #[schemars(length(min = 1, max = MAX_BATCH_ARG_CHARS))]
    lease_token: String,
}

#[tool_router(router = workbench_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Acknowledge a durable Workbench batch typed into this terminal (call it right after reading)."
    )]
    async fn ack_workbench_batch(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<BatchArgs>,
    ) -> Result<Json<BatchOut>, ToolError> {
        self.batch("ack_workbench_batch", &who, a, BatchAction::Ack)
            .await
    }

    #[tool(
        description = "Renew the lease of an acknowledged Workbench batch you are still working on (every two minutes)."
    )]
    async fn heartbeat_workbench_batch(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<BatchArgs>,
    ) -> Result<Json<BatchOut>, ToolError> {
        self.batch("heartbeat_workbench_batch", &who, a, BatchAction::Heartbeat)
            .await
    }

    #[tool(
        description = "Resolve an acknowledged Workbench batch once every item is handled or durably delegated."
    )]
    async fn resolve_workbench_batch(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<BatchArgs>,
    ) -> Result<Json<BatchOut>, ToolError> {
        self.batch("resolve_workbench_batch", &who, a, BatchAction::Resolve)
            .await
    }
}

impl HarnessMcp {
    async fn batch(
        &self,
        tool: &str,
        who: &Identity,
        a: BatchArgs,
        action: BatchAction,
    ) -> Result<Json<BatchOut>, ToolError> {
        let Identity::Agent { task_id, .. } = who else {
            return Err(format!("{tool} must run inside the bound Workbench terminal").into());
        };
        Ok(Json(
            self.harness
                .deliveries()
                .batch_transition(task_id, &a.batch_id, &a.lease_token, action)
                .await?,
        ))
    }
}
