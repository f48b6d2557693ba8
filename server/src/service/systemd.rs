//! What `harness service` asks of the machine: whether systemd runs here,
//! `systemctl` / `loginctl` with a timeout, the account the service runs as.

use std::{
    ffi::{CStr, CString, OsStr},
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use super::unit::{Scope, UNIT_NAME};

/// The longest one `systemctl` call may take (a start waits for the unit).
const SYSTEMCTL_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether this machine was booted with systemd (`sd_booted(3)`: the
/// directory exists only while systemd is PID 1).
pub fn systemd_running() -> bool {
    Path::new("/run/systemd/system").is_dir()
}

/// Why `harness service` cannot talk to systemd here, or `None`.
pub fn not_running_reason() -> Option<String> {
    if !systemd_running() {
        return Some(
            "systemd is not running here (no /run/systemd/system: a container, WSL without \
             systemd, or another init)"
                .into(),
        );
    }
    if find_program("systemctl").is_none() {
        return Some("systemd runs, but `systemctl` is not on PATH".into());
    }
    None
}

/// A finished command: whether it succeeded, its stdout and stderr (trimmed).
#[derive(Debug, Clone)]
pub struct Captured {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Captured {
    /// What went wrong, for an error message.
    pub fn reason(&self) -> String {
        if self.stderr.is_empty() {
            self.stdout.clone()
        } else {
            self.stderr.clone()
        }
    }
}

/// Runs `program args…` with no stdin, killed after `timeout`.
pub fn capture(program: &str, args: &[&str], timeout: Duration) -> Result<Captured, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => {
                let out = child.wait_with_output().map_err(|e| e.to_string())?;
                return Ok(Captured {
                    success: out.status.success(),
                    stdout: String::from_utf8_lossy(&out.stdout).trim().to_string(),
                    stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                });
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{program} {}` gave no answer within {} s",
                    args.join(" "),
                    timeout.as_secs()
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// `systemctl`, for the system manager or the user's own.
#[derive(Debug, Clone, Copy)]
pub struct Systemctl(pub Scope);

impl Systemctl {
    /// `systemctl [--user] args…`.
    pub fn run(self, args: &[&str]) -> Result<Captured, String> {
        let mut all: Vec<&str> = self.0.flag().into_iter().collect();
        all.extend_from_slice(args);
        capture("systemctl", &all, SYSTEMCTL_TIMEOUT)
    }

    /// `systemctl [--user] args…`, an error unless it succeeds.
    pub fn must(self, args: &[&str]) -> anyhow::Result<()> {
        let out = self.run(args).map_err(anyhow::Error::msg)?;
        if out.success {
            return Ok(());
        }
        anyhow::bail!(
            "`systemctl {}{}` failed: {}",
            self.0.flag().map(|f| format!("{f} ")).unwrap_or_default(),
            args.join(" "),
            out.reason()
        )
    }

    /// `is-enabled` / `is-active` of the unit: its answer (`enabled`,
    /// `disabled`, `active`, `failed`, …; it exits non-zero for most), or
    /// why there is none.
    pub fn state(self, verb: &str) -> Result<String, String> {
        let out = self.run(&[verb, UNIT_NAME])?;
        if out.stdout.is_empty() {
            Err(out.reason())
        } else {
            Ok(out.stdout)
        }
    }

    /// The unit's main process, when it runs.
    pub fn main_pid(self) -> Option<u32> {
        let out = self
            .run(&["show", "--property=MainPID", "--value", UNIT_NAME])
            .ok()?;
        out.stdout.parse().ok().filter(|pid| *pid != 0)
    }
}

/// `program` found on `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Whether process `pid` exists.
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// An account of the password database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub home: PathBuf,
}

/// This process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The account with user id `uid`.
pub fn account_by_uid(uid: u32) -> Option<Account> {
    lookup(|pwd, buf, len, result| {
        // SAFETY: every pointer is valid for the call; `buf` has `len` bytes.
        unsafe { libc::getpwuid_r(uid, pwd, buf, len, result) }
    })
}

/// The account named `name`.
pub fn account_by_name(name: &str) -> Option<Account> {
    let name = CString::new(name).ok()?;
    lookup(|pwd, buf, len, result| {
        // SAFETY: `name` is NUL-terminated; the other pointers are valid for
        // the call; `buf` has `len` bytes.
        unsafe { libc::getpwnam_r(name.as_ptr(), pwd, buf, len, result) }
    })
}

fn lookup<F>(call: F) -> Option<Account>
where
    F: Fn(
        *mut libc::passwd,
        *mut libc::c_char,
        libc::size_t,
        *mut *mut libc::passwd,
    ) -> libc::c_int,
{
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut pwd = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let rc = call(
        pwd.as_mut_ptr(),
        buf.as_mut_ptr(),
        buf.len(),
        &raw mut result,
    );
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: the call returned 0 with a non-null result, so it filled `pwd`,
    // whose strings point into `buf` (alive until the end of this function).
    let pwd = unsafe { pwd.assume_init() };
    if pwd.pw_name.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated strings in `buf`.
    let (name, dir) = unsafe { (CStr::from_ptr(pwd.pw_name), CStr::from_ptr(pwd.pw_dir)) };
    Some(Account {
        name: name.to_str().ok()?.to_string(),
        uid: pwd.pw_uid,
        home: PathBuf::from(OsStr::from_bytes(dir.to_bytes())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_account_is_found_by_id_and_by_name() {
        let me = account_by_uid(euid()).expect("this process's account");
        assert!(me.home.is_absolute(), "{me:?}");
        assert_eq!(account_by_name(&me.name), Some(me.clone()));
        assert_eq!(account_by_name("no-such-user-harness-test"), None);
    }

    #[test]
    fn capture_reads_both_streams_and_the_exit() {
        let out = capture(
            "sh",
            &["-c", "echo out; echo err >&2; exit 3"],
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(!out.success);
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("out", "err"));
        assert!(capture("sh", &["-c", "sleep 5"], Duration::from_millis(100)).is_err());
        assert!(process_exists(std::process::id()));
    }
}
