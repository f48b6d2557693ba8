//! Shared helpers of the integration tests: temp projects with real git repos, and the real
//! `harness-plan-cli` binary run as a subprocess with a clean environment.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_harness-plan-cli");

pub struct Project {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?} / {:?}",
                self.stdout, self.stderr
            )
        })
    }
}

/// A command for the binary with the harness/Claude env vars removed.
pub fn cli_command(cwd: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(cwd);
    for k in [
        "HARNESS_STATE_ROOT",
        "HARNESS_WORKER_ID",
        "HARNESS_TASK_ID",
        "HARNESS_WORK_DIR",
        "HARNESS_LEASE_SECONDS",
        "CLAUDE_PROJECT_DIR",
        "REFLECT_MAX_ITERATIONS",
    ] {
        c.env_remove(k);
    }
    c.env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com");
    c
}

pub fn run_cli(cwd: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
    let mut c = cli_command(cwd);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn cli");
    if let Some(s) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(s.as_bytes()).expect("write stdin");
    }
    Run::from(child.wait_with_output().expect("wait cli"))
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

impl Project {
    /// Empty temp dir (no git).
    pub fn plain() -> Project {
        Project {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Temp dir with a git repo holding one commit.
    pub fn git() -> Project {
        let p = Project::plain();
        git(p.path(), &["init", "-q", "-b", "main"]);
        git(p.path(), &["config", "user.email", "t@example.com"]);
        git(p.path(), &["config", "user.name", "t"]);
        std::fs::write(p.path().join("README"), "base\n").expect("write");
        git(p.path(), &["add", "README"]);
        git(p.path(), &["commit", "-qm", "base"]);
        p
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }

    pub fn cli(&self, args: &[&str]) -> Run {
        run_cli(self.path(), args, &[], None)
    }

    pub fn cli_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        run_cli(self.path(), args, env, None)
    }

    pub fn hook(&self, event: &str, payload: &Value, env: &[(&str, &str)]) -> Run {
        run_cli(
            self.path(),
            &["hook", event],
            env,
            Some(&payload.to_string()),
        )
    }

    pub fn hook_raw(&self, event: &str, stdin: &str) -> Run {
        run_cli(self.path(), &["hook", event], &[], Some(stdin))
    }

    /// Writes harness-tasks.json with `tasks` and extra top-level fields.
    pub fn write_state(&self, tasks: Value, extra: Value) {
        let mut doc = json!({
            "version": 2,
            "created": "2026-01-01T00:00:00Z",
            "session_config": {"concurrency_mode": "exclusive", "max_tasks_per_session": 0, "max_sessions": 0},
            "tasks": tasks,
            "session_count": 0,
            "last_session": null,
        });
        if let (Some(d), Some(e)) = (doc.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                d.insert(k.clone(), v.clone());
            }
        }
        std::fs::write(
            self.file("harness-tasks.json"),
            serde_json::to_string_pretty(&doc).expect("ser"),
        )
        .expect("write state");
    }

    pub fn activate(&self) {
        std::fs::write(self.file(".harness-active"), "").expect("marker");
    }

    pub fn state(&self) -> Value {
        let text = std::fs::read_to_string(self.file("harness-tasks.json")).expect("read state");
        serde_json::from_str(&text).expect("state JSON")
    }

    pub fn task(&self, id: &str) -> Value {
        self.state()["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no task {id}"))
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.file("harness-progress.txt")).unwrap_or_default()
    }

    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        self.log()
            .lines()
            .filter(|l| l.contains(needle))
            .map(str::to_string)
            .collect()
    }
}

/// Checks the A12 grammar of one log line.
pub fn assert_log_grammar(line: &str) {
    let b = line.as_bytes();
    assert!(
        b.len() > 36 && b[0] == b'[' && b[20] == b'Z' && b[21] == b']',
        "{line}"
    );
    let rest = &line[22..];
    assert!(rest.starts_with(" [SESSION-"), "{line}");
    let after = rest.split_once("] ").map(|x| x.1).unwrap_or("");
    let ty = after.split(' ').next().unwrap_or("");
    assert!(
        [
            "INIT",
            "LOCK",
            "Starting",
            "CHECKPOINT",
            "Completed",
            "ERROR",
            "ROLLBACK",
            "RECOVERY",
            "STATS",
            "WARN"
        ]
        .contains(&ty),
        "unknown TYPE in {line}"
    );
}

