//! `/gateway`: what the chat gateways (OpenClaw, Hermes) bring
//! in — the inbound messages by state with their routing result and their
//! replies (with each reply's state and last error, and "retry now" /
//! "mark as delivered" where a person decides, docs/decisions.md D7/docs/decisions.md D9), the conversations (sessions) bound to
//! projects, the chats and their access with the configured OWNERs, and the
//! gateway credential (masked; rotating it shows the new one once).
//! A lazy page (`lazy_pages.rs`): its code is a chunk of its own.
//!
//! `/harness` shows the latest inbound messages too ([`harness_inbound`]):
//! a lazy function, so that list's code is not in the main module either.

use harness_types::{InboundState, ManualAction, ManualActions, ReplyState};
use leptos::prelude::*;

use crate::{
    api::gateway::{
        GatewayData, InboundRow, ReplyRow, gateway_page, mark_gateway_reply_delivered,
        recent_inbound, retry_gateway_reply, rotate_gateway_token,
    },
    components::{TimeCell, error_text},
    i18n::use_locale,
    live::use_live,
};

#[component]
pub fn GatewayPage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let state = RwSignal::new(None::<InboundState>);
    // Owned by the page, not by the card the live data re-renders on every
    // change: the new token stays shown when an event arrives after it.
    provide_context(TokenRotation(Action::new(|_: &()| rotate_gateway_token())));
    let data = Resource::new(
        move || (live.tick.get(), state.get()),
        |(_, s)| gateway_page(s),
    );
    let chips = move || {
        let mut all = vec![(None, l.t("gateway.all").to_string())];
        all.extend(
            InboundState::ALL
                .into_iter()
                .map(|s| (Some(s), s.as_str().to_string())),
        );
        all.into_iter()
            .map(|(value, label)| {
                let pressed = move || state.get() == value;
                view! {
                    <button type="button" class="chip" aria-pressed=move || pressed().to_string()
                        data-state=value.map(InboundState::as_str).unwrap_or_default()
                        on:click=move |_| state.set(value)>{label}</button>
                }
            })
            .collect_view()
    };
    view! {
        <crate::alerts::PageTitle text=l.t("gateway.title") />
        <header class="page-head">
            <h1>{l.t("gateway.title")}</h1>
            <p class="sub">{l.t("gateway.subtitle")}</p>
        </header>
        <section aria-labelledby="gw-inbound-h" id="gw-inbound">
            <h2 id="gw-inbound-h">{l.t("gateway.inbound")}</h2>
            <div class="chips" role="group" aria-label=l.t("gateway.by_state")>{chips}</div>
            <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(d) => view! { <GatewayView d /> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// How many inbound messages `/harness` lists.
const ON_HARNESS: u32 = 10;

/// `/harness`'s list of what people wrote back from chat: the latest inbound
/// messages with their routing result and their replies, live. Its code is
/// loaded on demand; `/harness` mounts it once hydrated (not server-rendered:
/// its resource is created after hydration, so it never takes part in it).
#[leptos::lazy]
pub fn harness_inbound() -> AnyView {
    crate::i18n::load_page_texts();
    view! { <HarnessInbound /> }.into_any()
}

#[component]
fn HarnessInbound() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let data = Resource::new(move || live.tick.get(), |_| recent_inbound(ON_HARNESS));
    view! {
        <section id="harness-inbound" aria-labelledby="harness-inbound-h">
            <h2 id="harness-inbound-h">{l.t("gateway.inbound")}</h2>
            <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(rows) if rows.is_empty() => view! {
                            <p class="empty" id="harness-inbound-empty">{l.t("gateway.inbound_empty")}</p>
                        }.into_any(),
                        Ok(rows) => view! { <InboundTable rows /> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn GatewayView(d: GatewayData) -> impl IntoView {
    let l = use_locale();
    let GatewayData {
        owners,
        channels,
        sessions,
        inbound,
        token,
    } = d;
    let inbound_view = if inbound.is_empty() {
        view! { <p class="empty" id="gw-inbound-empty">{l.t("gateway.inbound_empty")}</p> }
            .into_any()
    } else {
        view! { <InboundTable rows=inbound /> }.into_any()
    };
    let no_sessions = sessions.is_empty();
    let no_channels = channels.is_empty();
    let session_rows = sessions
        .into_iter()
        .map(|s| {
            view! {
                <tr data-session-id=s.id.clone()>
                    <td data-label=l.t("gateway.chat")>{format!("{} · {} · {}", s.gateway, s.platform, s.chat_id)}
                        {s.thread.map(|t| view! { <br /><span class="sub">{format!("# {t}")}</span> })}</td>
                    <td data-label=l.t("gateway.sender")>{s.sender.unwrap_or_default()}</td>
                    <td data-label=l.t("gateway.project")>{match s.workbench_task_id {
                        Some(wb) => view! { <a href=format!("/tasks/{wb}")>{s.project}</a> }.into_any(),
                        None => view! { <span>{s.project}</span> }.into_any(),
                    }}</td>
                    <td data-label=l.t("gateway.status")><span class=format!("badge gw-{}", s.status.as_str().to_lowercase())>{s.status.as_str()}</span></td>
                    <td data-label=l.t("gateway.last_activity")><TimeCell ms=Some(s.last_activity_ms) /></td>
                </tr>
            }
        })
        .collect_view();
    let channel_rows = channels
        .into_iter()
        .map(|c| {
            let valid = c.scope_valid;
            let access = c.status.map(|a| a.as_str()).unwrap_or_default();
            view! {
                <tr data-chat-id=c.chat_id.clone() data-access=access>
                    <td data-label=l.t("gateway.chat")>{format!("{} · {} · {}", c.gateway, c.platform, c.chat_id)}
                        {c.chat_name.map(|n| view! { <br /><span class="sub">{n}</span> })}</td>
                    <td data-label=l.t("gateway.access")><span class=format!("badge gw-{}", access.to_lowercase())>{access}</span></td>
                    <td data-label=l.t("gateway.scope")>{c.scope}
                        {(!valid).then(|| view! { " " <span class="error">{l.t("gateway.scope_invalid")}</span> })}</td>
                    <td data-label=l.t("gateway.updated")>{c.updated_by.unwrap_or_default()}
                        " " <span class="sub">{c.updated_at.unwrap_or_default()}</span></td>
                </tr>
            }
        })
        .collect_view();
    let owner_items = owners
        .into_iter()
        .map(|o| view! { <li>{format!("{} · {}: {}", o.gateway, o.platform, o.ids.join(", "))}</li> })
        .collect_view();
    view! {
        {inbound_view}
        <h2 id="gw-sessions-h">{l.t("gateway.sessions")}</h2>
        <div class="table-card">
            <table class="cards-on-phone" id="gw-sessions" aria-labelledby="gw-sessions-h">
                <thead><tr>
                    <th scope="col">{l.t("gateway.chat")}</th>
                    <th scope="col">{l.t("gateway.sender")}</th>
                    <th scope="col">{l.t("gateway.project")}</th>
                    <th scope="col">{l.t("gateway.status")}</th>
                    <th scope="col">{l.t("gateway.last_activity")}</th>
                </tr></thead>
                <tbody>{session_rows}</tbody>
            </table>
        </div>
        {no_sessions.then(|| view! { <p class="empty">{l.t("gateway.sessions_empty")}</p> })}
        <h2 id="gw-channels-h">{l.t("gateway.channels")}</h2>
        <p class="sub">{l.t("gateway.owners")}</p>
        <ul id="gw-owners">{owner_items}</ul>
        <div class="table-card">
            <table class="cards-on-phone" id="gw-channels" aria-labelledby="gw-channels-h">
                <thead><tr>
                    <th scope="col">{l.t("gateway.chat")}</th>
                    <th scope="col">{l.t("gateway.access")}</th>
                    <th scope="col">{l.t("gateway.scope")}</th>
                    <th scope="col">{l.t("gateway.updated")}</th>
                </tr></thead>
                <tbody>{channel_rows}</tbody>
            </table>
        </div>
        {no_channels.then(|| view! { <p class="empty">{l.t("gateway.channels_empty")}</p> })}
        <p class="sub">{l.t("gateway.channels_help")}</p>
        <TokenCard token />
    }
}

#[component]
pub fn InboundTable(rows: Vec<InboundRow>) -> impl IntoView {
    let l = use_locale();
    let rows = rows
        .into_iter()
        .map(|r| {
            let replies = r
                .replies
                .into_iter()
                .map(|p| view! { <ReplyItem p /> }.into_any())
                .collect_view();
            let result = r.mode.clone().unwrap_or_default();
            let target = match (r.task_id, r.project) {
                (Some(t), _) => view! { <a href=format!("/tasks/{t}")>{l.t("gateway.task")}</a> }.into_any(),
                (None, Some(p)) => view! { <span>{p}</span> }.into_any(),
                (None, None) => view! { <span></span> }.into_any(),
            };
            view! {
                <tr data-inbound-id=r.id.clone() data-state=r.state.as_str()>
                    <td data-label=l.t("gateway.received")><TimeCell ms=Some(r.created_ms) /></td>
                    <td data-label=l.t("gateway.message")><span class="gw-content">{r.content}</span><br />
                        <span class="sub">{format!("{} · {} · {} · {}", r.gateway, r.platform, r.chat_id, r.sender.unwrap_or_default())}</span></td>
                    <td data-label=l.t("gateway.status")><span class=format!("badge gw-{}", r.state.as_str().to_lowercase())>{r.state.as_str()}</span>
                        <br /><span class="sub">{r.intent.as_str()}</span></td>
                    <td data-label=l.t("gateway.result")><code class="gw-mode">{result}</code> " " {target}
                        {r.last_error.map(|e| view! { <br /><span class="error gw-error">{e}</span> })}</td>
                    <td data-label=l.t("gateway.replies")><ul class="gw-replies">{replies}</ul></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-card">
            <table class="cards-on-phone" id="gw-inbound-table">
                <thead><tr>
                    <th scope="col">{l.t("gateway.received")}</th>
                    <th scope="col">{l.t("gateway.message")}</th>
                    <th scope="col">{l.t("gateway.status")}</th>
                    <th scope="col">{l.t("gateway.result")}</th>
                    <th scope="col">{l.t("gateway.replies")}</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// One reply: its kind, state and last error; "retry now" and "mark as
/// delivered" where its state allows them (`harness_types::manual`). After
/// an action the new state is shown until the page reloads.
#[component]
fn ReplyItem(p: ReplyRow) -> impl IntoView {
    let l = use_locale();
    // `true`: retry now; `false`: mark as delivered.
    let decide = Action::new(|(id, retry): &(String, bool)| {
        let (id, retry) = (id.clone(), *retry);
        async move {
            if retry {
                retry_gateway_reply(id).await
            } else {
                mark_gateway_reply_delivered(id).await
            }
        }
    });
    let initial = p.state;
    let state: Signal<ReplyState> =
        Signal::derive(move || decide.value().get().and_then(Result::ok).unwrap_or(initial));
    let can_retry = p.state.allows(ManualAction::Retry);
    let can_mark = p.state.allows(ManualAction::MarkDelivered);
    let id = p.id.clone();
    let actions = move || {
        let (id1, id2) = (id.clone(), id.clone());
        decide.value().get().is_none().then(move || {
            view! {
                {can_retry.then(|| view! {
                    <button type="button" class="ghost gw-reply-retry" disabled=move || decide.pending().get()
                        on:click=move |_| { decide.dispatch((id1.clone(), true)); }>{l.t("outbound.retry")}</button>
                })}
                {can_mark.then(|| view! {
                    <button type="button" class="ghost gw-reply-mark" disabled=move || decide.pending().get()
                        on:click=move |_| { decide.dispatch((id2.clone(), false)); }>{l.t("outbound.mark")}</button>
                })}
            }
            .into_any()
        })
    };
    let failed = move || {
        decide
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| view! { <span class="error" role="alert">{error_text(&e)}</span> })
    };
    let last_error = p.last_error.clone().map(|e| {
        let mut shown: String = e.chars().take(200).collect();
        if shown.len() < e.len() {
            shown.push('…');
        }
        view! { <br /><span class="error gw-reply-error sub" title=e>{shown}</span> }
    });
    view! {
        <li data-reply-id=p.id.clone() data-reply-kind=p.kind.as_str()
            data-reply-state=move || state.get().as_str() title=p.content.clone()>
            {p.kind.as_str()} " " <span class=move || format!("badge gw-{}", state.get().as_str().to_lowercase())>{move || state.get().as_str()}</span>
            {last_error} " " {actions} {failed}
        </li>
    }
    .into_any()
}

/// The page's "rotate the gateway credential" action (see [`GatewayPage`]).
#[derive(Clone, Copy)]
struct TokenRotation(Action<(), Result<String, ServerFnError>>);

/// The gateway credential, masked; rotating it shows the new one once.
#[component]
fn TokenCard(token: Option<String>) -> impl IntoView {
    let l = use_locale();
    let rotate = use_context::<TokenRotation>()
        .map(|r| r.0)
        .unwrap_or_else(|| Action::new(|_: &()| rotate_gateway_token()));
    let result = rotate.value();
    view! {
        <section class="card" id="gw-token" aria-labelledby="gw-token-h">
            <h2 id="gw-token-h">{l.t("gateway.token")}</h2>
            <p class="sub">{l.t("gateway.token_help")}</p>
            <p><code id="gw-token-masked">{token.unwrap_or_else(|| l.t("gateway.token_none").to_string())}</code></p>
            <button type="button" id="gw-rotate" disabled=move || rotate.pending().get()
                on:click=move |_| { rotate.dispatch(()); }>{l.t("gateway.rotate")}</button>
            {move || result.get().map(|r| match r {
                Ok(t) => view! {
                    <p role="status" id="gw-token-new">{l.t("gateway.token_new")} " " <code class="gw-new-token">{t}</code></p>
                }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
            })}
        </section>
    }
}
