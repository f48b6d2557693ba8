//! The task tools: asking, notifying, replying, reading and creating tasks,
//! goal mode and terminal input. Each is a typed method on [`HarnessMcp`]:
//! its arguments (`args.rs`) give the `inputSchema`, its result
//! (`outputs.rs`) the `outputSchema`. Names and camelCase parameters are the
//! reference's (docs/contract.md §5); the rules are the core's.

use harness_core::{CoreError, approvals};
use rmcp::{Json, handler::server::tool::ToolRouter, tool, tool_router};

use super::{
    HarnessMcp,
    args::{AskArgs, CreateTaskArgs, GoalArgs, InputArgs, NotifyArgs, ReplyArgs, TaskArg},
    outputs::{AskOut, GoalOut, NotifyOut, Replied, ReplyOut, TaskOut},
    params::{Caller, Parameters, ToolError},
};

const PARKED: &str = "Question recorded and your task is parked. End your turn now and wait; \
                      the human's reply will be typed into this terminal.";
const PARKED_NO_CHANNEL: &str = "Question recorded and your task is parked; it is answerable in \
     the Harness notification center (/harness). No chat channel is configured, so nobody is \
     notified elsewhere: mention that the user can configure one in Settings → Notifications. \
     End your turn now and wait for the reply.";

