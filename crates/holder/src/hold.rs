//! `harness hold …`: the holder process. Parses its arguments, prepares the
//! run directory and the socket, detaches, starts the program on a PTY and
//! runs the event loop ([`crate::event_loop`]) until the program exited and
//! the exit was collected (or the orphan timeout ended it).
//!
//! Call [`run`] before the process starts any thread: detaching forks.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::ring::DEFAULT_RING_BYTES;
use crate::{HolderError, sys};

/// Default time without an attached server after which the holder ends
/// its agent.
pub const DEFAULT_ORPHAN_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// Default time between SIGHUP and SIGKILL when the holder ends its agent.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(10);
/// Name of the socket in the run directory.
pub const SOCKET_NAME: &str = "holder.sock";
/// Name of the exit record in the run directory.
pub const EXIT_FILE: &str = "exit.json";

/// What `hold` is asked to do. [`HoldConfig::to_args`] and
/// [`HoldConfig::parse`] are the one place the command line is spelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldConfig {
    /// The run directory (mode 0700, created if missing): holds
    /// `holder.sock` and `exit.json`.
    pub run_dir: PathBuf,
    /// Program and arguments (in production: the sandbox launcher).
    pub argv: Vec<OsString>,
    /// Working directory of the program (default: the holder's).
    pub cwd: Option<PathBuf>,
    /// Initial rows.
    pub rows: u16,
    /// Initial columns.
    pub cols: u16,
    /// Time without an attached server before the agent is ended.
    pub orphan_timeout: Duration,
    /// Time between SIGHUP and SIGKILL when ending the agent.
    pub kill_grace: Duration,
    /// Output ring capacity in bytes.
    pub ring_bytes: usize,
    /// Rows of scrollback in an attach (or lag) snapshot.
    pub snapshot_history: usize,
    /// Fork and leave the starter (which exits once the socket listens).
    pub detach: bool,
}

impl HoldConfig {
    /// A config with the defaults for `argv` in `run_dir`.
    pub fn new(run_dir: impl Into<PathBuf>, argv: Vec<OsString>) -> Self {
        Self {
            run_dir: run_dir.into(),
            argv,
            cwd: None,
            rows: 24,
            cols: 80,
            orphan_timeout: DEFAULT_ORPHAN_TIMEOUT,
            kill_grace: DEFAULT_KILL_GRACE,
            ring_bytes: DEFAULT_RING_BYTES,
            snapshot_history: 200,
            detach: true,
        }
    }

    /// The socket path.
    pub fn socket_path(&self) -> PathBuf {
        self.run_dir.join(SOCKET_NAME)
    }

    /// The command line (after `hold`) that [`parse`](Self::parse) reads.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["--run-dir".into(), self.run_dir.clone().into()];
        if let Some(cwd) = &self.cwd {
            a.extend(["--cwd".into(), cwd.clone().into()]);
        }
        let num = |name: &str, v: u128| [OsString::from(name), v.to_string().into()];
        a.extend(num("--rows", self.rows.into()));
        a.extend(num("--cols", self.cols.into()));
        a.extend(num("--orphan-timeout-ms", self.orphan_timeout.as_millis()));
        a.extend(num("--kill-grace-ms", self.kill_grace.as_millis()));
        a.extend(num("--ring-bytes", self.ring_bytes as u128));
        a.extend(num("--snapshot-history", self.snapshot_history as u128));
        if self.detach {
            a.push("--detach".into());
        }
        a.push("--".into());
        a.extend(self.argv.iter().cloned());
        a
    }

    /// Reads the command line written by [`to_args`](Self::to_args).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, HolderError> {
        let mut run_dir = None;
        let mut cfg = Self::new(PathBuf::new(), Vec::new());
        cfg.detach = false;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let name = arg.to_string_lossy().into_owned();
            if name == "--" {
                cfg.argv = args.by_ref().collect();
                break;
            }
            if name == "--detach" {
                cfg.detach = true;
                continue;
            }
            let field: &'static str = match name.as_str() {
                "--run-dir" => "--run-dir",
                "--cwd" => "--cwd",
                "--rows" => "--rows",
                "--cols" => "--cols",
                "--orphan-timeout-ms" => "--orphan-timeout-ms",
                "--kill-grace-ms" => "--kill-grace-ms",
                "--ring-bytes" => "--ring-bytes",
                "--snapshot-history" => "--snapshot-history",
                _ => {
                    return Err(HolderError::Arg {
                        field: "hold",
                        reason: format!("unknown argument {name:?}"),
                    });
                }
            };
            let value = args.next().ok_or_else(|| HolderError::Arg {
                field,
                reason: "missing value".into(),
            })?;
            let number = || -> Result<u64, HolderError> {
                value
                    .to_str()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| HolderError::Arg {
                        field,
                        reason: format!("{value:?} is not a non-negative integer"),
                    })
            };
            let small = |n: u64| {
                u16::try_from(n).map_err(|_| HolderError::Arg {
                    field,
                    reason: format!("{n} is out of range"),
                })
            };
            match field {
                "--run-dir" => run_dir = Some(PathBuf::from(&value)),
                "--cwd" => cfg.cwd = Some(PathBuf::from(&value)),
                "--rows" => cfg.rows = small(number()?)?,
                "--cols" => cfg.cols = small(number()?)?,
                "--orphan-timeout-ms" => cfg.orphan_timeout = Duration::from_millis(number()?),
                "--kill-grace-ms" => cfg.kill_grace = Duration::from_millis(number()?),
                "--ring-bytes" => cfg.ring_bytes = usize::try_from(number()?).unwrap_or(usize::MAX),
                _ => cfg.snapshot_history = usize::try_from(number()?).unwrap_or(usize::MAX),
            }
        }
        cfg.run_dir = run_dir.ok_or(HolderError::Arg {
            field: "--run-dir",
            reason: "required".into(),
        })?;
        if cfg.argv.is_empty() {
            return Err(HolderError::Arg {
                field: "argv",
                reason: "no program after `--`".into(),
            });
        }
        Ok(cfg)
    }
}

