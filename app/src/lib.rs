//! The Harness web UI: Leptos components rendered on the server and hydrated
//! in the browser, plus the server functions they call. Server functions are
//! thin adapters over `harness_core` (compiled only with the `ssr` feature).

pub mod api;
pub mod pages;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::{
    SsrMode, StaticSegment,
    components::{A, Route, Router, Routes},
};

/// Name of the generated `pkg/{name}.js`, `_bg.wasm` and `.css` files.
pub const OUTPUT_NAME: &str = "harness";

/// The HTML document around the app (server side only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light dark" />
                <link rel="icon" href="/favicon.ico" />
                <HydrationScripts options />
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
    view! {
        <Stylesheet id="leptos" href="/pkg/harness.css" />
        <Title text="Harness" />
        <Router>
            <nav class="topnav">
                <A href="/" attr:class="brand">"Harness"</A>
                <A href="/harness">"Notifications"</A>
            </nav>
            <main>
                <Routes fallback=|| view! { <p class="empty">"Page not found."</p> }>
                    <Route path=StaticSegment("") view=pages::home::HomePage ssr=SsrMode::Async />
                    <Route path=StaticSegment("harness") view=pages::harness::HarnessPage ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}
