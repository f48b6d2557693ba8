//! An agent's state as a small badge, coloured by how bad it is; its words
//! and severity come with the row (`api::agent_states`), said on the server
//! in the page's language.

use leptos::prelude::*;

use crate::api::AgentStateRow;

#[component]
pub fn AgentStateBadge(state: AgentStateRow) -> impl IntoView {
    let AgentStateRow {
        state,
        label,
        severity,
        reason,
        ..
    } = state;
    let class = format!("badge agent-state sev-{severity}");
    view! {
        <span class=class data-agent-state=state data-severity=severity title=reason>
            {label}
        </span>
    }
}
