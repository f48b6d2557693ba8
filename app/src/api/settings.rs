//! Settings → Notifications: the notify targets (channels).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetRow {
    pub label: String,
    pub gateway: String,
    pub dest: Option<String>,
    pub scope: String,
    pub active: bool,
}

#[server(prefix = "/sfn", endpoint = "notify_targets")]
pub async fn notify_targets() -> Result<Vec<TargetRow>, ServerFnError> {
    let h = ssr::harness()?;
    let targets = h.notify_targets().await.map_err(ssr::to_sfn)?;
    Ok(targets
        .into_iter()
        .map(|t| TargetRow {
            label: t.label,
            gateway: t.gateway,
            dest: t.dest,
            scope: t.scope,
            active: t.active,
        })
        .collect())
}

#[server(prefix = "/sfn", endpoint = "add_notify_target")]
pub async fn add_notify_target(
    label: String,
    gateway: String,
    dest: Option<String>,
    scope: String,
) -> Result<usize, ServerFnError> {
    use harness_core::settings::NotifyTarget;
    let h = ssr::harness()?;
    let mut targets = h.notify_targets().await.map_err(ssr::to_sfn)?;
    targets.push(NotifyTarget {
        id: None,
        label: label.trim().to_string(),
        gateway,
        downstream: None,
        dest: dest.filter(|d| !d.trim().is_empty()),
        profile: None,
        scope,
        active: true,
    });
    let saved = h.set_notify_targets(targets).await.map_err(ssr::to_sfn)?;
    Ok(saved.len())
}

#[server(prefix = "/sfn", endpoint = "remove_notify_target")]
pub async fn remove_notify_target(index: usize) -> Result<usize, ServerFnError> {
    let h = ssr::harness()?;
    let mut targets = h.notify_targets().await.map_err(ssr::to_sfn)?;
    if index >= targets.len() {
        return Err(ssr::to_sfn(harness_core::CoreError::NotFound(
            "No such notify target".into(),
        )));
    }
    targets.remove(index);
    let saved = h.set_notify_targets(targets).await.map_err(ssr::to_sfn)?;
    Ok(saved.len())
}
