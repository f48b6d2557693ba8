//! The outbox's MCP tools (docs/tower-messaging.md §4.3): `list_notify_targets`
//! and `push_to_human`. Thin adapters: bind the task, call the core.

use harness_core::{outbox, outbox::PushInput};
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    HarnessMcp,
    args::{PushChoices, TASK_ID, absent_not_null},
    outputs::{PushOut, TargetsOut},
    params::{Caller, Parameters, ToolError},
};

// The scopes a message goes to (the core checks the value).
#[derive(JsonSchema)]
#[schemars(inline, rename_all = "lowercase")]
#[expect(dead_code, reason = "schema only: the core parses the scope")]
enum ScopeName {
    Work,
    Unattended,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct TargetsArgs {
    #[schemars(description = TASK_ID)]
    task_id: Option<String>,
    #[schemars(with = "Option<ScopeName>")]
    scope: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = absent_not_null)]
pub struct PushArgs {
    #[schemars(description = TASK_ID)]
    task_id: Option<String>,
    #[schemars(required, length(min = 1, max = outbox::MAX_PUSH_CHARS))]
    message: Option<String>,
    #[schemars(with = "Option<ScopeName>")]
    scope: Option<String>,
    #[schemars(length(max = outbox::MAX_TO_CHARS))]
    to: Option<String>,
    expect_reply: Option<bool>,
    #[schemars(length(min = 1, max = outbox::MAX_DEDUP_KEY_CHARS))]
    dedup_key: Option<String>,
    #[serde(flatten)]
    choices: PushChoices,
}

#[tool_router(router = outbox_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Before sending: the active chat channel for this task's scope (work, or unattended \
             when goal mode is on) and exactly how to send to it, with the task token. Read-only."
    )]
    async fn list_notify_targets(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<TargetsArgs>,
    ) -> Result<Json<TargetsOut>, ToolError> {
        let task_id = who.bind_task(a.task_id.as_deref())?;
        let out = self
            .harness
            .outbox()
            .list_notify_targets(&task_id, a.scope.as_deref())
            .await?;
        Ok(Json(TargetsOut(out)))
    }

    #[tool(
        description = "Send a message to a human through the configured gateway (Hermes / OpenClaw). It is \
             persisted first and sent by the outbox: never lost, never sent twice. With \
             expectReply (default in the unattended scope) it is an ask: once sent your task is \
             parked — end your turn and wait; the reply is typed into this terminal. With \
             `options` (and a `default` with a `deadline`) the chat shows them numbered."
    )]
    async fn push_to_human(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<PushArgs>,
    ) -> Result<Json<PushOut>, ToolError> {
        let task_id = who.bind_task(a.task_id.as_deref())?;
        let input = PushInput {
            task_id: Some(task_id),
            message: a.message,
            scope: a.scope,
            to: a.to,
            expect_reply: a.expect_reply,
            dedup_key: a.dedup_key,
            choices: a.choices.into(),
            ..Default::default()
        };
        Ok(Json(PushOut(
            self.harness.outbox().push_to_human(input).await?,
        )))
    }
}
