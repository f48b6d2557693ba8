//! `/report`: the morning report on the web. For each project and task,
//! what happened in the window (runs, commits, progress lines, questions and
//! approvals and how they were decided, automatic resumes); then what waits
//! for you now, ranked and numbered, and one box that answers many items
//! (`1 B · 2 approve · 3 deny: not on Friday`). The report is the core's
//! (`harness_core::report`), kept so the box's numbers stay the ones shown;
//! every figure links to its page. `?since=` sets the window's start.

use harness_types::{AskedState, ExecutionStatus};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::{
    api::report::{
        AnswerReport, AskedData, BatchData, ReportData, RunData, SectionData, WaitKind,
        WaitingData, get_report,
    },
    components::error_text,
    i18n::{Locale, use_locale},
};

/// "45 min", "2 h", "2 h 5 min" (localised).
pub fn duration_text(l: Locale, minutes: i64) -> String {
    let (h, m) = (minutes / 60, minutes % 60);
    let (key, h, m) = match (h, m) {
        (0, m) => ("report.minutes", 0, m),
        (h, 0) => ("report.hours", h, 0),
        (h, m) => ("report.hours_minutes", h, m),
    };
    l.t(key)
        .replace("{h}", &h.to_string())
        .replace("{m}", &m.to_string())
}

/// `HH:MM` of a time written `YYYY-MM-DD HH:MM UTC`.
fn hm(at: &str) -> &str {
    at.get(11..16).unwrap_or(at)
}

fn state_key(state: AskedState) -> &'static str {
    use AskedState as S;
    match state {
        S::Open | S::Pending => "report.state.open",
        S::Answered => "report.state.answered",
        S::Approved => "report.state.approved",
        S::Denied => "report.state.denied",
        S::Cancelled => "report.state.cancelled",
        S::Expired => "report.state.expired",
        S::Ignored => "report.state.ignored",
        S::Closed | S::PendingDelivery => "report.state.other",
    }
}

fn run_key(status: ExecutionStatus) -> &'static str {
    match status {
        ExecutionStatus::Completed => "report.run.finished",
        ExecutionStatus::Failed => "report.run.failed",
        ExecutionStatus::Stopped => "report.run.stopped",
        ExecutionStatus::Paused => "report.run.waiting",
        ExecutionStatus::Running => "report.run.running",
    }
}

fn kind_key(kind: WaitKind) -> &'static str {
    match kind {
        WaitKind::Question => "report.kind.question",
        WaitKind::Approval => "report.kind.approval",
        WaitKind::Agent => "report.kind.agent",
    }
}

