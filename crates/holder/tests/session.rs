//! A holder as a `PtySession` (`attach_session`): what the server sees.

mod common;

use std::time::Duration;

use common::*;
use harness_holder::attach_session;
use harness_pty::{InjectOptions, InjectOutcome, PasteMode, SessionOptions};

const SEC: Duration = Duration::from_secs(1);

async fn screen_until(s: &harness_pty::PtySession, what: &str) {
    let text = |s: &harness_pty::PtySession| s.screen_text().text;
    eventually(10 * SEC, what, || text(s).contains(what)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_survives_its_server_and_a_reply_is_typed_once_across_servers() {
    let (_tmp, dir) = run_dir();
    let held = start(&sh(
        &dir,
        "stty -echo; echo ready; while IFS= read -r l; do echo \"got:$l\"; done",
    ))
    .await;
    let first = attach_session(&held.socket, "test", "sh", SessionOptions::default())
        .await
        .unwrap();
    assert_eq!(first.info.child_pid, held.child_pid);
    let s = first.session;
    assert!(s.is_held());
    screen_until(&s, "ready").await;
    let opts = InjectOptions {
        submit: true,
        settle: Duration::from_millis(20),
        paste: PasteMode::Never,
    };
    assert_eq!(
        s.inject("d-1", "one", opts).await.unwrap(),
        InjectOutcome::Written
    );
    screen_until(&s, "got:one").await;
    // The server goes away (shutdown): the agent stays, nothing is reported.
    s.detach();
    drop(s);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(alive(held.child_pid), "the agent outlives its server");

    // The next server: a snapshot redraws the screen, the holder remembers the key.
    let second = attach_session(&held.socket, "test", "sh", SessionOptions::default())
        .await
        .unwrap();
    let s = second.session;
    screen_until(&s, "got:one").await;
    assert_eq!(
        s.inject("d-1", "one", opts).await.unwrap(),
        InjectOutcome::AlreadyInjected,
        "typed by the previous server"
    );
    s.write(b"raw-keys\r").await.unwrap();
    screen_until(&s, "got:raw-keys").await;
    assert_eq!(s.screen_text().text.matches("got:one").count(), 1);
    s.resize(30, 100).unwrap();
    s.write(b"exit\r").await.unwrap_or(());
    s.kill().unwrap();
    let status = tokio::time::timeout(10 * SEC, s.wait_exit())
        .await
        .unwrap()
        .unwrap();
    assert!(!status.success(), "{status:?}");
    s.exit_recorded();
    eventually(10 * SEC, "the holder to leave", || !alive(held.holder_pid)).await;
}

#[tokio::test]
async fn a_holder_gone_without_its_exit_is_reported_as_lost() {
    let (_tmp, dir) = run_dir();
    let held = start(&sh(&dir, "echo up; sleep 30")).await;
    let s = attach_session(&held.socket, "test", "sh", SessionOptions::default())
        .await
        .unwrap()
        .session;
    screen_until(&s, "up").await;
    std::process::Command::new("kill")
        .args(["-9", &held.holder_pid.to_string()])
        .status()
        .unwrap();
    let status = tokio::time::timeout(10 * SEC, s.wait_exit())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.signal.as_deref(), Some("the agent's holder is gone"));
}
