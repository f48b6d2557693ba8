//! The pages whose code is loaded on demand: each is a Leptos lazy
//! route, so its view code lives in a wasm chunk of its own that the browser
//! fetches only when it opens that page (`scripts/build-site.sh` splits the
//! hydrate module with wasm-split). `/harness` stays in the main module: the
//! page a phone opens on "your agent needs a decision" must not wait for a
//! second download.
//!
//! A route's `data()` runs in the main module and `view()` in the chunk; these
//! pages create their resources in their components, so `data()` is empty.
//! Each `view()` first loads the lazy pages' texts (`i18n::load_page_texts`),
//! which in the browser are not in the main module either.
//! On the server the pages render as before (the split is browser-only).

use leptos::prelude::*;
use leptos_router::{LazyRoute, lazy_route};

use crate::pages;

/// `/`: the first step, the overview and how to connect an agent.
pub struct HomeRoute;

#[lazy_route]
impl LazyRoute for HomeRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::home::HomePage /> }.into_any()
    }
}

/// `/tasks`: the task list and the new-task form.
pub struct TaskListRoute;

#[lazy_route]
impl LazyRoute for TaskListRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::tasks::TaskListPage /> }.into_any()
    }
}

/// `/tasks/:id`: a task, its messages, its controls and its terminal.
pub struct TaskDetailRoute;

#[lazy_route]
impl LazyRoute for TaskDetailRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::tasks::TaskDetailPage /> }.into_any()
    }
}

/// `/projects`: the projects, their forms and workbenches.
pub struct ProjectListRoute;

#[lazy_route]
impl LazyRoute for ProjectListRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::projects::ProjectListPage /> }.into_any()
    }
}

/// `/projects/:id/plan`: the plan view.
pub struct PlanRoute;

#[lazy_route]
impl LazyRoute for PlanRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::projects::PlanPage /> }.into_any()
    }
}

/// `/settings`: the settings editors.
pub struct SettingsRoute;

#[lazy_route]
impl LazyRoute for SettingsRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::settings::SettingsPage /> }.into_any()
    }
}

/// `/analytics`: the numbers.
pub struct AnalyticsRoute;

#[lazy_route]
impl LazyRoute for AnalyticsRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::analytics::AnalyticsPage /> }.into_any()
    }
}

/// `/gateway`: what the chat gateways bring in, their chats and credential.
pub struct GatewayRoute;

#[lazy_route]
impl LazyRoute for GatewayRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::gateway::GatewayPage /> }.into_any()
    }
}

/// `/report`: the morning report and its batch answer box.
pub struct ReportRoute;

#[lazy_route]
impl LazyRoute for ReportRoute {
    fn data() -> Self {
        Self
    }

    fn view(_this: Self) -> AnyView {
        crate::i18n::load_page_texts();
        view! { <pages::report::ReportPage /> }.into_any()
    }
}
