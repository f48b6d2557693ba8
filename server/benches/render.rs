//! Render benchmark of the notification center: with 100 000 messages in a
//! temporary database, measures over real HTTP (sequential requests):
//!
//! - `/harness` first page, server-rendered (pending view and the `all` view);
//! - a "load more" page: the server function the hydrated page calls
//!   (`POST /sfn/messages` with a cursor deep in the list) and the
//!   no-JavaScript link (`GET /harness?view=all&cursor=…`);
//! - a search (`/harness?view=all&q=…`, a LIKE scan — informative).
//!
//! Prints p50/p99 per measurement; target: first page SSR p99 < 50 ms.
//! Run: `cargo bench -p server --bench render` (`HARNESS_BENCH_MESSAGES`
//! sets the message count, default 100000; `HARNESS_BENCH_N` the samples per
//! measurement, default 200).

mod support;

use std::time::{Duration, Instant};

use harness_core::{
    model::{MessageQuery, MessageView},
    tasks::CreateTask,
};
use harness_server::launch;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

struct Measured {
    name: &'static str,
    p50: Duration,
    p99: Duration,
    bytes: usize,
}

async fn measure(
    name: &'static str,
    n: usize,
    mut request: impl FnMut() -> reqwest::RequestBuilder,
) -> anyhow::Result<Measured> {
    for _ in 0..5 {
        request().send().await?.bytes().await?;
    }
    let mut samples = Vec::with_capacity(n);
    let mut bytes = 0;
    for _ in 0..n {
        let start = Instant::now();
        let resp = request().send().await?;
        let status = resp.status();
        let body = resp.bytes().await?;
        samples.push(start.elapsed());
        anyhow::ensure!(status.is_success(), "{name}: HTTP {status}");
        bytes = body.len();
    }
    samples.sort();
    Ok(Measured {
        name,
        p50: percentile(&samples, 0.50),
        p99: percentile(&samples, 0.99),
        bytes,
    })
}

async fn run() -> anyhow::Result<()> {
    let total = env_usize("HARNESS_BENCH_MESSAGES", 100_000);
    let n = env_usize("HARNESS_BENCH_N", 200);
    let dir = tempfile::tempdir()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut cfg = support::serve_config(listener.local_addr()?, dir.path().join("data"));
    cfg.site_root = Some(dir.path().join("site"));
    let server = launch(cfg, listener).await?;
    let h = server.harness.clone();
    println!("harness render benchmark: {total} messages, {n} samples per measurement");

    // 100 tasks; per task a stream of progress lines with a question every
    // 50 lines (every other one answered; the last one of each task stays pending).
    const TASKS: usize = 100;
    let mut tasks = Vec::with_capacity(TASKS);
    for i in 0..TASKS {
        let view = h
            .tasks()
            .create_task(CreateTask {
                title: Some(format!("Bench task {i:03}: migrate service {}", i * 7 % 31)),
                ..Default::default()
            })
            .await?;
        tasks.push(view.task.id);
    }
    let start = Instant::now();
    const WORKERS: usize = 8;
    let per_worker = total.div_ceil(WORKERS);
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let h = h.clone();
        let tasks = tasks.clone();
        workers.push(tokio::spawn(async move {
            for j in 0..per_worker {
                let i = w * per_worker + j;
                if i >= total {
                    break;
                }
                let task = &tasks[i % TASKS];
                let round = i / TASKS;
                if round % 50 == 49 {
                    h.asks()
                        .ask(
                            task,
                            Some(&format!("Question {i}: proceed with step {}?", i % 13)),
                        )
                        .await?;
                    if round % 100 == 49 {
                        // Another worker may have superseded this ask.
                        match h
                            .asks()
                            .reply(
                                &harness_core::auth::Person::admin(),
                                task,
                                Some(&format!("yes, go ahead ({i})")),
                                true,
                            )
                            .await
                        {
                            Ok(_) | Err(harness_core::CoreError::Conflict(_)) => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                } else {
                    h.asks()
                        .notify(
                            task,
                            Some(&format!(
                                "Progress {i}: step {} of 13 done, {} files changed, tests green.",
                                i % 13,
                                i % 97
                            )),
                        )
                        .await?;
                }
            }
            anyhow::Ok(())
        }));
    }
    for w in workers {
        w.await??;
    }
    let insert = start.elapsed();
    // The workers interleave, so end with one open question per task: the
    // pending view then has 100 rows (two pages).
    for task in &tasks {
        h.asks().ask(task, Some("Final check: ship it?")).await?;
    }
    println!(
        "inserted {total} messages through the core in {:.1} s ({:.0}/s); {} pending",
        insert.as_secs_f64(),
        total as f64 / insert.as_secs_f64(),
        h.asks().pending_count().await?
    );

    // A cursor deep in the list: the keyset position after ~half the rows.
    let mut cursor = None;
    for _ in 0..(total / 2 / 500).max(1) {
        let page = h
            .asks()
            .list_messages(MessageQuery {
                view: MessageView::All,
                cursor: cursor
                    .as_deref()
                    .and_then(harness_core::model::Cursor::decode),
                limit: 500,
                ..Default::default()
            })
            .await?;
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let cursor = cursor.unwrap_or_default();

    // The UI needs a session or the admin bearer (scripts): every request carries it.
    let mut auth = reqwest::header::HeaderMap::new();
    auth.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {}", server.admin_token).parse()?,
    );
    let client = reqwest::Client::builder().default_headers(auth).build()?;
    let base = server.base_url();
    let mut results = Vec::new();
    let url = format!("{base}/harness");
    results.push(measure("GET /harness (pending, SSR)", n, || client.get(&url)).await?);
    let url_all = format!("{base}/harness?view=all");
    results.push(measure("GET /harness?view=all (SSR)", n, || client.get(&url_all)).await?);
    let sfn = format!("{base}/sfn/messages");
    let form = [("view", "all"), ("q", ""), ("cursor", cursor.as_str())];
    results.push(
        measure("load more: POST /sfn/messages (cursor)", n, || {
            client.post(&sfn).form(&form)
        })
        .await?,
    );
    let url_more = format!("{base}/harness?view=all&cursor={cursor}");
    results.push(
        measure("load more: GET /harness?cursor= (SSR)", n, || {
            client.get(&url_more)
        })
        .await?,
    );
    let url_q = format!("{base}/harness?view=all&q=step%207%20of");
    results.push(
        measure("GET /harness?view=all&q= (search)", n.min(50), || {
            client.get(&url_q)
        })
        .await?,
    );
    server.shutdown().await?;

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!();
    println!(
        "{:<44} {:>9} {:>9} {:>9}",
        "measurement", "p50 ms", "p99 ms", "KiB"
    );
    for m in &results {
        println!(
            "{:<44} {:>9.2} {:>9.2} {:>9.1}",
            m.name,
            ms(m.p50),
            ms(m.p99),
            m.bytes as f64 / 1024.0
        );
    }
    let first = results[..2].iter().map(|m| m.p99).max().unwrap_or_default();
    println!();
    println!(
        "first page SSR p99 = {:.2} ms (target < 50 ms: {})",
        ms(first),
        if first < Duration::from_millis(50) {
            "PASS"
        } else {
            "FAIL"
        }
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

/// Lets the file also run as a plain test target (`cargo test --release
/// --bench render -- --nocapture`) where no `[[bench]] harness = false`
/// entry exists.
#[cfg(test)]
#[test]
fn render_benchmark() -> anyhow::Result<()> {
    main()
}