/// The `hold` entry point: `args` are the arguments after `hold`, `build`
/// the binary's build id (sent in the hello). Returns when the holder is
/// done (or, with `--detach`, in the starter once the socket listens).
pub fn run(args: impl IntoIterator<Item = OsString>, build: &str) -> ExitCode {
    let cfg = match HoldConfig::parse(args) {
        Ok(cfg) => cfg,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "harness hold: {e}");
            return ExitCode::from(2);
        }
    };
    match run_config(&cfg, build) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "holder failed");
            let _ = writeln!(std::io::stderr(), "harness hold: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Like [`run`] with a parsed config.
pub fn run_config(cfg: &HoldConfig, build: &str) -> Result<(), HolderError> {
    prepare_run_dir(&cfg.run_dir)?;
    if !cfg.detach {
        let listener = bind_socket(&cfg.socket_path())?;
        return crate::event_loop::start(cfg, build, listener, None);
    }
    // The starter waits on a pipe for the detached holder's verdict, so
    // errors (a bad program, a busy socket) reach whoever started it.
    let (mut verdict_rx, verdict_tx) = std::io::pipe().map_err(HolderError::io("pipe"))?;
    match sys::fork()? {
        Some(_child) => {
            drop(verdict_tx);
            let mut verdict = String::new();
            let _ = std::io::Read::read_to_string(&mut verdict_rx, &mut verdict);
            match verdict.strip_prefix("ok") {
                Some(_) => Ok(()),
                None if verdict.is_empty() => Err(HolderError::Spawn {
                    program: "holder".into(),
                    reason: "the detached holder exited before it was ready".into(),
                }),
                None => Err(HolderError::Spawn {
                    program: "holder".into(),
                    reason: verdict.trim().to_owned(),
                }),
            }
        }
        None => {
            drop(verdict_rx);
            // Out of the starter's session and process group: a signal to
            // the server's group (or its death) does not reach the holder.
            sys::setsid()?;
            let listener = match bind_socket(&cfg.socket_path()) {
                Ok(l) => l,
                Err(e) => {
                    let mut verdict_tx = verdict_tx;
                    let _ = writeln!(verdict_tx, "{e}");
                    return Err(e);
                }
            };
            crate::event_loop::start(cfg, build, listener, Some(verdict_tx))
        }
    }
}

/// Creates the run directory (0700) if missing; refuses one that is not a
/// directory, not owned by this user, or open to others.
pub(crate) fn prepare_run_dir(dir: &Path) -> Result<(), HolderError> {
    let err = |reason: String| HolderError::RunDir {
        path: dir.to_owned(),
        reason,
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| err(format!("cannot create: {e}")))?;
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| err(format!("cannot stat: {e}")))?;
    if !meta.is_dir() {
        return Err(err("not a directory".into()));
    }
    if meta.uid() != sys::euid() {
        return Err(err(format!(
            "owned by uid {}, not by this user ({})",
            meta.uid(),
            sys::euid()
        )));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(err(format!(
            "mode {:o} lets other users in; it must be 0700",
            meta.permissions().mode() & 0o777
        )));
    }
    Ok(())
}

