//! Home: the first step (a demo agent that asks you something, or a task of
//! your own), what is running, what waits for you, and
//! the three steps to connect an agent of your own over MCP.

use leptos::{form::ActionForm, prelude::*};

use crate::{
    alerts::{NotificationControl, PageTitle},
    api::{StartDemo, get_overview, list_tasks},
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
    // Owned by the page: the first-step card is redrawn on every live tick
    // (it sits in the overview's Suspense), the action must outlive it.
    let demo = ServerAction::<StartDemo>::new();
    // Started: to its task page, where its question and terminal are.
    let navigate = leptos_router::hooks::use_navigate();
    Effect::new(move |_| {
        if let Some(Ok(id)) = demo.value().get() {
            navigate(&format!("/tasks/{id}"), Default::default());
        }
    });
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
                        // A newcomer's first action; later it is one card among the others.
                        <FirstStep first=o.tasks == 0 demo />
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
                        .filter(|t| {
                            matches!(
                                t.run_state,
                                harness_types::RunState::Running | harness_types::RunState::Waiting
                            )
                        })
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
        <details class="card" id="connect-steps">
            <summary><h2 id="connect-h">{l.t("home.connect")}</h2></summary>
            <p class="sub">{l.t("home.connect_help")}</p>
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
        </details>
        <section class="card" aria-labelledby="alerts-home-h">
            <h2 id="alerts-home-h">{l.t("alerts.heading")}</h2>
            <NotificationControl />
        </section>
    }
    .into_any()
}

/// "Create your first task": start the demo agent (it asks you a question
/// at once, so the whole loop shows in a minute) or open the task form.
#[component]
fn FirstStep(first: bool, demo: ServerAction<StartDemo>) -> impl IntoView {
    let l = use_locale();
    let error = move || {
        demo.value().get().and_then(Result::err).map(|e| {
            view! { <p class="error" role="alert" id="demo-error">{error_text(&e)}</p> }
        })
    };
    view! {
        <section class="card first-step" class:first=first aria-labelledby="first-step-h" id="first-step">
            <h2 id="first-step-h">{l.t(if first { "home.first_title" } else { "home.start_title" })}</h2>
            <p>{l.t("home.first_help")}</p>
            <div class="first-actions">
                <ActionForm action=demo attr:class="inline">
                    <button type="submit" class="primary big" id="start-demo"
                        disabled=move || demo.pending().get()>
                        {l.t("home.start_demo")}
                    </button>
                </ActionForm>
                <a class="button ghost big" href="/tasks#create-task" id="create-own-task">{l.t("home.own_task")}</a>
            </div>
            <p class="sub">{l.t("home.demo_hint")}</p>
            {error}
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
