//! Adding a project from the web UI (issue 15): unlike the REST API (which
//! accepts a directory that will be created later), a person picking a path
//! gets it checked now — it exists, is a directory, and can be read.

use crate::{CoreError, CoreResult, Harness, model::Project, tasks::CreateProject, validate};

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

impl Harness {
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
