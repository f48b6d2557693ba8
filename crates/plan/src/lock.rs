//! OS-level locks (`flock`) in the state root.
//!
//! * `.harness-tx.lock` — the transaction lock: held around every read-modify-write of the
//!   state files, in both modes, by every process (CLI steps, hooks that write, the driver).
//! * `.harness-session.lock` — the session lock, held by the long-lived `harness run` for its
//!   whole session: exclusive (`LOCK_EX`) in exclusive mode, shared (`LOCK_SH`) by each worker
//!   in concurrent mode, so a second exclusive session fails fast and cannot mix with workers.
//!
//! The kernel drops a `flock` when its holder dies, so a crashed holder never leaves a stale
//! lock. The pid file beside it (`.harness-session.pid`, or one per worker) is for diagnosis:
//! it names the holder, lets a new session see that the previous one died (stale holder) and
//! kill the agent process group it left behind, and is removed only by its owner.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{PlanError, Result};
use crate::model::now_iso;
use crate::state_file::{self, SESSION_LOCK, SESSION_PID, StateRoot, TX_LOCK};

/// Lock kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    Exclusive,
    Shared,
}

/// A held `flock`; released on drop.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    fn open(path: &Path) -> Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|e| PlanError::io("open lock", path, e))
    }

    /// Non-blocking attempt; `Ok(None)` when another holder has it.
    pub fn try_lock(path: &Path, kind: LockKind) -> Result<Option<FileLock>> {
        let file = Self::open(path)?;
        let op = match kind {
            LockKind::Exclusive => libc::LOCK_EX,
            LockKind::Shared => libc::LOCK_SH,
        } | libc::LOCK_NB;
        // SAFETY: flock on a file descriptor we own; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
        if rc == 0 {
            return Ok(Some(FileLock {
                file,
                path: path.to_path_buf(),
            }));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(PlanError::io("flock", path, err))
        }
    }

    /// Polls until the lock is taken or `timeout` passes.
    pub fn lock_with_timeout(path: &Path, kind: LockKind, timeout: Duration) -> Result<FileLock> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(l) = Self::try_lock(path, kind)? {
                return Ok(l);
            }
            if Instant::now() >= deadline {
                return Err(PlanError::LockBusy {
                    path: path.to_path_buf(),
                    holder: format!("another process (waited {}s)", timeout.as_secs_f32()),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: unlocking our own descriptor; closing it would release the lock anyway.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

/// Timeout of the transaction lock: `HARNESS_LOCK_TIMEOUT_SECONDS`, default 10 s.
pub fn tx_timeout() -> Duration {
    let secs = std::env::var("HARNESS_LOCK_TIMEOUT_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| *v > 0.0)
        .unwrap_or(10.0);
    Duration::from_secs_f64(secs)
}

/// Runs `f` while holding the transaction lock of `root`.
pub fn transaction<T>(root: &StateRoot, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let _lock =
        FileLock::lock_with_timeout(&root.path(TX_LOCK), LockKind::Exclusive, tx_timeout())?;
    f()
}

/// Whether a process with this pid exists (EPERM counts as alive).
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Hostname for worker ids and pid files.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and its length are valid; gethostname NUL-terminates on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Contents of a session pid file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HolderInfo {
    pub pid: i32,
    pub host: String,
    pub worker: String,
    pub started: String,
    pub token: String,
    pub child_pgid: Option<i32>,
}

impl HolderInfo {
    fn render(&self) -> String {
        let mut s = format!(
            "pid={}\nhost={}\nworker={}\nstarted={}\ntoken={}\n",
            self.pid, self.host, self.worker, self.started, self.token
        );
        if let Some(g) = self.child_pgid {
            s.push_str(&format!("child_pgid={g}\n"));
        }
        s
    }

    fn parse(text: &str) -> HolderInfo {
        let mut h = HolderInfo::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            match k {
                "pid" => h.pid = v.parse().unwrap_or(0),
                "host" => h.host = v.into(),
                "worker" => h.worker = v.into(),
                "started" => h.started = v.into(),
                "token" => h.token = v.into(),
                "child_pgid" => h.child_pgid = v.parse().ok(),
                _ => {}
            }
        }
        h
    }

    fn describe(&self) -> String {
        format!(
            "pid={} host={} worker={} since {}",
            self.pid, self.host, self.worker, self.started
        )
    }
}

/// The session lock held by a long-lived `harness run`.
#[derive(Debug)]
pub struct SessionLock {
    _lock: FileLock,
    pid_path: PathBuf,
    info: HolderInfo,
    /// The previous holder's pid file when that holder is gone (a crashed session).
    pub stale: Option<HolderInfo>,
}

fn pid_file_name(kind: LockKind, worker: &str) -> String {
    match kind {
        LockKind::Exclusive => SESSION_PID.to_string(),
        LockKind::Shared => {
            let safe: String = worker
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!(".harness-worker-{safe}.pid")
        }
    }
}

impl SessionLock {
    /// Takes the session lock without waiting. Fails with [`PlanError::LockBusy`] naming the
    /// holder when another session has it.
    pub fn acquire(root: &StateRoot, kind: LockKind, worker: &str) -> Result<SessionLock> {
        let lock_path = root.path(SESSION_LOCK);
        let pid_path = root.path(&pid_file_name(kind, worker));
        let Some(lock) = FileLock::try_lock(&lock_path, kind)? else {
            let holder = std::fs::read_to_string(root.path(SESSION_PID))
                .map(|t| HolderInfo::parse(&t).describe())
                .unwrap_or_else(|_| "another harness session".into());
            return Err(PlanError::LockBusy {
                path: lock_path,
                holder,
            });
        };
        let stale = std::fs::read_to_string(&pid_path)
            .ok()
            .map(|t| HolderInfo::parse(&t));
        let info = HolderInfo {
            pid: std::process::id() as i32,
            host: hostname(),
            worker: worker.to_string(),
            started: now_iso(),
            token: format!("{}-{}", std::process::id(), now_nanos()),
            child_pgid: None,
        };
        state_file::write_atomic(&pid_path, info.render().as_bytes())?;
        Ok(SessionLock {
            _lock: lock,
            pid_path,
            info,
            stale,
        })
    }

    pub fn info(&self) -> &HolderInfo {
        &self.info
    }

    /// Records the process group of the running agent (killed by the next session if this
    /// one dies).
    pub fn set_child_pgid(&mut self, pgid: Option<i32>) -> Result<()> {
        self.info.child_pgid = pgid;
        state_file::write_atomic(&self.pid_path, self.info.render().as_bytes())
    }

    /// Kills the agent process group a dead previous holder left behind. Returns the pgid.
    pub fn kill_orphans(&self) -> Option<i32> {
        let pgid = self.stale.as_ref()?.child_pgid?;
        if pgid <= 1 {
            return None;
        }
        // SAFETY: signalling a process group recorded by our own previous session.
        let rc = unsafe { libc::kill(-pgid, libc::SIGKILL) };
        (rc == 0).then_some(pgid)
    }

    /// Releases the lock; the pid file is removed only if it is still ours.
    pub fn release(self) -> Result<()> {
        let ours = std::fs::read_to_string(&self.pid_path)
            .map(|t| HolderInfo::parse(&t).token == self.info.token)
            .unwrap_or(false);
        if ours {
            state_file::remove_if_exists(&self.pid_path)?;
        } else {
            tracing::warn!(path = %self.pid_path.display(), "pid file not ours; left in place");
        }
        Ok(())
    }
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    #[test]
    fn exclusive_session_fails_fast_and_names_holder() {
        let d = tempfile::tempdir().expect("tmp");
        let r = StateRoot::new(d.path());
        let first = SessionLock::acquire(&r, LockKind::Exclusive, "w1").expect("first");
        match SessionLock::acquire(&r, LockKind::Exclusive, "w2") {
            Err(PlanError::LockBusy { holder, .. }) => {
                assert!(
                    holder.contains(&format!("pid={}", std::process::id())),
                    "{holder}"
                );
            }
            other => panic!("expected busy, got {other:?}"),
        }
        // a concurrent worker cannot join an exclusive session either
        assert!(SessionLock::acquire(&r, LockKind::Shared, "w3").is_err());
        first.release().expect("release");
        assert!(!r.path(SESSION_PID).exists());
        let again = SessionLock::acquire(&r, LockKind::Exclusive, "w2").expect("again");
        again.release().expect("release");
    }

    #[test]
    fn shared_workers_coexist() {
        let d = tempfile::tempdir().expect("tmp");
        let r = StateRoot::new(d.path());
        let a = SessionLock::acquire(&r, LockKind::Shared, "a").expect("a");
        let b = SessionLock::acquire(&r, LockKind::Shared, "b").expect("b");
        assert!(SessionLock::acquire(&r, LockKind::Exclusive, "x").is_err());
        a.release().expect("a");
        b.release().expect("b");
    }

    #[test]
    fn stale_pid_file_is_detected_and_release_checks_ownership() {
        let d = tempfile::tempdir().expect("tmp");
        let r = StateRoot::new(d.path());
        std::fs::write(
            r.path(SESSION_PID),
            "pid=999999\nhost=h\nworker=old\nstarted=x\ntoken=t\n",
        )
        .expect("write");
        let l = SessionLock::acquire(&r, LockKind::Exclusive, "new").expect("acquire");
        assert_eq!(l.stale.as_ref().map(|h| h.pid), Some(999_999));
        // someone else overwrote the pid file: release leaves it alone
        std::fs::write(r.path(SESSION_PID), "pid=1\ntoken=other\n").expect("write");
        l.release().expect("release");
        assert!(r.path(SESSION_PID).exists());
    }

    #[test]
    fn transaction_lock_serialises_threads() {
        let d = tempfile::tempdir().expect("tmp");
        let r = Arc::new(StateRoot::new(d.path()));
        let counter = Arc::new(std::sync::Mutex::new((0u32, 0u32)));
        let barrier = Arc::new(Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (r, c, b) = (r.clone(), counter.clone(), barrier.clone());
                std::thread::spawn(move || {
                    b.wait();
                    for _ in 0..20 {
                        transaction(&r, || {
                            {
                                let mut g = c.lock().expect("m");
                                g.0 += 1;
                                g.1 = g.1.max(g.0);
                            }
                            std::thread::sleep(Duration::from_millis(1));
                            c.lock().expect("m").0 -= 1;
                            Ok(())
                        })
                        .expect("tx");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("join");
        }
        assert_eq!(counter.lock().expect("m").1, 1, "never two holders at once");
    }
}
