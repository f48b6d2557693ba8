//! What a started agent gets besides its argv: its allow-listed
//! environment and the snapshot of its approval policy.

use std::{
    collections::{BTreeMap, HashMap},
    os::unix::fs::DirBuilderExt,
    path::PathBuf,
    sync::Mutex,
};

use harness_core::model::{Execution, TaskView};

use super::{Terminals, providers};

/// The secret values of the environment each task's agent was last started
/// with (`harness_core::redact::secret_env_values`: its token, the task's
/// own variables): what the evidence of its asks is redacted of (docs/evidence.md).
/// Kept in memory only.
#[derive(Default)]
pub(super) struct AgentSecrets(Mutex<HashMap<String, Vec<String>>>);

impl AgentSecrets {
    pub(super) fn set(&self, task_id: &str, env: &BTreeMap<String, String>) {
        let values = harness_core::redact::secret_env_values(env);
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(task_id.to_string(), values);
    }

    pub(super) fn of(&self, task_id: &str) -> Vec<String> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(task_id).cloned().unwrap_or_default()
    }
}

impl Terminals {
    /// What the task's terminal shows now, with the secrets of its agent's
    /// environment (the core's `AgentRuntime::screen`).
    pub(super) fn raw_screen(&self, task_id: &str) -> Option<harness_core::evidence::RawScreen> {
        let session = self.session(task_id)?;
        Some(harness_core::evidence::RawScreen {
            text: session.screen_text().text,
            secrets: self.inner.secrets.of(task_id),
        })
    }

    pub(super) fn environment(
        &self,
        view: &TaskView,
        execution: &Execution,
        token: &str,
    ) -> BTreeMap<String, String> {
        let mut env = harness_pty::base_env();
        // The task's own variables first, so Harness's cannot be overridden.
        env.extend(view.task.agent.env.clone());
        let base = &self.inner.config.base_url;
        let t = &view.task;
        env.insert("TOWER_TASK_ID".into(), t.id.clone());
        env.insert("TOWER_EXECUTION_ID".into(), execution.id.clone());
        env.insert("TOWER_TASK_TITLE".into(), t.title.clone());
        env.insert("TOWER_API_URL".into(), base.clone());
        env.insert("TOWER_MCP_URL".into(), format!("{base}/mcp"));
        env.insert("TOWER_API_TOKEN".into(), token.to_string());
        env.insert(
            "TOWER_SIGNAL_DIR".into(),
            self.inner.config.signal_dir.display().to_string(),
        );
        if t.parent_task_id.is_some() {
            env.insert("TOWER_HAS_PARENT".into(), "1".into());
        }
        env
    }

    /// The task's effective approval policy written into the run directory
    /// (`approval-policy.json`, private); `None` when it cannot be (the
    /// hook then falls back to the built-in rules offline).
    pub(super) async fn approval_snapshot(
        &self,
        view: &TaskView,
        run_dir: &std::path::Path,
    ) -> Option<PathBuf> {
        use harness_core::approvals::offline;
        let t = &view.task;
        let policy = match self
            .inner
            .harness
            .approvals()
            .effective_policy(t.project_id.as_deref())
            .await
        {
            Ok(p) => p,
            Err(err) => {
                tracing::warn!(%err, task_id = %t.id, "approval policy not snapshotted");
                return None;
            }
        };
        let text = offline::snapshot_json(&t.id, t.project_id.as_deref(), &policy);
        let written = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(run_dir)
            .and_then(|()| providers::write_private(&run_dir.join(offline::SNAPSHOT_FILE), &text));
        match written {
            Ok(path) => Some(path),
            Err(err) => {
                tracing::warn!(%err, task_id = %t.id, "approval policy not snapshotted");
                None
            }
        }
    }
}
