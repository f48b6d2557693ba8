//! Agents cannot see Harness's own files.
//!
//! An agent runs as the server's user, so without isolation it could read
//! `<data-dir>/secrets/admin.token`, the database or another task's run files.
//! On Linux each agent is started through a small launcher (`harness
//! agent-sandbox …`, see [`Isolation::wrap`]) that needs no root and no set-up:
//!
//! 1. new user, mount and PID namespaces (`unshare`), the user mapped to
//!    itself;
//! 2. every hidden directory is covered by an empty read-only tmpfs; the few
//!    paths the agent needs (its own run directory, the signal directory) are
//!    bound back over it, read-only, from descriptors opened (in the new
//!    namespace) before the cover;
//! 3. the launcher forks: the child is PID 1 of the new PID namespace and
//!    mounts its own `/proc` (so `/proc/<pid>/root` of processes outside —
//!    the server, the user's shell — cannot be used to walk around the
//!    cover), enters a second user namespace (which locks the mounts: they
//!    cannot be unmounted, even by a root-mapped agent), sets
//!    `no_new_privs`, forks the agent and reaps orphans;
//! 4. the launcher itself ignores job-control and termination signals and
//!    exits with the agent's status, so the PTY supervisor sees the agent's
//!    exit, and SIGKILL of the process group ends everything;
//! 5. a hangup of the terminal (the server is gone: its end of the PTY
//!    closed) reaches only the launcher, the session leader: it passes the
//!    SIGHUP on to the agent and, when the agent ignores it, kills the
//!    namespace after a grace period — an agent nobody can see or type
//!    into never runs on alone (and never beside the one a restarted
//!    server resumes).
//!
//! When the kernel refuses (user namespaces disabled, or an AppArmor policy
//! that forbids them) [`probe`] says why; the server then starts agents
//! without isolation and says so at start-up and in `harness doctor`.

use std::{
    ffi::{CString, OsStr},
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

/// How long an agent may outlive its terminal's hangup before the launcher
/// kills it: time for a CLI to save its session on SIGHUP.
pub const HANGUP_GRACE_SECS: u32 = 5;

/// The launcher's subcommand of the `harness` binary.
pub const SUBCOMMAND: &str = "agent-sandbox";

/// Set in the probe's environment: a program that finds it in its own is
/// a probe's child. A launcher that is not the harness binary (a test or
/// benchmark's own executable) would otherwise start a server that probes
/// again, and so on without end; [`probe`] refuses to run inside a probe.
pub const PROBE_ENV: &str = "HARNESS_ISOLATION_PROBE";

/// What an isolated agent cannot see, and the exceptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Isolation {
    /// Directories replaced by an empty, read-only directory.
    pub hide: Vec<PathBuf>,
    /// Paths under a hidden directory that stay visible, read-only.
    pub show: Vec<PathBuf>,
    /// A directory whose entries are laid over `/etc`, read-only
    /// ([`etc_layer`]): the agent CLIs' managed settings.
    pub etc_layer: Option<PathBuf>,
}

impl Isolation {
    /// The argv that runs `argv` isolated through `launcher` (the harness binary).
    pub fn wrap(&self, launcher: &Path, argv: &[String]) -> Vec<String> {
        let mut out = vec![launcher.display().to_string(), SUBCOMMAND.to_string()];
        for h in &self.hide {
            out.push("--hide".into());
            out.push(h.display().to_string());
        }
        for s in &self.show {
            out.push("--show".into());
            out.push(s.display().to_string());
        }
        if let Some(layer) = &self.etc_layer {
            out.push("--etc-layer".into());
            out.push(layer.display().to_string());
        }
        out.push("--".into());
        out.extend(argv.iter().cloned());
        out
    }

    /// Parses the launcher's arguments (after the subcommand).
    pub fn parse(args: &[String]) -> Result<(Self, Vec<String>), String> {
        let mut iso = Self::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--hide" | "--show" | "--etc-layer" => {
                    let value = it.next().ok_or_else(|| format!("{arg} needs a path"))?;
                    let path = PathBuf::from(value);
                    if !path.is_absolute() {
                        return Err(format!("{arg} {value}: the path must be absolute"));
                    }
                    match arg.as_str() {
                        "--hide" => iso.hide.push(path),
                        "--show" => iso.show.push(path),
                        _ => iso.etc_layer = Some(path),
                    }
                }
                "--" => {
                    let argv: Vec<String> = it.cloned().collect();
                    if argv.is_empty() {
                        return Err("nothing to run after --".into());
                    }
                    return Ok((iso, argv));
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Err("missing -- <program> [args…]".into())
    }

