//! Spawn, read, write, resize, exit codes, process-group kill, drain before
//! exit, and the environment allow-list — against real PTYs.

mod common;

use std::time::Duration;

use common::*;
use harness_pty::{OutputEvent, PtyError, PtySession, SpawnSpec, base_env, process_alive};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_read_write_echo() {
    let s =
        spawn_sh("stty -echo; echo READY; while IFS= read -r l; do echo \"GOT[$l]\"; done").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "READY").await;
    s.write(b"hello pty\r").await.unwrap();
    read_until(&mut sub, &mut out, "GOT[hello pty]").await;
    s.sync_model().await;
    assert!(s.screen_text().text.contains("GOT[hello pty]"));
    assert!(s.pid() > 1);
    assert!(s.exit_status().is_none());
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_code_is_reported() {
    let s = spawn_sh("echo bye; exit 7").await;
    let status = s.wait_exit().await.unwrap();
    assert_eq!(status.code, 7);
    assert!(status.signal.is_none());
    assert!(!status.success());
    assert_eq!(status.ws_close_code(), 4007);
    assert_eq!(s.exit_status(), Some(status));
    assert!(s.screen_text().text.contains("bye"));
    assert!(matches!(s.write(b"x").await, Err(PtyError::Exited)));
    let ok = spawn_sh("true").await.wait_exit().await.unwrap();
    assert!(ok.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resize_reaches_the_program() {
    let s = spawn_sh("stty size; while read l; do stty size; done").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "24 80").await;
    s.resize(30, 100).unwrap();
    s.write(b"\r").await.unwrap();
    read_until(&mut sub, &mut out, "30 100").await;
    assert_eq!(s.size(), (30, 100));
    assert_eq!(s.screen_text().cols, 100);
    // Degenerate sizes are clamped, not errors.
    s.resize(0, 1).unwrap();
    assert_eq!(s.size(), (2, 2));
    s.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_takes_the_whole_process_group() {
    // A background grandchild in the same process group, and (with job
    // control) one in its own process group of the same session.
    let s =
        spawn_sh("sleep 300 & echo \"GC1=$!\"; set -m; sleep 301 & echo \"GC2=$!\"; wait").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "GC2=").await;
    read_until(&mut sub, &mut out, "\n").await;
    let text = String::from_utf8_lossy(&out).to_string();
    let pid_of = |key: &str| -> u32 {
        let start = text.find(key).unwrap() + key.len();
        text[start..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    };
    let (gc1, gc2) = (pid_of("GC1="), pid_of("GC2="));
    assert!(process_alive(gc1) && process_alive(gc2));
    let pgrp = |pid: u32| -> u32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        after.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert_eq!(pgrp(gc1), s.pid(), "first grandchild shares the group");
    assert_ne!(pgrp(gc2), s.pid(), "second grandchild has its own group");
    s.kill().unwrap();
    let status = s.wait_exit().await.unwrap();
    assert!(status.signal.is_some(), "{status:?}");
    eventually("grandchildren die", || {
        !process_alive(gc1) && !process_alive(gc2)
    })
    .await;
    assert!(!process_alive(s.pid()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_escalates_to_sigkill() {
    let s = spawn_sh("trap '' TERM HUP; echo TRAPPED; while :; do sleep 0.05; done").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "TRAPPED").await;
    let started = tokio::time::Instant::now();
    let status = s.terminate(Duration::from_millis(300)).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        status.signal.as_deref().map(|s| s.contains("Kill")),
        Some(true),
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_drained_before_the_exit_is_reported() {
    // 1 MiB without newlines (so ONLCR adds nothing), then exit at once.
    let s = spawn_sh("read go; head -c 1048576 /dev/zero | tr '\\000' x; exit 3").await;
    let mut sub = s.subscribe();
    let _ = sub.take_snapshot();
    s.write(b"go\r").await.unwrap();
    let (data, end) = read_to_end(&mut sub).await;
    assert_eq!(
        count(&data, b"x"),
        1_048_576,
        "all output before the exit event"
    );
    match end {
        OutputEvent::Exited(status) => assert_eq!(status.code, 3),
        other => panic!("{other:?}"),
    }
    // wait_exit also resolves only after the model saw everything.
    s.wait_exit().await.unwrap();
    assert!(s.bytes_out() >= 1_048_576);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_is_an_allow_list() {
    // SAFETY (test): no other thread of this test binary reads this var.
    unsafe { std::env::set_var("HARNESS_TEST_SECRET", "hunter2-secret") };
    assert_eq!(
        std::env::var("HARNESS_TEST_SECRET").unwrap(),
        "hunter2-secret"
    );
    let spec = SpawnSpec::new(
        ["/bin/sh", "-c", "env; echo END-OF-ENV"],
        std::env::temp_dir(),
    )
    .env("TOWER_TASK_ID", "ctask000000000000000000001")
    .size(100, 200);
    let s = PtySession::spawn(spec).await.unwrap();
    s.wait_exit().await.unwrap();
    let text = s.screen_text().text;
    assert!(text.contains("END-OF-ENV"));
    assert!(text.contains("TOWER_TASK_ID=ctask000000000000000000001"));
    assert!(!text.contains("hunter2"), "secret leaked:\n{text}");
    assert!(!text.contains("HARNESS_TEST_SECRET"));
    assert!(text.contains("COLORTERM=truecolor"));
    for line in text
        .lines()
        .filter(|l| l.contains('=') && !l.starts_with(' '))
    {
        let key = line.split('=').next().unwrap();
        let allowed = base_env().contains_key(key)
            || ["TOWER_TASK_ID", "SHELL", "PWD", "SHLVL", "_", "OLDPWD"].contains(&key);
        assert!(allowed, "unexpected variable {key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_errors() {
    let empty = SpawnSpec::new(Vec::<String>::new(), "/");
    assert!(matches!(
        PtySession::spawn(empty).await,
        Err(PtyError::EmptyArgv)
    ));
    let bad_cwd = SpawnSpec::new(["true"], "/definitely/not/here");
    assert!(matches!(
        PtySession::spawn(bad_cwd).await,
        Err(PtyError::InvalidCwd(_))
    ));
    let missing = SpawnSpec::new(["harness-no-such-program-xyz"], "/");
    assert!(matches!(
        PtySession::spawn(missing).await,
        Err(PtyError::Spawn { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_running_session_kills_it() {
    let s = spawn_sh("echo UP; sleep 300").await;
    let mut sub = s.subscribe();
    let mut out = sub.take_snapshot();
    read_until(&mut sub, &mut out, "UP").await;
    let pid = s.pid();
    drop(sub);
    drop(s);
    eventually("child killed on drop", || !process_alive(pid)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_is_reported_promptly_and_kill_reaches_survivors() {
    // The grandchild ignores the SIGHUP of the leader's exit and survives.
    let s = spawn_sh(
        "nohup sleep 30 >/dev/null 2>&1 & echo \"GC=$!\"; sleep 0.3; echo main-done; exit 0",
    )
    .await;
    let started = tokio::time::Instant::now();
    let status = tokio::time::timeout(T, s.wait_exit())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code, 0);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let text = s.screen_text().text;
    assert!(text.contains("main-done"), "{text}");
    let start = text.find("GC=").unwrap() + 3;
    let gc: u32 = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap();
    assert!(process_alive(gc), "the descendant still runs");
    // kill() after the exit still reaches the lingering descendant.
    s.kill().unwrap();
    eventually("lingering descendant killed", || !process_alive(gc)).await;
}
