//! `/harness`, the notification center: every question, progress line and
//! reply of every agent, answerable inline.
//!
//! Server-rendered with the first page (works without JavaScript: chips and
//! paging are links, replying/ignoring/dismissing are forms posting to server
//! functions). Hydration adds live updates, in-place paging and the dialog.

mod dialog;
mod needs_you;
mod shared;
mod table;
mod toolbar;

use harness_types::{ChannelHealth, MessageView};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::{
    api::{Page, channel_state, list_page},
    components::{NoticeLine, error_text},
    i18n::use_locale,
};

pub use shared::Shared;

/// The URL state of the page: `?view=&q=&cursor=&from=&sort=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub view: MessageView,
    pub q: String,
    pub cursor: Option<String>,
    /// Only messages of derived child tasks (`?from=children`).
    pub children: bool,
    /// The pending view most blocking first (`?sort=blocking`): the
    /// morning report's rank, computed on the server.
    pub blocking: bool,
}

/// The `from` value of the "from child tasks" filter.
pub const FROM_CHILDREN: &str = "children";
/// The `sort` value of "most blocking first" (the pending view only).
pub const SORT_BLOCKING: &str = "blocking";

impl Filter {
    /// `blocking` applies to the pending view only.
    pub fn href(
        view: MessageView,
        q: &str,
        cursor: Option<&str>,
        children: bool,
        blocking: bool,
    ) -> String {
        let mut url = format!("/harness?view={}", view.as_str());
        if !q.is_empty() {
            url.push_str("&q=");
            url.push_str(&encode(q));
        }
        if children {
            url.push_str("&from=");
            url.push_str(FROM_CHILDREN);
        }
        if blocking && view == MessageView::Pending {
            url.push_str("&sort=");
            url.push_str(SORT_BLOCKING);
        }
        if let Some(c) = cursor {
            url.push_str("&cursor=");
            url.push_str(&encode(c));
        }
        url
    }
}

/// Percent-encoding for a query value.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub const VIEWS: [MessageView; 3] = [
    MessageView::Pending,
    MessageView::Answered,
    MessageView::All,
];

#[component]
pub fn HarnessPage() -> impl IntoView {
    let l = use_locale();
    let live = crate::live::use_live();
    let query = use_query_map();
    let filter = Memo::new(move |_| {
        query.with(|m| {
            let view = m
                .get("view")
                .and_then(|v| MessageView::parse(&v))
                .unwrap_or_default();
            let blocking =
                view == MessageView::Pending && m.get("sort").as_deref() == Some(SORT_BLOCKING);
            Filter {
                view,
                q: m.get("q").map(|q| q.trim().to_string()).unwrap_or_default(),
                // Most blocking first is one page.
                cursor: m.get("cursor").filter(|c| !c.is_empty() && !blocking),
                children: m.get("from").as_deref() == Some(FROM_CHILDREN),
                blocking,
            }
        })
    });
    let page = Resource::new(
        move || filter.get(),
        |f| async move {
            let from = f.children.then(|| FROM_CHILDREN.to_string());
            let sort = f.blocking.then(|| SORT_BLOCKING.to_string());
            let page = list_page(f.view, f.q.clone(), f.cursor.clone(), None, from, sort).await;
            (f.view, f.q, f.cursor, f.children, f.blocking, page)
        },
    );
    let channel = Resource::new(|| (), |_| channel_state());
    let shared = Shared::provide();
    let inbound_slot = NodeRef::<leptos::html::Div>::new();
    let inbound_near = RwSignal::new(false);
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(slot) = inbound_slot.get() {
            when_near_view(slot.into(), move || {
                let _ = inbound_near.try_set(true);
            });
        }
    });

    view! {
        <crate::alerts::PageTitle text=l.t("nav.harness") />
        <header class="page-head">
            <h1>{l.t("harness.title")}</h1>
            <p class="sub">{l.t("harness.subtitle")}</p>
        </header>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let health = channel.await.ok()?;
                let state = health.as_str();
                let text = match health {
                    ChannelHealth::None => l.t("harness.no_channel").to_string(),
                    ChannelHealth::Failing { channel, error } => {
                        let mut t = l.t("harness.channel_failing").replace("{channel}", &channel);
                        if let Some(e) = error {
                            t.push_str(" (");
                            t.push_str(&e);
                            t.push(')');
                        }
                        t
                    }
                    ChannelHealth::Working => return None,
                };
                Some(view! {
                    <p class="banner" id="no-channel" role="note" data-channel=state>
                        {text} " "
                        <a href="/settings#notifications">{l.t("harness.no_channel_link")}</a>
                    </p>
                })
            })}
        </Suspense>
        <needs_you::NeedsYou />
        <toolbar::Toolbar filter />
        <NoticeLine notice=shared.notice id="reply-status" />
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                let (view, q, cursor, children, blocking, result) = page.await;
                match result {
                    Ok(Page { rows, next }) => view! {
                        <table::HarnessTable rows next view q start=cursor children blocking />
                    }
                    .into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
        // What people wrote back from chat: the latest inbound
        // messages, a lazy function (pages/gateway.rs, its own chunk)
        // mounted once the page is hydrated (`live.local`) and its place is
        // near the screen (below the questions on a phone: its chunks are
        // not part of the first load then): not part of the server-rendered
        // page, so its resource and its chunk never take part in hydration.
        // All of them on the Gateway page.
        <div id="harness-inbound-slot" node_ref=inbound_slot>
            {move || (live.local.get() && inbound_near.get())
                .then(|| Suspend::new(crate::pages::gateway::harness_inbound()))}
        </div>
        <p class="sub" id="harness-gateway">
            <a href="/gateway" id="harness-gateway-link">{l.t("harness.gw_all")}</a>
        </p>
    }
}

/// Calls `done` once, when `el` comes within 300 px of the viewport
/// (an `IntersectionObserver`; at once where there is none).
#[cfg(feature = "hydrate")]
fn when_near_view(el: web_sys::Element, done: impl FnOnce() + 'static) {
    use wasm_bindgen::{JsCast, closure::Closure};
    let done = std::rc::Rc::new(std::cell::Cell::new(Some(done)));
    let once = done.clone();
    let seen = Closure::<dyn FnMut(js_sys::Array, web_sys::IntersectionObserver)>::new(
        move |entries: js_sys::Array, observer: web_sys::IntersectionObserver| {
            let near = entries.iter().any(|e| {
                e.unchecked_into::<web_sys::IntersectionObserverEntry>()
                    .is_intersecting()
            });
            if near {
                observer.disconnect();
                if let Some(done) = once.take() {
                    done();
                }
            }
        },
    );
    let options = web_sys::IntersectionObserverInit::new();
    options.set_root_margin("300px");
    match web_sys::IntersectionObserver::new_with_options(seen.as_ref().unchecked_ref(), &options) {
        Ok(observer) => {
            observer.observe(&el);
            // Lives until it fired (then it only disconnects again).
            seen.forget();
        }
        Err(_) => {
            drop(seen);
            if let Some(done) = done.take() {
                done();
            }
        }
    }
}
