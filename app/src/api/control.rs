//! Task control from the page: Start (optional prompt), Stop, Restart,
//! Resume and the unattended switch. Thin adapters: the rules (what is
//! possible now, and why not) are `harness_core::control`.

use harness_types::Action;
use leptos::prelude::*;

use super::TaskRow;
#[cfg(feature = "ssr")]
use super::ssr;

/// The runtime behind the buttons (provided by the server with the `Harness`).
#[cfg(feature = "ssr")]
pub(crate) fn ssr_control()
-> Result<std::sync::Arc<dyn harness_core::control::AgentControl>, ServerFnError> {
    use_context::<std::sync::Arc<dyn harness_core::control::AgentControl>>()
        .ok_or_else(|| ServerFnError::new("the agent runtime is not available"))
}

/// Start, stop, restart or resume the task's agent; `prompt` for a fresh
/// start.
#[server(prefix = "/sfn", endpoint = "control_task")]
pub async fn control_task(
    id: String,
    action: Action,
    #[server(default)] prompt: Option<String>,
) -> Result<TaskRow, ServerFnError> {
    let h = ssr::harness()?;
    let control = ssr_control()?;
    let prompt = prompt.filter(|p| !p.trim().is_empty());
    let view = h
        .tasks()
        .control_task(control.as_ref(), &id, action, prompt.as_deref())
        .await
        .map_err(ssr::to_sfn)?;
    Ok(super::tasks::task_row(view))
}

/// A reply to an agent-state alarm from the Inbox: `restart` / `resume`
/// (start the agent again with its session; a live one is stopped first)
/// or `stop` — the same words a chat reply takes
/// (`harness_core::agent_state::told::reply_action`).
#[server(prefix = "/sfn", endpoint = "agent_reply")]
pub async fn agent_reply(id: String, reply: String) -> Result<TaskRow, ServerFnError> {
    use harness_core::{CoreError, agent_state::told::reply_action};
    let h = ssr::harness()?;
    let control = ssr_control()?;
    let action = reply_action(&reply).ok_or_else(|| {
        ssr::to_sfn(CoreError::invalid(
            "reply",
            "reply must be restart, resume or stop",
        ))
    })?;
    let view = h
        .agents()
        .agent_reply(control.as_ref(), &id, action)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(super::tasks::task_row(view))
}

/// The unattended switch (needs an active unattended channel to turn on).
#[server(prefix = "/sfn", endpoint = "set_task_unattended")]
pub async fn set_task_unattended(id: String, on: bool) -> Result<TaskRow, ServerFnError> {
    let h = ssr::harness()?;
    let view = h
        .tasks()
        .set_unattended(&id, on)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(super::tasks::task_row(view))
}