#[tool_router(router = task_router, vis = "pub(super)")]
impl HarnessMcp {
    #[tool(
        description = "Ask the human a blocking question. Records an OPEN ask and parks this task; \
             sends nothing by itself. After calling it, END YOUR TURN and wait: the reply is \
             typed into this terminal. Include the options you see: pass them as `options` \
             (the human answers in one click) and, if you can proceed without an answer, a \
             `default` label with a `deadline` — that label becomes the answer when it passes."
    )]
    async fn ask_human(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<AskArgs>,
    ) -> Result<Json<AskOut>, ToolError> {
        let task_id = who.bind_task(a.task_id.as_deref())?;
        let out = self
            .harness
            .asks()
            .ask_keyed(
                &task_id,
                a.question.as_deref(),
                &a.choices.into(),
                a.idempotency_key.as_deref(),
            )
            .await?;
        Ok(Json(AskOut {
            parked: true,
            request_id: out.request_id,
            deduped: out.deduped,
            message: if out.no_channel_configured {
                PARKED_NO_CHANNEL
            } else {
                PARKED
            },
            no_channel_configured: out.no_channel_configured,
        }))
    }

    #[tool(
        description = "Record an FYI progress line for the human (CLOSED, nothing waits). Continue working."
    )]
    async fn notify_human(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<NotifyArgs>,
    ) -> Result<Json<NotifyOut>, ToolError> {
        let task_id = who.bind_task(a.task_id.as_deref())?;
        let message = self
            .harness
            .asks()
            .notify(&task_id, a.message.as_deref())
            .await?;
        Ok(Json(NotifyOut {
            ok: true,
            message_id: message.id,
        }))
    }

    #[tool(
        description = "Answer a task's OPEN ask; the parked task resumes. Returns no_pending when the \
             task has no open question (treat the text as an ordinary message then)."
    )]
    async fn reply_to_ask(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<ReplyArgs>,
    ) -> Result<Json<ReplyOut>, ToolError> {
        let person = self.harness.gateway().gateway_person(&who, None).await?;
        let task_id = who.bind_task(a.task_id.as_deref())?;
        match self
            .harness
            .asks()
            .reply_from(
                &person,
                &task_id,
                a.text.as_deref(),
                false,
                a.sender_id.as_deref(),
            )
            .await
        {
            Ok(out) => Ok(Json(ReplyOut {
                task_id: out.task_id,
                replied: Some(Replied {
                    ok: true,
                    mode: out.mode,
                    injected: out.injected,
                    deduped: out.deduped,
                    delivery_id: out.delivery_id,
                    delivery: out.delivery,
                }),
                no_pending: false,
                already_decided: None,
            })),
            Err(CoreError::Conflict(m)) if approvals::chat::is_settled(&m) => Ok(Json(ReplyOut {
                task_id,
                replied: None,
                no_pending: false,
                already_decided: Some(m),
            })),
            Err(CoreError::Conflict(_)) => Ok(Json(ReplyOut {
                task_id,
                replied: None,
                no_pending: true,
                already_decided: None,
            })),
            Err(e) => Err(e.into()),
        }
    }

    #[tool(
        description = "Read a task: status, parent, unattended flag, latest execution, open ask, and its agent's state (agentState: working, waiting_for_person, idle, usage_limited, erroring, logged_out, stalled, exited or crashed, with the reason and the screen lines that show it)."
    )]
    async fn get_task(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<TaskArg>,
    ) -> Result<Json<TaskOut>, ToolError> {
        // An agent may read its own task and its derived children (core rule).
        let view = self
            .harness
            .access()
            .task_for(&who, a.task_id.as_deref())
            .await?;
        Ok(Json(TaskOut(view)))
    }

    #[tool(
        description = "Create a task. Called from a task terminal, the new task becomes a derived child of \
             this task (parentTaskId defaults to TOWER_TASK_ID)."
    )]
    async fn create_task(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<CreateTaskArgs>,
    ) -> Result<Json<TaskOut>, ToolError> {
        let view = self.harness.access().create_task_as(&who, a.into()).await?;
        Ok(Json(TaskOut(view)))
    }

    #[tool(
        description = "Turn unattended (goal) mode on or off for a task. On: no human watches the terminal, \
             native question menus are blocked and questions go to ask_human / push_to_human. \
             Turning it on needs an active unattended notify channel (hermes or openclaw). \
             Only a person may turn it off: an agent's token is refused."
    )]
    async fn set_goal_mode(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<GoalArgs>,
    ) -> Result<Json<GoalOut>, ToolError> {
        let task_id = who.bind_task(a.task_id.as_deref())?;
        let on = a.on.ok_or("on (boolean) required")?;
        if a.wake_after_seconds.is_some() {
            return Err("scheduled wake-ups are not supported by this Harness version".into());
        }
        // Turning it on needs an active unattended channel: checked by the core.
        // Off only by a person: an agent's token is refused (core rule).
        let view = self
            .harness
            .tasks()
            .set_unattended_as(&who, &task_id, on)
            .await?;
        Ok(Json(GoalOut {
            ok: true,
            task_id,
            goal_mode: view.task.unattended,
            authorization_granted: false,
        }))
    }

    #[tool(
        description = "Type text into a derived child's terminal to deliver your decision (never your own \
         terminal). Text only: a leading !, / or # and control characters are refused. With \
         idempotencyKey the text is written at most once."
    )]
    async fn send_task_terminal_input(
        &self,
        Caller(who): Caller,
        Parameters(a): Parameters<InputArgs>,
    ) -> Result<Json<crate::terminals::InputResult>, ToolError> {
        let task_id = harness_core::validate::task_id(a.task_id.as_deref())?;
        self.harness
            .access()
            .authorize_terminal(&who, &task_id)
            .await?;
        let text = a.text.ok_or("text required")?;
        let out = self
            .terminals
            .input(
                &task_id,
                &text,
                a.submit.unwrap_or(true),
                a.idempotency_key.as_deref(),
                harness_core::typed_text::Typist::of(&who),
            )
            .await?;
        Ok(Json(out))
    }
}

/// Every tool, in one router (`HarnessMcp::call_tool` filters by identity).
pub(super) fn router() -> ToolRouter<HarnessMcp> {
    HarnessMcp::task_router()
        + HarnessMcp::outbox_router()
        + HarnessMcp::workbench_router()
        + HarnessMcp::gateway_router()
        + HarnessMcp::route_router()
        + HarnessMcp::callback_router()
        + HarnessMcp::approval_router()
        + HarnessMcp::report_router()
}
