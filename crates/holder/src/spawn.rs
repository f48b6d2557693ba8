//! Starting a holder from the server: `<binary> <prefix…> <hold args>`,
//! detached; returns once its socket listens.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{HoldConfig, HolderError};

/// Starts a detached holder for `cfg` and waits (at most `wait`) until its
/// socket listens. `binary` and `prefix` are the command before the hold
/// arguments (in production the private copy of `harness` and `["hold"]`).
/// The holder's (and so the program's) environment is exactly `env`.
///
/// The started process forks the holder and exits as soon as the holder
/// reported ready (or failed, with its reason on stderr), so nothing is
/// left for the caller to reap.
pub async fn spawn_holder(
    binary: &Path,
    prefix: &[OsString],
    cfg: &HoldConfig,
    env: impl IntoIterator<Item = (OsString, OsString)>,
    wait: Duration,
) -> Result<PathBuf, HolderError> {
    let mut cfg = cfg.clone();
    cfg.detach = true;
    let socket = cfg.socket_path();
    let start = Instant::now();
    let not_ready = |detail: String| HolderError::NotReady {
        path: socket.clone(),
        waited_ms: start.elapsed().as_millis(),
        detail,
    };
    let child = tokio::process::Command::new(binary)
        .args(prefix)
        .args(cfg.to_args())
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| HolderError::Spawn {
            program: binary.display().to_string(),
            reason: e.to_string(),
        })?;
    let output = tokio::time::timeout(wait, child.wait_with_output())
        .await
        .map_err(|_| not_ready(": the starter did not report".into()))?
        .map_err(HolderError::io("wait for the holder's starter"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(not_ready(format!(": {}", stderr.trim())));
    }
    // The starter reports after the bind; the path exists by now unless
    // someone removed it. Checked within the same bound all the same.
    while !socket.exists() {
        if start.elapsed() >= wait {
            return Err(not_ready(String::new()));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(socket)
}
