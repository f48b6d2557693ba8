use leptos::prelude::*;

use crate::{api::get_overview, components::error_text, i18n::use_locale};

#[component]
pub fn HomePage() -> impl IntoView {
    let l = use_locale();
    let data = Resource::new(|| (), |_| get_overview());
    view! {
        <h1>"Harness"</h1>
        <p class="lead">{l.t("home.lead")}</p>
        <Suspense fallback=move || view! { <p>{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(o) => view! {
                        <p class="summary">
                            <a href="/harness" id="pending-link">
                                {l.t("home.pending").replace("{n}", &o.pending.to_string())}
                            </a>
                            " · "
                            <a href="/tasks">{l.t("home.tasks").replace("{n}", &o.tasks.to_string())}</a>
                        </p>
                    }.into_any(),
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}
