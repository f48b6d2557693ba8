//! Signalling a whole agent: the child is a session leader (portable-pty
//! calls `setsid()`), so its pid is also its process-group id and session id.
//! `killpg` reaches the CLI and every helper in its group (MCP servers,
//! language servers); on Linux the session is also swept through `/proc`, so
//! children that moved to their own process group (job control) die too.

use crate::PtyError;

/// Sends `signal` to the process group `pgid` and, on Linux, to every
/// process of the session `pgid`. A group that no longer exists is not an
/// error.
pub(crate) fn signal_session(pgid: u32, signal: i32) -> Result<(), PtyError> {
    let Ok(pid) = libc::pid_t::try_from(pgid) else {
        return Ok(());
    };
    if pid <= 1 {
        // Never signal init or "every process" by accident.
        return Ok(());
    }
    // SAFETY: killpg has no memory-safety preconditions; pid > 1.
    let rc = unsafe { libc::killpg(pid, signal) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            return Err(PtyError::Signal {
                signal,
                pgid,
                source: err,
            });
        }
    }
    #[cfg(target_os = "linux")]
    for member in session_members(pid) {
        // SAFETY: kill has no memory-safety preconditions; member > 1.
        unsafe {
            libc::kill(member, signal);
        }
    }
    Ok(())
}

/// After the session leader `sid` exited and was reaped: signals the
/// processes left in its session (descendants that survived the hangup).
/// Safe against pid reuse: if a process with pid `sid` exists again, the
/// number was reused and nothing is signalled; otherwise a process whose
/// session id is `sid` can only be a descendant of our leader (Linux does
/// not reuse a pid while a session of that id has members). No-op on other
/// systems.
pub(crate) fn signal_orphans(sid: u32, signal: i32) {
    #[cfg(target_os = "linux")]
    {
        let Ok(sid) = libc::pid_t::try_from(sid) else {
            return;
        };
        if sid <= 1 || std::path::Path::new(&format!("/proc/{sid}")).exists() {
            return;
        }
        for member in session_members(sid) {
            // SAFETY: kill has no memory-safety preconditions; member > 1.
            unsafe {
                libc::kill(member, signal);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (sid, signal);
}

/// Pids (other than 0/1) whose session id is `sid`.
#[cfg(target_os = "linux")]
fn session_members(sid: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| pid > 1)
        .filter(|&pid| session_of(pid) == Some(sid))
        .collect()
}

/// The session id of `pid` from `/proc/<pid>/stat` (field 6).
#[cfg(target_os = "linux")]
fn session_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp session ..."; comm may contain spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(3)?.parse().ok()
}

/// True if a process with this pid exists (and is not a zombie).
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    #[cfg(target_os = "linux")]
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next());
        return state != Some("Z");
    }
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_signal_init() {
        assert!(signal_session(0, libc::SIGKILL).is_ok());
        assert!(signal_session(1, libc::SIGKILL).is_ok());
        assert!(process_alive(std::process::id()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_own_session() {
        // SAFETY: getsid(0) has no preconditions.
        let sid = unsafe { libc::getsid(0) };
        let me = libc::pid_t::try_from(std::process::id()).unwrap();
        assert_eq!(session_of(me), Some(sid));
    }
}
