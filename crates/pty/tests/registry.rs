//! The registry and its keepalive, with short durations. "Nothing happened
//! for a while" is checked against a control session that must expire in
//! that while (a condition), not against a wall-clock sleep.

mod common;

use std::time::Duration;

use common::*;
use harness_pty::{KeepaliveConfig, PtyRegistry, process_alive};
use tokio::sync::broadcast;

fn short() -> KeepaliveConfig {
    KeepaliveConfig {
        running: Duration::from_millis(400),
        exited: Duration::from_millis(250),
    }
}

/// Inserts a control session whose keepalive starts now and waits until the
/// registry expired it: afterwards at least one full running keepalive has
/// passed since the call, on the registry's own timers.
async fn full_keepalive_passes(reg: &PtyRegistry, events: &mut broadcast::Receiver<String>) {
    let id = format!("control-{}", std::process::id());
    let control = spawn_sh("sleep 300").await;
    reg.insert(&id, control.clone());
    drop(control.subscribe());
    let started = tokio::time::Instant::now();
    loop {
        let expired = tokio::time::timeout(T, events.recv())
            .await
            .expect("the control session expires")
            .expect("expiry events");
        if expired == id {
            break;
        }
    }
    assert!(started.elapsed() >= reg.config().running);
    control.wait_exit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_session_expires_after_last_viewer_leaves() {
    let reg = PtyRegistry::new(short());
    let mut events = reg.expired_events();
    let s = spawn_sh("sleep 300").await;
    reg.insert("task-a", s.clone());
    // Never viewed: no timer.
    assert_eq!(reg.expires_at("task-a"), None);
    full_keepalive_passes(&reg, &mut events).await;
    assert!(reg.get("task-a").is_some(), "never viewed: never expires");
    let viewer = s.subscribe();
    assert_eq!(reg.expires_at("task-a"), None, "a viewer holds it");
    let left = tokio::time::Instant::now();
    drop(viewer);
    let id = tokio::time::timeout(T, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(id, "task-a");
    assert!(left.elapsed() >= Duration::from_millis(400));
    assert!(reg.get("task-a").is_none());
    let status = s.wait_exit().await.unwrap();
    assert!(status.signal.is_some(), "killed on expiry: {status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_clears_the_timer() {
    let reg = PtyRegistry::new(short());
    let mut events = reg.expired_events();
    let s = spawn_sh("sleep 300").await;
    reg.insert("task-r", s.clone());
    drop(s.subscribe());
    assert!(reg.expires_at("task-r").is_some());
    let viewer = s.subscribe();
    assert_eq!(
        reg.expires_at("task-r"),
        None,
        "reconnecting clears the timer"
    );
    full_keepalive_passes(&reg, &mut events).await;
    assert!(reg.get("task-r").is_some(), "a connected viewer keeps it");
    drop(viewer);
    eventually("expires after the second disconnect", || {
        reg.get("task-r").is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_session_has_no_timer_until_unparked() {
    let reg = PtyRegistry::new(short());
    let mut events = reg.expired_events();
    let s = spawn_sh("sleep 300").await;
    reg.insert("task-p", s.clone());
    assert!(reg.park("task-p"));
    assert!(reg.is_parked("task-p"));
    drop(s.subscribe());
    assert_eq!(reg.expires_at("task-p"), None);
    full_keepalive_passes(&reg, &mut events).await;
    assert!(reg.get("task-p").is_some(), "parked sessions survive");
    assert!(process_alive(s.pid()));
    let unparked = tokio::time::Instant::now();
    assert!(reg.unpark("task-p"));
    eventually("expires after unpark", || reg.get("task-p").is_none()).await;
    assert!(unparked.elapsed() >= Duration::from_millis(400));
    s.wait_exit().await.unwrap();
    assert!(!reg.park("task-p"), "nothing to park any more");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exited_session_lives_the_short_keepalive() {
    let reg = PtyRegistry::new(short());
    let s = spawn_sh("echo done").await;
    reg.insert("task-e", s.clone());
    s.wait_exit().await.unwrap();
    let exited = tokio::time::Instant::now();
    // Still readable for review for a while.
    assert!(
        reg.get("task-e")
            .unwrap()
            .screen_text()
            .text
            .contains("done")
    );
    eventually("exited session removed", || reg.get("task-e").is_none()).await;
    let lived = exited.elapsed();
    assert!(lived >= Duration::from_millis(200), "{lived:?}");
    assert!(lived < Duration::from_millis(2000), "{lived:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_replaces_and_kills_shutdown_kills_all() {
    let reg = PtyRegistry::new(KeepaliveConfig::default());
    let first = spawn_sh("sleep 300").await;
    let second = spawn_sh("sleep 300").await;
    let other = spawn_sh("sleep 300").await;
    assert!(reg.insert("t", first.clone()).is_none());
    reg.insert("u", other.clone());
    let replaced = reg.insert("t", second.clone()).unwrap();
    assert_eq!(replaced.pid(), first.pid());
    first.wait_exit().await.unwrap();
    assert_eq!(reg.len(), 2);
    let mut ids = reg.task_ids();
    ids.sort();
    assert_eq!(ids, ["t", "u"]);
    assert_eq!(reg.remove("u").unwrap().pid(), other.pid());
    assert!(process_alive(other.pid()), "remove does not kill");
    reg.insert("u", other.clone());
    reg.shutdown();
    assert!(reg.is_empty());
    second.wait_exit().await.unwrap();
    other.wait_exit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_kills() {
    let reg = PtyRegistry::new(short());
    let s = spawn_sh("sleep 300").await;
    reg.insert("d", s.clone());
    assert!(reg.destroy("d").is_some());
    assert!(reg.get("d").is_none());
    s.wait_exit().await.unwrap();
    assert!(reg.destroy("d").is_none());
}
