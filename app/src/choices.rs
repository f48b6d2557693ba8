//! Structured questions in the UI: the options of an OPEN ask as
//! buttons (one click answers) or, with multiSelect, checkboxes and Send;
//! keys 1–8 pick an option where `keys` is on (the handle dialog); the
//! default is marked and a live countdown runs to the deadline. A free-text
//! answer stays possible next to them (the caller's reply box).

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{ChoiceInfo, ReplyAsk},
    i18n::{Locale, use_locale},
};

/// How long a one-tap answer can be taken back before it is sent.
pub const UNDO_MS: u64 = 3000;

/// Milliseconds since the epoch, now.
fn now_ms() -> i64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(all(feature = "ssr", not(feature = "hydrate")))]
    {
        chrono::Utc::now().timestamp_millis()
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        0
    }
}

/// `1h 02m`, `4m 05s`, `12s`.
pub fn remaining_text(ms: i64) -> String {
    let s = (ms.max(0) + 999) / 1000;
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    if h >= 24 {
        format!("{}d {}h", h / 24, h % 24)
    } else if h > 0 {
        format!("{h}h {m:02}m")
    } else if m > 0 {
        format!("{m}m {sec:02}s")
    } else {
        format!("{sec}s")
    }
}

/// A live countdown to `deadline_ms` (ticks every second once hydrated).
#[component]
pub fn Countdown(deadline_ms: i64, has_default: bool) -> impl IntoView {
    let l = use_locale();
    let now = RwSignal::new(now_ms());
    #[cfg(feature = "hydrate")]
    {
        if let Ok(handle) = set_interval_with_handle(
            move || {
                let _ = now.try_set(now_ms());
            },
            std::time::Duration::from_secs(1),
        ) {
            on_cleanup(move || handle.clear());
        }
    }
    let text = move || {
        let left = deadline_ms - now.get();
        if left <= 0 {
            l.t(if has_default {
                "choices.default_due"
            } else {
                "choices.deadline_passed"
            })
            .to_string()
        } else {
            let key = if has_default {
                "choices.default_in"
            } else {
                "choices.deadline_in"
            };
            l.t(key).replace("{n}", &remaining_text(left))
        }
    };
    view! {
        <span class="countdown" data-deadline-ms=deadline_ms.to_string()>{text}</span>
    }
    .into_any()
}

fn option_title(l: Locale, c: &ChoiceInfo, label: &str) -> String {
    let mut title = c
        .options
        .iter()
        .find(|o| o.label == label)
        .and_then(|o| crate::approval_words::option(l, &o.label, o.description.as_deref()).1)
        .unwrap_or_default();
    if c.default.as_deref() == Some(label) {
        if !title.is_empty() {
            title.push_str(" · ");
        }
        title.push_str(l.t("choices.default"));
    }
    title
}

