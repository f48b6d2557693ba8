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
        .tasks()
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

/// The outcome of editing a project: the project as saved, or the field
/// that was refused and why (shown next to that field).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProjectSaved {
    pub project: Option<ProjectRow>,
    /// `name` or `path` (or `None`: not about one field).
    pub field: Option<String>,
    pub error: Option<String>,
}

/// Rename a project and/or change its directory (checked now: exists, is a
/// directory, readable). Refused input is an `Ok` naming the field, so the
/// form can show it where it belongs; other failures are errors.
#[server(prefix = "/sfn", endpoint = "update_project")]
pub async fn update_project(
    id: String,
    name: String,
    path: String,
) -> Result<ProjectSaved, ServerFnError> {
    use harness_core::CoreError;
    let h = ssr::harness()?;
    let input = harness_core::project_check::UpdateProject {
        name: Some(name),
        path: Some(path),
    };
    match h.tasks().update_project(&id, input, true).await {
        Ok(p) => Ok(ProjectSaved {
            project: Some(ProjectRow {
                id: p.id,
                name: p.name,
                path: p.path,
                workspace: p.workspace,
            }),
            field: None,
            error: None,
        }),
        // 200 with the field: the form shows it next to that field.
        Err(CoreError::Invalid { field, message }) => Ok(ProjectSaved {
            project: None,
            field: field.map(str::to_string),
            error: Some(message),
        }),
        Err(e) => Err(ssr::to_sfn(e)),
    }
}
