//! A question's evidence and receipt (docs/evidence.md): the agent's screen when
//! it asked (monospace, scrolling, bounded height) and the question's
//! timeline, each step said by the server in the page's language
//! (`api::receipt`). Shown in `/harness`' dialog (its lazy body) and, on
//! demand, under each question of the task page.

use leptos::prelude::*;

use crate::{
    api::{ReceiptData, question_receipt},
    components::TimeCell,
};

/// The evidence and receipt of the question `id`, fetched when shown.
#[component]
pub fn QuestionReceipt(id: String) -> impl IntoView {
    let data = Resource::new(move || id.clone(), question_receipt);
    view! {
        <div class="receipt-box">
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    data.await.ok().map(receipt_body)
                })}
            </Transition>
        </div>
    }
}

/// Type-erased: the dialog's and the timeline's views are deep already.
fn receipt_body(r: ReceiptData) -> AnyView {
    let screen = match r.screen {
        Some(text) => view! {
            <pre class="screen" id="evidence-screen" tabindex="0" aria-label=r.screen_title.clone()>{text}</pre>
        }
        .into_any(),
        None => view! { <p class="sub" id="evidence-none">{r.no_screen}</p> }.into_any(),
    };
    let after_title = r.after_title;
    let steps = r
        .steps
        .into_iter()
        .map(|s| {
            let screen = s.screen.map(|text| {
                view! { <pre class="screen" tabindex="0" aria-label=after_title.clone()>{text}</pre> }
            });
            view! {
                <li data-step=s.kind.as_str() data-status=s.status.as_str()>
                    <TimeCell ms=s.at_ms />
                    " "
                    <span class="receipt-text">{s.text}</span>
                    {screen}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="evidence">
            <h3>{r.screen_title}</h3>
            {screen}
        </section>
        <section class="receipt">
            <h3>{r.title}</h3>
            {r.stalled.map(|s| view! { <p class="warn" role="status" id="receipt-stalled">{s}</p> })}
            <ol class="receipt-steps" id="receipt-steps">{steps}</ol>
        </section>
    }
    .into_any()
}