/// The test double agent: a shell script driven by the task title.
/// * default: writes `<id>.txt` containing `done-<id>`;
/// * title containing `flaky`: writes wrong content on its first two attempts;
/// * title containing `checkpoint`: records a checkpoint through the real CLI first;
/// * title containing `crash`: writes the file, records a checkpoint, signals
///   `$AGENT_STATE/crash.ready` and sleeps (the test kills the driver meanwhile);
/// * title containing `slow`: sleeps 0.2 s first (to interleave concurrent workers).
///
/// It saves its stdin prompt and appends `<id> <worker>` to `$AGENT_STATE/runs.log`.
pub const AGENT_SCRIPT: &str = r#"#!/bin/sh
set -e
id="$HARNESS_TASK_ID"
cat > "$AGENT_STATE/$id.prompt"
n=$(cat "$AGENT_STATE/$id.count" 2>/dev/null || echo 0)
n=$((n+1))
echo "$n" > "$AGENT_STATE/$id.count"
echo "$id $HARNESS_WORKER_ID" >> "$AGENT_STATE/runs.log"
case "$HARNESS_TASK_TITLE" in
  *slow*) sleep 0.2 ;;
esac
case "$HARNESS_TASK_TITLE" in
  *crash*)
    if [ ! -f "$AGENT_STATE/crashed.once" ]; then
      echo "done-$id" > "$id.txt"
      "$HARNESS_BIN" task checkpoint "$id" --step 1 --total 1 "wrote file before crash"
      touch "$AGENT_STATE/crashed.once" "$AGENT_STATE/crash.ready"
      sleep 60
    fi
    echo "done-$id" > "$id.txt" ;;
  *flaky*)
    if [ "$n" -lt 3 ]; then echo "wrong" > "$id.txt"; else echo "done-$id" > "$id.txt"; fi ;;
  *checkpoint*)
    "$HARNESS_BIN" task checkpoint "$id" --step 1 --total 2 "halfway"
    echo "done-$id" > "$id.txt" ;;
  *)
    echo "done-$id" > "$id.txt" ;;
esac
"#;

/// Writes the agent script into a fresh directory outside any repo; returns (dir, script).
pub fn agent() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().expect("agent dir");
    let script = d.path().join("agent.sh");
    std::fs::write(&script, AGENT_SCRIPT).expect("agent script");
    (d, script)
}

/// `test -f <id>.txt && grep -q done-<id> <id>.txt`
pub fn file_check(id: &str) -> String {
    format!("test -f {id}.txt && grep -q done-{id} {id}.txt")
}

pub fn task_json(id: &str, title: &str, deps: &[&str], validation: &str, timeout: u64) -> Value {
    json!({"id": id, "title": title, "status": "pending", "priority": "P1", "depends_on": deps,
           "attempts": 0, "max_attempts": 3, "started_at_commit": null,
           "validation": {"command": validation, "timeout_seconds": timeout},
           "on_failure": {"cleanup": null}, "error_log": [], "checkpoints": [], "completed_at": null})
}

/// Env for `harness run` with the test agent.
pub fn agent_env(state: &Path) -> Vec<(String, String)> {
    vec![
        ("AGENT_STATE".into(), state.display().to_string()),
        ("HARNESS_BIN".into(), BIN.to_string()),
    ]
}

pub fn run_agent(p: &Project, state: &Path, script: &Path, extra: &[&str]) -> Run {
    let env = agent_env(state);
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let agent = format!("sh {}", script.display());
    let mut args = vec!["run", "--agent", agent.as_str()];
    args.extend_from_slice(extra);
    run_cli(p.path(), &args, &env_ref, None)
}
