//! The terminal actions of an agent that runs on another node, done by that
//! node: the owner is found by `Cluster::placement` (the
//! live execution's node, that node's registry row) and called over a
//! node-to-node call (`crate::node_call`); its answer — or its refusal, with
//! the same status class — is this node's answer. Never a second agent here.

use harness_core::{CoreError, CoreResult, cluster::Placement, model::Execution, validate};
use reqwest::Method;
use serde_json::json;

use super::{InputResult, Terminals, providers::StartMode};

/// What to do with a task whose agent is not in this process.
pub(super) enum Elsewhere {
    /// No agent anywhere else (or a dead node's, now interrupted): act here.
    Here,
    /// A live node runs it: forward to its URL.
    Forward(String),
}

impl Terminals {
    /// The placement of `task_id`'s agent (`Cluster::placement`).
    pub async fn placement(&self, task_id: &str) -> CoreResult<Placement> {
        let task_id = validate::task_id(Some(task_id))?;
        self.harness().cluster().placement(&task_id).await
    }

    /// Where an action on `task_id` (no terminal here) must happen. A dead
    /// node's execution is interrupted first; an unreachable node's is a 409.
    pub(super) async fn elsewhere(&self, task_id: &str) -> CoreResult<Elsewhere> {
        match self.harness().cluster().placement(task_id).await? {
            Placement::Free | Placement::Here(_) => Ok(Elsewhere::Here),
            Placement::Node { url, .. } => Ok(Elsewhere::Forward(url)),
            Placement::DeadNode { node_id, execution } => {
                tracing::warn!(task_id, node_id, execution_id = %execution.id,
                    "the agent's node stopped heart-beating: its execution is interrupted");
                self.harness()
                    .cluster()
                    .interrupt_dead_node_execution(task_id, &execution)
                    .await?;
                Ok(Elsewhere::Here)
            }
            Placement::Unreachable { node_id, .. } => Err(CoreError::Conflict(format!(
                "the task's agent runs on node {node_id}, which this node cannot reach \
                 (no URL registered: start it with --node-url)"
            ))),
        }
    }

    pub(super) async fn forward_start(
        &self,
        url: &str,
        task_id: &str,
        mode: &StartMode,
    ) -> CoreResult<Execution> {
        tracing::info!(task_id, node = url, "start forwarded to the agent's node");
        self.node_client()
            .call(
                url,
                Method::POST,
                &format!("/internal/node/tasks/{task_id}/start"),
                Some(&json!({ "mode": mode })),
            )
            .await
    }

    /// A start this draining node would have done: on another live,
    /// non-draining node with a URL (`Cluster::drain_target`), else a 409.
    pub(super) async fn start_elsewhere(
        &self,
        task_id: &str,
        mode: &StartMode,
    ) -> CoreResult<Execution> {
        let target = self.harness().cluster().drain_target().await?;
        let url = target.url.unwrap_or_default();
        tracing::info!(task_id, node_id = %target.id, "this node is draining: start passed on");
        self.forward_start(&url, task_id, mode).await
    }

    pub(super) async fn forward_stop(&self, url: &str, task_id: &str) -> CoreResult<bool> {
        let answer: serde_json::Value = self
            .node_client()
            .call(
                url,
                Method::POST,
                &format!("/internal/node/tasks/{task_id}/stop"),
                None,
            )
            .await?;
        Ok(answer["wasRunning"].as_bool().unwrap_or(false))
    }

    pub(super) async fn forward_input(
        &self,
        url: &str,
        task_id: &str,
        text: &str,
        submit: bool,
    ) -> CoreResult<InputResult> {
        let _: serde_json::Value = self
            .node_client()
            .call(
                url,
                Method::POST,
                &format!("/internal/node/tasks/{task_id}/input"),
                Some(&json!({ "text": text, "submit": submit })),
            )
            .await?;
        Ok(InputResult {
            task_id: task_id.to_string(),
            submitted: submit,
            deduped: false,
            delivery_id: None,
            delivery: None,
        })
    }

    pub(super) async fn forward_screen(
        &self,
        url: &str,
        task_id: &str,
    ) -> CoreResult<harness_pty::ScreenText> {
        self.node_client()
            .call(
                url,
                Method::GET,
                &format!("/internal/node/tasks/{task_id}/screen"),
                None,
            )
            .await
    }
}
