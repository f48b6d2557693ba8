//! Sections hydrated after the page is interactive.
//!
//! The server renders a [`Deferred`] section like any other, inside a
//! `<div class="deferred">`. In the browser, during the page's first
//! hydration, its children are *constructed* — their components run, so
//! their resources and `<Transition>`s take their hydration ids in the same
//! order as on the server and read the server's data — but their DOM is not
//! walked: the wrapper is claimed as an element whose content is left alone
//! (an `inner_html` that hydration does not write). Once the page is marked
//! hydrated, [`hydrate_deferred`] hydrates each waiting section in a task of
//! its own, before the live updates start (a tick would refetch the
//! section's data and change what its DOM must match).
//!
//! A section rendered later by client-side navigation is built at once, as
//! any view. Until its turn comes (a few hundred ms on a slow phone), its
//! links work (the router's listener is on the document) and its
//! `ActionForm`s — the answer controls of `/harness`' rows below the first
//! screen — are plain form posts; other handlers wait. What a person needs
//! at first sight is never deferred.

use leptos::prelude::*;

/// A below-the-fold part of a page, hydrated after the rest (see the module).
#[component]
pub fn Deferred(children: Children) -> impl IntoView {
    #[cfg(feature = "hydrate")]
    if browser::first_hydration() {
        let slot = NodeRef::<leptos::html::Div>::new();
        browser::defer(children(), move || slot.get_untracked().map(Into::into));
        return view! { <div class="deferred" node_ref=slot inner_html=String::new()></div> }
            .into_any();
    }
    view! { <div class="deferred">{children()}</div> }.into_any()
}

/// Table rows hydrated after the rest: a `<tbody>` of their own.
#[component]
pub fn DeferredRows(children: Children) -> impl IntoView {
    #[cfg(feature = "hydrate")]
    if browser::first_hydration() {
        let slot = NodeRef::<leptos::html::Tbody>::new();
        browser::defer(children(), move || slot.get_untracked().map(Into::into));
        return view! { <tbody class="deferred" node_ref=slot inner_html=String::new()></tbody> }
            .into_any();
    }
    view! { <tbody class="deferred">{children()}</tbody> }.into_any()
}

#[cfg(feature = "hydrate")]
pub use browser::hydrate_deferred;

#[cfg(feature = "hydrate")]
mod browser {
    use std::{any::Any, cell::RefCell};

    use leptos::{
        prelude::*,
        tachys::{
            hydration::Cursor,
            view::{Mountable, PositionState, Render, RenderHtml},
        },
    };

    type Job = Box<dyn FnOnce()>;

    thread_local! {
        /// `Some` until the page's first hydration is over: the sections
        /// waiting to be hydrated, in page order.
        static WAITING: RefCell<Option<Vec<Job>>> = const { RefCell::new(Some(Vec::new())) };
    }

    pub fn first_hydration() -> bool {
        WAITING.with_borrow(Option::is_some) && !eager()
    }

    /// `window.harnessEagerHydration = true`, set before the page's scripts
    /// run (`load.mjs --eager`), hydrates every section with the page, as
    /// before there were deferred sections: the benchmark's A/B on one build.
    fn eager() -> bool {
        web_sys::window()
            .and_then(|w| js_sys::Reflect::get(&w, &"harnessEagerHydration".into()).ok())
            .is_some_and(|v| v.is_truthy())
    }

    /// Constructs `view` now and hydrates it into the element `slot` gives
    /// (the server's wrapper, claimed by the placeholder the caller returns)
    /// when [`hydrate_deferred`] runs.
    pub fn defer(view: AnyView, slot: impl Fn() -> Option<web_sys::Element> + 'static) {
        // The hydrated view's state lives as long as this section's owner.
        let kept = StoredValue::new_local(None::<Box<dyn Any>>);
        let owner = Owner::current();
        let job: Job = Box::new(move || {
            let (Some(owner), Some(el)) = (owner, slot()) else {
                return;
            };
            if !el.is_connected() {
                return;
            }
            owner.with(|| {
                // Empty only if the wrapper was built here rather than
                // rendered by the server: then the section is built too.
                let state = if el.has_child_nodes() {
                    view.hydrate::<true>(&Cursor::new(el), &PositionState::default())
                } else {
                    let mut state = view.build();
                    state.mount(&el, None);
                    state
                };
                kept.try_set_value(Some(Box::new(state)));
            });
        });
        WAITING.with_borrow_mut(|w| {
            if let Some(w) = w {
                w.push(job);
            }
        });
    }

    /// Hydrates the waiting sections, each in a task of its own (an input
    /// that came in meanwhile is handled first). Called once, after the
    /// page's hydration.
    pub async fn hydrate_deferred() {
        let jobs = WAITING.with_borrow_mut(Option::take).unwrap_or_default();
        for job in jobs {
            next_task().await;
            job();
        }
    }

    /// Resolves in a new task (`setTimeout(0)`).
    async fn next_task() {
        let tick = js_sys::Promise::new(&mut |resolve, _| {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback(&resolve);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(tick).await;
    }
}
