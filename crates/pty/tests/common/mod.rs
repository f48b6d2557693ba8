//! Helpers for the PTY tests.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use harness_pty::{OutputEvent, PtySession, SpawnSpec, Subscription};

pub const T: Duration = Duration::from_secs(10);

pub fn sh(script: &str) -> SpawnSpec {
    SpawnSpec::new(["/bin/sh", "-c", script], std::env::temp_dir())
}

pub async fn spawn_sh(script: &str) -> Arc<PtySession> {
    PtySession::spawn(sh(script)).await.expect("spawn")
}

/// Reads a subscription until `pat` appears in the accumulated output.
pub async fn read_until(sub: &mut Subscription, acc: &mut Vec<u8>, pat: &str) {
    let found = tokio::time::timeout(T, async {
        // Search only what can contain a new match (keeps this linear).
        let mut from = 0;
        loop {
            if contains(&acc[from..], pat.as_bytes()) {
                return;
            }
            from = acc.len().saturating_sub(pat.len());
            match sub.recv().await {
                OutputEvent::Data(d) => acc.extend_from_slice(&d),
                other => panic!(
                    "ended with {other:?} before {pat:?}; got {:?}",
                    String::from_utf8_lossy(acc)
                ),
            }
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "timed out waiting for {pat:?}; got {:?}",
        String::from_utf8_lossy(acc)
    );
}

/// Reads everything until the subscription ends; returns data and the end.
pub async fn read_to_end(sub: &mut Subscription) -> (Vec<u8>, OutputEvent) {
    let mut acc = Vec::new();
    tokio::time::timeout(T, async {
        loop {
            match sub.recv().await {
                OutputEvent::Data(d) => acc.extend_from_slice(&d),
                end => return (acc, end),
            }
        }
    })
    .await
    .expect("subscription did not end")
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

pub fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// Polls `f` until true or the timeout.
pub async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + T;
    while !f() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
