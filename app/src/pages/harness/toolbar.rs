//! View chips and the search box. Both are plain links / a GET form, so they
//! work without JavaScript; the router turns them into in-page navigation.

use harness_types::MessageView;
use leptos::{html, prelude::*};

use super::{Filter, VIEWS};
use crate::i18n::use_locale;

#[component]
pub fn Toolbar(filter: Memo<Filter>) -> impl IntoView {
    let l = use_locale();
    let chips = VIEWS
        .into_iter()
        .map(|v| {
            let href = move || filter.with(|f| Filter::href(v, &f.q, None, f.children, f.blocking));
            let current = move || filter.with(|f| (f.view == v).then_some("page"));
            view! {
                <a class="chip" href=href aria-current=current data-view=v.as_str()>
                    {l.t(match v {
                        MessageView::Answered => "chip.answered",
                        MessageView::All => "chip.all",
                        MessageView::Pending => "chip.pending",
                    })}
                </a>
            }
        })
        .collect_view();
    // The "from child tasks" filter: a link that toggles `?from=children`.
    let children_href =
        move || filter.with(|f| Filter::href(f.view, &f.q, None, !f.children, f.blocking));
    let children_on = move || filter.with(|f| f.children);
    // "Most blocking first" (the pending view): a link that toggles
    // `?sort=blocking`.
    let pending = move || filter.with(|f| f.view == MessageView::Pending);
    let blocking_href =
        move || filter.with(|f| Filter::href(f.view, &f.q, None, f.children, !f.blocking));
    let blocking_on = move || filter.with(|f| f.blocking);
    // The search: a plain GET form (works without JavaScript); once
    // hydrated, an in-page navigation to the same URL. Not the router's
    // `<Form>`: its generic form handling cost the main module ~10 KiB.
    let q_input = NodeRef::<html::Input>::new();
    let navigate = leptos_router::hooks::use_navigate();
    let search = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let q = q_input
            .get_untracked()
            .map(|i| i.value().trim().to_string())
            .unwrap_or_default();
        let url = filter.with_untracked(|f| Filter::href(f.view, &q, None, f.children, f.blocking));
        navigate(&url, Default::default());
    };
    view! {
        <div class="toolbar">
            <nav class="chips" aria-label=l.t("harness.views")>{chips}</nav>
            <a class="chip chip-filter" id="filter-children" href=children_href
                aria-current=move || children_on().then_some("true")
                title=l.t("harness.from_children_hint")
                data-on=move || children_on().to_string()>
                <span class="chip-check" aria-hidden="true">{move || if children_on() { "✓ " } else { "" }}</span>
                {l.t("harness.from_children")}
            </a>
            <a class="chip chip-filter" id="sort-blocking" href=blocking_href
                hidden=move || !pending()
                aria-current=move || blocking_on().then_some("true")
                title=l.t("harness.sort_blocking_hint")
                data-on=move || blocking_on().to_string()>
                <span class="chip-check" aria-hidden="true">{move || if blocking_on() { "✓ " } else { "" }}</span>
                {l.t("harness.sort_blocking")}
            </a>
            <form method="GET" action="/harness" class="search" role="search" on:submit=search>
                <input type="hidden" name="view" value=move || filter.with(|f| f.view.as_str()) />
                {move || children_on().then(|| view! {
                    <input type="hidden" name="from" value=super::FROM_CHILDREN />
                })}
                {move || blocking_on().then(|| view! {
                    <input type="hidden" name="sort" value=super::SORT_BLOCKING />
                })}
                <label class="visually-hidden" for="harness-q">{l.t("harness.search_label")}</label>
                <input
                    id="harness-q"
                    node_ref=q_input
                    type="search"
                    name="q"
                    maxlength="200"
                    placeholder=l.t("harness.search_placeholder")
                    value=move || filter.with(|f| f.q.clone())
                />
                <button type="submit">{l.t("harness.search")}</button>
            </form>
        </div>
    }
}