/// The options of an OPEN ask. One click answers (`action`); with
/// multiSelect, checkboxes and Send. With `keys`, 1–8 pick an option while
/// the focus is on the options.
#[component]
pub fn ChoicePicker(
    task_id: String,
    /// The ask's id: the answer is for this question only.
    request_id: String,
    choices: ChoiceInfo,
    action: ServerAction<ReplyAsk>,
    #[prop(optional)] keys: bool,
) -> impl IntoView {
    let l = use_locale();
    let c = StoredValue::new(choices.clone());
    let checked = RwSignal::new(Vec::<String>::new());
    let task = StoredValue::new(task_id.clone());
    let ask = StoredValue::new(request_id);
    let send = move |text: String| {
        if text.trim().is_empty() || action.pending().get_untracked() {
            return;
        }
        action.dispatch(ReplyAsk {
            task_id: task.get_value(),
            text,
            request_id: Some(ask.get_value()),
        });
    };
    // A one-tap answer waits UNDO_MS with an "Undo" before it is sent
    // (one tap sent an answer the person could not read,
    // and could not take back). Without JavaScript the form posts at once.
    let armed = RwSignal::new(None::<String>);
    #[cfg(feature = "hydrate")]
    let timer = StoredValue::new(None::<leptos::leptos_dom::helpers::TimeoutHandle>);
    let arm = move |label: String| {
        if action.pending().get_untracked() {
            return;
        }
        #[cfg(feature = "hydrate")]
        {
            if let Some(h) = timer.get_value() {
                h.clear();
            }
            armed.set(Some(label.clone()));
            let handle = set_timeout_with_handle(
                move || {
                    let _ = timer.try_set_value(None);
                    if armed.try_get_untracked().flatten().is_some() {
                        armed.set(None);
                        send(label);
                    }
                },
                std::time::Duration::from_millis(UNDO_MS),
            )
            .ok();
            timer.set_value(handle);
        }
        #[cfg(not(feature = "hydrate"))]
        send(label);
    };
    let undo = move |_| {
        #[cfg(feature = "hydrate")]
        if let Some(h) = timer.get_value() {
            h.clear();
            timer.set_value(None);
        }
        armed.set(None);
    };
    #[cfg(feature = "hydrate")]
    {
        let task_id = task_id.clone();
        on_cleanup(move || {
            // Left (or redrawn) while an answer waited: it is sent now, never lost.
            if let Some(h) = timer.try_get_value().flatten() {
                h.clear();
                if let Some(label) = armed.try_get_untracked().flatten() {
                    // Redrawn (the row changed, e.g. an approval decided
                    // elsewhere): through the page's action, so its result
                    // line shows the answer — or "already decided".
                    if action.version().try_get_untracked().is_some() {
                        action.dispatch(ReplyAsk {
                            task_id: task_id.clone(),
                            text: label,
                            request_id: Some(ask.get_value()),
                        });
                        return;
                    }
                    let ask = ask.get_value();
                    leptos::task::spawn_local(async move {
                        if let Err(e) = crate::api::reply_ask(task_id, label, Some(ask)).await {
                            leptos::logging::warn!("answer not sent: {e}");
                        }
                    });
                }
            }
        });
    }
    let toggle = move |label: String| {
        checked.update(|v| {
            if let Some(i) = v.iter().position(|x| *x == label) {
                v.remove(i);
            } else {
                v.push(label);
            }
        });
    };
    let joined = move || {
        let picked = checked.get();
        c.with_value(|c| {
            c.options
                .iter()
                .filter(|o| picked.contains(&o.label))
                .map(|o| o.label.clone())
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if !keys || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        let Some(n) = ev
            .key()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=8).contains(n))
        else {
            return;
        };
        let Some(label) = c.with_value(|c| c.options.get(n - 1).map(|o| o.label.clone())) else {
            return;
        };
        ev.prevent_default();
        if c.with_value(|c| c.multi_select) {
            toggle(label);
        } else {
            arm(label);
        }
    };
    let multi = choices.multi_select;
    let items = choices
        .options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let label = o.label.clone();
            // What the button says; `label` is what it sends.
            let shown = crate::approval_words::option(l, &o.label, o.description.as_deref()).0;
            let is_default = choices.default.as_deref() == Some(label.as_str());
            let title = option_title(l, &choices, &label);
            let number = format!("{}.", i + 1);
            let mark = is_default.then(|| {
                view! { <span class="default-mark">{l.t("choices.default")}</span> }
            });
            if multi {
                let (l1, l2) = (label.clone(), label.clone());
                view! {
                    <label class="choice" class:default=is_default title=title data-label=label.clone()>
                        <input
                            type="checkbox"
                            prop:checked=move || checked.with(|v| v.contains(&l1))
                            on:change=move |_| toggle(l2.clone())
                        />
                        <span class="num">{number}</span> " " {shown.clone()} {mark}
                    </label>
                }
                .into_any()
            } else {
                let hidden_task = task_id.clone();
                let hidden_ask = ask.get_value();
                let value = label.clone();
                let tapped = label.clone();
                view! {
                    <ActionForm action attr:class="choice-form">
                        <input type="hidden" name="task_id" value=hidden_task />
                        <input type="hidden" name="request_id" value=hidden_ask />
                        <input type="hidden" name="text" value=value />
                        <button
                            type="submit"
                            class="choice"
                            class:default=is_default
                            title=title
                            data-label=label.clone()
                            disabled=move || action.pending().get()
                            on:click=move |ev| {
                                ev.prevent_default();
                                arm(tapped.clone());
                            }
                        >
                            <span class="num">{number}</span> " " {shown.clone()} {mark}
                        </button>
                    </ActionForm>
                }
                .into_any()
            }
        })
        .collect_view();
    let multi_send = multi.then(|| {
        view! {
            <button
                type="button"
                class="primary choice-send"
                disabled=move || checked.with(Vec::is_empty) || action.pending().get()
                on:click=move |_| send(joined())
            >
                {l.t("action.send")}
            </button>
        }
    });
    let countdown = choices.deadline_ms.map(|deadline_ms| {
        view! { <Countdown deadline_ms has_default=choices.default.is_some() /> }.into_any()
    });
    let hint = keys.then(|| view! { <p class="hint sub">{l.t("choices.keys_hint")}</p> });
    // What a label reads as on this page (the gate's Approve / Deny in its language).
    let shown_label = move |label: &str| {
        c.with_value(|c| {
            let description = c
                .options
                .iter()
                .find(|o| o.label == label)
                .and_then(|o| o.description.clone());
            crate::approval_words::option(l, label, description.as_deref()).0
        })
    };
    let waiting = move || {
        armed.get().map(|label| {
            view! {
                <div class="choice-armed" role="status" data-label=label.clone()>
                    <span>{l.t("choices.sending").replace("{label}", &shown_label(&label))}</span>
                    <button type="button" class="ghost choice-undo" on:click=undo>
                        {l.t("choices.undo")}
                    </button>
                    <span class="undo-bar" aria-hidden="true"></span>
                </div>
            }
        })
    };
    view! {
        <div
            class="choices"
            class:armed=move || armed.with(Option::is_some)
            data-urgency=choices.urgency.clone()
            data-multi=multi.to_string()
            role="group"
            aria-label=l.t("choices.label")
            on:keydown=on_key
        >
            {items}
            {multi_send}
            {countdown}
            {waiting}
        </div>
        {hint}
    }
    .into_any()
}

/// The option(s) an answered ask chose, and the mark of an ask answered by
/// its default after the deadline.
#[component]
pub fn AnsweredByDefault(choices: Option<ChoiceInfo>) -> impl IntoView {
    let l = use_locale();
    choices.map(|c| {
        let chosen = (!c.answered.is_empty()).then(|| {
            view! {
                <span class="answered-choice">
                    {l.t("choices.chosen")} " " <strong>{c.answered.join(", ")}</strong>
                </span>
            }
        });
        let by_default = c
            .by_default
            .then(|| view! { <span class="by-default">{l.t("choices.by_default")}</span> });
        view! { {chosen} {by_default} }
    })
}

#[cfg(test)]
mod tests {
    use super::remaining_text;

    #[test]
    fn countdown_text() {
        assert_eq!(remaining_text(12_000), "12s");
        assert_eq!(remaining_text(11_001), "12s", "rounded up");
        assert_eq!(remaining_text(245_000), "4m 05s");
        assert_eq!(remaining_text(3_720_000), "1h 02m");
        assert_eq!(remaining_text(26 * 3_600_000), "1d 2h");
        assert_eq!(remaining_text(-5), "0s");
    }
}
