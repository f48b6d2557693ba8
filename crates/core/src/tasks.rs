//! Projects, tasks and executions.

use chrono::Utc;
use serde::Deserialize;

use crate::{
    CoreError, CoreResult, Harness,
    events::HarnessEvent,
    ids,
    model::{AgentConfig, Execution, ExecutionStatus, Project, Provider, TaskView},
    store::{NewExecution, NewProject, NewTask, StoreError},
    validate,
};

/// The tasks service (`Harness::tasks`): projects, tasks and their
/// executions (here), a project's checked creation and edits
/// (`crate::project_check`), starting and stopping a task's agent
/// (`crate::control`), unattended mode (`crate::unattended`) and the
/// Workbench task with its runtime (`crate::workbench`,
/// `crate::workbench_runtime`).
#[derive(Clone, Copy)]
pub struct Tasks<'h> {
    pub(crate) h: &'h Harness,
}

pub const DEFAULT_WORKSPACE: &str = "default";
/// The longest session id an agent's hook reports.
pub const MAX_SESSION_ID_CHARS: usize = 256;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateProject {
    pub name: Option<String>,
    /// An existing directory: absolute and canonical.
    #[cfg_attr(feature = "openapi", schema(example = "/tmp"))]
    pub path: Option<String>,
    pub workspace: Option<String>,
}

/// Agent configuration as submitted (provider is a free string until validated).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInput {
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::model::Provider>))]
    pub provider: Option<String>,
    pub command: Option<Vec<String>>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// `command` agents only: started again after a reboot interrupted
    /// it, when the task is unattended (default false; docs/operating.md, "After a reboot").
    #[serde(default)]
    pub restart_on_interrupt: Option<bool>,
    /// This task's own automatic recovery settings over its project's and
    /// the global ones (docs/agent-states.md, "Automatic recovery").
    #[serde(default)]
    pub recovery: Option<crate::model::RecoveryOverride>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTask {
    pub title: Option<String>,
    pub description: Option<String>,
    pub project_id: Option<String>,
    pub parent_task_id: Option<String>,
    pub agent: Option<AgentInput>,
    /// The gateway work request this task is created for (the bound
    /// Workbench only): linked with the task in one transaction, so a
    /// retry returns the same task.
    #[serde(default)]
    pub gateway_inbound_id: Option<String>,
}

const SOURCE_HEADING: &str = "## 来源";

/// The derived-task marker (docs/tower-workbench.md §8): a child's description ends
/// with a `## 来源` section naming its parent; an existing section is kept.
pub fn with_source_section(description: Option<&str>, parent: Option<(&str, &str)>) -> String {
    let body = description.unwrap_or_default().trim_end();
    if body.contains(SOURCE_HEADING) {
        return body.to_string();
    }
    let source = match parent {
        Some((title, id)) => format!("- 渠道：父任务派生\n- 父任务：{title}（id: {id}）"),
        None => "无".to_string(),
    };
    if body.is_empty() {
        format!("{SOURCE_HEADING}\n\n{source}")
    } else {
        format!("{body}\n\n{SOURCE_HEADING}\n\n{source}")
    }
}

pub(crate) fn agent_config(input: Option<AgentInput>) -> CoreResult<AgentConfig> {
    let input = input.unwrap_or_default();
    let provider = match input.provider.as_deref().map(str::trim) {
        None | Some("") => Provider::Claude,
        Some(p) => Provider::parse(p).ok_or_else(|| {
            CoreError::invalid(
                "agent.provider",
                format!("unknown provider {p:?}: expected claude, codex or command"),
            )
        })?,
    };
    let command = match input.command {
        Some(argv) if argv.is_empty() => None,
        Some(argv) => {
            if argv.len() > 256 || argv.iter().any(|a| a.len() > 8192) {
                return Err(CoreError::invalid("agent.command", "command too large"));
            }
            if argv[0].trim().is_empty() {
                return Err(CoreError::invalid("agent.command", "command[0] is empty"));
            }
            Some(argv)
        }
        None => None,
    };
    if provider == Provider::Command && command.is_none() {
        return Err(CoreError::invalid(
            "agent.command",
            "provider \"command\" needs a command: the line to run (REST: an argv array, e.g. [\"sh\", \"-c\", \"make test\"])",
        ));
    }
    if input.env.len() > 128 {
        return Err(CoreError::invalid(
            "agent.env",
            "too many variables (at most 128)",
        ));
    }
    for (name, value) in &input.env {
        if !validate::env_name(name) {
            return Err(CoreError::invalid(
                "agent.env",
                format!("invalid environment variable name {name:?}"),
            ));
        }
        if name.starts_with("TOWER_") {
            return Err(CoreError::invalid(
                "agent.env",
                format!("{name} is set by Harness and cannot be overridden"),
            ));
        }
        if value.len() > 32 * 1024 {
            return Err(CoreError::invalid(
                "agent.env",
                format!("value of {name} too long"),
            ));
        }
    }
    let cwd = validate::optional_text("agent.cwd", input.cwd.as_deref(), validate::MAX_PATH_CHARS)?;
    let restart_on_interrupt = input.restart_on_interrupt.unwrap_or(false);
    if restart_on_interrupt && provider != Provider::Command {
        return Err(CoreError::invalid(
            "agent.restartOnInterrupt",
            "restartOnInterrupt is for provider \"command\" only: Claude Code and Codex \
             resume their own session after a reboot",
        ));
    }
    if let Some(o) = &input.recovery {
        crate::agent_actions::policy::check(o).map_err(|e| match e {
            CoreError::Invalid {
                field: Some(_),
                message,
            } => CoreError::invalid("agent.recovery", message),
            other => other,
        })?;
    }
    Ok(AgentConfig {
        provider,
        command,
        cwd,
        env: input.env,
        restart_on_interrupt,
        recovery: input
            .recovery
            .filter(|o| *o != crate::model::RecoveryOverride::default()),
    })
}

