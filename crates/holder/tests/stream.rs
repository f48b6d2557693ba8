//! Output continuity, the bounded buffer, input idempotency and exits, on
//! real holders, PTYs and sockets.

mod common;

use std::time::Duration;

use common::{Stream, alive, eventually, run_dir, sh, start};
use harness_holder::{InputMode, InputOutcome, read_exit_file};

const SEC: Duration = Duration::from_secs(1);

/// The numbers of the `line N` lines in `text`, in order.
fn line_numbers(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("line "))
        .filter_map(|n| n.parse().ok())
        .collect()
}

#[tokio::test]
async fn reattach_gets_exactly_the_missing_bytes() {
    let (_tmp, dir) = run_dir();
    let cfg = sh(
        &dir,
        "i=0; while :; do echo \"line $i\"; i=$((i+1)); sleep 0.01; done",
    );
    let held = start(&cfg).await;

    let mut stream = Stream::default();
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    stream
        .until(&mut events, 10 * SEC, |s| {
            line_numbers(&s.text()).len() >= 10
        })
        .await;
    // The server goes away; the program keeps printing.
    drop(client);
    drop(events);
    let gone_at = stream.have;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let (client, mut events) = held.connect().await;
    client.attach(Some(stream.have)).await.unwrap();
    let before = line_numbers(&stream.text()).len();
    stream
        .until(&mut events, 20 * SEC, |s| {
            line_numbers(&s.text()).len() >= before + 20
        })
        .await;
    assert!(stream.have > gone_at);
    assert!(stream.snapshots.is_empty(), "replayed, not a snapshot");
    let numbers = line_numbers(&stream.text());
    // Exactly one copy of every line, none missing.
    let expected: Vec<u64> = (numbers[0]..numbers[0] + numbers.len() as u64).collect();
    assert_eq!(numbers, expected);
}

#[tokio::test]
async fn a_newer_server_replaces_the_attached_one() {
    let (_tmp, dir) = run_dir();
    let held = start(&sh(&dir, "echo hi; sleep 30")).await;
    let (first, mut first_events) = held.connect().await;
    first.attach(Some(0)).await.unwrap();
    let mut s = Stream::default();
    s.until(&mut first_events, 5 * SEC, |s| s.text().contains("hi"))
        .await;
    let (second, mut second_events) = held.connect().await;
    second.attach(None).await.unwrap();
    // The first connection ends (after whatever it had been sent).
    let ended = tokio::time::timeout(5 * SEC, async {
        while first_events.next().await.is_some() {}
    })
    .await;
    assert!(ended.is_ok(), "the replaced connection stays open");
    assert!(second.ping().await.is_ok());
    let mut s = Stream::default();
    s.until(&mut second_events, 5 * SEC, |s| !s.snapshots.is_empty())
        .await;
    assert!(s.snapshots[0].0.data.windows(2).any(|w| w == b"hi"));
}

