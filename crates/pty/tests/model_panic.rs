//! A panic in the terminal-model thread is contained: the session keeps
//! streaming raw output, the exit is still reported, and no wait on the
//! model hangs.

mod common;

use common::*;
use harness_pty::{OutputEvent, PtySession, SessionOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_panic_keeps_the_stream_and_reports_the_exit() {
    let opts = SessionOptions {
        model_panic_marker: Some(b"BOOM-MODEL".to_vec()),
        ..SessionOptions::default()
    };
    let s = PtySession::spawn_with(
        sh("stty -echo; echo before; IFS= read -r l; echo \"$l\"; IFS= read -r l; echo \"after[$l]\"; exit 3"),
        opts,
    )
    .await
    .unwrap();
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "before").await;
    assert!(s.sync_model().await);
    assert!(!s.model_failed());

    // The model thread panics on this output.
    s.write(b"BOOM-MODEL\r").await.unwrap();
    read_until(&mut sub, &mut out, "BOOM-MODEL").await;
    eventually("the panic is recorded", || s.model_failed()).await;
    // Waits on the model return at once instead of hanging.
    let synced = tokio::time::timeout(T, s.sync_model()).await;
    assert_eq!(synced, Ok(true), "a failed model is not waited for");
    // Reading the screen does not panic (a blank model replaced the broken one).
    let _ = s.screen_text();
    let _ = s.snapshot();

    // Raw output keeps streaming, to this viewer and to a new one.
    let mut late = s.subscribe();
    let mut late_out = late.take_snapshot();
    s.write(b"still here\r").await.unwrap();
    read_until(&mut sub, &mut out, "after[still here]").await;
    read_until(&mut late, &mut late_out, "after[still here]").await;

    // The exit is reported (the pump's wait on the model is bounded).
    let status = tokio::time::timeout(T, s.wait_exit())
        .await
        .expect("the exit is reported")
        .unwrap();
    assert_eq!(status.code, 3);
    match tokio::time::timeout(T, async {
        loop {
            match sub.recv().await {
                OutputEvent::Data(_) => {}
                end => return end,
            }
        }
    })
    .await
    {
        Ok(OutputEvent::Exited(end)) => assert_eq!(end.code, 3),
        other => panic!("the viewer must see the exit: {other:?}"),
    }
}
