//! Exactly-once injection, bracketed paste, settle delay and input
//! boundaries, against real PTYs.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use harness_pty::{Boundary, InjectOptions, InjectOutcome, PasteMode};

const LINE_ECHO: &str = "stty -echo; echo READY; while IFS= read -r l; do echo \"GOT[$l]\"; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_injections_write_once() {
    let s = spawn_sh(LINE_ECHO).await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "READY").await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move {
                s.inject("reply-42", "HELLO-ONCE", InjectOptions::default())
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap().unwrap());
    }
    let written = outcomes
        .iter()
        .filter(|o| **o == InjectOutcome::Written)
        .count();
    assert_eq!(written, 1, "{outcomes:?}");
    assert!(outcomes.iter().all(|o| matches!(
        o,
        InjectOutcome::Written | InjectOutcome::AlreadyInjected | InjectOutcome::InProgress
    )));
    read_until(&mut sub, &mut out, "GOT[HELLO-ONCE]").await;
    // A retry after the fact is deduplicated too.
    let again = s
        .inject("reply-42", "HELLO-ONCE", InjectOptions::default())
        .await
        .unwrap();
    assert_eq!(again, InjectOutcome::AlreadyInjected);
    // A different id is written.
    s.inject("reply-43", "SECOND", InjectOptions::default())
        .await
        .unwrap();
    read_until(&mut sub, &mut out, "GOT[SECOND]").await;
    assert_eq!(
        count(&out, b"HELLO-ONCE"),
        1,
        "{}",
        String::from_utf8_lossy(&out)
    );
    assert!(s.ledger().was_injected("reply-42"));
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bracketed_paste_when_the_app_enabled_it() {
    let s = spawn_sh("printf '\\033[?2004h'; stty -echo; echo READY; cat -v").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "READY").await;
    s.sync_model().await;
    assert!(s.bracketed_paste_enabled());
    // A reply that tries to end the paste early and run a command.
    let evil = "hi\x1b[201~rm -rf ~";
    s.inject("p1", evil, InjectOptions::default())
        .await
        .unwrap();
    read_until(&mut sub, &mut out, "^[[200~hirm -rf ~^[[201~").await;
    assert_eq!(
        count(&out, b"^[[201~"),
        1,
        "{}",
        String::from_utf8_lossy(&out)
    );
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_input_when_paste_is_off() {
    let s = spawn_sh("stty -echo; echo READY; cat -v").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "READY").await;
    assert!(!s.bracketed_paste_enabled());
    s.inject("r1", "plain text\n", InjectOptions::default())
        .await
        .unwrap();
    read_until(&mut sub, &mut out, "plain text").await;
    assert!(!contains(&out, b"200~"));
    // Forced paste mode still wraps.
    let opts = InjectOptions {
        paste: PasteMode::Always,
        ..InjectOptions::default()
    };
    s.inject("r2", "forced", opts).await.unwrap();
    read_until(&mut sub, &mut out, "^[[200~forced^[[201~").await;
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_key_follows_after_the_settle_delay() {
    let s = spawn_sh(LINE_ECHO).await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "READY").await;
    let opts = InjectOptions {
        settle: Duration::from_millis(400),
        ..InjectOptions::default()
    };
    let started = tokio::time::Instant::now();
    let s2 = s.clone();
    let task = tokio::spawn(async move { s2.inject("slow", "LATE", opts).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        !s.screen_text().text.contains("GOT[LATE]"),
        "submitted before the delay"
    );
    assert_eq!(task.await.unwrap().unwrap(), InjectOutcome::Written);
    assert!(started.elapsed() >= Duration::from_millis(400));
    read_until(&mut sub, &mut out, "GOT[LATE]").await;
    // Without submit nothing is entered; a newline-only submit is a bare Enter.
    let no_submit = InjectOptions {
        submit: false,
        ..InjectOptions::default()
    };
    s.inject("n1", "PART", no_submit).await.unwrap();
    s.inject("n2", "\n", InjectOptions::default())
        .await
        .unwrap();
    read_until(&mut sub, &mut out, "GOT[PART]").await;
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_idle_and_turn_boundary() {
    let s = spawn_sh("for i in 1 2 3 4 5; do echo tick; sleep 0.1; done; sleep 30").await;
    let started = tokio::time::Instant::now();
    let b = s
        .wait_for_idle(Duration::from_millis(300), Duration::from_secs(5))
        .await;
    assert_eq!(b, Boundary::Idle);
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "{:?}",
        started.elapsed()
    );
    s.sync_model().await;
    assert!(s.screen_text().text.matches("tick").count() == 5);

    // Quiet longer than the bound: times out after `max`.
    let started = tokio::time::Instant::now();
    let b = s
        .wait_for_idle(Duration::from_secs(5), Duration::from_millis(200))
        .await;
    assert_eq!(b, Boundary::TimedOut);
    assert!(started.elapsed() >= Duration::from_millis(200));
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boundary_timeout_turn_complete_and_exit() {
    let s = spawn_sh("while :; do echo busy; sleep 0.05; done").await;
    let started = tokio::time::Instant::now();
    let b = s
        .wait_for_input_boundary(Duration::from_millis(500), Duration::from_millis(300))
        .await;
    assert_eq!(b, Boundary::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(2));

    let s2 = s.clone();
    let waiter = tokio::spawn(async move {
        s2.wait_for_input_boundary(Duration::from_secs(30), Duration::from_secs(30))
            .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.mark_turn_complete();
    assert_eq!(waiter.await.unwrap(), Boundary::TurnComplete);
    assert!(s.turn_complete());
    // Submitted input starts a new turn.
    s.inject("t", "x", InjectOptions::default()).await.unwrap();
    assert!(!s.turn_complete());

    let s3 = s.clone();
    let waiter = tokio::spawn(async move {
        s3.wait_for_idle(Duration::from_secs(30), Duration::from_secs(30))
            .await
    });
    s.kill().unwrap();
    assert_eq!(waiter.await.unwrap(), Boundary::Exited);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injection_into_an_exited_session_fails_and_can_be_retried() {
    let s = spawn_sh("exit 0").await;
    s.wait_exit().await.unwrap();
    assert!(
        s.inject("x", "hello", InjectOptions::default())
            .await
            .is_err()
    );
    // The id was released, not recorded: a retry is allowed to try again.
    assert!(!s.ledger().was_injected("x"));
    let _ = Arc::clone(&s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_ledger_spans_sessions() {
    use harness_pty::{PtySession, SessionOptions};
    let first = spawn_sh(LINE_ECHO).await;
    first
        .inject("carry", "ONCE", InjectOptions::default())
        .await
        .unwrap();
    let opts = SessionOptions {
        ledger: Some(first.ledger().clone()),
        ..SessionOptions::default()
    };
    let second = PtySession::spawn_with(sh(LINE_ECHO), opts).await.unwrap();
    let again = second
        .inject("carry", "ONCE", InjectOptions::default())
        .await
        .unwrap();
    assert_eq!(again, InjectOutcome::AlreadyInjected);
    first.kill().unwrap();
    second.kill().unwrap();
}