    fn check(&self) -> Result<(), String> {
        for s in &self.show {
            if !self.hide.iter().any(|h| s.starts_with(h) && s != h) {
                return Err(format!("{} is not inside a hidden directory", s.display()));
            }
        }
        Ok(())
    }
}

mod probe;
pub use probe::{inside_probe, probe, probe_layer, probe_main};

#[cfg(target_os = "linux")]
mod etc_layer;

/// What the isolated child does once everything is in place.
enum Action {
    /// Replace itself with this program.
    Exec(Vec<String>),
    /// Check that `hidden` cannot be read and `shown` can (the probe), and
    /// that `laid` (a file of the `/etc` layer) can be read but not written.
    Probe {
        hidden: PathBuf,
        shown: PathBuf,
        laid: Option<PathBuf>,
    },
}

/// The launcher's main: isolate, run `argv`, exit with its status. Returns
/// only on failure, with the exit code to use (the error is on stderr).
pub fn launcher_main(args: &[String]) -> i32 {
    let (iso, argv) = match Isolation::parse(args) {
        Ok(parsed) => parsed,
        Err(err) => {
            eprintln!("harness {SUBCOMMAND}: {err}");
            return 126;
        }
    };
    match run(&iso, Action::Exec(argv)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("harness: cannot isolate the agent from Harness's data: {err}");
            126
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn run(_iso: &Isolation, _action: Action) -> Result<i32, String> {
    Err("agent isolation needs Linux namespaces".into())
}

#[cfg(target_os = "linux")]
fn run(iso: &Isolation, action: Action) -> Result<i32, String> {
    linux::run(iso, action)
}

fn cstring(s: &OsStr) -> Result<CString, String> {
    CString::new(s.as_bytes()).map_err(|_| format!("{s:?} contains a NUL byte"))
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::{
        io,
        os::fd::{AsRawFd, FromRawFd, OwnedFd},
        sync::atomic::{AtomicBool, Ordering},
    };

    fn os_err(what: &str) -> String {
        format!("{what}: {}", io::Error::last_os_error())
    }

    fn path_c(p: &Path) -> Result<CString, String> {
        cstring(p.as_os_str())
    }

    fn write_proc(file: &str, content: &str) -> Result<(), String> {
        std::fs::write(file, content).map_err(|e| format!("cannot write {file}: {e}"))
    }

    /// Maps the current user (and group) to itself in a new user namespace.
    fn map_self(uid: libc::uid_t, gid: libc::gid_t) -> Result<(), String> {
        write_proc("/proc/self/setgroups", "deny")?;
        write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
        write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1"))
    }

    pub(super) fn mount(
        src: Option<&CString>,
        target: &CString,
        fstype: Option<&CString>,
        flags: libc::c_ulong,
        data: Option<&CString>,
    ) -> io::Result<()> {
        let p = |c: Option<&CString>| c.map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: every pointer is either null or a valid NUL-terminated string
        // that outlives the call.
        let rc = unsafe { libc::mount(p(src), target.as_ptr(), p(fstype), flags, p(data).cast()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The per-mount flags a remount must keep (locked flags of a mount that
    /// came from the parent namespace cannot be cleared).
    fn kept_flags(target: &CString) -> libc::c_ulong {
        // SAFETY: statvfs writes into the zeroed struct; target is valid.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(target.as_ptr(), &mut st) } != 0 {
            return 0;
        }
        let mut flags = 0;
        for (st_flag, ms_flag) in [
            (libc::ST_NOSUID, libc::MS_NOSUID),
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOEXEC, libc::MS_NOEXEC),
            (libc::ST_NOATIME, libc::MS_NOATIME),
            (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
            (libc::ST_RELATIME, libc::MS_RELATIME),
        ] {
            if st.f_flag & st_flag != 0 {
                flags |= ms_flag;
            }
        }
        flags
    }

    fn remount_read_only(target: &CString) -> io::Result<()> {
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept_flags(target);
        mount(None, target, None, flags, None)
    }

    /// An `O_PATH` descriptor of `path` (close-on-exec), and whether it is a directory.
    pub(super) fn open_path(path: &Path) -> Result<(OwnedFd, bool), String> {
        let c = path_c(path)?;
        // SAFETY: c is a valid path; the returned fd is owned below.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(os_err(&format!("cannot open {}", path.display())));
        }
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
        Ok((fd, is_dir))
    }

    /// Creates the mount point for a shown path inside the (still writable) cover.
    fn mount_point(path: &Path, is_dir: bool) -> Result<(), String> {
        let parent = path.parent().unwrap_or(path);
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        let made = if is_dir {
            std::fs::create_dir(path)
        } else {
            std::fs::File::create(path).map(drop)
        };
        match made {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                Err(format!("cannot create {}: {e}", path.display()))
            }
            _ => Ok(()),
        }
    }

    /// Steps 1 and 2: namespaces, the covers, the shown paths bound back.
    fn isolate(iso: &Isolation, uid: libc::uid_t, gid: libc::gid_t) -> Result<(), String> {
        iso.check()?;
        // SAFETY: unshare has no memory-safety preconditions.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) }
            != 0
        {
            return Err(os_err(
                "unshare(user, mount, pid namespaces) was refused (unprivileged user \
                 namespaces are disabled here)",
            ));
        }
        map_self(uid, gid)?;
        let root = path_c(Path::new("/"))?;
        mount(None, &root, None, libc::MS_REC | libc::MS_PRIVATE, None)
            .map_err(|e| format!("cannot make the mounts private: {e}"))?;
        // Opened in the new namespace (a bind's source must be one of its
        // mounts) and before the covers hide them.
        let shown = iso
            .show
            .iter()
            .map(|p| open_path(p).map(|(fd, dir)| (p.clone(), fd, dir)))
            .collect::<Result<Vec<_>, _>>()?;
        // The managed settings, while the layer (in the data directory) is
        // still visible.
        if let Some(layer) = &iso.etc_layer {
            super::etc_layer::lay_over(layer, Path::new("/etc"))?;
        }
        let tmpfs = cstring(OsStr::new("tmpfs"))?;
        let source = cstring(OsStr::new("harness-hidden"))?;
        let options = cstring(OsStr::new("mode=0700,size=256k"))?;
        let mut covers = Vec::new();
        for h in &iso.hide {
            let target = path_c(h)?;
            mount(
                Some(&source),
                &target,
                Some(&tmpfs),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                Some(&options),
            )
            .map_err(|e| format!("cannot cover {}: {e}", h.display()))?;
            covers.push(target);
        }
        for (path, fd, is_dir) in &shown {
            mount_point(path, *is_dir)?;
            let from = cstring(OsStr::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))?;
            let target = path_c(path)?;
            mount(
                Some(&from),
                &target,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )
            .map_err(|e| format!("cannot show {}: {e}", path.display()))?;
            remount_read_only(&target)
                .map_err(|e| format!("cannot make {} read-only: {e}", path.display()))?;
        }
        for target in &covers {
            remount_read_only(target).map_err(|e| format!("cannot seal a cover: {e}"))?;
        }
        Ok(())
    }

    /// In PID 1 of the new namespace: its own /proc, mounts locked, no new privileges.
    fn seal(uid: libc::uid_t, gid: libc::gid_t) -> Result<(), String> {
        let proc_c = cstring(OsStr::new("proc"))?;
        let target = path_c(Path::new("/proc"))?;
        mount(
            Some(&proc_c),
            &target,
            Some(&proc_c),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            None,
        )
        .map_err(|e| format!("cannot mount /proc for the agent: {e}"))?;
        // SAFETY: unshare has no memory-safety preconditions.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
            return Err(os_err("cannot lock the mounts (nested user namespace)"));
        }
        map_self(uid, gid)?;
        // SAFETY: prctl with these constant arguments has no memory effects.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(os_err("cannot set no_new_privs"));
        }
        Ok(())
    }

    /// In PID 1: reaps every child until `pid` ends; its exit code (128 +
    /// signal when it was killed).
    fn reap_until(pid: libc::pid_t) -> i32 {
        loop {
            let mut status = 0;
            // SAFETY: status is a valid out pointer.
            let got = unsafe { libc::waitpid(-1, &mut status, 0) };
            if got < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return 1;
            }
            if got != pid {
                continue; // an orphan reaped by PID 1
            }
            if libc::WIFEXITED(status) {
                return libc::WEXITSTATUS(status);
            }
            if libc::WIFSIGNALED(status) {
                return 128 + libc::WTERMSIG(status);
            }
        }
    }

    fn ignore_signals() {
        for sig in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
            libc::SIGPIPE,
        ] {
            // SAFETY: SIG_IGN is a valid disposition for these signals.
            unsafe {
                libc::signal(sig, libc::SIG_IGN);
            }
        }
    }

    fn probe_inside(hidden: &Path, shown: &Path, laid: Option<&Path>) -> i32 {
        if std::fs::read(hidden).is_ok() {
            eprintln!("the hidden file {} is still readable", hidden.display());
            return 1;
        }
        if std::fs::read(shown).is_err() {
            eprintln!("the shown file {} cannot be read", shown.display());
            return 1;
        }
        if std::fs::write(shown, b"x").is_ok() {
            eprintln!("the shown file {} is writable", shown.display());
            return 1;
        }
        if let Some(laid) = laid {
            if std::fs::read(laid).is_err() {
                eprintln!("the file {} laid over /etc cannot be read", laid.display());
                return 1;
            }
            if std::fs::write(laid, b"x").is_ok() {
                eprintln!("the file {} laid over /etc is writable", laid.display());
                return 1;
            }
            if !Path::new("/etc/passwd").exists() && Path::new("/etc").read_dir().is_err() {
                eprintln!("/etc lost its own entries under the layer");
                return 1;
            }
        }
        // The host's processes are out of sight: /proc holds only this namespace.
        if std::path::Path::new("/proc/2").exists() {
            eprintln!("/proc shows processes outside the agent's namespace");
            return 1;
        }
        0
    }

    /// The agent: back to a clean signal state, re-enter the working
    /// directory through the new mounts, exec.
    fn exec_agent(argv: &[String], cwd: Option<&PathBuf>) -> i32 {
        // SAFETY: resetting dispositions and the mask has no memory effects.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        }
        if let Some(cwd) = cwd
            && let Err(err) = std::env::set_current_dir(cwd)
        {
            eprintln!(
                "harness: the agent's working directory {} is not visible to it ({err}); \
                 it must not be inside Harness's data directory",
                cwd.display()
            );
            return 126;
        }
        let args: Result<Vec<CString>, String> =
            argv.iter().map(|a| cstring(OsStr::new(a))).collect();
        let args = match args {
            Ok(a) if !a.is_empty() => a,
            Ok(_) => return 126,
            Err(err) => {
                eprintln!("harness: {err}");
                return 126;
            }
        };
        let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        // SAFETY: ptrs is a NULL-terminated array of valid strings kept alive by `args`.
        unsafe {
            libc::execvp(ptrs[0], ptrs.as_ptr());
        }
        let err = io::Error::last_os_error();
        eprintln!("harness: cannot run {}: {err}", argv[0]);
        if err.kind() == io::ErrorKind::NotFound {
            127
        } else {
            126
        }
    }

    pub(super) fn run(iso: &Isolation, action: Action) -> Result<i32, String> {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let cwd = std::env::current_dir().ok();
        isolate(iso, uid, gid)?;
        // SAFETY: the process is single-threaded here (the launcher runs
        // nothing else), so fork is safe.
        let init = unsafe { libc::fork() };
        if init < 0 {
            return Err(os_err("fork"));
        }
        if init == 0 {
            // PID 1 of the agent's namespace: die with the launcher.
            // SAFETY: prctl with constant arguments.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            }
            if let Err(err) = seal(uid, gid) {
                eprintln!("harness: cannot isolate the agent from Harness's data: {err}");
                std::process::exit(126);
            }
            let code = match &action {
                Action::Probe {
                    hidden,
                    shown,
                    laid,
                } => probe_inside(hidden, shown, laid.as_deref()),
                Action::Exec(argv) => {
                    // SAFETY: still single-threaded.
                    let agent = unsafe { libc::fork() };
                    if agent < 0 {
                        eprintln!("{}", os_err("fork"));
                        126
                    } else if agent == 0 {
                        std::process::exit(exec_agent(argv, cwd.as_ref()));
                    } else {
                        // Signals from outside reach the agent directly (same
                        // process group); PID 1 only reaps.
                        reap_until(agent)
                    }
                }
            };
            std::process::exit(code);
        }
        ignore_signals();
        watch_hangup();
        Ok(wait_for_namespace(init))
    }

    /// Set by the launcher's SIGHUP handler: the terminal hung up.
    static HUNG_UP: AtomicBool = AtomicBool::new(false);
    /// Set by its SIGALRM handler: the agent's grace after the hangup is over.
    static GRACE_OVER: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_hangup(_: libc::c_int) {
        HUNG_UP.store(true, Ordering::SeqCst);
    }

    extern "C" fn on_alarm(_: libc::c_int) {
        GRACE_OVER.store(true, Ordering::SeqCst);
    }

    /// SIGHUP and SIGALRM interrupt the launcher's wait (no `SA_RESTART`).
    fn watch_hangup() {
        for (sig, handler) in [
            (libc::SIGHUP, on_hangup as extern "C" fn(libc::c_int)),
            (libc::SIGALRM, on_alarm as extern "C" fn(libc::c_int)),
        ] {
            // SAFETY: a zeroed sigaction with an async-signal-safe handler
            // (one atomic store) and an empty mask is valid.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    }

    /// The launcher's wait for PID 1 of the agent's namespace. The launcher
    /// leads the terminal's session, so a hangup (the server went away: its
    /// end of the PTY closed) reaches only the launcher. It passes the
    /// SIGHUP on to the agent's process group and, if the agent outlives
    /// [`HANGUP_GRACE_SECS`] (a CLI that ignores SIGHUP), kills the whole
    /// namespace: an agent nobody can see or type into never runs on alone.
    fn wait_for_namespace(init: libc::pid_t) -> i32 {
        let mut forwarded = false;
        loop {
            let mut status = 0;
            // SAFETY: status is a valid out pointer.
            let got = unsafe { libc::waitpid(init, &mut status, 0) };
            if got == init {
                if libc::WIFEXITED(status) {
                    return libc::WEXITSTATUS(status);
                }
                if libc::WIFSIGNALED(status) {
                    return 128 + libc::WTERMSIG(status);
                }
                continue;
            }
            if got < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return 1;
            }
            if HUNG_UP.load(Ordering::SeqCst) && !forwarded {
                forwarded = true;
                // SAFETY: signalling our own process group (the agent's;
                // the launcher's handler only sets the flag again) and
                // arming an alarm have no memory effects.
                unsafe {
                    libc::killpg(libc::getpgrp(), libc::SIGHUP);
                    libc::alarm(HANGUP_GRACE_SECS);
                }
            }
            if GRACE_OVER.load(Ordering::SeqCst) {
                // SAFETY: SIGKILL to PID 1 of the namespace ends every
                // process in it; `init` is our own child, not yet reaped.
                unsafe {
                    libc::kill(init, libc::SIGKILL);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_and_parse_round_trip() {
        let iso = Isolation {
            hide: vec!["/data".into()],
            show: vec!["/data/runs/e1".into(), "/data/signals".into()],
            etc_layer: Some("/data/runs/e1/etc".into()),
        };
        let argv = vec!["claude".to_string(), "--".into(), "-x".into()];
        let wrapped = iso.wrap(Path::new("/bin/harness"), &argv);
        assert_eq!(wrapped[..2], ["/bin/harness", SUBCOMMAND]);
        let (back, rest) = Isolation::parse(&wrapped[2..]).unwrap();
        assert_eq!(back, iso);
        assert_eq!(rest, argv);
        assert!(back.check().is_ok());
    }

    #[test]
    fn bad_arguments_are_refused() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(Isolation::parse(&s(&["--hide", "rel", "--", "x"])).is_err());
        assert!(Isolation::parse(&s(&["--hide", "/d"])).is_err());
        assert!(Isolation::parse(&s(&["--hide", "/d", "--"])).is_err());
        assert!(Isolation::parse(&s(&["--bogus"])).is_err());
        let (iso, _) =
            Isolation::parse(&s(&["--hide", "/d", "--show", "/e/x", "--", "x"])).unwrap();
        assert!(
            iso.check().is_err(),
            "a shown path outside every hidden one"
        );
    }
}
