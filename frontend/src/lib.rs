//! wasm entry point: hydrates the server-rendered page.
//!
//! Some pages are lazy routes (app/src/lazy_pages.rs): their code is a
//! separate wasm chunk, so hydration is asynchronous — it waits for the
//! chunk of the page being hydrated (`hydrate_body` refuses lazy routes).

#![forbid(unsafe_code)]

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    else {
        return;
    };
    // `hydrate_from_async` sets up Leptos' executor (wasm-bindgen futures).
    wasm_bindgen_futures::spawn_local(async move {
        let mounted = leptos::mount::hydrate_from_async(body.clone(), app::App).await;
        // The app lives as long as the page.
        mounted.forget();
        // Marker for end-to-end tests and the load benchmark: hydration
        // (including the page's lazy chunk) finished without panicking; the
        // page is interactive.
        let _ = body.set_attribute("data-hydrated", "true");
        // Then the sections below the fold (app/src/deferred.rs), each in a
        // task of its own, and live updates only after them: a tick while
        // a section waits would change the DOM it is to hydrate.
        app::deferred::hydrate_deferred().await;
        app::live::start_after_hydration();
        let _ = body.set_attribute("data-hydrated-all", "true");
    });
}
