//! How a pushed message is getting to the human's chat (the outbox row),
//! shown under the message in `/harness` and on the task page: its state,
//! attempts and last error, with "retry now" for FAILED / DEAD and "mark as
//! delivered" for SENT_UNVERIFIED. Updated live (the page reloads its rows
//! on every change event, `OutboundChanged` included).

use leptos::prelude::*;

use crate::{
    api::{MarkOutboundDelivered, OutboundInfo, RetryOutbound},
    components::error_text,
    i18n::use_locale,
};

fn state_key(state: &str) -> &'static str {
    match state {
        "PENDING" => "outbound.PENDING",
        "SENDING" => "outbound.SENDING",
        "DELIVERED" => "outbound.DELIVERED",
        "SENT_UNVERIFIED" => "outbound.SENT_UNVERIFIED",
        "FAILED" => "outbound.FAILED",
        _ => "outbound.DEAD",
    }
}

#[component]
pub fn OutboundLine(info: OutboundInfo) -> impl IntoView {
    let l = use_locale();
    let retry = ServerAction::<RetryOutbound>::new();
    let mark = ServerAction::<MarkOutboundDelivered>::new();
    let state = info.state.clone();
    let (id1, id2) = (info.id.clone(), info.id.clone());
    let actions = match state.as_str() {
        "FAILED" | "DEAD" => view! {
            <ActionForm action=retry attr:class="inline">
                <input type="hidden" name="id" value=id1 />
                <button type="submit" class="ghost outbound-retry">{l.t("outbound.retry")}</button>
            </ActionForm>
        }
        .into_any(),
        "SENT_UNVERIFIED" => view! {
            <ActionForm action=mark attr:class="inline">
                <input type="hidden" name="id" value=id2 />
                <button type="submit" class="ghost outbound-mark">{l.t("outbound.mark")}</button>
            </ActionForm>
        }
        .into_any(),
        _ => ().into_any(),
    };
    let error = move || {
        let failed = retry
            .value()
            .get()
            .and_then(Result::err)
            .or_else(|| mark.value().get().and_then(Result::err));
        failed.map(|e| view! { <span class="error" role="alert">{error_text(&e)}</span> })
    };
    let attempts = l
        .t("outbound.attempts")
        .replace("{n}", &info.attempts.to_string());
    let last_error = info.error.clone().map(|e| {
        let mut shown: String = e.chars().take(200).collect();
        if shown.len() < e.len() {
            shown.push('…');
        }
        view! { <span class="outbound-error sub" title=e>{shown}</span> }
    });
    view! {
        <div class="delivery outbound" data-outbound-id=info.id.clone() data-outbound-state=state.clone()>
            <span class="badge outbound-state">{info.gateway.clone()} " · " {l.t(state_key(&state))}</span>
            " " <span class="sub outbound-attempts">{attempts}</span>
            " " {last_error} " " {actions} {error}
        </div>
    }
}
