//! How an answered ask's reply is getting into the agent's terminal
//! (the durable delivery row), shown under the reply on the task page and
//! in the `/harness` row, with the manual actions where the worker stops
//! (which ones each state allows: `harness_types::manual`): "retry" for a
//! failed row, "deliver again" / "mark as delivered" for an unverified one.

use harness_types::{DeliveryState, ManualAction, ManualActions};
use leptos::prelude::*;

use crate::{
    api::{DeliveryInfo, MarkDelivered, RetryDelivery, task_inputs},
    components::{Clamp, absolute_time, error_text},
    i18n::use_locale,
    live::use_live,
};

/// `HH:MM` in the browser's local time (UTC on the server).
fn clock(ms: i64, local: bool) -> String {
    #[cfg(feature = "hydrate")]
    if local {
        let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
        return format!("{:02}:{:02}", d.get_hours(), d.get_minutes());
    }
    let _ = local;
    #[cfg(feature = "ssr")]
    if let Some(t) = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms) {
        return t.format("%H:%M").to_string();
    }
    String::new()
}

#[component]
pub fn DeliveryLine(info: DeliveryInfo) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let retry = ServerAction::<RetryDelivery>::new();
    let mark = ServerAction::<MarkDelivered>::new();
    let state = info.state;
    let text = match state {
        DeliveryState::Delivered => {
            let ms = info.done_ms;
            let title = ms.map(|ms| absolute_time(l, ms, false)).unwrap_or_default();
            view! {
                <span title=title>
                    {move || {
                        let at = ms.map(|ms| clock(ms, live.local.get())).unwrap_or_default();
                        l.t("delivery.delivered").replace("{time}", &at)
                    }}
                </span>
            }
            .into_any()
        }
        DeliveryState::WaitingBoundary => {
            view! { <span>{l.t("delivery.waiting")}</span> }.into_any()
        }
        DeliveryState::Resuming => view! { <span>{l.t("delivery.resuming")}</span> }.into_any(),
        DeliveryState::Writing => view! { <span>{l.t("delivery.writing")}</span> }.into_any(),
        DeliveryState::Failed => {
            let reason = info.error.clone().unwrap_or_default();
            view! { <span>{l.t("delivery.failed").replace("{reason}", &reason)}</span> }.into_any()
        }
        DeliveryState::Unverified => view! { <span>{l.t("delivery.unverified")}</span> }.into_any(),
        DeliveryState::Queued => view! { <span>{l.t("delivery.queued")}</span> }.into_any(),
    };
    // A retry of a row that may have arrived is "deliver again".
    let may_have_arrived = state.allows(ManualAction::MarkDelivered);
    let actions = state
        .manual_actions()
        .into_iter()
        .map(|action| {
            let id = info.id.clone();
            match action {
                ManualAction::Retry => view! {
                    <ActionForm action=retry attr:class="inline">
                        <input type="hidden" name="id" value=id />
                        {if may_have_arrived {
                            view! { <button type="submit" class="ghost delivery-again">{l.t("delivery.again")}</button> }.into_any()
                        } else {
                            view! { <button type="submit" class="ghost delivery-retry">{l.t("delivery.retry")}</button> }.into_any()
                        }}
                    </ActionForm>
                }
                .into_any(),
                ManualAction::MarkDelivered => view! {
                    <ActionForm action=mark attr:class="inline">
                        <input type="hidden" name="id" value=id />
                        <button type="submit" class="ghost delivery-mark">{l.t("delivery.mark")}</button>
                    </ActionForm>
                }
                .into_any(),
            }
        })
        .collect_view();
    let error = move || {
        let failed = retry
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| mark.value().get().and_then(Result::err));
        failed.map(|e| view! { <span class="error" role="alert">{error_text(&e)}</span> })
    };
    view! {
        <div class="delivery" data-delivery-id=info.id.clone() data-delivery-state=state.as_str()>
            {text} " " {actions} {error}
        </div>
    }
}

/// The task's keyed terminal input and how each one went (task page).
#[component]
pub fn TaskInputs(#[prop(into)] task_id: Signal<String>) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let inputs = Resource::new(
        move || (task_id.get(), live.tick.get()),
        |(id, _)| task_inputs(id),
    );
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match inputs.await {
                    Ok(rows) if rows.is_empty() => ().into_any(),
                    Ok(rows) => view! {
                        <section aria-labelledby="inputs-h">
                            <h2 id="inputs-h">{l.t("delivery.inputs")}</h2>
                            <ol class="timeline" id="task-inputs">
                                {rows.into_iter().map(|info| {
                                    let (id, text) = (info.id.clone(), info.text.clone());
                                    view! {
                                        <li data-input-id=id>
                                            <Clamp text=Some(text) />
                                            <DeliveryLine info />
                                        </li>
                                    }
                                }).collect_view()}
                            </ol>
                        </section>
                    }
                    .into_any(),
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}
