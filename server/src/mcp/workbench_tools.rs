//! MCP `ack_workbench_batch` / `heartbeat_workbench_batch` /
//! `resolve_workbench_batch` (tower-workbench.md §2.8): `{batchId,
//! leaseToken}`, bound to the calling terminal's task (the parent); the
//! rules are `harness_core::Harness::batch_transition`.

use std::sync::Arc;

use harness_core::{Harness, auth::Identity, inbox::BatchAction};
use rmcp::model::{JsonObject, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

pub const NAMES: [&str; 3] = [
    "ack_workbench_batch",
    "heartbeat_workbench_batch",
    "resolve_workbench_batch",
];

pub fn tools() -> Vec<Tool> {
    let schema = || {
        let Value::Object(map) = json!({
            "type": "object",
            "properties": {
                "batchId": {"type": "string", "minLength": 1, "maxLength": 128},
                "leaseToken": {"type": "string", "minLength": 1, "maxLength": 128}
            },
            "required": ["batchId", "leaseToken"]
        }) else {
            return Arc::new(JsonObject::new());
        };
        Arc::new(map)
    };
    vec![
        Tool::new(
            NAMES[0],
            "Acknowledge a durable Workbench batch typed into this terminal (call it right after reading).",
            schema(),
        ),
        Tool::new(
            NAMES[1],
            "Renew the lease of an acknowledged Workbench batch you are still working on (every two minutes).",
            schema(),
        ),
        Tool::new(
            NAMES[2],
            "Resolve an acknowledged Workbench batch once every item is handled or durably delegated.",
            schema(),
        ),
    ]
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Args {
    batch_id: String,
    lease_token: String,
}

pub async fn call(h: &Harness, who: &Identity, name: &str, a: JsonObject) -> Result<Value, String> {
    let Identity::Agent { task_id, .. } = who else {
        return Err(format!(
            "{name} must run inside the bound Workbench terminal"
        ));
    };
    let a: Args =
        serde_json::from_value(Value::Object(a)).map_err(|e| format!("invalid arguments: {e}"))?;
    let action = match name {
        "ack_workbench_batch" => BatchAction::Ack,
        "heartbeat_workbench_batch" => BatchAction::Heartbeat,
        _ => BatchAction::Resolve,
    };
    h.batch_transition(task_id, &a.batch_id, &a.lease_token, action)
        .await
        .map_err(|e| e.client_message())
}