/// Binds the socket with mode 0600 (umask set before the bind, then
/// checked). A stale socket file is replaced; a live holder is not.
pub(crate) fn bind_socket(path: &Path) -> Result<UnixListener, HolderError> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(HolderError::AlreadyRunning(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(HolderError::io("remove stale socket"))?;
    }
    let old = sys::umask(0o177);
    let bound = UnixListener::bind(path);
    sys::umask(old);
    let listener = bound.map_err(HolderError::io("bind holder socket"))?;
    let mode = std::fs::symlink_metadata(path)
        .map_err(HolderError::io("stat holder socket"))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        let _ = std::fs::remove_file(path);
        return Err(HolderError::RunDir {
            path: path.to_owned(),
            reason: format!("socket mode is {:o}, not 0600", mode & 0o777),
        });
    }
    listener
        .set_nonblocking(true)
        .map_err(HolderError::io("socket nonblocking"))?;
    Ok(listener)
}

/// Writes `<run-dir>/exit.json` atomically (temporary file, fsync, rename).
pub(crate) fn write_exit_file(run_dir: &Path, record: &ExitRecord) -> Result<(), HolderError> {
    let tmp = run_dir.join(".exit.json.tmp");
    let body = serde_json::to_vec(record)
        .map_err(|e| HolderError::Protocol(format!("exit record: {e}")))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(HolderError::io("create exit record"))?;
    f.write_all(&body)
        .and_then(|()| f.sync_all())
        .map_err(HolderError::io("write exit record"))?;
    std::fs::rename(&tmp, run_dir.join(EXIT_FILE)).map_err(HolderError::io("rename exit record"))
}

/// The content of `exit.json`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExitRecord {
    /// How the program ended.
    pub status: crate::ExitInfo,
    /// End of its output stream (total bytes).
    pub seq: u64,
    /// The program's pid.
    pub child_pid: u32,
    /// The holder's pid.
    pub holder_pid: u32,
    /// Why it ended: `"exited"` or `"orphaned"` (the holder ended it).
    pub reason: String,
}

/// Reads `<run-dir>/exit.json`; `Ok(None)` when there is none.
pub fn read_exit_file(run_dir: &Path) -> Result<Option<ExitRecord>, HolderError> {
    match std::fs::read(run_dir.join(EXIT_FILE)) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| HolderError::Protocol(format!("exit.json: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HolderError::Os {
            op: "read exit.json",
            source: e,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_roundtrip() {
        let mut cfg = HoldConfig::new("/tmp/r", vec!["sh".into(), "-c".into(), "echo --".into()]);
        cfg.cwd = Some("/work".into());
        cfg.orphan_timeout = Duration::from_millis(1500);
        assert_eq!(HoldConfig::parse(cfg.to_args()).unwrap(), cfg);
    }

    #[test]
    fn bad_args_name_the_field() {
        let e = HoldConfig::parse(["--rows".into(), "x".into()]).unwrap_err();
        assert!(e.to_string().contains("--rows"), "{e}");
        let e = HoldConfig::parse(["--rows".into(), "99999".into()]).unwrap_err();
        assert!(e.to_string().contains("--rows"), "{e}");
        let e = HoldConfig::parse(["--run-dir".into(), "/x".into()]).unwrap_err();
        assert!(e.to_string().contains("argv"), "{e}");
    }

    #[test]
    fn run_dir_open_to_others_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        prepare_run_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = prepare_run_dir(&dir).unwrap_err();
        assert!(e.to_string().contains("0700"), "{e}");
    }

    #[test]
    fn socket_is_0600_even_with_a_lax_umask() {
        let tmp = tempfile::tempdir().unwrap();
        let old = sys::umask(0);
        let l = bind_socket(&tmp.path().join("s.sock"));
        sys::umask(old);
        let _l = l.unwrap();
        let mode = std::fs::metadata(tmp.path().join("s.sock"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A live holder on the path is not replaced.
        assert!(matches!(
            bind_socket(&tmp.path().join("s.sock")),
            Err(HolderError::AlreadyRunning(_))
        ));
    }
}
