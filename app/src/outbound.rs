//! How a pushed message is getting to the human's chat (the outbox row),
//! shown under the message in `/harness` and on the task page: its state,
//! attempts and last error, with "retry now" and "mark as delivered" where
//! its state allows them (`harness_types::manual`). Updated live (the page
//! reloads its rows on every change event, `OutboundChanged` included).

use harness_types::{ManualAction, ManualActions, OutboundState};
use leptos::prelude::*;

use crate::{
    api::{MarkOutboundDelivered, OutboundInfo, RetryOutbound},
    components::error_text,
    i18n::use_locale,
};

fn state_key(state: OutboundState) -> &'static str {
    match state {
        OutboundState::Pending => "outbound.PENDING",
        OutboundState::Sending => "outbound.SENDING",
        OutboundState::Delivered => "outbound.DELIVERED",
        OutboundState::SentUnverified => "outbound.SENT_UNVERIFIED",
        OutboundState::Failed => "outbound.FAILED",
        OutboundState::Dead => "outbound.DEAD",
    }
}

#[component]
pub fn OutboundLine(info: OutboundInfo) -> impl IntoView {
    let l = use_locale();
    let retry = ServerAction::<RetryOutbound>::new();
    let mark = ServerAction::<MarkOutboundDelivered>::new();
    let state = info.state;
    let actions = state
        .manual_actions()
        .into_iter()
        .map(|action| {
            let id = info.id.clone();
            match action {
                ManualAction::Retry => view! {
                    <ActionForm action=retry attr:class="inline">
                        <input type="hidden" name="id" value=id />
                        <button type="submit" class="ghost outbound-retry">{l.t("outbound.retry")}</button>
                    </ActionForm>
                }
                .into_any(),
                ManualAction::MarkDelivered => view! {
                    <ActionForm action=mark attr:class="inline">
                        <input type="hidden" name="id" value=id />
                        <button type="submit" class="ghost outbound-mark">{l.t("outbound.mark")}</button>
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
        <div class="delivery outbound" data-outbound-id=info.id.clone() data-outbound-state=state.as_str()>
            <span class="badge outbound-state">{info.gateway.clone()} " · " {l.t(state_key(state))}</span>
            " " <span class="sub outbound-attempts">{attempts}</span>
            " " {last_error} " " {actions} {error}
        </div>
    }
}
