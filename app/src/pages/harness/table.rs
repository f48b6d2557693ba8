//! The notification table: rows of the current view, live-reloaded, paged
//! with a keyset cursor ("load more" fetches in place once hydrated and is a
//! plain link to `?cursor=` without JavaScript).

use harness_types::MessageView;
use leptos::{form::ActionForm, prelude::*, task::spawn_local};

use super::{Filter, Shared, dialog::DetailDialog};
use crate::{
    api::{PAGE_SIZE, Row, Status, list_page, list_window},
    components::{Clamp, Notice, StatusBadge, TimeCell, error_text},
    deferred::DeferredRows,
    i18n::use_locale,
    live::use_live,
};

/// Rows hydrated with the page; the rest are hydrated right after it
/// (`DeferredRows`): a phone's first screen shows two or three,
/// a desktop's about eight, and each row is a good part of `/harness`'
/// hydration.
const FIRST_ROWS: usize = 8;

#[component]
pub fn HarnessTable(
    rows: Vec<Row>,
    next: Option<String>,
    view: MessageView,
    q: String,
    start: Option<String>,
    /// Only messages of derived child tasks.
    #[prop(optional)]
    children: bool,
    /// Most blocking first (one page, in the core's rank).
    #[prop(optional)]
    blocking: bool,
) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let shared = use_context::<Shared>().unwrap_or_else(Shared::provide);
    let rows = RwSignal::new(rows);
    let next = RwSignal::new(next);
    let loading = RwSignal::new(false);
    let key = StoredValue::new((view, q.clone(), start.clone()));
    let from = StoredValue::new(children.then(|| super::FROM_CHILDREN.to_string()));
    let sort = StoredValue::new(blocking.then(|| super::SORT_BLOCKING.to_string()));

    // Live: reload the rows on screen after every change event / action,
    // coalescing bursts (one request in flight, one queued).
    let inflight = StoredValue::new(false);
    let dirty = StoredValue::new(false);
    let reload = move || {
        if inflight.try_get_value().unwrap_or(true) {
            dirty.try_set_value(true);
            return;
        }
        inflight.set_value(true);
        spawn_local(async move {
            loop {
                dirty.try_set_value(false);
                let Some((view, q, start)) = key.try_get_value() else {
                    return;
                };
                let count = rows
                    .try_with_untracked(|r| r.len())
                    .unwrap_or(0)
                    .max(PAGE_SIZE as usize);
                let (from, sort) = (from.get_value(), sort.get_value());
                match list_window(view, q, start, None, count as u32, from, sort).await {
                    Ok(page) => {
                        let _ = rows.try_set(page.rows);
                        let _ = next.try_set(page.next);
                    }
                    Err(e) => {
                        let _ = shared.notice.try_set(Some(Notice {
                            ok: false,
                            text: error_text(&e),
                        }));
                    }
                }
                if !dirty.try_get_value().unwrap_or(false) {
                    break;
                }
            }
            inflight.try_set_value(false);
        });
    };
    Effect::new(move |prev: Option<()>| {
        live.tick.track();
        shared.changed.track();
        if prev.is_some() {
            reload();
        }
    });

    let load_more = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        let Some(cursor) = next.get_untracked() else {
            return;
        };
        if loading.get_untracked() {
            return;
        }
        loading.set(true);
        let (view, q, _) = key.get_value();
        spawn_local(async move {
            match list_page(
                view,
                q,
                Some(cursor),
                None,
                from.get_value(),
                sort.get_value(),
            )
            .await
            {
                Ok(page) => {
                    rows.update(|r| {
                        let known: std::collections::HashSet<String> =
                            r.iter().map(|x| x.id.clone()).collect();
                        r.extend(page.rows.into_iter().filter(|x| !known.contains(&x.id)));
                    });
                    next.set(page.next);
                }
                Err(e) => shared.notice.set(Some(Notice {
                    ok: false,
                    text: error_text(&e),
                })),
            }
            loading.set(false);
        });
    };

    let more_href = {
        let q = q.clone();
        move || {
            next.get()
                .map(|c| Filter::href(view, &q, Some(&c), children, blocking))
        }
    };
    let newest_href = start
        .is_some()
        .then(|| Filter::href(view, &q, None, children, blocking));
    let count = move || rows.with(Vec::len);
    let search = q.clone();

    view! {
        <div class="table-card" on:pointerdown=move |_| shared.reach() on:focusin=move |_| shared.reach()>
            <table class="harness" aria-label=l.t("harness.title") on:keydown=row_keys>
                <thead>
                    <tr>
                        <th scope="col">{l.t("col.workspace")}</th>
                        <th scope="col">{l.t("col.project")}</th>
                        <th scope="col">{l.t("col.task")}</th>
                        <th scope="col">{l.t("col.content")}</th>
                        <th scope="col">{l.t("col.sent_at")}</th>
                        <th scope="col">{l.t("col.reply")}</th>
                        <th scope="col">{l.t("col.replied_at")}</th>
                        <th scope="col">{l.t("col.status")}</th>
                        <th scope="col">{l.t("col.actions")}</th>
                    </tr>
                </thead>
                <tbody>{row_list(rows, shared, 0, FIRST_ROWS)}</tbody>
                <DeferredRows>{row_list(rows, shared, FIRST_ROWS, usize::MAX)}</DeferredRows>
            </table>
            <Show when=move || count() == 0>
                {empty_state(view, &search)}
            </Show>
        </div>
        <div class="pager">
            <span id="row-count" data-count=count>
                {move || l.t("harness.rows_shown").replace("{n}", &count().to_string())}
            </span>
            {newest_href.map(|href| view! { <a href=href class="button ghost">{l.t("harness.newest")}</a> })}
            {move || match more_href() {
                Some(href) => view! {
                    <a href=href rel="external" class="button" id="load-more" on:click=load_more
                        aria-busy=move || loading.get().to_string()>
                        {l.t("harness.load_more")}
                    </a>
                }
                .into_any(),
                None => view! { <span class="sub" id="list-end">{l.t("harness.end")}</span> }.into_any(),
            }}
        </div>
        <DetailDialog rows />
    }
}

