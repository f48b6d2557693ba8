//! `/analytics`: how long agents wait for humans. The charts are SVG drawn by
//! the same component on the server and in the browser (text is escaped by
//! the view, never raw markup).

use leptos::prelude::*;

use crate::{
    api::analytics::{AnalyticsData, BarData, PercentilesData, analytics},
    components::error_text,
    i18n::{Locale, use_locale},
};

/// `95 s`, `12 min`, `3.5 h`, `2.1 d`.
pub fn duration_text(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 90.0 * 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 36.0 * 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} d", seconds / 86_400.0)
    }
}

fn percentile_text(l: Locale, p: PercentilesData) -> String {
    match (p.p50_seconds, p.p90_seconds) {
        (Some(p50), Some(p90)) => l
            .t("analytics.percentiles")
            .replace("{p50}", &duration_text(p50))
            .replace("{p90}", &duration_text(p90))
            .replace("{n}", &p.count.to_string()),
        _ => l.t("analytics.no_answers").to_string(),
    }
}

/// A horizontal bar chart: one row per bar, labelled, scaled to the largest.
#[component]
fn BarChart(id: &'static str, title: String, bars: Vec<BarData>) -> impl IntoView {
    const ROW: f64 = 26.0;
    const LABEL: f64 = 150.0;
    const WIDTH: f64 = 460.0;
    let max = bars
        .iter()
        .map(|b| b.value)
        .fold(0.0_f64, f64::max)
        .max(1.0);
    #[allow(clippy::cast_precision_loss)]
    let height = ROW * bars.len().max(1) as f64 + 4.0;
    let rows = bars
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            #[allow(clippy::cast_precision_loss)]
            let y = ROW * i as f64 + 2.0;
            let w =
                ((WIDTH - LABEL - 40.0) * b.value / max).max(if b.value > 0.0 { 2.0 } else { 0.0 });
            let value = format!("{}", b.value);
            view! {
                <g class="bar">
                    <text x="0" y=y + 17.0 class="bar-label">{b.key.clone()}</text>
                    <rect x=LABEL y=y + 4.0 width=w height=ROW - 8.0 rx="3" />
                    <text x=LABEL + w + 6.0 y=y + 17.0 class="bar-value">{value}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <figure class="chart" id=id>
            <figcaption>{title.clone()}</figcaption>
            <svg
                role="img"
                aria-label=title
                viewBox=format!("0 0 {WIDTH} {height}")
                width="100%"
                preserveAspectRatio="xMinYMin meet"
            >
                {rows}
            </svg>
        </figure>
    }
}

#[component]
pub fn AnalyticsPage() -> impl IntoView {
    let l = use_locale();
    let data = Resource::new(|| (), |_| analytics());
    view! {
        <h1>{l.t("analytics.title")}</h1>
        <p class="lead">{l.t("analytics.lead")}</p>
        <Suspense fallback=move || view! { <p>{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(a) => view! { <AnalyticsView a /> }.into_any(),
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn AnalyticsView(a: AnalyticsData) -> impl IntoView {
    let l = use_locale();
    let projects: Vec<BarData> = a
        .questions_per_project
        .into_iter()
        .map(|b| BarData {
            key: if b.key.is_empty() {
                l.t("analytics.no_project").to_string()
            } else {
                b.key
            },
            value: b.value,
        })
        .collect();
    let ages: Vec<BarData> = a
        .unanswered_by_age
        .into_iter()
        .map(|b| BarData {
            key: l.t(age_key(&b.key)).to_string(),
            value: b.value,
        })
        .collect();
    let reminded: Vec<BarData> = a
        .reminders_per_answer
        .into_iter()
        .map(|b| BarData {
            key: match b.key.as_str() {
                "0" => l.t("analytics.reminders.none").to_string(),
                "escalated" => l.t("analytics.reminders.escalated").to_string(),
                n => l.t("analytics.reminders.n").replace("{n}", n),
            },
            value: b.value,
        })
        .collect();
    view! {
        <section class="stats" id="analytics-response">
            <div class="stat">
                <h2>{l.t("analytics.response")}</h2>
                <p><strong>{l.t("analytics.last_24h")}</strong>" "<span id="resp-24h">{percentile_text(l, a.response_24h)}</span></p>
                <p><strong>{l.t("analytics.last_7d")}</strong>" "<span id="resp-7d">{percentile_text(l, a.response_7d)}</span></p>
            </div>
            <div class="stat">
                <h2>{l.t("analytics.parked")}</h2>
                <p><strong>{l.t("analytics.last_24h")}</strong>" "<span id="parked-24h">{duration_text(a.parked_hours_24h * 3600.0)}</span></p>
                <p><strong>{l.t("analytics.last_7d")}</strong>" "<span id="parked-7d">{duration_text(a.parked_hours_7d * 3600.0)}</span></p>
            </div>
        </section>
        {if projects.is_empty() {
            view! { <p class="empty" id="chart-projects">{l.t("analytics.no_questions")}</p> }.into_any()
        } else {
            view! { <BarChart id="chart-projects" title=l.t("analytics.per_project").to_string() bars=projects /> }.into_any()
        }}
        <BarChart id="chart-ages" title=l.t("analytics.unanswered").to_string() bars=ages />
        <BarChart id="chart-reminders" title=l.t("analytics.reminders").to_string() bars=reminded />
    }
}

fn age_key(key: &str) -> &'static str {
    match key {
        "lt1h" => "analytics.age.lt1h",
        "h1to6" => "analytics.age.h1to6",
        "h6to24" => "analytics.age.h6to24",
        "d1to7" => "analytics.age.d1to7",
        _ => "analytics.age.gt7d",
    }
}
