//! Adding a project from the page (the path is checked on the server:
//! exists, is a directory, readable — `harness_core::project_check`).

use leptos::prelude::*;

use super::ProjectRow;
#[cfg(feature = "ssr")]
use super::ssr;

#[server(prefix = "/sfn", endpoint = "add_project")]
pub async fn add_project(
    name: String,
    path: String,
    #[server(default)] workspace: Option<String>,
) -> Result<ProjectRow, ServerFnError> {
    let h = ssr::harness()?;
    let p = h
        .create_checked_project(harness_core::tasks::CreateProject {
            name: Some(name),
            path: Some(path),
            workspace: workspace.filter(|w| !w.trim().is_empty()),
        })
        .await
        .map_err(ssr::to_sfn)?;
    Ok(ProjectRow {
        id: p.id,
        name: p.name,
        path: p.path,
        workspace: p.workspace,
    })
}
