//! The task page's agent state: the state in words, since when, its
//! reason, and the screen lines that show it (monospace, bounded,
//! scrollable).

use leptos::prelude::*;

use crate::{
    agent_state::AgentStateBadge, api::AgentStateRow, components::TimeCell, i18n::use_locale,
};

/// The "needs you" mark of a task whose agent needs a person.
#[component]
pub fn NeedsYouMark() -> impl IntoView {
    let l = use_locale();
    view! { <span class="badge needs-you" data-needs-you="true">{l.t("tasks.needs_you")}</span> }
}

#[component]
pub fn TaskAgentState(state: AgentStateRow) -> impl IntoView {
    let l = use_locale();
    let needs_you = state.needs_you;
    let lines = (!state.lines.is_empty()).then(|| state.lines.join("\n"));
    let AgentStateRow {
        state: name,
        label,
        severity,
        reason,
        since_ms: since,
        ..
    } = state;
    view! {
        <section aria-labelledby="agent-state-h" id="task-agent-state"
            data-agent-state=name.as_str() data-needs-you=needs_you.to_string()>
            <h2 id="agent-state-h">{l.t("tasks.agent_state")}</h2>
            <p class="agent-state-line">
                <AgentStateBadge state=name label severity reason=reason.clone() />
                {needs_you.then(|| view! { " " <NeedsYouMark /> })}
                " " <span class="sub">{l.t("tasks.agent_since")} " " <TimeCell ms=Some(since) /></span>
            </p>
            <p id="task-agent-reason">{reason}</p>
            {lines.map(|text| view! {
                // Focusable: a keyboard can scroll it.
                <pre class="agent-screen" id="task-agent-lines" tabindex="0"
                    aria-label=l.t("tasks.agent_screen")>{text}</pre>
            })}
        </section>
    }
}
