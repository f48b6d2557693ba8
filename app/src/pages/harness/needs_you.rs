//! "Needs you": the unattended agents that failed, stalled, are logged out
//! or hit their usage limit (`api::agents_needing_you`, the agents the
//! badge counts with the questions), each linked to its task. Nothing when
//! there are none.

use leptos::prelude::*;

use crate::{
    agent_state::AgentStateBadge, api::agents_needing_you, components::TimeCell, i18n::use_locale,
    live::use_live,
};

#[component]
pub fn NeedsYou() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let agents = Resource::new(move || live.tick.get(), |_| agents_needing_you());
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let rows = agents.await.ok().filter(|r| !r.is_empty())?;
                let count = rows.len();
                let items = rows
                    .into_iter()
                    .map(|a| view! {
                        <li data-task-id=a.task_id.clone()>
                            <a href=format!("/tasks/{}", a.task_id)>{a.title}</a>
                            " "
                            {a.state.zip(a.severity).map(|(state, severity)| view! {
                                <AgentStateBadge state label=a.label severity
                                    reason=a.what.clone() />
                            })}
                            " " <TimeCell ms=Some(a.since_ms) />
                            <span class="sub what">{a.what}</span>
                        </li>
                    })
                    .collect_view();
                Some(view! {
                    <section class="needs-you card" id="needs-you" aria-labelledby="needs-you-h"
                        data-count=count>
                        <h2 id="needs-you-h">{l.t("harness.needs_you")} " "
                            <span class="count">{count}</span></h2>
                        <p class="sub">{l.t("harness.needs_you_hint")}</p>
                        <ul>{items}</ul>
                    </section>
                })
            })}
        </Transition>
    }
}