/// The rows `from..to` of the list, keyed. One function for both `<tbody>`s,
/// so the main module carries one `For` of rows, not two.
fn row_list(rows: RwSignal<Vec<Row>>, shared: Shared, from: usize, to: usize) -> impl IntoView {
    let each = move || rows.with(|r| r[from.min(r.len())..to.min(r.len())].to_vec());
    view! {
        <For each key=Row::version let:row>
            <HarnessRow row shared />
        </For>
    }
}

/// What an empty list says: no match for a search (with the way back to
/// the whole view), else the first-use text.
fn empty_state(view: MessageView, q: &str) -> AnyView {
    let l = use_locale();
    if q.is_empty() {
        return view! { <p class="empty" id="harness-empty">{l.t("harness.empty")}</p> }.into_any();
    }
    view! {
        <div class="empty" id="harness-empty" data-empty="no-match">
            <p><strong>{l.t("harness.no_match").replace("{q}", q)}</strong></p>
            <p><a href=Filter::href(view, "", None, false, false) id="clear-search">{l.t("harness.clear_search")}</a></p>
        </div>
    }
    .into_any()
}

/// Arrow keys move between rows; Enter opens the focused row's detail.
fn row_keys(ev: leptos::ev::KeyboardEvent) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let Some(row) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        else {
            return;
        };
        if row.tag_name() != "TR" {
            return;
        }
        // The rows are in two `<tbody>`s (`FIRST_ROWS`): across them too.
        let group = |step: fn(&web_sys::Element) -> Option<web_sys::Element>| {
            row.parent_element()
                .and_then(|b| step(&b))
                .filter(|b| b.tag_name() == "TBODY")
        };
        let sibling = match ev.key().as_str() {
            "ArrowDown" => row.next_element_sibling().or_else(|| {
                group(web_sys::Element::next_element_sibling).and_then(|b| b.first_element_child())
            }),
            "ArrowUp" => row.previous_element_sibling().or_else(|| {
                group(web_sys::Element::previous_element_sibling)
                    .and_then(|b| b.last_element_child())
            }),
            "Enter" | " " => {
                ev.prevent_default();
                if let Some(b) = row
                    .query_selector("button.details")
                    .ok()
                    .flatten()
                    .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
                {
                    b.click();
                }
                return;
            }
            _ => return,
        };
        if let Some(el) = sibling.and_then(|s| s.dyn_into::<web_sys::HtmlElement>().ok()) {
            ev.prevent_default();
            let _ = el.focus();
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = ev;
}

