//! Home: what is running, what waits for you, and the three steps to connect
//! an agent (issue 15 item 8).

use leptos::prelude::*;

use crate::{
    alerts::{NotificationControl, PageTitle},
    api::{get_overview, list_tasks},
    components::error_text,
    i18n::use_locale,
    live::use_live,
    pages::tasks::RunBadge,
};

#[component]
pub fn HomePage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let data = Resource::new(move || live.tick.get(), |_| get_overview());
    let tasks = Resource::new(move || live.tick.get(), |_| list_tasks());
    // The MCP URL as this browser reaches the server (known after hydration).
    let origin = RwSignal::new(String::new());
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(o) = web_sys::window().and_then(|w| w.location().origin().ok()) {
            origin.set(o);
        }
    });
    let mcp_url = move || format!("{}/mcp", origin.get());
    view! {
        <PageTitle text=l.t("home.title") />
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
        <section class="card" aria-labelledby="active-h" id="home-active">
            <h2 id="active-h">{l.t("home.active")}</h2>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let active: Vec<_> = tasks
                        .await
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|t| t.run_state == "running" || t.run_state == "waiting")
                        .collect();
                    if active.is_empty() {
                        return view! { <p class="sub" id="home-nothing">{l.t("home.nothing_running")}</p> }.into_any();
                    }
                    view! {
                        <ul class="active-list">
                            {active.into_iter().map(|t| view! {
                                <li data-task-id=t.id.clone()>
                                    <a href=format!("/tasks/{}", t.id)>{t.title}</a> " "
                                    <RunBadge state=t.run_state exit_code=t.exit_code />
                                </li>
                            }).collect_view()}
                        </ul>
                    }
                    .into_any()
                })}
            </Transition>
        </section>
        <section class="card" aria-labelledby="connect-h" id="connect-steps">
            <h2 id="connect-h">{l.t("home.connect")}</h2>
            <ol class="steps">
                <li>
                    {l.t("home.step_url")} " "
                    <code id="mcp-url">{mcp_url}</code> " "
                    <CopyButton text=Signal::derive(mcp_url) />
                </li>
                <li>
                    {l.t("home.step_token")} " "
                    <code>"harness serve"</code> " " {l.t("home.step_token_more")}
                </li>
                <li>
                    {l.t("home.step_add")}
                    <pre class="full copyable" id="mcp-add">{move || format!(
                        "claude mcp add --transport http harness {} --header \"Authorization: Bearer $(cat <data-dir>/secrets/admin.token)\"",
                        mcp_url()
                    )}</pre>
                    <p class="sub">{l.t("home.step_tasks")} " " <a href="/tasks">{l.t("nav.tasks")}</a></p>
                </li>
            </ol>
        </section>
        <section class="card" aria-labelledby="alerts-home-h">
            <h2 id="alerts-home-h">{l.t("alerts.heading")}</h2>
            <NotificationControl />
        </section>
    }
    .into_any()
}

/// Copies `text` to the clipboard (after hydration).
#[component]
fn CopyButton(text: Signal<String>) -> impl IntoView {
    let l = use_locale();
    let copied = RwSignal::new(false);
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(w) = web_sys::window() {
            let _ = w.navigator().clipboard().write_text(&text.get_untracked());
            copied.set(true);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = text;
    };
    view! {
        <button type="button" class="ghost small" on:click=copy aria-label=l.t("home.copy_url")>
            {move || l.t(if copied.get() { "home.copied" } else { "home.copy" })}
        </button>
    }
}
