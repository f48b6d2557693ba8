//! How long agents wait for humans (`/analytics`): the browser-side copy of
//! `harness_core::analytics::Analytics` and its server function.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PercentilesData {
    pub count: usize,
    pub p50_seconds: Option<f64>,
    pub p90_seconds: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BarData {
    pub key: String,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyticsData {
    pub response_24h: PercentilesData,
    pub response_7d: PercentilesData,
    pub parked_hours_24h: f64,
    pub parked_hours_7d: f64,
    pub questions_per_project: Vec<BarData>,
    pub unanswered_by_age: Vec<BarData>,
    /// Answers of the last 7 d by the reminders they needed (`0`…`3+`,
    /// `escalated`).
    #[serde(default)]
    pub reminders_per_answer: Vec<BarData>,
}

#[cfg(feature = "ssr")]
impl From<harness_core::analytics::Analytics> for AnalyticsData {
    fn from(a: harness_core::analytics::Analytics) -> Self {
        let p = |p: harness_core::analytics::Percentiles| PercentilesData {
            count: p.count,
            p50_seconds: p.p50_seconds,
            p90_seconds: p.p90_seconds,
        };
        let bars = |bars: Vec<harness_core::analytics::Bar>| {
            bars.into_iter()
                .map(|b| BarData {
                    key: b.key,
                    value: b.value,
                })
                .collect()
        };
        Self {
            response_24h: p(a.response_24h),
            response_7d: p(a.response_7d),
            parked_hours_24h: a.parked_hours_24h,
            parked_hours_7d: a.parked_hours_7d,
            questions_per_project: bars(a.questions_per_project),
            unanswered_by_age: bars(a.unanswered_by_age),
            reminders_per_answer: bars(a.reminders_per_answer),
        }
    }
}

#[server(prefix = "/sfn", endpoint = "analytics")]
pub async fn analytics() -> Result<AnalyticsData, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.reports()
        .analytics(chrono::Utc::now())
        .await
        .map_err(ssr::to_sfn)?
        .into())
}
