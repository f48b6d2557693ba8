//! The Harness web UI: Leptos components rendered on the server and hydrated
//! in the browser, plus the server functions they call. Server functions are
//! thin adapters over `harness_core` (compiled only with the `ssr` feature).

#![forbid(unsafe_code)]

pub mod agent_state;
pub mod alerts;
pub mod api;
pub mod approval_words;
pub mod choices;
pub mod components;
#[cfg(feature = "ssr")]
pub mod csp;
pub mod deferred;
pub mod delivery;
pub mod field_errors;
pub mod i18n;
pub mod keys;
mod lazy_pages;
pub mod live;
pub mod markdown;
pub mod outbound;
pub mod page_preloads;
pub mod pages;
pub mod receipt;
pub mod terminal;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::{
    Lazy, ParamSegment, SsrMode, StaticSegment,
    components::{A, Route, Router, Routes},
};

use crate::{
    api::waiting_count,
    i18n::use_locale,
    lazy_pages::{
        AnalyticsRoute, GatewayRoute, HomeRoute, PlanRoute, ProjectListRoute, ReportRoute,
        SettingsRoute, TaskDetailRoute, TaskListRoute,
    },
    live::provide_live,
};

/// Base name of the generated `pkg/{name}.js`, `_bg.wasm` and `.css` files;
/// the build appends a content hash (`harness-<hash>`), which the server
/// passes in `LeptosOptions::output_name`.
pub const OUTPUT_NAME: &str = "harness";

/// The HTML document around the app (server side only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    csp::apply();
    let locale = i18n::Locale::detect();
    // Server-rendered only (the shell is not hydrated), so the hashed name
    // never has to be known in the wasm.
    let stylesheet = format!("/{}/{}.css", options.site_pkg_dir, options.output_name);
    // The browser terminal is its own module, imported only by a page that
    // shows one (terminal.rs); this defines the loader it calls.
    let terminal_loader = terminal::loader_script(&format!(
        "/{}/{}_term",
        options.site_pkg_dir, options.output_name
    ));
    #[cfg(feature = "ssr")]
    let nonce = leptos::nonce::use_nonce().map(|n| n.to_string());
    #[cfg(not(feature = "ssr"))]
    let nonce = None::<String>;
    view! {
        <!DOCTYPE html>
        <html lang=locale.html_lang()>
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light dark" />
                <link rel="icon" href="/favicon.ico" />
                <link rel="stylesheet" id="leptos" href=stylesheet />
                <HydrationScripts options />
                <page_preloads::PreloadLinks nonce=nonce.clone() />
                <script nonce=nonce inner_html=terminal_loader></script>
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let locale = i18n::Locale::detect();
    provide_context(locale);
    let live = provide_live();
    alerts::use_page_name();
    let l = locale;
    // The phone menu (the nav collapses below 640 px): open or not.
    let nav_open = RwSignal::new(false);
    // The one "waits for you" count (open questions + approvals + agents
    // that need a person: the core's, as `GET /api/waiting`), live: in the
    // navigation, on the phone's collapsed menu button, and in the title.
    let pending = Resource::new(move || live.tick.get(), |_| waiting_count());
    view! {
        <Router>
            <a class="skip" href="#main">{l.t("nav.skip")}</a>
            <header class="topnav" data-live=move || if live.connected.get() { "open" } else { "off" }>
                <a href="/" class="brand">"Harness"</a>
                <NavToggle open=nav_open pending />
                <nav aria-label=l.t("nav.label") id="main-nav"
                    class:open=move || nav_open.get()
                    on:click=move |ev: leptos::ev::MouseEvent| {
                        // A link followed: the phone menu closes.
                        if event_target_is_link(&ev) {
                            nav_open.set(false);
                        }
                    }
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Escape" && nav_open.get_untracked() {
                            nav_open.set(false);
                            focus_nav_toggle();
                        }
                    }>
                    <A href="/harness">
                        {l.t("nav.harness")}
                        <PendingBadge count=pending />
                    </A>
                    <A href="/report">{l.t("nav.report")}</A>
                    <A href="/tasks">{l.t("nav.tasks")}</A>
                    <A href="/projects">{l.t("nav.projects")}</A>
                    <A href="/gateway">{l.t("nav.gateway")}</A>
                    <A href="/analytics">{l.t("nav.analytics")}</A>
                    <A href="/settings">{l.t("nav.settings")}</A>
                </nav>
                <LanguageSwitch />
                <a href="/logout" rel="external" class="logout">{l.t("nav.logout")}</a>
            </header>
            <main id="main">
                <Routes fallback=|| view! { <components::NotFound what=components::Missing::Page /> }>
                    <Route path=StaticSegment("") view={Lazy::<HomeRoute>::new()} ssr=SsrMode::Async />
                    <Route path=StaticSegment("harness") view=pages::harness::HarnessPage ssr=SsrMode::Async />
                    <Route path=StaticSegment("tasks") view={Lazy::<TaskListRoute>::new()} ssr=SsrMode::Async />
                    <Route
                        path=(StaticSegment("tasks"), ParamSegment("id"))
                        view={Lazy::<TaskDetailRoute>::new()}
                        ssr=SsrMode::Async
                    />
                    <Route path=StaticSegment("projects") view={Lazy::<ProjectListRoute>::new()} ssr=SsrMode::Async />
                    <Route
                        path=(StaticSegment("projects"), ParamSegment("id"), StaticSegment("plan"))
                        view={Lazy::<PlanRoute>::new()}
                        ssr=SsrMode::Async
                    />
                    <Route path=StaticSegment("settings") view={Lazy::<SettingsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=StaticSegment("analytics") view={Lazy::<AnalyticsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=StaticSegment("gateway") view={Lazy::<GatewayRoute>::new()} ssr=SsrMode::Async />
                    <Route path=StaticSegment("report") view={Lazy::<ReportRoute>::new()} ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}

/// The menu button of the phone layout: shows / hides the navigation
/// (hidden by CSS on wider screens, where the navigation is always shown).
#[component]
fn NavToggle(open: RwSignal<bool>, pending: Resource<Result<u64, ServerFnError>>) -> impl IntoView {
    let l = use_locale();
    view! {
        <button type="button" class="ghost nav-toggle" id="nav-toggle"
            aria-controls="main-nav"
            aria-expanded=move || if open.get() { "true" } else { "false" }
            on:click=move |_| open.update(|o| *o = !*o)>
            <span class="nav-toggle-bars" aria-hidden="true"></span>
            <span class="nav-toggle-text">{l.t("nav.menu")}</span>
            // What waits for you stays in sight with the menu closed.
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    let n = pending.await.unwrap_or(0);
                    (n > 0).then(|| view! {
                        <span class="count" id="nav-toggle-pending" data-count=n>
                            {n}
                            <span class="visually-hidden">
                                " " {l.t("nav.pending_count").replace("{n}", "").trim().to_string()}
                            </span>
                        </span>
                    })
                })}
            </Transition>
        </button>
    }
}

