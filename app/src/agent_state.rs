//! An agent's state as a small badge, coloured by how bad it is; its words
//! and severity come with the row (`api::agent_states`), said on the server
//! in the page's language.

use harness_types::{AgentStateName, Severity};
use leptos::prelude::*;

/// `state`: its name (`data-agent-state`), `label`: its words, `severity`:
/// how bad it is (its colour), `reason`: the tooltip.
#[component]
pub fn AgentStateBadge(
    state: AgentStateName,
    label: String,
    severity: Severity,
    reason: String,
) -> impl IntoView {
    let severity = severity.as_str();
    let class = format!("badge agent-state sev-{severity}");
    view! {
        <span class=class data-agent-state=state.as_str() data-severity=severity title=reason>
            {label}
        </span>
    }
}