#[tokio::test]
async fn a_position_the_buffer_forgot_gets_a_snapshot() {
    let (_tmp, dir) = run_dir();
    let mut cfg = sh(
        &dir,
        "echo first; sleep 0.5; seq 1 20000; echo MARK-END; sleep 30",
    );
    cfg.ring_bytes = 4096;
    let held = start(&cfg).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("first"))
        .await;
    drop((client, events));
    // Wait until the flood is over (the screen shows the marker).
    tokio::time::sleep(SEC).await;
    let (client, mut events) = held.connect().await;
    let shown = |c: &harness_holder::client::Snapshot| {
        String::from_utf8_lossy(&c.data).contains("MARK-END")
    };
    let snap = loop {
        let snap = client.snapshot(0).await.unwrap();
        if shown(&snap) {
            break snap;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(snap.seq > stream.have + 4096);
    client.attach(Some(stream.have)).await.unwrap();
    stream
        .until(&mut events, 10 * SEC, |s| !s.snapshots.is_empty())
        .await;
    let (attach_snap, lagged) = &stream.snapshots[0];
    assert!(!lagged);
    assert!(shown(attach_snap));
    assert_eq!(attach_snap.seq, snap.seq);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_falls_behind_gets_a_snapshot_then_live_output() {
    let (tmp, dir) = run_dir();
    let marker = tmp.path().join("flood-done");
    let script = format!(
        "sleep 0.3; seq 1 500000; echo DONE; touch '{}'; sleep 30",
        marker.display()
    );
    let mut cfg = sh(&dir, &script);
    cfg.ring_bytes = 4096;
    let held = start(&cfg).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    // Do not read until the program is done flooding (3.4 MB): the
    // client's bounded event queue and the socket fill up, and the
    // holder's 4 KiB ring moves on.
    eventually(120 * SEC, "the flood to end", || marker.exists()).await;
    let mut stream = Stream::default();
    // The end of the flood arrives as output after the lag snapshot, or —
    // when the holder noticed the lag only after the flood (a loaded
    // machine) — on the snapshot's screen itself.
    let in_snapshot = |s: &Stream| {
        s.snapshots
            .iter()
            .any(|(snap, lagged)| *lagged && String::from_utf8_lossy(&snap.data).contains("DONE"))
    };
    stream
        .until(&mut events, 60 * SEC, |s| {
            s.snapshots.iter().any(|(_, lagged)| *lagged)
                && (in_snapshot(s) || s.text().contains("DONE"))
        })
        .await;
    // After the lag snapshot, output continued at its position (checked by
    // `Stream::apply`), and what was skipped is not in the stream.
    let lines = stream.text().lines().count();
    assert!(lines < 400_000, "nothing was skipped");
    assert!(in_snapshot(&stream) || stream.text().contains("500000\r\nDONE"));
}

#[tokio::test]
async fn an_input_key_is_typed_once() {
    let (_tmp, dir) = run_dir();
    // No echo: every copy in the output was read by `cat`.
    let held = start(&sh(&dir, "stty -echo; echo ready; cat")).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("ready"))
        .await;
    let reply = InputMode::Reply {
        submit: true,
        paste: harness_pty::PasteMode::Never,
        settle_ms: 20,
    };
    let first = client
        .input("delivery-7", reply, b"typed-once\n")
        .await
        .unwrap();
    let again = client
        .input("delivery-7", reply, b"typed-once\n")
        .await
        .unwrap();
    assert_eq!(
        (first, again),
        (InputOutcome::Accepted, InputOutcome::Duplicate)
    );
    drop((client, events));
    // After a re-attach (a restarted server re-sends what it was typing).
    let (client, mut events) = held.connect().await;
    let resent = client
        .input("delivery-7", reply, b"typed-once\n")
        .await
        .unwrap();
    assert_eq!(resent, InputOutcome::Duplicate);
    // A different key is typed: it marks the end of the output to look at.
    let other = client.input("delivery-8", reply, b"the-end").await.unwrap();
    assert_eq!(other, InputOutcome::Accepted);
    client.attach(Some(stream.have)).await.unwrap();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("the-end"))
        .await;
    assert_eq!(
        stream.text().matches("typed-once").count(),
        1,
        "{:?}",
        stream.text()
    );
}

#[tokio::test]
async fn the_exit_is_held_until_acknowledged() {
    let (_tmp, dir) = run_dir();
    let held = start(&sh(&dir, "sleep 0.3; echo bye; exit 7")).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    stream
        .until(&mut events, 10 * SEC, |s| s.exit.is_some())
        .await;
    let (seq, status) = stream.exit.unwrap();
    assert_eq!(status.code, Some(7));
    assert!(stream.text().contains("bye"));
    let record = read_exit_file(&dir).unwrap().expect("exit.json");
    assert_eq!((record.status, record.seq), (status, seq));
    assert_eq!(record.reason, "exited");
    assert_eq!(record.child_pid, held.child_pid);
    // Not acknowledged: the holder waits, and tells the next server.
    drop((client, events));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(alive(held.holder_pid));
    let (client, mut events) = held.connect().await;
    client.attach(Some(seq)).await.unwrap();
    let mut again = Stream {
        have: seq,
        ..Stream::default()
    };
    again
        .until(&mut events, 10 * SEC, |s| s.exit.is_some())
        .await;
    client.ack_exit().await.unwrap();
    eventually(10 * SEC, "the holder to leave", || !alive(held.holder_pid)).await;
    assert!(!held.socket.exists(), "the socket is removed");
    assert!(dir.join("exit.json").exists(), "the exit record stays");
}