/// Whether a click landed on (or inside) a link.
fn event_target_is_link(ev: &leptos::ev::MouseEvent) -> bool {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        ev.target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("a").ok().flatten())
            .is_some()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = ev;
        false
    }
}

/// Give the keyboard focus back to the menu button.
fn focus_nav_toggle() {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        if let Some(button) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("nav-toggle"))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = button.focus();
        }
    }
}

/// The "waits for you" count, live: in the navigation and the page title.
#[component]
fn PendingBadge(count: Resource<Result<u64, ServerFnError>>) -> impl IntoView {
    let l = use_locale();
    view! {
        <Transition fallback=|| view! { <Title text="Harness" /> }>
            {move || Suspend::new(async move {
                let n = count.await.unwrap_or(0);
                let page = alerts::use_page_name();
                alerts::follow_count(n);
                view! {
                    <Title text=move || alerts::title_text(n, page.0.get()) />
                    <span
                        class="count"
                        id="nav-pending"
                        data-count=n
                        aria-label=l.t("nav.pending_count").replace("{n}", &n.to_string())
                        hidden=n == 0
                    >
                        {n}
                    </span>
                }
            })}
        </Transition>
    }
}

/// Switch language: a plain form (works without JavaScript); the choice is
/// remembered in a cookie and the page reloads in the other language.
#[component]
fn LanguageSwitch() -> impl IntoView {
    let l = use_locale();
    let other = l.other();
    view! {
        <form method="post" action="/sfn/set_locale" class="lang">
            <input type="hidden" name="lang" value=other.code() />
            // The other language's code in Latin letters next to a globe
            // drawn inline: no glyph a font may lack (the native name, 中文,
            // showed as two empty boxes without a CJK font); the name is
            // the button's accessible name and tooltip.
            <button type="submit" class="ghost" id="lang-switch"
                title=format!("{} · {}", other.name(), l.t("nav.language"))
                aria-label=format!("{} · {}", other.name(), l.t("nav.language"))>
                // An inline icon: it draws without any font's glyph.
                <svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
                    <circle cx="12" cy="12" r="9" fill="none" stroke="currentColor" stroke-width="1.8" />
                    <path d="M3 12h18M12 3c2.5 2.6 3.8 5.6 3.8 9s-1.3 6.4-3.8 9c-2.5-2.6-3.8-5.6-3.8-9S9.5 5.6 12 3z"
                        fill="none" stroke="currentColor" stroke-width="1.8" />
                </svg>
                <span aria-hidden="true">{other.code().to_ascii_uppercase()}</span>
            </button>
        </form>
    }
}
