//! Every `unsafe` libc call of the crate, each behind a small safe function.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::HolderError;

/// Opens a PTY of `rows` × `cols`; returns (master, slave), both
/// close-on-exec, the master non-blocking.
pub(crate) fn openpty(rows: u16, cols: u16) -> Result<(OwnedFd, OwnedFd), HolderError> {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = winsize(rows, cols);
    // SAFETY: the out-pointers are valid for writes; name and termios may
    // be null; `size` is a valid winsize that openpty only reads.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return Err(HolderError::last_os("openpty"));
    }
    // SAFETY: openpty succeeded, so both are fresh descriptors we own.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    set_flags(master.as_raw_fd(), true)?;
    set_flags(slave.as_raw_fd(), false)?;
    Ok((master, slave))
}

fn winsize(rows: u16, cols: u16) -> libc::winsize {
    libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// Sets close-on-exec and, when asked, non-blocking mode.
fn set_flags(fd: libc::c_int, nonblocking: bool) -> Result<(), HolderError> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    unsafe {
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0 {
            return Err(HolderError::last_os("fcntl(FD_CLOEXEC)"));
        }
        if nonblocking {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) != 0 {
                return Err(HolderError::last_os("fcntl(O_NONBLOCK)"));
            }
        }
    }
    Ok(())
}

/// Sets the PTY's window size (the kernel signals SIGWINCH to the
/// foreground process group).
pub(crate) fn set_winsize(master: BorrowedFd<'_>, rows: u16, cols: u16) -> Result<(), HolderError> {
    let size = winsize(rows, cols);
    // SAFETY: TIOCSWINSZ reads one winsize through a valid pointer.
    let rc = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    if rc != 0 {
        return Err(HolderError::last_os("ioctl(TIOCSWINSZ)"));
    }
    Ok(())
}

/// Starts `cmd` on the PTY's slave side: stdin/stdout/stderr are the slave,
/// in a new session whose controlling terminal is the slave (so its pid is
/// its process group and session id).
pub(crate) fn spawn_on_pty(cmd: &mut Command, slave: &OwnedFd) -> std::io::Result<Child> {
    let io = || slave.try_clone().map(Stdio::from);
    cmd.stdin(io()?).stdout(io()?).stderr(io()?);
    // SAFETY: the closure runs between fork and exec and calls only
    // async-signal-safe functions (setsid, ioctl); it allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Forks. `Ok(None)` in the child, `Ok(Some(pid))` in the parent. Only
/// sound while the process is single-threaded (the holder forks before it
/// starts anything).
pub(crate) fn fork() -> Result<Option<u32>, HolderError> {
    // SAFETY: called while the process has one thread (see the doc), so the
    // child's memory is consistent.
    let pid = unsafe { libc::fork() };
    match pid {
        p if p < 0 => Err(HolderError::last_os("fork")),
        0 => Ok(None),
        p => Ok(u32::try_from(p).ok()),
    }
}

/// Starts a new session (and process group) led by this process.
pub(crate) fn setsid() -> Result<(), HolderError> {
    // SAFETY: setsid has no memory-safety preconditions.
    if unsafe { libc::setsid() } < 0 {
        return Err(HolderError::last_os("setsid"));
    }
    Ok(())
}

/// Sets the file-creation mask; returns the previous one.
pub(crate) fn umask(mask: u32) -> u32 {
    // SAFETY: umask has no memory-safety preconditions and cannot fail.
    unsafe { libc::umask(mask as libc::mode_t) as u32 }
}

/// This process's effective uid.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The uid and pid of the peer of a connected Unix socket (`SO_PEERCRED`:
/// the credentials it had when it connected, as seen from this process's
/// namespaces; pid 0 when the peer's pid is not visible here).
pub(crate) fn peer_cred(sock: BorrowedFd<'_>) -> Result<(u32, u32), HolderError> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            std::ptr::addr_of_mut!(cred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(HolderError::last_os("getsockopt(SO_PEERCRED)"));
    }
    Ok((cred.uid, u32::try_from(cred.pid).unwrap_or(0)))
}

/// Waits for events on `fds`. An interrupted wait reports no events.
pub(crate) fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> Result<(), HolderError> {
    let ms = timeout.map_or(-1, |t| {
        // Round up so a deadline is not polled for repeatedly at 0 ms.
        let ms = t.as_micros().div_ceil(1000);
        libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
    });
    // SAFETY: `fds` is a valid, exclusively borrowed array of pollfd.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if rc < 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(HolderError::Os {
                op: "poll",
                source: err,
            });
        }
    }
    Ok(())
}

/// A pollable descriptor that becomes readable when process `pid` exits
/// (`pidfd_open`, Linux 5.3+); `None` where unsupported.
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open takes two integers and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the syscall succeeded: `fd` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    set_flags(fd.as_raw_fd(), false).ok()?;
    Some(fd)
}

/// Sends `signal` to process group `pgid`; a group that is gone is not an
/// error. Never signals groups 0 or 1.
pub(crate) fn killpg(pgid: u32, signal: i32) -> Result<(), HolderError> {
    let Ok(pid) = libc::pid_t::try_from(pgid) else {
        return Ok(());
    };
    if pid <= 1 {
        return Ok(());
    }
    // SAFETY: killpg has no memory-safety preconditions; pid > 1.
    if unsafe { libc::killpg(pid, signal) } != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            return Err(HolderError::Os {
                op: "killpg",
                source: err,
            });
        }
    }
    Ok(())
}

/// Points stdin, stdout and stderr at `/dev/null` (a detached holder must
/// not keep its starter's pipes open).
pub(crate) fn stdio_to_devnull() -> Result<(), HolderError> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(HolderError::io("open /dev/null"))?;
    for target in 0..=2 {
        // SAFETY: dup2 onto the standard descriptors, which this process
        // owns; `null` stays valid for the call.
        if unsafe { libc::dup2(null.as_raw_fd(), target) } < 0 {
            return Err(HolderError::last_os("dup2"));
        }
    }
    Ok(())
}