impl Tasks<'_> {
    pub async fn create_project(&self, input: CreateProject) -> CoreResult<Project> {
        let name = validate::text("name", input.name.as_deref(), validate::MAX_NAME_CHARS)?;
        let path = validate::text("path", input.path.as_deref(), validate::MAX_PATH_CHARS)?;
        let path = validate::project_dir(&path)?;
        let workspace = validate::optional_text(
            "workspace",
            input.workspace.as_deref(),
            validate::MAX_NAME_CHARS,
        )?
        .unwrap_or_else(|| DEFAULT_WORKSPACE.to_string());
        let now = Utc::now();
        let workspace_id = self
            .h
            .store()
            .ensure_workspace(&ids::new_id(), workspace.trim(), now)
            .await?;
        self.h
            .store()
            .create_project(NewProject {
                id: ids::new_id(),
                workspace_id,
                workspace_name: workspace.trim().to_string(),
                name: name.trim().to_string(),
                path: path.trim().to_string(),
                now,
            })
            .await
            .map_err(|e| match e {
                StoreError::Duplicate(_) => CoreError::Conflict(format!(
                    "a project named {:?} already exists in workspace {:?}",
                    name.trim(),
                    workspace.trim()
                )),
                other => other.into(),
            })
    }

    pub async fn list_projects(&self) -> CoreResult<Vec<Project>> {
        Ok(self.h.store().list_projects().await?)
    }

    /// The task's live (RUNNING or PAUSED) execution, if any.
    pub async fn live_execution(&self, task_id: &str) -> CoreResult<Option<Execution>> {
        Ok(self.h.store().live_execution(task_id).await?)
    }

    /// The execution a hook's report is about: the one `who` names (an
    /// agent's token only its own, `Identity::bind_execution`), else the
    /// task's live one; `None` when the task has none.
    pub async fn reported_execution(
        &self,
        who: &crate::auth::Identity,
        task_id: &str,
        named: Option<&str>,
    ) -> CoreResult<Option<String>> {
        match who.bind_execution(named)? {
            Some(named) => Ok(Some(named)),
            None => Ok(self.live_execution(task_id).await?.map(|e| e.id)),
        }
    }

    /// The node a task's owed terminal work must be done on: its live
    /// execution's node (`None`: no live execution — any node may resume it).
    /// Work rows record this, never the node that received the request.
    pub(crate) async fn execution_node(&self, task_id: &str) -> CoreResult<Option<String>> {
        Ok(self
            .h
            .store()
            .live_execution(task_id)
            .await?
            .and_then(|e| e.node_id))
    }

    /// The task's agent runs on another node than this one (its live
    /// execution names that node).
    pub async fn runs_on_another_node(&self, task_id: &str) -> CoreResult<bool> {
        Ok(self
            .execution_node(task_id)
            .await?
            .is_some_and(|node| node != self.h.config().node_id))
    }

    pub async fn project(&self, id: &str) -> CoreResult<Project> {
        let id = validate::cuid("id", id.trim())?;
        self.h
            .store()
            .get_project(&id)
            .await?
            .ok_or_else(|| CoreError::NotFound("project not found".into()))
    }

    /// Create a task. A parent makes it a derived child (its description gets
    /// the `## 来源` marker naming the parent).
    ///
    /// A link to a gateway message (`gatewayInboundId`) is made only by the
    /// bound Workbench's own request, which [`Self::create_task_as`] checks;
    /// here it is refused (400 naming it) instead of written unchecked.
    pub async fn create_task(&self, input: CreateTask) -> CoreResult<TaskView> {
        if input.gateway_inbound_id.is_some() {
            return Err(CoreError::invalid(
                "gatewayInboundId",
                "only the project's Workbench links a task to a gateway message \
                 (its own create_task over MCP)",
            ));
        }
        self.create_checked_task(input).await
    }

    /// [`Self::create_task`] once the gateway link (if any) was checked.
    pub(crate) async fn create_checked_task(&self, input: CreateTask) -> CoreResult<TaskView> {
        let title = validate::text("title", input.title.as_deref(), validate::MAX_TITLE_CHARS)?;
        let description = validate::optional_text(
            "description",
            input.description.as_deref(),
            validate::MAX_DESCRIPTION_CHARS,
        )?;
        let project_id = match input.project_id.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(id) => Some(validate::cuid("projectId", id)?),
        };
        let parent = match input.parent_task_id.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(id) => {
                let id = validate::cuid("parentTaskId", id)?;
                let parent =
                    self.h.store().get_task(&id).await?.ok_or_else(|| {
                        CoreError::invalid("parentTaskId", "parent task not found")
                    })?;
                Some(parent.task)
            }
        };
        let agent = agent_config(input.agent)?;
        let description = match &parent {
            Some(p) => Some(with_source_section(
                description.as_deref(),
                Some((&p.title, &p.id)),
            )),
            None => description,
        };
        let new = NewTask {
            id: ids::new_id(),
            title: title.trim().to_string(),
            description,
            project_id,
            parent_task_id: parent.map(|p| p.id),
            agent,
            now: Utc::now(),
        };
        if let Some(inbound) = input.gateway_inbound_id.as_deref() {
            // Checked by `create_task_as` (the bound Workbench's own request).
            let (id, created) = self
                .h
                .store()
                .create_linked_task(new, inbound)
                .await
                .map_err(|e| match e {
                    StoreError::MissingReference(_) => {
                        CoreError::invalid("projectId", "project not found")
                    }
                    other => other.into(),
                })?;
            if created {
                self.h.publish(HarnessEvent::TaskChanged {
                    task_id: id.clone(),
                });
            }
            return self.get_task(&id).await;
        }
        let view = self.h.store().create_task(new).await.map_err(|e| match e {
            StoreError::MissingReference(_) => CoreError::invalid("projectId", "project not found"),
            other => other.into(),
        })?;
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: view.task.id.clone(),
        });
        Ok(view)
    }

    pub async fn get_task(&self, task_id: &str) -> CoreResult<TaskView> {
        let task_id = validate::task_id(Some(task_id))?;
        self.h
            .store()
            .get_task(&task_id)
            .await?
            .map(|v| self.with_runtime_facts(v))
            .ok_or_else(|| CoreError::NotFound("Task not found".into()))
    }

    pub async fn list_tasks(&self) -> CoreResult<Vec<TaskView>> {
        let views = self.h.store().list_tasks(1000).await?;
        Ok(views
            .into_iter()
            .map(|v| self.with_runtime_facts(v))
            .collect())
    }

    /// What the runtime knows of a live execution and the store does not:
    /// an agent in a holder this server cannot read.
    fn with_runtime_facts(&self, mut view: TaskView) -> TaskView {
        if let (Some(runtime), Some(exec)) = (self.h.runtime(), view.execution.as_mut())
            && matches!(
                exec.status,
                ExecutionStatus::Running | ExecutionStatus::Paused
            )
        {
            exec.unreadable_holder = runtime.unreadable_holder(&exec.id);
        }
        view
    }

    /// Record a new RUNNING execution of the task and mint its agent token.
    /// The token is returned once, in clear; only its hash is stored.
    pub async fn begin_execution(&self, task_id: &str) -> CoreResult<(Execution, String)> {
        let task_id = validate::task_id(Some(task_id))?;
        let token = ids::new_token("hxa_");
        let execution = self
            .h
            .store()
            .create_execution(NewExecution {
                id: ids::new_id(),
                task_id: task_id.clone(),
                token_hash: ids::token_hash(&token),
                status: ExecutionStatus::Running,
                node_id: Some(self.h.config().node_id.clone()),
                now: Utc::now(),
            })
            .await
            .map_err(|e| match e {
                StoreError::MissingReference(_) => CoreError::NotFound("Task not found".into()),
                // At most one live execution per task (a unique index): a
                // concurrent start won.
                StoreError::Duplicate(_) => CoreError::Conflict(
                    "the task's agent is already running (a concurrent start won)".into(),
                ),
                other => other.into(),
            })?;
        self.h.publish(HarnessEvent::TaskChanged { task_id });
        Ok((execution, token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_section_for_children_and_kept_when_present() {
        let s = with_source_section(Some("do x"), Some(("Parent", "cabc")));
        assert!(s.starts_with("do x\n\n## 来源\n\n- 渠道：父任务派生"));
        assert!(s.contains("- 父任务：Parent（id: cabc）"));
        let kept = with_source_section(Some("x\n\n## 来源\n\nfeishu"), Some(("P", "c1")));
        assert_eq!(kept, "x\n\n## 来源\n\nfeishu");
        assert_eq!(with_source_section(None, None), "## 来源\n\n无");
    }

    #[test]
    fn agent_validation() {
        assert_eq!(agent_config(None).unwrap().provider, Provider::Claude);
        let err = agent_config(Some(AgentInput {
            provider: Some("command".into()),
            ..Default::default()
        }))
        .unwrap_err();
        assert_eq!(err.field(), Some("agent.command"));
        let err = agent_config(Some(AgentInput {
            provider: Some("gpt".into()),
            ..Default::default()
        }))
        .unwrap_err();
        assert_eq!(err.field(), Some("agent.provider"));
        let mut env = std::collections::BTreeMap::new();
        env.insert("TOWER_TASK_ID".to_string(), "x".to_string());
        assert!(
            agent_config(Some(AgentInput {
                env,
                ..Default::default()
            }))
            .is_err()
        );
    }
}

/// Outcome of reporting an agent's session id (first write wins).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecorded {
    pub session_id: String,
    /// True when an earlier report had already set a (possibly different) id.
    pub skipped: bool,
}

impl Tasks<'_> {
    /// Record the provider session id an agent reported (SessionStart hook),
    /// on the given execution or the task's newest live one. The first write
    /// wins; the resume path uses it.
    pub async fn record_session(
        &self,
        task_id: &str,
        execution_id: Option<&str>,
        session_id: Option<&str>,
    ) -> CoreResult<SessionRecorded> {
        let session_id = validate::text("sessionId", session_id, MAX_SESSION_ID_CHARS)?;
        let session_id = session_id.trim().to_string();
        let execution_id = match execution_id {
            Some(id) => id.to_string(),
            None => {
                let task_id = validate::task_id(Some(task_id))?;
                self.h
                    .store()
                    .live_execution(&task_id)
                    .await?
                    .ok_or_else(|| CoreError::NotFound("No running execution".into()))?
                    .id
            }
        };
        let stored = self
            .h
            .store()
            .set_session_id(&execution_id, &session_id)
            .await?
            .ok_or_else(|| CoreError::NotFound("No running execution".into()))?;
        Ok(SessionRecorded {
            skipped: stored != session_id,
            session_id: stored,
        })
    }
}

