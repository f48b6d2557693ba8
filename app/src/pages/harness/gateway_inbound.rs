//! The newest messages the chat gateways brought in (issue 28.7), under the
//! notification center: each with its state, its routing result and how
//! many replies went back; the `/gateway` page has them all. Nothing is
//! shown while no gateway message was ever received.

use leptos::prelude::*;

use crate::{api::gateway::recent_inbound, components::TimeCell, i18n::use_locale, live::use_live};

#[component]
pub fn RecentInbound() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let rows = Resource::new(move || live.tick.get(), |_| recent_inbound());
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                let rows = rows.await.ok().filter(|r| !r.is_empty())?;
                let items = rows
                    .into_iter()
                    .map(|r| {
                        let delivered = r.replies.iter().filter(|p| p.state == "DELIVERED").count();
                        let replies = l
                            .t("harness.gw_replies")
                            .replace("{n}", &r.replies.len().to_string())
                            .replace("{d}", &delivered.to_string());
                        view! {
                            <li data-inbound-id=r.id.clone() data-state=r.state.clone()>
                                <span class=format!("badge gw-{}", r.state.to_lowercase())>{r.state.clone()}</span>
                                " " <code class="gw-mode">{r.mode.unwrap_or_default()}</code>
                                " " <span class="gw-content">{r.content}</span>
                                " " <span class="sub">{replies} " · " <TimeCell ms=Some(r.created_ms) /></span>
                            </li>
                        }
                    })
                    .collect_view();
                Some(view! {
                    <section class="card" id="harness-gateway" aria-labelledby="harness-gateway-h">
                        <h2 id="harness-gateway-h">{l.t("harness.gw_title")}</h2>
                        <ul class="gw-recent">{items}</ul>
                        <p><a href="/gateway" id="harness-gateway-link">{l.t("harness.gw_all")}</a></p>
                    </section>
                })
            })}
        </Transition>
    }
}
