//! One run of a gateway CLI (docs/contract.md §9): no stdin, stdout and stderr
//! captured (bounded), a timeout after which the whole process group is
//! killed (the CLIs start children of their own).

use std::{collections::BTreeMap, process::Stdio, time::Duration};

use harness_core::outbox::RunEnd;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Output kept per stream (the reference's maxBuffer).
const MAX_OUTPUT: usize = 1 << 20;
/// How long output may still be read after the process ended (a
/// grandchild holding the pipe open must not hold the sender).
const READ_GRACE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct CliRun {
    pub end: RunEnd,
    pub stdout: String,
    pub stderr: String,
}

type Captured = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

/// Read to EOF into `into` (what was read stays there if the reader is
/// abandoned).
async fn read_bounded(mut r: impl AsyncRead + Unpin, into: Captured) {
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut out = into.lock().unwrap_or_else(|p| p.into_inner());
                let room = MAX_OUTPUT.saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

fn text(c: &Captured) -> String {
    String::from_utf8_lossy(&c.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) else {
        return;
    };
    if pid <= 1 {
        return;
    }
    // SAFETY: killpg has no memory-safety preconditions; pid > 1 is the
    // group this child leads (it was spawned with process_group(0)).
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
    }
}

/// Run `bin args…` with `env` added to this process's environment (less
/// the variables that carry this server's secrets).
pub async fn run(
    bin: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    timeout: Duration,
) -> CliRun {
    let mut cmd = tokio::process::Command::new(bin);
    for name in crate::secrets::SECRET_ENV_VARS {
        cmd.env_remove(name);
    }
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(err) => {
            return CliRun {
                end: RunEnd::SpawnFailed(format!("{bin}: {err}")),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    let pid = child.id();
    let (out_buf, err_buf) = (Captured::default(), Captured::default());
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    // The process and both pipes are driven in this task (no task per
    // pipe): the wait is bounded by `timeout`, the reads by a short grace
    // after the exit (children of the CLI may still hold the pipes open).
    let reads = async {
        tokio::join!(
            async {
                if let Some(s) = stdout {
                    read_bounded(s, out_buf.clone()).await
                }
            },
            async {
                if let Some(s) = stderr {
                    read_bounded(s, err_buf.clone()).await
                }
            },
        )
    };
    tokio::pin!(reads);
    let mut reads_done = false;
    let waited = async {
        loop {
            tokio::select! {
                status = child.wait() => return status,
                _ = &mut reads, if !reads_done => reads_done = true,
            }
        }
    };
    let end = match tokio::time::timeout(timeout, waited).await {
        Ok(Ok(status)) => match status.code() {
            Some(code) => RunEnd::Exited(code),
            None => RunEnd::Signalled,
        },
        Ok(Err(e)) => RunEnd::SpawnFailed(format!("cannot wait for {bin}: {e}")),
        Err(_) => {
            kill_group(pid);
            let _ = child.wait().await;
            RunEnd::TimedOut
        }
    };
    if !reads_done {
        let _ = tokio::time::timeout(READ_GRACE, &mut reads).await;
    }
    CliRun {
        end,
        stdout: text(&out_buf),
        stderr: text(&err_buf),
    }
}

/// How long a directory lookup may take (docs/tower-messaging.md §6.2 rule 6).
pub const DIRECTORY_TIMEOUT: Duration = Duration::from_secs(20);

/// The OpenClaw group directory, run through the configured CLI.
pub struct CliDirectory {
    pub bin: String,
    pub env: BTreeMap<String, String>,
}

#[async_trait::async_trait]
impl harness_core::outbox::destination::DirectoryLookup for CliDirectory {
    async fn run_directory(&self, argv: Vec<String>) -> Result<String, String> {
        let run = run(&self.bin, &argv, &self.env, DIRECTORY_TIMEOUT).await;
        match run.end {
            RunEnd::Exited(0) => Ok(run.stdout),
            end => Err(format!(
                "{end:?}: {}",
                run.stderr.lines().last().unwrap_or_default()
            )),
        }
    }
}
