//! An agent never outlives its terminal's owner unseen. Agents are held by
//! holders that outlive the server; when a holder ends its agent (no server
//! came back within the orphan timeout), or when the server that owns the
//! PTY itself dies (holders off: SIGKILL, a crash, the OOM killer), the
//! agent's PTY hangs up. The hangup reaches only the session leader — the
//! isolation launcher — and a CLI that ignores SIGHUP (one did: a Codex
//! agent ran on for an hour after its test server was gone, re-parented to
//! PID 1) would keep working in the workspace where nobody can see or type
//! into it. The launcher passes the hangup on and, after a grace period,
//! kills the agent's namespace.

use crate::common::wait_until;
use std::{
    path::Path,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::json;

use crate::common::process::ServerProcess;

/// Host pids of processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    crate::common::process::pids_with("cmdline", marker)
}

/// Whether `pid` ignores SIGHUP (bit 0 of `SigIgn` in its status).
fn ignores_sighup(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        })
        .is_some_and(|mask| mask & 1 != 0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_ignores_sighup_dies_with_its_server_when_holders_are_off() {
    stubborn_agent_ends(&[("HARNESS_HOLDERS", "off")], 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_ignores_sighup_is_ended_by_its_orphaned_holder() {
    stubborn_agent_ends(&[("HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS", "2")], 2).await;
}

async fn stubborn_agent_ends(env: &[(&str, &str)], orphan_secs: u64) {
    if let Err(reason) = harness_pty::isolate::probe(Path::new(env!("CARGO_BIN_EXE_harness"))) {
        panic!("agents cannot be isolated on this machine: {reason}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (data, work) = (dir.path().join("data"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let server = ServerProcess::start_with(&data, |cmd| {
        cmd.args(["--agent-isolation", "required"]);
        cmd.envs(env.iter().copied());
    })
    .await;
    let marker = format!("hangup-agent-{}", std::process::id());
    let (status, task) = server
        .call(
            "POST",
            "/api/tasks",
            Some(json!({"title": "stubborn", "agent": {
                "provider": "command",
                "command": ["sh", "-c", "trap '' HUP TERM INT; while :; do sleep 1; done", marker],
                "cwd": work}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let id = task["id"].as_str().unwrap();
    let (status, body) = server
        .call("POST", &format!("/api/tasks/{id}/start"), None)
        .await;
    assert!(status.is_success(), "{body}");
    // Running, and its trap set (SIGHUP ignored): killed before that, the
    // agent would die of the first hangup and prove nothing.
    wait_until("the agent ignores SIGHUP", Duration::from_secs(30), || {
        processes_with(&marker)
            .iter()
            .any(|pid| ignores_sighup(*pid))
    })
    .await;

    server.kill();
    // The grace is 5 s; allow for a loaded machine.
    let limit =
        Duration::from_secs(orphan_secs + u64::from(harness_pty::isolate::HANGUP_GRACE_SECS) + 25);
    let left = || processes_with(&marker);
    let deadline = Instant::now() + limit;
    while !left().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let survivors = left();
    for pid in &survivors {
        // Do not leave it running after a failure either.
        // SAFETY: kill has no memory effects.
        unsafe {
            libc::kill(*pid as libc::pid_t, libc::SIGKILL);
        }
    }
    assert!(
        survivors.is_empty(),
        "the agent outlived its server by {limit:?}: pids {survivors:?}"
    );
}
