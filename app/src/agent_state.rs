//! An agent's state as a small badge, coloured by how bad it is; its words
//! and severity come with the row (`api::agent_states`), said on the server
//! in the page's language.

use leptos::prelude::*;

/// `state`: its name (`data-agent-state`), `label`: its words, `severity`:
/// `ok`, `wait`, `idle`, `warn` or `bad`, `reason`: the tooltip.
#[component]
pub fn AgentStateBadge(
    state: String,
    label: String,
    severity: String,
    reason: String,
) -> impl IntoView {
    let class = format!("badge agent-state sev-{severity}");
    view! {
        <span class=class data-agent-state=state data-severity=severity title=reason>
            {label}
        </span>
    }
}