#[component]
pub fn ReportPage() -> impl IntoView {
    let l = use_locale();
    let query = use_query_map();
    let since = move || {
        query
            .with(|q| q.get("since"))
            .filter(|s| !s.trim().is_empty())
    };
    let report = Resource::new(since, get_report);
    view! {
        <h1>{l.t("report.title")}</h1>
        <form class="report-since" method="get" action="/report">
            <label for="report-since">{l.t("report.since_label")}</label>
            <input type="text" name="since" id="report-since" size="12"
                placeholder="12h" prop:value=move || since().unwrap_or_default()
                aria-describedby="report-since-hint" />
            <button type="submit" class="ghost">{l.t("report.since_apply")}</button>
            <span class="hint" id="report-since-hint">{l.t("report.since_hint")}</span>
        </form>
        <Suspense fallback=move || view! { <p>{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match report.await {
                    Ok(r) => view! { <ReportView r /> }.into_any(),
                    Err(e) => view! { <p class="error" id="report-error">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ReportView(r: ReportData) -> impl IntoView {
    let l = use_locale();
    let lead = l
        .t("report.lead")
        .replace("{since}", &r.since)
        .replace("{until}", &r.until);
    // The numbers a batch reply took: their items are marked answered.
    let taken = RwSignal::new(Vec::<u32>::new());
    // What still waits of what this report counted.
    let count = r.waiting_count;
    let left = move || count.saturating_sub(taken.with(|t| t.len()) as u64);
    let waiting = if r.waiting.is_empty() {
        view! { <p class="empty" id="report-waiting-none">{l.t("report.waiting_none")}</p> }
            .into_any()
    } else {
        let items = r
            .waiting
            .into_iter()
            .map(|w| view! { <WaitingRow w taken /> })
            .collect_view();
        view! {
            <ol class="report-waiting" id="report-waiting-list">{items}</ol>
            <BatchBox report_id=r.id.clone() taken />
        }
        .into_any()
    };
    let tasks = if r.tasks.is_empty() {
        view! { <p class="empty" id="report-nothing">{l.t("report.nothing")}</p> }.into_any()
    } else {
        sections(l, r.tasks).into_any()
    };
    view! {
        <p class="lead" id="report-window" data-report-id=r.id.clone()>{lead}</p>
        <section class="report-now card" id="report-waiting" aria-labelledby="report-waiting-h">
            <h2 id="report-waiting-h">
                {l.t("report.waiting_title")}" "
                <a href="/harness" class="count" id="report-waiting-count"
                    data-count=left>{left}</a>
            </h2>
            {waiting}
        </section>
        <section class="report-night" id="report-tasks" aria-labelledby="report-tasks-h">
            <h2 id="report-tasks-h">{l.t("report.night_title")}</h2>
            {tasks}
        </section>
    }
}

/// The tasks, under a heading per project (in the core's order: project,
/// then title).
fn sections(l: Locale, tasks: Vec<SectionData>) -> impl IntoView {
    let mut groups: Vec<(Option<String>, Vec<SectionData>)> = Vec::new();
    for t in tasks {
        match groups.last_mut() {
            Some((p, list)) if *p == t.project_name => list.push(t),
            _ => groups.push((t.project_name.clone(), vec![t])),
        }
    }
    groups
        .into_iter()
        .map(|(project, list)| {
            let heading = match &project {
                Some(name) => l.t("report.project").replace("{name}", name),
                None => l.t("report.no_project").to_string(),
            };
            let list = list
                .into_iter()
                .map(|t| view! { <TaskBlock t /> })
                .collect_view();
            view! {
                <div class="report-project">
                    <h3>{heading}</h3>
                    {list}
                </div>
            }
        })
        .collect_view()
}

#[component]
fn TaskBlock(t: SectionData) -> impl IntoView {
    let l = use_locale();
    let link = t.link.clone();
    let runs = t
        .runs
        .iter()
        .map(|run| run_line(l, &link, run))
        .collect_view();
    let resumed = t
        .resumed
        .iter()
        .map(|r| view! { <li class="report-resumed">{r.clone()}</li> })
        .collect_view();
    let commits = t.commits.as_ref().map(|c| {
        let what = l
            .t("report.commits")
            .replace("{n}", &c.count.to_string())
            .replace("{branch}", &c.branch);
        let stat = (!c.shortstat.is_empty()).then(|| format!(": {}", c.shortstat));
        view! { <li class="report-commits"><a href=link.clone()>{what}</a>{stat}</li> }
    });
    let progress = t
        .progress
        .iter()
        .map(|p| {
            view! {
                <li class="report-progress">
                    <time>{hm(&p.at).to_string()}</time>" "{l.t("report.progress")}": "{p.text.clone()}
                </li>
            }
        })
        .collect_view();
    let asked = t
        .asked
        .iter()
        .map(|a| asked_line(l, &link, a))
        .collect_view();
    view! {
        <article class="report-task" data-task-id=t.task_id.clone()>
            <h4><a href=link.clone()>{t.title.clone()}</a></h4>
            <ul class="report-lines">{runs}{resumed}{commits}{progress}{asked}</ul>
        </article>
    }
}

fn run_line(l: Locale, link: &str, run: &RunData) -> AnyView {
    let ran = l
        .t("report.ran")
        .replace("{d}", &duration_text(l, run.minutes))
        .replace("{at}", hm(&run.started));
    let mut end = String::new();
    if let Some(ended) = &run.ended {
        end.push_str(&l.t("report.ended_at").replace("{at}", hm(ended)));
        let mut detail = Vec::new();
        if let Some(code) = run.exit_code {
            detail.push(l.t("report.exit").replace("{code}", &code.to_string()));
        }
        if let Some(reason) = &run.end_reason {
            detail.push(reason.replace('_', " "));
        }
        if !detail.is_empty() {
            end.push_str(&format!(" ({})", detail.join(", ")));
        }
    }
    view! {
        <li class="report-run" data-status=run.status.as_str()>
            <a href=link.to_string()>{ran}</a>": "
            <span class=format!("run-state run-{}", run.status.as_str().to_lowercase())>{l.t(run_key(run.status))}</span>
            " "{end}
        </li>
    }
    .into_any()
}

fn asked_line(l: Locale, link: &str, a: &AskedData) -> AnyView {
    let what = match a.kind {
        WaitKind::Approval => l.t("report.approval"),
        _ => l.t("report.asked"),
    };
    let state = l.t(state_key(a.state));
    let outcome = match (&a.by, a.after_minutes) {
        (Some(by), Some(after)) => {
            let answer = match (&a.answer, a.kind) {
                (Some(text), WaitKind::Question) => format!("“{text}”"),
                (Some(reason), _) => format!("{state} ({reason})"),
                (None, _) => state.to_string(),
            };
            l.t("report.decided")
                .replace("{answer}", &answer)
                .replace("{by}", by)
                .replace("{d}", &duration_text(l, after))
        }
        _ => state.to_string(),
    };
    let reminders = (a.reminders > 0).then(|| {
        format!(
            ", {}",
            l.t("report.reminders")
                .replace("{n}", &a.reminders.to_string())
        )
    });
    let receipt = a
        .receipt
        .clone()
        .map(|r| view! { <div class="sub report-receipt">{r}</div> });
    view! {
        <li class="report-asked" data-state=a.state.as_str() data-ask-id=a.id.clone()>
            <time>{hm(&a.asked).to_string()}</time>" "{what}": "
            <a href=link.to_string()>{a.text.clone()}</a>
            " → "{outcome}{reminders}
            {receipt}
        </li>
    }
    .into_any()
}

#[component]
fn WaitingRow(w: WaitingData, taken: RwSignal<Vec<u32>>) -> impl IntoView {
    let l = use_locale();
    let number = w.number;
    let options = (!w.options.is_empty()).then(|| {
        let list = w
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| view! { <li><span class="opt-n">{i + 1}</span>" "{o.clone()}</li> })
            .collect_view();
        view! { <ol class="report-options" aria-label=l.t("report.options")>{list}</ol> }
    });
    let answer = match w.kind {
        WaitKind::Question => None,
        WaitKind::Approval => Some(l.t("report.answer_approval")),
        WaitKind::Agent => Some(l.t("report.answer_agent")),
    };
    let mut meta = vec![
        l.t("report.waiting_since")
            .replace("{at}", &w.waiting_since),
        w.why.clone(),
    ];
    if let Some(d) = &w.default_at {
        meta.push(l.t("report.default_at").replace("{at}", d));
    }
    if let Some(a) = answer {
        meta.push(a.to_string());
    }
    view! {
        <li class="report-item" data-number=number data-kind=w.kind.as_str()
            data-task-id=w.task_id.clone()
            class:done=move || taken.with(|t| t.contains(&number))>
            <span class="report-num" aria-hidden="true">{number}</span>
            <div class="report-item-body">
                <p class="report-item-head">
                    <span class=format!("badge kind-{}", w.kind.as_str())>{l.t(kind_key(w.kind))}</span>" "
                    <a href=w.link.clone() class="report-item-task">{w.task_title.clone()}</a>
                    <span class="report-taken">{l.t("report.item_taken")}</span>
                </p>
                <p class="report-item-text">{w.text.clone()}</p>
                {options}
                <p class="sub report-item-meta">{meta.join(" · ")}</p>
            </div>
        </li>
    }
}

/// The batch answer box and what it took.
#[component]
fn BatchBox(report_id: String, taken: RwSignal<Vec<u32>>) -> impl IntoView {
    let l = use_locale();
    let action = ServerAction::<AnswerReport>::new();
    let text = RwSignal::new(String::new());
    let id = StoredValue::new(report_id);
    let send = move || {
        let body = text.get_untracked();
        if body.trim().is_empty() || action.pending().get_untracked() {
            return;
        }
        action.dispatch(AnswerReport {
            report_id: id.get_value(),
            text: body,
        });
    };
    Effect::new(move |_| {
        if let Some(Ok(out)) = action.value().get() {
            let numbers: Vec<u32> = out
                .items
                .iter()
                .filter(|i| i.taken)
                .map(|i| i.number)
                .collect();
            if !numbers.is_empty() {
                taken.update(|t| t.extend(numbers));
                text.set(String::new());
            }
        }
    });
    view! {
        <form class="report-reply" on:submit=move |ev| { ev.prevent_default(); send(); }>
            <label for="report-reply-text">{l.t("report.reply_label")}</label>
            <textarea id="report-reply-text" rows="3"
                placeholder=l.t("report.reply_placeholder")
                aria-describedby="report-reply-hint"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=move |ev| crate::keys::send_on_key(&ev, send)
            ></textarea>
            <p class="hint" id="report-reply-hint">{l.t("report.reply_hint")}</p>
            <button type="submit" class="primary" id="report-reply-send"
                disabled=move || action.pending().get() || text.with(|t| t.trim().is_empty())>
                {l.t("report.send")}
            </button>
        </form>
        <div id="report-result" role="status" aria-live="polite">
            {move || action.value().get().map(|r| match r {
                Ok(out) => outcome(l, out).into_any(),
                Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
            })}
        </div>
    }
}

fn outcome(l: Locale, out: BatchData) -> impl IntoView {
    if let Some(why) = out.malformed {
        return view! {
            <p class="error" id="report-malformed">{l.t("report.malformed").replace("{why}", &why)}</p>
        }
        .into_any();
    }
    let (ok, no): (Vec<_>, Vec<_>) = out.items.into_iter().partition(|i| i.taken);
    let list = |items: Vec<crate::api::report::ItemOutcomeData>, class: &'static str| {
        items
            .into_iter()
            .map(|i| {
                let link = i.task_id.as_ref().map(|t| format!("/tasks/{t}"));
                view! {
                    <li class=class data-number=i.number>
                        <strong>{i.number}</strong>": "
                        {match link {
                            Some(href) => view! { <a href=href>{i.detail.clone()}</a> }.into_any(),
                            None => view! { <span>{i.detail.clone()}</span> }.into_any(),
                        }}
                    </li>
                }
            })
            .collect_view()
    };
    let taken_head = l.t("report.taken").replace("{n}", &ok.len().to_string());
    let refused_head = l
        .t("report.not_taken")
        .replace("{n}", &no.len().to_string());
    let taken = (!ok.is_empty()).then(|| view! {
        <h3>{taken_head}</h3><ul class="report-outcome" id="report-taken">{list(ok, "taken")}</ul>
    });
    let refused = (!no.is_empty()).then(|| view! {
        <h3>{refused_head}</h3><ul class="report-outcome" id="report-refused">{list(no, "refused")}</ul>
    });
    view! {
        {taken}
        {refused}
        <p><a href="/report" rel="external" id="report-fresh">{l.t("report.fresh")}</a></p>
    }
    .into_any()
}
