//! How long agents wait for humans: response times, parked time, questions
//! per project, unanswered questions by age — one view model behind the
//! `/analytics` page and its REST twin. Computed from the stored asks (the
//! database is the truth, so the figures survive restarts).

use crate::report::Reports;
use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::{error::CoreResult, store::AskTiming};

/// At most this many asks are read for one view (newest first).
pub const MAX_ASKS: i64 = 100_000;

/// p50 / p90 of a set of durations (nearest rank), in seconds.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Percentiles {
    pub count: usize,
    pub p50_seconds: Option<f64>,
    pub p90_seconds: Option<f64>,
}

/// One bar of a chart.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bar {
    /// A project name, or an age bucket key (`lt1h`, `h1to6`, `h6to24`, `d1to7`, `gt7d`).
    pub key: String,
    pub value: f64,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Analytics {
    pub generated_at: DateTime<Utc>,
    /// Time from a question to its answer, questions asked in the last 24 h / 7 d.
    pub response_24h: Percentiles,
    pub response_7d: Percentiles,
    /// Hours agents sat parked on a question (open or until answered),
    /// clipped to the window.
    pub parked_hours_24h: f64,
    pub parked_hours_7d: f64,
    /// Questions asked in the last 7 d, per project (`""`: no project).
    pub questions_per_project: Vec<Bar>,
    /// Questions still open, by age.
    pub unanswered_by_age: Vec<Bar>,
    /// Questions answered in the last 7 d, by the reminders that reached
    /// the chat first (`0`, `1`, `2`, `3+`), and `escalated`: those answered
    /// only after an escalation, counted there alone.
    #[serde(default)]
    pub reminders_per_answer: Vec<Bar>,
}

/// The keys of [`Analytics::reminders_per_answer`], in order.
pub const REMINDER_BUCKETS: [&str; 5] = ["0", "1", "2", "3+", "escalated"];

/// The age buckets of unanswered questions, in order, with their upper bound.
pub const AGE_BUCKETS: [(&str, i64); 5] = [
    ("lt1h", 3_600),
    ("h1to6", 6 * 3_600),
    ("h6to24", 24 * 3_600),
    ("d1to7", 7 * 86_400),
    ("gt7d", i64::MAX),
];

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

fn percentiles(mut values: Vec<f64>) -> Percentiles {
    values.sort_by(f64::total_cmp);
    Percentiles {
        count: values.len(),
        p50_seconds: percentile(&values, 50.0),
        p90_seconds: percentile(&values, 90.0),
    }
}

fn seconds(d: Duration) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let s = d.num_milliseconds() as f64 / 1000.0;
    s.max(0.0)
}

/// The view model from the stored asks (any order) at `now`.
pub fn compute(asks: &[AskTiming], now: DateTime<Utc>) -> Analytics {
    let day = now - Duration::hours(24);
    let week = now - Duration::days(7);
    let answered = |since: DateTime<Utc>| {
        asks.iter()
            .filter(|a| a.created_at >= since)
            .filter_map(|a| a.replied_at.map(|r| seconds(r - a.created_at)))
            .collect::<Vec<_>>()
    };
    let parked = |since: DateTime<Utc>| {
        asks.iter()
            .filter_map(|a| {
                let end = match (a.state.as_str(), a.replied_at) {
                    (_, Some(r)) => r,
                    ("OPEN", None) => now,
                    // Cancelled / expired asks keep no end time.
                    _ => return None,
                };
                let start = a.created_at.max(since);
                (end > start).then(|| seconds(end - start))
            })
            .sum::<f64>()
            / 3600.0
    };
    let mut per_project: BTreeMap<String, f64> = BTreeMap::new();
    for a in asks.iter().filter(|a| a.created_at >= week) {
        *per_project
            .entry(a.project.clone().unwrap_or_default())
            .or_default() += 1.0;
    }
    let mut by_age = [0.0_f64; AGE_BUCKETS.len()];
    for a in asks.iter().filter(|a| a.state == "OPEN") {
        let age = (now - a.created_at).num_seconds().max(0);
        if let Some(i) = AGE_BUCKETS.iter().position(|(_, upper)| age < *upper) {
            by_age[i] += 1.0;
        }
    }
    let mut questions_per_project: Vec<Bar> = per_project
        .into_iter()
        .map(|(key, value)| Bar { key, value })
        .collect();
    questions_per_project.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.key.cmp(&b.key)));
    let mut reminded = [0.0_f64; REMINDER_BUCKETS.len()];
    for a in asks
        .iter()
        .filter(|a| a.created_at >= week && a.replied_at.is_some())
    {
        // An escalated answer counts once, as escalated, whatever the
        // reminders before it.
        let bucket = if a.escalated {
            4
        } else {
            usize::try_from(a.reminders.min(3)).unwrap_or(3)
        };
        reminded[bucket] += 1.0;
    }
    Analytics {
        generated_at: now,
        response_24h: percentiles(answered(day)),
        response_7d: percentiles(answered(week)),
        parked_hours_24h: parked(day),
        parked_hours_7d: parked(week),
        questions_per_project,
        unanswered_by_age: AGE_BUCKETS
            .iter()
            .zip(by_age)
            .map(|((key, _), value)| Bar {
                key: (*key).to_string(),
                value,
            })
            .collect(),
        reminders_per_answer: REMINDER_BUCKETS
            .iter()
            .zip(reminded)
            .map(|(key, value)| Bar {
                key: (*key).to_string(),
                value,
            })
            .collect(),
    }
}

