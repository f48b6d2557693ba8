//! Change events, published after the transaction that caused them commits.
//! The live notification center (SSE) and the terminal layer subscribe.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum HarnessEvent {
    /// A message was created or changed state.
    #[serde(rename_all = "camelCase")]
    MessageChanged { id: String, task_id: String },
    /// A message was deleted (dismissed).
    #[serde(rename_all = "camelCase")]
    MessageDeleted { id: String, task_id: String },
    /// A task or its executions changed (created, parked, resumed).
    #[serde(rename_all = "camelCase")]
    TaskChanged { task_id: String },
    /// A delivery into an agent's terminal was queued or changed state.
    #[serde(rename_all = "camelCase")]
    DeliveryChanged {
        id: String,
        task_id: String,
        message_id: Option<String>,
    },
}
