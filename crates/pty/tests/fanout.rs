//! Several viewers, snapshots on subscribe, query stripping, and the slow
//! viewer that must neither grow memory nor hold anyone up.

mod common;

use std::time::Duration;

use common::*;
use harness_pty::{OutputEvent, SubscriberLimits};
use harness_term::TerminalModel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_viewer_sees_the_same_stream() {
    let s = spawn_sh("read go; for i in $(seq 1 200); do echo \"line $i\"; done; exit 0").await;
    let mut a = s.subscribe();
    let mut b = s.subscribe();
    assert_eq!(s.viewers(), 2);
    s.write(b"go\r").await.unwrap();
    let (da, ea) = read_to_end(&mut a).await;
    let (db, eb) = read_to_end(&mut b).await;
    assert_eq!(da, db);
    assert!(contains(&da, b"line 200"));
    assert!(matches!(ea, OutputEvent::Exited(_)) && ea == eb);
    drop((a, b));
    assert_eq!(s.viewers(), 0);
    assert!(s.last_viewer_left().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_viewer_gets_a_snapshot_then_the_live_stream() {
    let s = spawn_sh(
        "printf '\\033[1;31mred title\\033[0m\\n'; echo READY; read x; echo \"after $x\"; read y",
    )
    .await;
    eventually("first output", || s.screen_text().text.contains("READY")).await;
    let mut sub = s.subscribe();
    let mut viewer = TerminalModel::new(24, 80);
    viewer.feed(sub.snapshot());
    assert!(viewer.text().contains("red title"));
    assert!(viewer.screen().cell(0, 0).unwrap().bold());
    s.write(b"more\r").await.unwrap();
    let mut out = Vec::new();
    read_until(&mut sub, &mut out, "after more").await;
    viewer.feed(&out);
    s.sync_model().await;
    assert_eq!(viewer.text(), s.screen_text().text);
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_queries_never_reach_viewers() {
    let s = spawn_sh(
        "read go; printf 'A\\033[6nB\\033]11;?\\007C\\033[>cD\\033]52;c;?\\007E\\n'; read x",
    )
    .await;
    let mut sub = s.subscribe();
    let _ = sub.take_snapshot();
    s.write(b"go\r").await.unwrap();
    let mut out = Vec::new();
    read_until(&mut sub, &mut out, "ABCDE").await;
    for q in [&b"\x1b[6n"[..], b"\x1b]11;?", b"\x1b[>c", b"\x1b]52;c;?"] {
        assert!(!contains(&out, q), "query {q:?} forwarded");
    }
    s.sync_model().await;
    assert!(s.screen_text().text.contains("ABCDE"));
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_viewer_is_cut_off_without_blocking_others() {
    // 8 MiB of output; one viewer never reads.
    let s = spawn_sh("read go; head -c 8388608 /dev/zero | tr '\\000' y; echo; echo DONE; exit 0")
        .await;
    let limit = 256 * 1024;
    let mut slow = s.subscribe_with(SubscriberLimits {
        max_chunks: 1024,
        max_bytes: limit,
    });
    let mut fast = s.subscribe();
    s.write(b"go\r").await.unwrap();
    let started = tokio::time::Instant::now();
    let mut total = 0usize;
    let mut peak = 0usize;
    let end = tokio::time::timeout(T, async {
        loop {
            peak = peak.max(slow.queued_bytes());
            match fast.recv().await {
                OutputEvent::Data(d) => total += d.iter().filter(|&&b| b == b'y').count(),
                end => return end,
            }
        }
    })
    .await
    .expect("fast viewer finished");
    assert!(matches!(end, OutputEvent::Exited(_)), "{end:?}");
    assert_eq!(total, 8 * 1024 * 1024, "fast viewer got everything");
    assert!(peak <= limit, "slow viewer queue grew to {peak}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // The slow viewer gets what was queued, then learns it lagged.
    let (data, end) = read_to_end(&mut slow).await;
    assert!(data.len() <= limit);
    assert_eq!(end, OutputEvent::Lagged);
    // Resubscribing gives a fresh snapshot of the final screen.
    let again = s.subscribe();
    let mut m = TerminalModel::new(24, 80);
    m.feed(again.snapshot());
    assert!(m.text().contains("DONE"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_after_exit_reports_exit() {
    let s = spawn_sh("echo gone; exit 5").await;
    s.wait_exit().await.unwrap();
    let mut sub = s.subscribe();
    let mut m = TerminalModel::new(24, 80);
    m.feed(sub.snapshot());
    assert!(m.text().contains("gone"));
    match sub.recv().await {
        OutputEvent::Exited(st) => assert_eq!(st.code, 5),
        other => panic!("{other:?}"),
    }
    assert!(matches!(sub.try_recv(), Some(OutputEvent::Exited(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_survives_a_flood_with_bounded_lag() {
    use harness_pty::{PtySession, SessionOptions};
    let opts = SessionOptions {
        model_lag_max: 64 * 1024,
        ..SessionOptions::default()
    };
    let spec = sh(
        "read go; printf '\\033[?2004h'; head -c 8388608 /dev/zero | tr '\\000' z; printf '\\nTAIL-MARKER\\n'; read x",
    );
    let s = PtySession::spawn_with(spec, opts).await.unwrap();
    let mut sub = s.subscribe_with(SubscriberLimits {
        max_chunks: 1 << 20,
        max_bytes: 64 << 20,
    });
    s.write(b"go\r").await.unwrap();
    let mut out = Vec::new();
    read_until(&mut sub, &mut out, "TAIL-MARKER").await;
    assert_eq!(count(&out, b"z"), 8 * 1024 * 1024, "viewers get everything");
    s.sync_model().await;
    // The model skipped part of the flood but kept the modes and the end.
    assert!(
        s.model_skipped() > 0,
        "debug-build vt100 cannot keep up with 8 MiB"
    );
    assert!(s.bracketed_paste_enabled());
    let text = s.screen_text().text;
    assert!(
        text.contains("TAIL-MARKER"),
        "skipped {}:\n{text}",
        s.model_skipped()
    );
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_chunks_are_taken_without_waiting_then_recv_says_how_it_ended() {
    let s = spawn_sh("read go; for i in $(seq 1 300); do echo \"line $i\"; done; exit 4").await;
    let mut sub = s.subscribe();
    s.write(b"go\r").await.unwrap();
    s.wait_exit().await.unwrap();
    // Everything was queued before the exit was reported: taken now, in
    // order, without one wait.
    let mut data = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = sub.try_recv_data() {
        data.extend_from_slice(&chunk);
        chunks += 1;
    }
    assert!(chunks >= 1);
    assert!(contains(&data, b"line 1\r\n") && contains(&data, b"line 300\r\n"));
    let at = |needle: &[u8]| data.windows(needle.len()).position(|w| w == needle);
    assert!(at(b"line 299\r\n") < at(b"line 300\r\n"), "in order");
    // Nothing queued: the stream's end is left to `recv`.
    assert!(sub.try_recv_data().is_none());
    match sub.recv().await {
        OutputEvent::Exited(st) => assert_eq!(st.code, 4),
        other => panic!("{other:?}"),
    }
}
