//! The holder's terminal model is fed lazily (output forwarded first, parsed
//! later, a flood's oldest text skipped): what it is for still holds on real
//! holders, PTYs and sockets.

mod common;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use common::{Stream, run_dir, sh, start};
use harness_holder::{HolderClient, InputMode, InputOutcome};
use harness_term::TerminalModel;

const SEC: Duration = Duration::from_secs(1);

/// `lines` numbered lines of text (`\r\n`: the PTY passes them unchanged
/// under `stty -opost`).
fn flood(lines: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines * 64);
    for i in 0..lines {
        let _ = write!(
            out,
            "\x1b[3{}mflood line {i:08}\x1b[m ..................................\r\n",
            i % 8
        );
    }
    out
}

/// Writes `bytes` to `dir/name` and returns a script that prints the file
/// byte for byte.
fn cat_script(dir: &Path, name: &str, bytes: &[u8], then: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    format!(
        "stty -opost -echo -icanon min 1; cat '{}'; {then}",
        path.display()
    )
}

/// Requested snapshots until one shows `marker`.
async fn snapshot_showing(client: &HolderClient, marker: &str) -> harness_holder::client::Snapshot {
    let deadline = tokio::time::Instant::now() + 60 * SEC;
    loop {
        let snap = client.snapshot(0).await.unwrap();
        if String::from_utf8_lossy(&snap.data).contains(marker) {
            return snap;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the screen never showed {marker:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn after_a_flood_a_snapshot_shows_the_final_screen_exactly() {
    let (tmp, dir) = run_dir();
    // Modes set at the start of the flood (skipped text), then 3 MB of
    // text through a 256 KiB ring, then a full-screen program's last frame.
    let mut out = b"\x1b[?2004h\x1b[?1h\x1b=".to_vec();
    out.extend_from_slice(&flood(50_000));
    out.extend_from_slice(b"\x1b[?1049h\x1b[2J\x1b[3;20r\x1b[?25l");
    for row in 1..=24 {
        let _ = write!(out, "\x1b[{row};{}H\x1b[1;3{}mrow {row}", row * 2, row % 8);
    }
    out.extend_from_slice(b"\x1b[m\x1b[24;60HFINAL-END\x1b[12;40H");
    let script = cat_script(tmp.path(), "flood", &out, "exec sleep 60");
    let mut cfg = sh(&dir, &script);
    cfg.ring_bytes = 256 * 1024;
    let held = start(&cfg).await;
    // Not attached: nobody reads the stream; the holder floods its ring.
    let (client, _events) = held.connect().await;
    let snap = snapshot_showing(&client, "FINAL-END").await;
    assert_eq!(snap.seq, out.len() as u64, "the snapshot is at the end");
    let mut expected = TerminalModel::new(24, 80);
    expected.feed(&out);
    assert!(expected.bracketed_paste_enabled() && expected.alternate_screen());
    assert_eq!(
        String::from_utf8_lossy(&snap.data),
        String::from_utf8_lossy(&expected.snapshot()),
        "the screen after the flood, exactly"
    );
}

#[tokio::test]
async fn bracketed_paste_set_during_a_flood_is_honoured_by_the_next_reply() {
    let (tmp, dir) = run_dir();
    let mut out = flood(2_000);
    out.extend_from_slice(b"\x1b[?2004h");
    out.extend_from_slice(&flood(40_000));
    out.extend_from_slice(b"FLOOD-DONE\r\n");
    // After the flood the program reads the reply's 14 bytes raw and shows
    // them in octal.
    let script = cat_script(
        tmp.path(),
        "flood",
        &out,
        "stty opost; head -c 14 | od -An -c; echo READ-DONE; exec sleep 60",
    );
    let mut cfg = sh(&dir, &script);
    cfg.ring_bytes = 256 * 1024;
    let held = start(&cfg).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    // Reply as soon as the mode is in the output, while the flood goes on
    // (the model has not parsed it yet, or skipped the text around it).
    let mut seen = Vec::new();
    while !seen.windows(8).any(|w| w == b"\x1b[?2004h") {
        match tokio::time::timeout(30 * SEC, events.next()).await {
            Ok(Some(harness_holder::HolderEvent::Output { data, .. })) => {
                let keep = seen.len().saturating_sub(8);
                seen.drain(..keep);
                seen.extend_from_slice(&data);
            }
            Ok(Some(harness_holder::HolderEvent::Snapshot { snapshot, .. })) => {
                seen.extend_from_slice(&snapshot.data);
            }
            Ok(Some(_)) => {}
            other => panic!("the mode never came: {other:?}"),
        }
    }
    // Answers share the reading task with the stream: keep reading it.
    let drain = tokio::spawn(async move { while events.next().await.is_some() {} });
    let reply = InputMode::Reply {
        submit: false,
        paste: harness_pty::PasteMode::Auto,
        settle_ms: 0,
    };
    let outcome = client.input("paste-1", reply, b"hi").await.unwrap();
    assert_eq!(outcome, InputOutcome::Accepted);
    drop(client);
    drain.abort();
    let (client, _events) = held.connect().await;
    let snap = snapshot_showing(&client, "READ-DONE").await;
    let mut shown = TerminalModel::new(snap.rows, snap.cols);
    shown.feed(&snap.data);
    let screen = shown.text();
    assert!(
        screen.contains("033   [   2   0   0   ~   h   i 033   [   2   0   1   ~"),
        "the reply was not pasted in brackets: {screen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_byte_arrives_in_order_at_its_position() {
    let (tmp, dir) = run_dir();
    let mut out = b"\x1b[?2004h".to_vec();
    out.extend_from_slice(&flood(60_000));
    out.extend_from_slice(b"ALL-SENT");
    let script = cat_script(tmp.path(), "flood", &out, "exit 3");
    let mut cfg = sh(&dir, &script);
    // A ring larger than the output: a slow (loaded, debug) reader never
    // falls behind it, while the model (at most 1 MiB behind) skips.
    cfg.ring_bytes = 8 * 1024 * 1024;
    let held = start(&cfg).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    // `Stream::apply` checks every position: no gap, no duplicate.
    stream
        .until(&mut events, 120 * SEC, |s| s.exit.is_some())
        .await;
    assert!(stream.snapshots.is_empty(), "the reader never fell behind");
    assert_eq!(stream.have, out.len() as u64);
    assert!(
        stream.bytes == out,
        "the bytes differ from what was written"
    );
    assert_eq!(stream.exit.map(|(_, status)| status.code), Some(Some(3)));
    client.ack_exit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reading_server_holds_the_program_back_instead_of_lagging() {
    let (tmp, dir) = run_dir();
    let out = flood(80_000);
    // The flood starts on a key, once attached at position 0.
    let script = cat_script(tmp.path(), "flood", &out, "exit 0").replacen(
        "; cat ",
        "; printf READY; head -c 1 >/dev/null; cat ",
        1,
    );
    let mut cfg = sh(&dir, &script);
    // 5 MB through a 64 KiB ring, read slowly: without holding the program
    // back the holder would run past this reader by more than the ring and
    // every buffer on the way.
    cfg.ring_bytes = 64 * 1024;
    let held = start(&cfg).await;
    let (client, mut events) = held.connect().await;
    client.attach(Some(0)).await.unwrap();
    let mut stream = Stream::default();
    // Echo is off once the program says so.
    stream
        .until(&mut events, 10 * SEC, |s| s.bytes == b"READY")
        .await;
    client.input("", InputMode::Raw, b"g").await.unwrap();
    let out = [&b"READY"[..], &out].concat();
    let deadline = tokio::time::Instant::now() + 120 * SEC;
    while stream.exit.is_none() {
        let event = tokio::time::timeout_at(deadline, events.next())
            .await
            .expect("the stream did not end")
            .expect("the connection closed");
        stream.apply(event);
        // A slow reader, but a reading one (well within the stall limit).
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(stream.snapshots.is_empty(), "the reader was skipped");
    let first_diff = stream.bytes.iter().zip(&out).position(|(a, b)| a != b);
    assert!(
        stream.bytes == out,
        "the bytes differ from what was written: {} vs {} bytes, first at {first_diff:?}: {:?}",
        stream.bytes.len(),
        out.len(),
        String::from_utf8_lossy(&stream.bytes[..stream.bytes.len().min(100)])
    );
    client.ack_exit().await.unwrap();
}
