//! Running shell commands (validation, agent, cleanup, init script) in their own process
//! group, under a timeout that kills the whole group.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{PlanError, Result};
use crate::model::Category;

/// Default validation timeout when `validation.timeout_seconds` is not set.
pub const DEFAULT_VALIDATION_TIMEOUT: u64 = 600;
/// Bytes of output kept for error messages.
const OUTPUT_TAIL: u64 = 2048;

/// A shell command to run.
#[derive(Debug, Clone, Default)]
pub struct ShellCommand {
    pub command: String,
    pub dir: PathBuf,
    pub env: Vec<(String, String)>,
    pub stdin: Option<String>,
    pub timeout: Option<Duration>,
}

/// How it ended.
#[derive(Debug, Clone)]
pub struct ShellResult {
    /// Exit code; `None` when killed by a signal or by the timeout.
    pub code: Option<i32>,
    pub timed_out: bool,
    /// The last ~2 KiB of stdout+stderr.
    pub output_tail: String,
    pub elapsed: Duration,
}

impl ShellResult {
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }
}

static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn temp_path(tag: &str) -> PathBuf {
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("harness-{tag}-{}-{n}", std::process::id()))
}

fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: signalling the process group we created for this child.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Runs `sh -c <command>` in a new process group (`process_group(0)`); on timeout the whole
/// group gets SIGKILL, and any member left behind after a normal exit is killed too.
/// `on_spawn` receives the process group id; `tick` runs about once a second while waiting.
pub fn run_shell(
    cmd: &ShellCommand,
    on_spawn: &mut dyn FnMut(i32),
    tick: &mut dyn FnMut(),
) -> Result<ShellResult> {
    let proc_err = |message: String| PlanError::Process {
        command: cmd.command.clone(),
        message,
    };
    let out_path = temp_path("out");
    let out = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&out_path)
        .map_err(|e| PlanError::io("create", &out_path, e))?;
    let err = out
        .try_clone()
        .map_err(|e| PlanError::io("dup", &out_path, e))?;
    let mut reader = out
        .try_clone()
        .map_err(|e| PlanError::io("dup", &out_path, e))?;
    // unlinked at once: nothing is left behind even if this process is killed
    let _ = std::fs::remove_file(&out_path);
    let stdin = match &cmd.stdin {
        None => Stdio::null(),
        Some(text) => {
            let p = temp_path("in");
            let mut f = File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(|e| PlanError::io("create", &p, e))?;
            f.write_all(text.as_bytes())
                .and_then(|_| f.seek(SeekFrom::Start(0)).map(|_| ()))
                .map_err(|e| PlanError::io("write", &p, e))?;
            let _ = std::fs::remove_file(&p);
            Stdio::from(f)
        }
    };
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&cmd.command)
        .current_dir(&cmd.dir)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0)
        .spawn()
        .map_err(|e| proc_err(format!("spawn in {}: {e}", cmd.dir.display())))?;
    let pgid = child.id() as i32;
    on_spawn(pgid);
    let mut last_tick = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => {
                kill_group(pgid);
                let _ = child.wait();
                return Err(proc_err(format!("wait: {e}")));
            }
        }
        if cmd.timeout.is_some_and(|t| start.elapsed() >= t) {
            timed_out = true;
            kill_group(pgid);
            break child.wait().map_err(|e| proc_err(format!("wait: {e}")))?;
        }
        if last_tick.elapsed() >= Duration::from_secs(1) {
            tick();
            last_tick = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    kill_group(pgid);
    let output_tail = read_tail(&mut reader);
    Ok(ShellResult {
        code: if timed_out { None } else { status.code() },
        timed_out,
        output_tail,
        elapsed: start.elapsed(),
    })
}

fn read_tail(f: &mut File) -> String {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(OUTPUT_TAIL)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).trim().to_string()
}

/// Result of a validation run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Failed with a category and a one-line message.
    Fail {
        category: Category,
        message: String,
    },
}

/// The first word of a command when it is a plain program name worth checking with
/// `command -v` (assignments and shell syntax are skipped).
fn first_program(command: &str) -> Option<&str> {
    let word = command.split_whitespace().next()?;
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | '+'));
    (plain && !word.contains('=')).then_some(word)
}