#[component]
fn HarnessRow(row: Row, shared: Shared) -> impl IntoView {
    let l = use_locale();
    let status = row.status();
    let badge_text = row.badge_key();
    let id = row.id.clone();
    let open = {
        let id = id.clone();
        move |_| shared.open(&id, false)
    };
    let open_cell = open.clone();
    let open_content = open.clone();
    let handle = {
        let id = id.clone();
        move |_| shared.open(&id, true)
    };
    let reply_cell = if status == Status::Pending {
        let (msg_id, task_id) = (row.id.clone(), row.task_id.clone());
        let draft = shared.draft(&msg_id);
        let hidden_task = row.task_id.clone();
        let picker = row.choices.clone().map(|choices| {
            view! { <crate::choices::ChoicePicker task_id=row.task_id.clone() request_id=row.id.clone() choices action=shared.reply /> }.into_any()
        });
        view! {
            {picker}
            <ActionForm action=shared.reply attr:class="inline-reply">
                <input type="hidden" name="task_id" value=hidden_task />
                <textarea
                    name="text"
                    rows="2"
                    required
                    aria-label=l.t("harness.reply_label")
                    placeholder=l.t("harness.reply_placeholder")
                    prop:value=draft
                    on:input=move |ev| shared.set_draft(&msg_id, &task_id, event_target_value(&ev))
                    on:keydown=move |ev| crate::keys::submit_on_key(&ev)
                ></textarea>
                <button type="submit" disabled=move || shared.reply.pending().get()>{l.t("action.send")}</button>
            </ActionForm>
        }
        .into_any()
    } else {
        let delivery = row
            .delivery
            .clone()
            .map(|info| view! { <crate::delivery::DeliveryLine info /> });
        view! {
            <div on:click=open_cell>  <Clamp text=row.reply.clone() /> </div>
            <crate::choices::AnsweredByDefault choices=row.choices.clone() />
            {delivery}
        }
        .into_any()
    };
    let hidden_id = row.id.clone();
    let actions = match (status, row.is_ask()) {
        (Status::Pending, _) => view! {
            <button type="button" class="primary handle" on:click=handle>{l.t("action.handle")}</button>
            <ActionForm action=shared.ignore attr:class="inline">
                <input type="hidden" name="id" value=hidden_id />
                <button type="submit" class="ghost">{l.t("action.ignore")}</button>
            </ActionForm>
        }
        .into_any(),
        (_, false) => view! {
            <ActionForm action=shared.dismiss attr:class="inline">
                <input type="hidden" name="id" value=hidden_id />
                <button type="submit" class="ghost dismiss">{l.t("action.dismiss")}</button>
            </ActionForm>
        }
        .into_any(),
        _ => ().into_any(),
    };
    let outbound = row
        .outbound
        .clone()
        .map(|info| view! { <crate::outbound::OutboundLine info /> }.into_any());
    let follow_up = row.follow_up.clone().map(|f| follow_up_line(l, &f));
    // Type-erased: the table's view type is near the compiler's depth limit.
    view! {
        <tr
            tabindex="0"
            data-message-id=row.id.clone()
            data-task-id=row.task_id.clone()
            data-status=status.as_str()
            data-kind=row.kind.as_str()
        >
            <td class="nowrap">{row.workspace.clone().unwrap_or_else(|| "—".into())}</td>
            <td>{row.project.clone().unwrap_or_else(|| "—".into())}</td>
            <td class="task" on:click=open.clone()><Clamp text=Some(row.task_title.clone()) /></td>
            <td class="content" on:click=open_content><Clamp text=Some(crate::markdown::plain(&crate::approval_words::question(l, &row.content))) /></td>
            <td class="time"><TimeCell ms=Some(row.sent_ms) /></td>
            <td class="reply">{reply_cell}</td>
            <td class="time"><TimeCell ms=row.replied_ms /></td>
            <td><StatusBadge status text=badge_text /> {outbound} {follow_up}</td>
            <td class="actions">
                <button type="button" class="ghost details" on:click=open>{l.t("action.details")}</button>
                {actions}
            </td>
        </tr>
    }
    .into_any()
}

/// An open ask's wait, reminders and escalation.
fn follow_up_line(l: crate::i18n::Locale, f: &crate::api::FollowUpInfo) -> AnyView {
    let mut parts = vec![
        l.t("followup.waited")
            .replace("{t}", &harness_types::waited_text(f.waited_ms)),
    ];
    if f.reminders > 0 {
        parts.push(
            l.t("followup.reminders")
                .replace("{n}", &f.reminders.to_string()),
        );
    }
    if !f.escalated_to.is_empty() {
        parts.push(
            l.t("followup.escalated")
                .replace("{who}", &f.escalated_to.join(", ")),
        );
    }
    let escalated = !f.escalated_to.is_empty();
    // The chat's delivery window passed: plain text,
    // the main module stays small.
    if f.unreachable {
        parts.push(
            l.t(if f.no_escalation_target && !escalated {
                "followup.unreachable_alone"
            } else {
                "followup.unreachable"
            })
            .to_string(),
        );
    }
    view! {
        <span class="followup sub" data-reminders=f.reminders.to_string() data-escalated=escalated.to_string()>
            {parts.join(" · ")}
        </span>
    }
    .into_any()
}
