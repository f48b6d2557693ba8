//! Home's first step: a ready demo agent that asks a
//! question with options, so a newcomer sees the whole loop — ask, park,
//! answer, resume — in a minute. The agent is `harness demo-agent`, this
//! very binary, run as a `command` task.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::ssr;

/// Create the demo task and start it; answers its id.
#[server(prefix = "/sfn", endpoint = "start_demo")]
pub async fn start_demo() -> Result<String, ServerFnError> {
    use harness_core::{
        CoreError,
        control::Action,
        tasks::{AgentInput, CreateTask},
    };
    let h = ssr::harness()?;
    let control = super::control::ssr_control()?;
    let l = crate::i18n::Locale::detect();
    let exe = std::env::current_exe().map_err(|e| {
        tracing::error!(error = %e, "cannot find the harness binary for the demo agent");
        ssr::to_sfn(CoreError::Conflict(
            "the demo agent cannot start: the harness binary was not found".into(),
        ))
    })?;
    // A binary replaced while the server runs (an upgrade, a rebuild) is
    // reported by Linux as "<path> (deleted)": the new one at that path is
    // the program to run.
    let exe = exe
        .to_str()
        .and_then(|p| p.strip_suffix(" (deleted)"))
        .map(std::path::PathBuf::from)
        .unwrap_or(exe);
    let view = h
        .tasks()
        .create_task(CreateTask {
            title: Some(l.t("demo.title").to_string()),
            description: Some(l.t("demo.description").to_string()),
            agent: Some(AgentInput {
                provider: Some("command".into()),
                command: Some(vec![exe.display().to_string(), "demo-agent".into()]),
                cwd: Some(std::env::temp_dir().display().to_string()),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .map_err(ssr::to_sfn)?;
    let id = view.task.id.clone();
    h.tasks()
        .control_task(control.as_ref(), &id, Action::Start, None)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(id)
}