/// `command -v <program>` succeeds in `dir`.
pub fn program_exists(program: &str, dir: &Path) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg("command -v -- \"$1\" >/dev/null 2>&1")
        .arg("sh")
        .arg(program)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        let tail: String = flat
            .chars()
            .rev()
            .take(max)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("...{tail}")
    } else {
        flat
    }
}

/// Runs a validation command: exit 0 is PASS, a missing program is ENV_SETUP, running out of
/// time is TIMEOUT (the process group is killed), any other exit is TEST_FAIL.
pub fn validate(command: &str, dir: &Path, timeout_secs: u64) -> Verdict {
    if let Some(p) = first_program(command)
        && !program_exists(p, dir)
    {
        return Verdict::Fail {
            category: Category::EnvSetup,
            message: format!("validation program not found: {p}"),
        };
    }
    let cmd = ShellCommand {
        command: command.to_string(),
        dir: dir.to_path_buf(),
        timeout: Some(Duration::from_secs(timeout_secs.max(1))),
        ..ShellCommand::default()
    };
    match run_shell(&cmd, &mut |_| {}, &mut || {}) {
        Err(e) => Verdict::Fail {
            category: Category::TaskExec,
            message: format!("validation could not run: {e}"),
        },
        Ok(r) if r.timed_out => Verdict::Fail {
            category: Category::Timeout,
            message: format!("Validation timed out after {timeout_secs}s: {command}"),
        },
        Ok(r) if r.success() => Verdict::Pass,
        Ok(r) => Verdict::Fail {
            category: Category::TestFail,
            message: format!(
                "Validation failed (exit {}): {command}{}",
                r.code
                    .map_or_else(|| "signal".to_string(), |c| c.to_string()),
                if r.output_tail.is_empty() {
                    String::new()
                } else {
                    format!(" | {}", one_line(&r.output_tail, 300))
                }
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_fail_missing_program() {
        let d = tempfile::tempdir().expect("tmp");
        assert_eq!(validate("true", d.path(), 5), Verdict::Pass);
        match validate("echo boom >&2; exit 3", d.path(), 5) {
            Verdict::Fail { category, message } => {
                assert_eq!(category, Category::TestFail);
                assert!(
                    message.contains("exit 3") && message.contains("boom"),
                    "{message}"
                );
            }
            v => panic!("{v:?}"),
        }
        match validate("no-such-binary-xyz --flag", d.path(), 5) {
            Verdict::Fail { category, .. } => assert_eq!(category, Category::EnvSetup),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let d = tempfile::tempdir().expect("tmp");
        let pidfile = d.path().join("bg.pid");
        let cmd = format!("sleep 30 & echo $! > {}; sleep 30", pidfile.display());
        let t0 = Instant::now();
        match validate(&cmd, d.path(), 1) {
            Verdict::Fail { category, .. } => assert_eq!(category, Category::Timeout),
            v => panic!("{v:?}"),
        }
        assert!(t0.elapsed() < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .expect("pidfile")
            .trim()
            .parse()
            .expect("pid");
        std::thread::sleep(Duration::from_millis(100));
        // the background sleep was in the group: it is gone (or a zombie reaped by init)
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z"))
            .unwrap_or(false);
        assert!(!alive, "background child {pid} survived the timeout");
    }

    #[test]
    fn stdin_and_env_reach_the_command() {
        let d = tempfile::tempdir().expect("tmp");
        let cmd = ShellCommand {
            command: "cat > got.txt; echo \"$FOO\" >> got.txt".into(),
            dir: d.path().to_path_buf(),
            env: vec![("FOO".into(), "bar".into())],
            stdin: Some("prompt\n".into()),
            timeout: Some(Duration::from_secs(5)),
        };
        let r = run_shell(&cmd, &mut |_| {}, &mut || {}).expect("run");
        assert!(r.success());
        let got = std::fs::read_to_string(d.path().join("got.txt")).expect("read");
        assert_eq!(got, "prompt\nbar\n");
    }
}
