//! The daily report per notify target on the worker skeleton
//! (`engine.rs`). Its rows are not a table of their own: a turn asks the
//! core which reports are owed now and not yet written
//! (`Reports::owed_daily_reports`: each target's schedule, in its time
//! zone), and an attempt sends one through the same core call as a report
//! sent on demand (`Reports::send_daily_report`). What makes it once is the
//! report's id, derived from the target and its local date: the report and
//! its outbox parts (`report:<id>:<part>`) are written in one transaction,
//! so a second node, a restart or a late wake-up finds them written and
//! sends nothing; the outbox worker then delivers the parts as any message.
//!
//! Memory only saves reads (the reports known written) and spaces out
//! retries of a failing send; the database says what is owed, so a server
//! down at the time sends when it comes back (that local day only).

use std::{
    collections::{HashMap, HashSet},
    future::Future,
    sync::Arc,
    time::Duration,
};

use chrono::Utc;
use harness_core::{
    CoreResult, Harness,
    report::service::DailyDue,
    work::{Outcome, backoff},
};
use tokio::{sync::Mutex, time::Instant};
use tokio_util::sync::CancellationToken;

use super::engine::{self, Queue, Worker};
use crate::report_work::LocalWork;

/// How often the schedules are looked at: a report goes out within this
/// of its minute.
pub const POLL: Duration = Duration::from_secs(5);

/// Reports known written are remembered up to this many (then forgotten
/// at once: only a read is lost).
const MAX_KNOWN: usize = 10_000;

#[derive(Default)]
struct Memo {
    /// Reports known written: skipped without a read.
    sent: HashSet<String>,
    /// A failed send: its failures and when it is tried again.
    retry: HashMap<String, (u32, Instant)>,
}

struct DailyQueue {
    harness: Harness,
    memo: Arc<Mutex<Memo>>,
}

impl Queue for DailyQueue {
    type Row = DailyDue;
    type Outcome = Outcome;
    const NAME: &'static str = "daily_reports";

    fn id(row: &DailyDue) -> &str {
        &row.report_id
    }

    /// Nothing is leased: the report's id makes the send once.
    fn lease_until(_row: &DailyDue) -> Option<chrono::DateTime<Utc>> {
        None
    }

    fn span(row: &DailyDue) -> tracing::Span {
        tracing::info_span!("daily_report", report_id = %row.report_id,
            target = %row.target, date = %row.date)
    }

    /// A draining node leaves them to the others.
    fn takes_new_work(&self) -> bool {
        !self.harness.cluster().draining()
    }

    fn turn(
        &self,
        done: Vec<(DailyDue, Outcome)>,
        _released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<DailyDue>>> + Send + 'static {
        let (h, memo) = (self.harness.clone(), self.memo.clone());
        async move {
            let mut memo = memo.lock().await;
            for (row, outcome) in done {
                match outcome {
                    Outcome::Done => {
                        memo.retry.remove(&row.report_id);
                        if memo.sent.len() >= MAX_KNOWN {
                            memo.sent.clear();
                        }
                        memo.sent.insert(row.report_id);
                    }
                    Outcome::Retry(error) | Outcome::GaveUp(error) | Outcome::Unverified(error) => {
                        let failures = memo.retry.get(&row.report_id).map_or(0, |r| r.0) + 1;
                        let wait = backoff(failures);
                        tracing::warn!(report_id = %row.report_id, target = %row.target,
                            failures, retry_in_secs = wait.as_secs(), %error,
                            "the daily report was not sent");
                        memo.retry
                            .insert(row.report_id, (failures, Instant::now() + wait));
                    }
                }
            }
            if limit == 0 {
                return Ok(Vec::new());
            }
            let owed = h
                .reports()
                .owed_daily_reports(Utc::now(), &mut memo.sent)
                .await?;
            let now = Instant::now();
            Ok(owed
                .into_iter()
                .filter(|due| memo.retry.get(&due.report_id).is_none_or(|r| r.1 <= now))
                .take(usize::try_from(limit).unwrap_or(usize::MAX))
                .collect())
        }
    }

    fn attempt(&self, row: DailyDue) -> impl Future<Output = Option<Outcome>> + Send + 'static {
        let h = self.harness.clone();
        async move {
            Some(
                match h.reports().send_daily_report(&row, &LocalWork).await {
                    Ok(Some(sent)) => {
                        tracing::info!(report_id = %row.report_id, target = %row.target,
                        parts = sent.parts.len(), "daily report queued");
                        Outcome::Done
                    }
                    // Written already (another node, an earlier boot), or no
                    // longer owed (the target changed).
                    Ok(None) => Outcome::Done,
                    Err(err) => Outcome::Retry(err.to_string()),
                },
            )
        }
    }
}

/// Run until `cancel`.
pub async fn run(harness: Harness, cancel: CancellationToken) {
    let skeleton = engine::WorkerConfig {
        poll: POLL,
        // Each attempt reads a window of facts: a few at once.
        max_in_flight: 2,
        ahead_per_slot: 0,
        start_margin: Duration::ZERO,
        maintain_every: Duration::from_secs(3600),
        drain: Duration::from_secs(3),
        ..engine::WorkerConfig::default()
    };
    let queue = DailyQueue {
        harness,
        memo: Arc::new(Mutex::new(Memo::default())),
    };
    // Woken only by its poll: a schedule is a time of day.
    let wake = Arc::new(tokio::sync::Notify::new());
    Worker::new(queue, skeleton).run(wake, cancel).await;
}
