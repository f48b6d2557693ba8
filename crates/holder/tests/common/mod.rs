//! Helpers of the holder's integration tests: real holder processes (the
//! `harness-hold` binary), real PTYs and real sockets.

#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use harness_holder::{HoldConfig, HolderClient, HolderEvent, HolderEvents, spawn_holder};

/// The `hold` entry point built with this crate.
pub const BIN: &str = env!("CARGO_BIN_EXE_harness-hold");

/// A temporary directory with a run directory path inside (not created:
/// the holder creates it with mode 0700).
pub fn run_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    (tmp, dir)
}

/// A config running `sh -c script`.
pub fn sh(dir: &Path, script: &str) -> HoldConfig {
    HoldConfig::new(dir, vec!["sh".into(), "-c".into(), script.into()])
}

pub fn env() -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("TERM".into(), "xterm-256color".into()),
    ]
}

/// Starts a detached holder; kills it (and its program) when dropped.
pub async fn start(cfg: &HoldConfig) -> Held {
    let socket = spawn_holder(Path::new(BIN), &[], cfg, env(), Duration::from_secs(10))
        .await
        .unwrap();
    let (client, _events) = HolderClient::connect(&socket, "test").await.unwrap();
    let held = Held {
        socket,
        holder_pid: client.info().holder_pid,
        child_pid: client.info().child_pid,
    };
    drop(client);
    held
}

pub struct Held {
    pub socket: PathBuf,
    pub holder_pid: u32,
    pub child_pid: u32,
}

impl Held {
    pub async fn connect(&self) -> (HolderClient, HolderEvents) {
        HolderClient::connect(&self.socket, "test").await.unwrap()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        for pid in [self.holder_pid, self.child_pid] {
            if alive(pid) {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// True while a process with this pid exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next());
            state != Some("Z")
        }
        Err(_) => false,
    }
}

/// The session id of a process.
pub fn session_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(3)?.parse().ok()
}

/// Waits until `cond` holds (polling), panicking after `max`.
pub async fn eventually(max: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < max, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The stream as a server sees it: output must arrive in order with no gap
/// and no duplicate; the position is tracked.
#[derive(Debug, Default)]
pub struct Stream {
    pub have: u64,
    pub bytes: Vec<u8>,
    pub exit: Option<(u64, harness_holder::ExitInfo)>,
    pub snapshots: Vec<(harness_holder::client::Snapshot, bool)>,
}

impl Stream {
    pub fn apply(&mut self, event: HolderEvent) {
        match event {
            HolderEvent::Replaying { seq } => assert_eq!(seq, self.have, "replay position"),
            HolderEvent::Output { seq, data } => {
                assert_eq!(seq, self.have, "gap or duplicate in the output stream");
                self.have += data.len() as u64;
                self.bytes.extend_from_slice(&data);
            }
            HolderEvent::Snapshot { snapshot, lagged } => {
                self.have = snapshot.seq;
                self.snapshots.push((snapshot, lagged));
            }
            HolderEvent::Exit { seq, status } => {
                assert_eq!(seq, self.have, "exit before the last output");
                self.exit = Some((seq, status));
            }
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Applies events until `done` holds (panics after `max`).
    pub async fn until(
        &mut self,
        events: &mut HolderEvents,
        max: Duration,
        mut done: impl FnMut(&Self) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + max;
        while !done(self) {
            match tokio::time::timeout_at(deadline, events.next()).await {
                Ok(Some(e)) => self.apply(e),
                Ok(None) => panic!("connection closed; got {:?}", self.text()),
                Err(_) => panic!("timed out; got {:?}", self.text()),
            }
        }
    }
}