impl Reports<'_> {
    /// Row counts by kind and state (for `/metrics`).
    pub async fn store_counts(&self) -> CoreResult<crate::store::StoreCounts> {
        Ok(self.h.store().counts().await?)
    }

    /// Asks of the last period counted by their wait into `bounds` (`/metrics`).
    pub async fn answer_histogram(
        &self,
        since: DateTime<Utc>,
        bounds: &[f64],
    ) -> CoreResult<crate::store::AnswerHistogram> {
        Ok(self.h.store().answer_histogram(since, bounds).await?)
    }

    /// The store's write-transaction latency so far (`/metrics`).
    pub fn transaction_latency(&self) -> crate::store::TransactionLatency {
        self.h.store().transaction_latency()
    }

    /// The analytics view at `now`.
    pub async fn analytics(&self, now: DateTime<Utc>) -> CoreResult<Analytics> {
        let asks = self
            .h
            .store()
            .ask_timings(now - Duration::days(7), MAX_ASKS)
            .await?;
        Ok(compute(&asks, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(
        now: DateTime<Utc>,
        ago_min: i64,
        answered_after_min: Option<i64>,
        project: Option<&str>,
    ) -> AskTiming {
        let created_at = now - Duration::minutes(ago_min);
        AskTiming {
            created_at,
            replied_at: answered_after_min.map(|m| created_at + Duration::minutes(m)),
            state: if answered_after_min.is_some() {
                "ANSWERED"
            } else {
                "OPEN"
            }
            .into(),
            project: project.map(Into::into),
            reminders: 0,
            escalated: false,
        }
    }

    #[test]
    fn answers_are_counted_by_the_reminders_they_needed() {
        let now = Utc::now();
        let mut asks = vec![ask(now, 60, Some(5), None), ask(now, 60, None, None)];
        for (n, escalated) in [(1, false), (2, false), (4, false), (5, true), (0, true)] {
            let mut a = ask(now, 300, Some(200), None);
            a.reminders = n;
            a.escalated = escalated;
            asks.push(a);
        }
        let bars: Vec<f64> = compute(&asks, now)
            .reminders_per_answer
            .iter()
            .map(|b| b.value)
            .collect();
        assert_eq!(
            bars,
            vec![1.0, 1.0, 1.0, 1.0, 2.0],
            "an escalated answer is in `escalated` only, not in a reminder bucket too"
        );
    }

    #[test]
    fn response_percentiles_use_the_window_of_the_question() {
        let now = Utc::now();
        let mut asks: Vec<_> = (1..=10).map(|m| ask(now, 60, Some(m), Some("p"))).collect();
        // Asked 3 days ago: in the 7-day figures only.
        asks.push(ask(now, 3 * 24 * 60, Some(600), None));
        let a = compute(&asks, now);
        assert_eq!(a.response_24h.count, 10);
        assert_eq!(a.response_24h.p50_seconds, Some(300.0));
        assert_eq!(a.response_24h.p90_seconds, Some(540.0));
        assert_eq!(a.response_7d.count, 11);
        assert_eq!(a.response_7d.p90_seconds, Some(600.0));
        assert_eq!(
            a.questions_per_project[0],
            Bar {
                key: "p".into(),
                value: 10.0
            }
        );
        assert_eq!(
            a.questions_per_project[1],
            Bar {
                key: String::new(),
                value: 1.0
            }
        );
    }

    #[test]
    fn open_questions_are_parked_time_and_bucketed_by_age() {
        let now = Utc::now();
        let asks = vec![
            ask(now, 30, None, None),          // 0.5 h, <1h
            ask(now, 120, None, None),         // 2 h, 1-6h
            ask(now, 2 * 24 * 60, None, None), // 48 h open: 24 h inside the day
        ];
        let a = compute(&asks, now);
        let ages: Vec<f64> = a.unanswered_by_age.iter().map(|b| b.value).collect();
        assert_eq!(ages, vec![1.0, 1.0, 0.0, 1.0, 0.0]);
        assert!(
            (a.parked_hours_24h - 26.5).abs() < 0.01,
            "{}",
            a.parked_hours_24h
        );
        assert!(
            (a.parked_hours_7d - 50.5).abs() < 0.01,
            "{}",
            a.parked_hours_7d
        );
        assert_eq!(a.response_7d.count, 0);
        assert_eq!(a.response_7d.p50_seconds, None);
    }
}