impl Tasks<'_> {
    /// Record that an execution ended (process exit, stop, spawn failure).
    pub async fn finish_execution(
        &self,
        task_id: &str,
        execution_id: &str,
        status: ExecutionStatus,
        exit_code: Option<i64>,
        reason: &str,
    ) -> CoreResult<bool> {
        let changed = self
            .h
            .store()
            .finish_execution(execution_id, status, exit_code, reason, Utc::now())
            .await?;
        if changed {
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: task_id.to_string(),
            });
        }
        Ok(changed)
    }

    /// At server start: executions left live by the previous process are
    /// marked FAILED (reason `interrupted`), except `held` ones (their agents
    /// outlived the server in their holders and were re-attached); their
    /// tasks can be started or resumed again, and their OPEN asks stay
    /// answerable. Each is owed its reboot decision (`crate::reboot`: those
    /// of unattended tasks are resumed once).
    pub async fn interrupt_orphaned_executions(&self, held: &[String]) -> CoreResult<usize> {
        let tasks = self
            .h
            .store()
            .interrupt_live_executions(&self.h.config().node_id, held, Utc::now())
            .await?;
        if !tasks.is_empty() {
            tracing::warn!(
                count = tasks.len(),
                "executions interrupted by the previous shutdown"
            );
        }
        for task_id in &tasks {
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: task_id.clone(),
            });
        }
        Ok(tasks.len())
    }
}
