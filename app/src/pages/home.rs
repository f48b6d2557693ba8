use leptos::prelude::*;

use crate::api::get_overview;

#[component]
pub fn HomePage() -> impl IntoView {
    let data = Resource::new(|| (), |_| get_overview());
    view! {
        <h1>"Harness"</h1>
        <p class="lead">
            "Agents that work unattended, park when blocked, and resume the moment you answer."
        </p>
        <Suspense fallback=|| view! { <p>"…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(o) => view! {
                        <p class="summary">
                            <a href="/harness" id="pending-link">
                                {format!("{} pending question(s)", o.pending)}
                            </a>
                            {format!(" · {} task(s)", o.tasks)}
                        </p>
                    }.into_any(),
                    Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}