#[tokio::test]
async fn an_orphaned_holder_ends_its_agent_and_leaves_the_exit() {
    let (_tmp, dir) = run_dir();
    let mut cfg = sh(&dir, "exec sleep 1000");
    cfg.orphan_timeout = Duration::from_millis(1500);
    cfg.kill_grace = Duration::from_millis(500);
    let held = start(&cfg).await;
    // An attached server keeps it going past the timeout.
    let (client, events) = held.connect().await;
    client.attach(None).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(alive(held.child_pid), "ended while a server was attached");
    drop((client, events));
    // Then no server: ended by SIGHUP after the timeout.
    eventually(10 * SEC, "exit.json", || dir.join("exit.json").exists()).await;
    let record = read_exit_file(&dir).unwrap().unwrap();
    assert_eq!(record.reason, "orphaned");
    assert_eq!(record.status.signal, Some(libc::SIGHUP));
    eventually(5 * SEC, "the holder to leave", || !alive(held.holder_pid)).await;
    assert!(!alive(held.child_pid));
}

#[tokio::test]
async fn an_agent_ignoring_sighup_is_killed_after_the_grace() {
    let (_tmp, dir) = run_dir();
    let mut cfg = sh(&dir, "trap '' HUP; while :; do sleep 0.1; done");
    cfg.orphan_timeout = Duration::from_millis(500);
    cfg.kill_grace = Duration::from_millis(500);
    let held = start(&cfg).await;
    eventually(10 * SEC, "exit.json", || dir.join("exit.json").exists()).await;
    let record = read_exit_file(&dir).unwrap().unwrap();
    assert_eq!(record.reason, "orphaned");
    assert_eq!(record.status.signal, Some(libc::SIGKILL));
    eventually(5 * SEC, "the holder to leave", || !alive(held.holder_pid)).await;
}

#[tokio::test]
async fn resize_reaches_the_program_and_the_model() {
    let (_tmp, dir) = run_dir();
    // Prints its size on every SIGWINCH.
    let held = start(&sh(
        &dir,
        "trap 'echo size=$(stty size)' WINCH; echo ready; while :; do sleep 0.05; done",
    ))
    .await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("ready"))
        .await;
    client.resize(30, 100).await.unwrap();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("size=30 100"))
        .await;
    let snap = client.snapshot(0).await.unwrap();
    assert_eq!((snap.rows, snap.cols), (30, 100));
    // Absurd sizes are clamped, not obeyed.
    client.resize(0, 60000).await.unwrap();
    let snap = client.snapshot(0).await.unwrap();
    assert_eq!(
        (snap.rows, snap.cols),
        (harness_term::MIN_SIZE, harness_term::MAX_COLS)
    );
}

#[tokio::test]
async fn signals_reach_the_program_and_input_after_the_exit_is_refused() {
    let (_tmp, dir) = run_dir();
    let held = start(&sh(&dir, "echo ready; exec sleep 1000")).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    stream
        .until(&mut events, 10 * SEC, |s| s.text().contains("ready"))
        .await;
    // Only the four ending signals are honoured.
    client.signal(libc::SIGSTOP).await.unwrap();
    client.signal(libc::SIGTERM).await.unwrap();
    stream
        .until(&mut events, 10 * SEC, |s| s.exit.is_some())
        .await;
    assert_eq!(stream.exit.unwrap().1.signal, Some(libc::SIGTERM));
    let late = client.input("late", InputMode::Raw, b"x").await.unwrap();
    assert_eq!(late, InputOutcome::Exited);
    client.ack_exit().await.unwrap();
}

#[tokio::test]
async fn a_program_that_cannot_start_is_a_clear_error() {
    let (_tmp, dir) = run_dir();
    let cfg = harness_holder::HoldConfig::new(&dir, vec!["/nonexistent/agent".into()]);
    let err = harness_holder::spawn_holder(
        std::path::Path::new(common::BIN),
        &[],
        &cfg,
        common::env(),
        10 * SEC,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("/nonexistent/agent"), "{err}");
    assert!(err.contains("No such file"), "{err}");
    assert!(!cfg.socket_path().exists(), "no socket is left behind");
}

#[tokio::test]
async fn a_second_holder_on_the_same_socket_is_refused() {
    let (_tmp, dir) = run_dir();
    let cfg = sh(&dir, "sleep 30");
    let held = start(&cfg).await;
    let err = harness_holder::spawn_holder(
        std::path::Path::new(common::BIN),
        &[],
        &cfg,
        common::env(),
        10 * SEC,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("already listening"), "{err}");
    // The first one is untouched.
    let (client, _events) = held.connect().await;
    assert_eq!(client.info().child_pid, held.child_pid);
}
