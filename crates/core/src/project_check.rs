//! Adding a project from the web UI: a person picking a path gets
//! it checked now — it exists (as over REST: `validate::project_dir`), is a
//! directory, and can be read. The
//! same check guards editing a project (name and path) from the page.
//! Also the link from a plan task to the Harness tasks that ran it.

use crate::tasks::Tasks;
use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{
    CoreError, CoreResult,
    model::{Project, TaskView},
    store::StoreError,
    tasks::CreateProject,
    validate,
};

/// A project edit as submitted: a missing field keeps its value.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateProject {
    pub name: Option<String>,
    pub path: Option<String>,
}

/// The environment variable `harness run` gives a supervised task's agent:
/// the id of the plan task it runs (`crates/plan` driver).
pub const PLAN_TASK_ENV: &str = "HARNESS_TASK_ID";

/// The path exists, is a directory and its entries can be listed.
pub fn existing_readable_dir(value: &str) -> CoreResult<String> {
    let path = validate::project_dir(value)?;
    let p = std::path::Path::new(&path);
    if !p.exists() {
        return Err(CoreError::invalid("path", format!("{path} does not exist")));
    }
    if !p.is_dir() {
        return Err(CoreError::invalid(
            "path",
            format!("{path} is not a directory"),
        ));
    }
    std::fs::read_dir(p)
        .map_err(|e| CoreError::invalid("path", format!("{path} cannot be read: {e}")))?;
    Ok(path)
}

impl Tasks<'_> {
    /// Create a project whose directory must exist and be readable now.
    pub async fn create_checked_project(&self, input: CreateProject) -> CoreResult<Project> {
        let path = validate::text("path", input.path.as_deref(), validate::MAX_PATH_CHARS)?;
        let path = existing_readable_dir(&path)?;
        self.create_project(CreateProject {
            path: Some(path),
            ..input
        })
        .await
    }
}

impl Tasks<'_> {
    /// Rename a project and/or move it to another directory. With
    /// `check_path` (a person at the page) the new path must exist, be a
    /// directory and be readable now; otherwise it is only validated as
    /// absolute and canonical, as at creation over REST.
    pub async fn update_project(
        &self,
        id: &str,
        input: UpdateProject,
        check_path: bool,
    ) -> CoreResult<Project> {
        let current = self.project(id).await?;
        let name = match input.name.as_deref() {
            Some(n) => validate::text("name", Some(n), validate::MAX_NAME_CHARS)?
                .trim()
                .to_string(),
            None => current.name.clone(),
        };
        let path = match input.path.as_deref() {
            Some(p) => {
                let p = validate::text("path", Some(p), validate::MAX_PATH_CHARS)?;
                if check_path {
                    existing_readable_dir(p.trim())?
                } else {
                    validate::project_dir(p.trim())?
                }
            }
            None => current.path.clone(),
        };
        let updated = self
            .h
            .store()
            .update_project(&current.id, &name, &path)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate(_) => CoreError::Invalid {
                    field: Some("name"),
                    message: format!(
                        "a project named {name:?} already exists in workspace {:?}",
                        current.workspace
                    ),
                },
                other => other.into(),
            })?
            .ok_or_else(|| CoreError::NotFound("project not found".into()))?;
        tracing::info!(project = %updated.id, "project updated");
        Ok(updated)
    }

    /// The Harness tasks that `harness run` (supervised mode) created for the
    /// plan tasks of this project, by plan task id, newest first. A supervised
    /// task carries its plan task's id in its agent environment
    /// ([`PLAN_TASK_ENV`]); a derived read, nothing extra is stored.
    pub async fn plan_runs(&self, project_id: &str) -> CoreResult<BTreeMap<String, Vec<TaskView>>> {
        let project = self.project(project_id).await?;
        let mut out: BTreeMap<String, Vec<TaskView>> = BTreeMap::new();
        for view in self.list_tasks().await? {
            if view.task.project_id.as_deref() != Some(project.id.as_str()) {
                continue;
            }
            if let Some(plan_id) = view.task.agent.env.get(PLAN_TASK_ENV).cloned() {
                out.entry(plan_id).or_default().push(view);
            }
        }
        for runs in out.values_mut() {
            runs.sort_by_key(|r| std::cmp::Reverse(r.task.created_at));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::existing_readable_dir;

    #[test]
    fn checks_existence_kind_and_readability() {
        let dir = std::env::temp_dir();
        assert!(existing_readable_dir(&dir.display().to_string()).is_ok());
        assert!(existing_readable_dir("/definitely/not/here-15").is_err());
        assert!(existing_readable_dir("relative/path").is_err());
        let file = dir.join(format!("harness-project-check-{}", std::process::id()));
        std::fs::write(&file, b"x").ok();
        let err = existing_readable_dir(&file.display().to_string());
        std::fs::remove_file(&file).ok();
        assert!(err.is_err());
    }
}
