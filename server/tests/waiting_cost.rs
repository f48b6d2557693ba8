//! What the one "waits for you" count costs (`Reports::waiting`, called by
//! `GET /api/waiting`, the badge, the tab title and the phone menu on every
//! live update) over a real SQLite store with 1000 tasks (half unattended,
//! each with a run: finished, failed or live) and 200 open questions.
//! A measurement, not an assertion of time: run it with
//! `integration waiting_cost -- --ignored --nocapture` and read the numbers.
//! It does check that the count is the report's.

use std::{
    sync::Arc,
    time::{Duration as StdDuration, Instant},
};

use chrono::{Duration, Utc};
use harness_core::{
    Harness, HarnessConfig,
    auth::Identity,
    ids,
    model::{AgentConfig, ExecutionStatus, Provider},
    report::NoWork,
    store::{AskOption, Choices, NewAsk, NewExecution, NewTask, ReportChannel, Store, Urgency},
};
use harness_store::{SqliteOptions, SqliteStore};

const TASKS: usize = 1000;
const ASKS: usize = 200;
const ROUNDS: usize = 30;

fn agent() -> AgentConfig {
    AgentConfig {
        provider: Provider::Command,
        command: Some(vec!["true".into()]),
        cwd: None,
        env: Default::default(),
        restart_on_interrupt: false,
        recovery: None,
    }
}

async fn seed(s: &dyn Store) {
    let start = Utc::now() - Duration::hours(10);
    for i in 0..TASKS {
        let id = format!("ctcost{i:015}");
        let at = start + Duration::seconds(i as i64);
        s.create_task(NewTask {
            id: id.clone(),
            title: format!("Task {i}"),
            description: None,
            project_id: None,
            parent_task_id: (i % 10 == 9).then(|| format!("ctcost{:015}", i - 1)),
            agent: agent(),
            now: at,
        })
        .await
        .unwrap();
        if i % 2 == 0 {
            s.set_unattended(&id, true, at).await.unwrap();
        }
        let e = format!("cecost{i:015}");
        s.create_execution(NewExecution {
            id: e.clone(),
            task_id: id.clone(),
            token_hash: ids::token_hash(&ids::new_id()),
            status: ExecutionStatus::Running,
            node_id: Some("node-a".into()),
            now: at,
        })
        .await
        .unwrap();
        match i % 3 {
            0 => {
                s.finish_execution(&e, ExecutionStatus::Completed, Some(0), "exited", at)
                    .await
                    .unwrap();
            }
            1 => {
                s.finish_execution(&e, ExecutionStatus::Failed, Some(1), "exited", at)
                    .await
                    .unwrap();
            }
            _ => {}
        }
        if i % (TASKS / ASKS) == 0 {
            let choices = Choices {
                options: ["A", "B"]
                    .iter()
                    .map(|l| AskOption {
                        label: (*l).into(),
                        description: None,
                    })
                    .collect(),
                multi_select: false,
                default: None,
                deadline_at: None,
                urgency: Urgency::Normal,
                answered_by: None,
                answered_options: None,
            };
            s.record_ask_with_choices(
                NewAsk {
                    id: format!("cacost{i:015}"),
                    task_id: id,
                    question: format!("Question {i}?"),
                    now: at,
                    idempotency_key: None,
                    evidence: None,
                },
                choices,
            )
            .await
            .unwrap();
        }
    }
}

fn stats(name: &str, mut times: Vec<StdDuration>) {
    times.sort();
    let ms = |d: StdDuration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "{name}: median {:.2} ms, min {:.2} ms, max {:.2} ms ({} rounds)",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn the_waiting_count_with_1000_tasks_and_200_open_questions() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(SqliteOptions::new(&url)).await.unwrap());
    seed(store.as_ref()).await;
    let h = Harness::new(store, HarnessConfig::new(ids::token_hash("admin")));

    let report = h
        .reports()
        .report(&Identity::Admin, None, ReportChannel::Api, &NoWork)
        .await
        .unwrap();
    let w = h.reports().waiting(&Identity::Admin).await.unwrap();
    eprintln!("waits: {w:?}");
    assert_eq!(w.total, report.waiting_count, "the count is the report's");
    assert_eq!(w.questions, ASKS as u64);

    let mut times = Vec::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let again = h.reports().waiting(&Identity::Admin).await.unwrap();
        times.push(t.elapsed());
        assert_eq!(again, w);
    }
    stats("Reports::waiting", times);
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        h.reports()
            .report(&Identity::Admin, None, ReportChannel::Api, &NoWork)
            .await
            .unwrap();
        times.push(t.elapsed());
    }
    stats("Reports::report (for comparison)", times);
}
