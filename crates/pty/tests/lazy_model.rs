//! The terminal model is parsed lazily: output reaches viewers without
//! waiting on the parser, is parsed when the output pauses (or has waited
//! long), and whoever reads the screen gets every byte read before.
//!
//! The output is fed by the test (a session over a [`RecordingRemote`]
//! owner), so its timing is exact; the delays are set far apart so that a
//! loaded machine cannot blur them.

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use harness_pty::remote::RecordingRemote;
use harness_pty::{ExitStatus, PtySession, RemoteStart, SessionOptions};
use tokio::sync::{mpsc, oneshot};

/// A session whose output the test sends, with these options.
fn session(
    opts: SessionOptions,
) -> (
    Arc<PtySession>,
    mpsc::Sender<Bytes>,
    oneshot::Sender<ExitStatus>,
) {
    let (out_tx, output) = mpsc::channel(1024);
    let (exit_tx, exit) = oneshot::channel();
    let start = RemoteStart {
        pid: 0,
        program: "fed".into(),
        rows: 10,
        cols: 40,
        output,
        exit,
        io: Arc::new(RecordingRemote::default()),
    };
    let s = PtySession::attach_remote(start, opts).expect("attach");
    (s, out_tx, exit_tx)
}

/// No pause is ever long enough, no output waits long enough.
fn never_on_its_own() -> SessionOptions {
    SessionOptions {
        model_parse_quiet: Duration::from_secs(3600),
        model_parse_max_delay: Duration::from_secs(3600),
        ..SessionOptions::default()
    }
}

/// `n` numbered lines.
fn lines(from: usize, n: usize) -> Vec<u8> {
    (from..from + n)
        .flat_map(|i| format!("line {i:06}\r\n").into_bytes())
        .collect()
}

#[tokio::test]
async fn output_streams_unparsed_and_a_reader_gets_every_byte() {
    let (s, out, _exit) = session(never_on_its_own());
    let mut sub = s.subscribe();
    let mut seen = sub.take_snapshot();
    let text = lines(0, 50);
    for piece in text.chunks(37) {
        out.send(Bytes::copy_from_slice(piece)).await.unwrap();
    }
    read_until(&mut sub, &mut seen, "line 000049").await;
    assert_eq!(
        s.model_backlog(),
        text.len(),
        "nothing is parsed while nobody needs the screen"
    );
    // Reading the screen parses what is queued first.
    let screen = s.screen_text().text;
    assert!(screen.contains("line 000049"), "{screen}");
    assert_eq!(s.model_backlog(), 0);
    // The snapshot of a new viewer is exact: it draws the same screen.
    out.send(Bytes::from_static(b"\x1b[2;5Hmoved\x1b[?2004h"))
        .await
        .unwrap();
    read_until(&mut sub, &mut seen, "moved").await;
    let late = s.subscribe();
    let mut viewer = harness_term::TerminalModel::new(10, 40);
    viewer.feed(late.snapshot());
    assert_eq!(viewer.text(), s.screen_text().text);
    assert!(s.bracketed_paste_enabled());
}

#[tokio::test]
async fn the_model_thread_parses_when_the_output_pauses() {
    let (s, out, _exit) = session(SessionOptions {
        model_parse_quiet: Duration::from_millis(300),
        model_parse_max_delay: Duration::from_secs(3600),
        ..SessionOptions::default()
    });
    let mut sub = s.subscribe();
    let mut seen = sub.take_snapshot();
    let started = tokio::time::Instant::now();
    out.send(Bytes::from(lines(0, 20))).await.unwrap();
    read_until(&mut sub, &mut seen, "line 000019").await;
    let backlog = s.model_backlog();
    if started.elapsed() < Duration::from_millis(250) {
        assert!(backlog > 0, "parsed before the output paused");
    }
    // Nobody reads the screen: the pause alone gets it parsed.
    eventually("the backlog parsed at the pause", || s.model_backlog() == 0).await;
}

#[tokio::test]
async fn slow_unbroken_output_is_parsed_within_the_delay() {
    let (s, out, _exit) = session(SessionOptions {
        model_parse_quiet: Duration::from_secs(3600),
        model_parse_max_delay: Duration::from_millis(50),
        ..SessionOptions::default()
    });
    out.send(Bytes::from(lines(0, 5))).await.unwrap();
    eventually("slow output parsed after the delay", || {
        s.model_backlog() == 0 && s.output_generation() > 0
    })
    .await;
}

#[tokio::test]
async fn a_flood_is_skipped_unparsed_keeping_modes_and_the_end() {
    let (s, out, _exit) = session(SessionOptions {
        model_lag_max: 64 * 1024,
        ..never_on_its_own()
    });
    let mut sub = s.subscribe_with(harness_pty::SubscriberLimits {
        max_chunks: 1 << 16,
        max_bytes: 64 << 20,
    });
    out.send(Bytes::from_static(b"\x1b[?2004h\x1b[?25l"))
        .await
        .unwrap();
    let flood = lines(0, 400_000);
    for piece in flood.chunks(16 * 1024) {
        out.send(Bytes::copy_from_slice(piece)).await.unwrap();
    }
    out.send(Bytes::from_static(b"THE END")).await.unwrap();
    let mut seen = Vec::new();
    read_until(&mut sub, &mut seen, "THE END").await;
    assert_eq!(seen.len(), 14 + flood.len() + 7, "viewers get every byte");
    // Bounded by the limit plus the newest pump batch (at most 64 chunks).
    assert!(
        s.model_backlog() <= 64 * 1024 + 64 * 16 * 1024,
        "the queue is bounded: {}",
        s.model_backlog()
    );
    let skipped = s.model_skipped();
    assert!(
        skipped as usize >= flood.len() - 2 * 1024 * 1024,
        "a flood is skipped, not parsed: {skipped} of {}",
        flood.len()
    );
    assert!(
        s.bracketed_paste_enabled(),
        "the modes of skipped output kept"
    );
    let screen = s.screen_text().text;
    assert!(screen.contains("line 399999"), "{screen}");
    assert!(screen.ends_with("THE END"), "{screen}");
}

#[tokio::test]
async fn the_output_generation_tells_whether_the_screen_may_have_changed() {
    let (s, out, _exit) = session(never_on_its_own());
    let mut sub = s.subscribe();
    let mut seen = sub.take_snapshot();
    let g0 = s.output_generation();
    let _ = s.screen_text();
    assert_eq!(s.output_generation(), g0, "reading changes nothing");
    out.send(Bytes::from_static(b"one\r\n")).await.unwrap();
    read_until(&mut sub, &mut seen, "one").await;
    let g1 = s.output_generation();
    assert!(g1 > g0, "output bumps it");
    let _ = s.screen_text();
    assert_eq!(s.output_generation(), g1);
    s.resize(12, 50).unwrap();
    assert!(s.output_generation() > g1, "a resize bumps it");
}

#[tokio::test]
async fn the_exit_waits_for_the_model() {
    let (s, out, exit) = session(never_on_its_own());
    out.send(Bytes::from_static(b"last words\r\n"))
        .await
        .unwrap();
    drop(out);
    exit.send(ExitStatus {
        code: 0,
        signal: None,
    })
    .unwrap();
    tokio::time::timeout(T, s.wait_exit())
        .await
        .expect("exit reported")
        .unwrap();
    assert_eq!(s.model_backlog(), 0, "parsed before the exit was reported");
    assert!(s.screen_text().text.contains("last words"));
}
