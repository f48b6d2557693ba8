//! `harness run --agent CMD` in supervised mode: a real server, a real git
//! repository with a real task list, and the real `harness` binary. Each plan task becomes a
//! Harness task whose agent runs in a server PTY; `ask_human` parks it and a REST reply lets
//! the run finish. Also: `--no-server`, a stale discovery file, an unreachable `--server`.

use crate::common;

use std::{path::Path, process::Output, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

fn git(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `harness <args>` in `dir` with a clean Harness environment.
fn harness(dir: &Path, args: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(HARNESS);
    c.current_dir(dir).args(args).kill_on_drop(true);
    for k in [
        "HARNESS_SERVER_URL",
        "HARNESS_ADMIN_TOKEN",
        "HARNESS_DATA_DIR",
        "HARNESS_STATE_ROOT",
        "HARNESS_WORKER_ID",
        "HARNESS_TASK_ID",
        "HARNESS_WORK_DIR",
        "HARNESS_LEASE_SECONDS",
        "CLAUDE_PROJECT_DIR",
    ] {
        c.env_remove(k);
    }
    c
}

async fn cli(dir: &Path, args: &[&str]) -> Output {
    let out = harness(dir, args).output().await.unwrap();
    assert!(
        out.status.success(),
        "harness {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A git repository with `harness init` and the given `add` argument lists.
async fn project(tasks: &[&[&str]]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["config", "user.email", "t@example.com"]);
    git(p, &["config", "user.name", "t"]);
    std::fs::write(p.join("README"), "base\n").unwrap();
    git(p, &["add", "README"]);
    git(p, &["commit", "-qm", "base"]);
    cli(p, &["init"]).await;
    for t in tasks {
        let mut args = vec!["add"];
        args.extend_from_slice(t);
        cli(p, &args).await;
    }
    dir
}

async fn status_json(dir: &Path) -> Value {
    let out = cli(dir, &["status", "--json"]).await;
    serde_json::from_slice(&out.stdout).unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

async fn server_tasks(s: &common::Server) -> Vec<Value> {
    let (status, tasks) = s.admin("GET", "/api/tasks", None).await;
    assert_eq!(status, StatusCode::OK, "{tasks}");
    tasks.as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_plan_task_runs_as_a_supervised_harness_task() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    assert!(
        data.path().join("server.json").is_file(),
        "a running server writes its discovery file"
    );
    let proj = project(&[
        &[
            "Write alpha",
            "--validate",
            "grep -q 'Task: Write alpha' task-001.txt",
        ],
        &[
            "Write beta",
            "--depends-on",
            "task-001",
            "--validate",
            "grep -q 'Task: Write beta' task-002.txt && test -f task-001.txt",
        ],
        &[
            "Write gamma",
            "--priority",
            "P2",
            "--validate",
            "test -s task-003.txt",
        ],
    ])
    .await;
    // A server project for this directory: the supervised tasks are filed under it.
    let (status, p) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "plan", "path": proj.path().display().to_string()})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{p}");
    let project_id = p["id"].as_str().unwrap().to_string();
    // The agent reads its prompt from HARNESS_PROMPT_FILE (stdin is the terminal).
    let agent = r#"test -t 0 && echo "tty stdin"; cat "$HARNESS_PROMPT_FILE" > "$HARNESS_TASK_ID.txt"; echo "done $HARNESS_TASK_ID in $PWD""#;
    let data_dir = data.path().display().to_string();
    let out = harness(
        proj.path(),
        &["run", "--agent", agent, "--data-dir", &data_dir],
    )
    .output()
    .await
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{stderr}",
        text(&out.stdout)
    );
    assert!(stderr.contains("supervised mode"), "{stderr}");
    assert!(
        stderr.contains(&format!("task-001 runs as Harness task {}/tasks/", s.base)),
        "{stderr}"
    );

    // The server has one task per plan task, each with a COMPLETED execution.
    let tasks = server_tasks(&s).await;
    let mut titles: Vec<&str> = tasks.iter().map(|t| t["title"].as_str().unwrap()).collect();
    titles.sort_unstable();
    assert_eq!(
        titles,
        [
            "task-001: Write alpha",
            "task-002: Write beta",
            "task-003: Write gamma"
        ]
    );
    let root = proj.path().canonicalize().unwrap();
    for t in &tasks {
        assert_eq!(t["execution"]["status"], "COMPLETED", "{t}");
        assert_eq!(t["execution"]["exitCode"], 0, "{t}");
        assert_eq!(t["agent"]["provider"], "command");
        assert_eq!(t["projectId"], project_id.as_str());
        assert_eq!(t["agent"]["command"][0], "sh");
        assert_eq!(t["agent"]["cwd"], root.display().to_string());
        assert_eq!(
            t["agent"]["env"]["HARNESS_STATE_ROOT"],
            root.display().to_string()
        );
        assert!(
            t["description"]
                .as_str()
                .unwrap()
                .starts_with("You are working on task"),
            "the prompt is the description: {t}"
        );
        let id = t["id"].as_str().unwrap();
        let (_, screen) = s
            .admin("GET", &format!("/api/tasks/{id}/screen"), None)
            .await;
        let screen = screen["text"].as_str().unwrap_or_default().to_string();
        assert!(
            screen.contains("tty stdin"),
            "stdin is the terminal: {screen}"
        );
        assert!(screen.contains("done task-"), "{screen}");
    }

    // The plan: every task completed with a commit naming it; prompt files cleaned up.
    let status = status_json(proj.path()).await;
    for t in status["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "completed", "{t}");
    }
    let log = git(proj.path(), &["log", "--format=%s"]);
    for id in ["task-001", "task-002", "task-003"] {
        assert!(log.contains(id), "{log}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(proj.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".harness-prompt")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let progress = std::fs::read_to_string(proj.path().join("harness-progress.txt")).unwrap();
    assert!(progress.contains("Completed [task-003]"), "{progress}");

    s.shutdown().await;
    assert!(
        !data.path().join("server.json").exists(),
        "a clean shutdown removes the discovery file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_parked_on_ask_human_resumes_on_the_reply_and_is_not_timed_out() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let proj = project(&[&["Ask first", "--validate", "grep -q answered answer.txt"]]).await;
    // Outside the data directory: an isolated agent cannot see that.
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("double-script");
    std::fs::write(
        &script,
        "say asking\nask_human Which database?\nwait_reply\nexit 0\n",
    )
    .unwrap();
    let agent = format!(
        "'{}' --script '{}' && echo answered > answer.txt",
        common::double().display(),
        script.display()
    );
    let data_dir = data.path().display().to_string();
    // The agent timeout (3 s) is shorter than the time the question stays open: the clock
    // stops while the execution is PAUSED.
    let run = harness(
        proj.path(),
        &[
            "run",
            "--agent",
            &agent,
            "--agent-timeout",
            "3",
            "--data-dir",
            &data_dir,
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();

    // Wait for the ask.
    let mut task_id = None;
    for _ in 0..300 {
        if let Some(t) = server_tasks(&s).await.into_iter().next() {
            let id = t["id"].as_str().unwrap().to_string();
            let (_, p) = s
                .admin(
                    "GET",
                    &format!("/api/internal/harness/pending?taskId={id}"),
                    None,
                )
                .await;
            if p["pending"] == true {
                task_id = Some(id);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let task_id = task_id.expect("the supervised agent asked");
    let (_, t) = s.admin("GET", &format!("/api/tasks/{task_id}"), None).await;
    assert_eq!(t["execution"]["status"], "PAUSED", "{t}");
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (_, t) = s.admin("GET", &format!("/api/tasks/{task_id}"), None).await;
    assert_eq!(
        t["execution"]["status"], "PAUSED",
        "still parked after more than the agent timeout: {t}"
    );

    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task_id, "text": "SQLite please"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let out = tokio::time::timeout(Duration::from_secs(60), run.wait_with_output())
        .await
        .expect("the run finishes after the reply")
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{stderr}",
        text(&out.stdout)
    );

    let (_, t) = s.admin("GET", &format!("/api/tasks/{task_id}"), None).await;
    assert_eq!(t["execution"]["status"], "COMPLETED", "{t}");
    let (_, screen) = s
        .admin("GET", &format!("/api/tasks/{task_id}/screen"), None)
        .await;
    assert!(
        screen["text"]
            .as_str()
            .unwrap_or_default()
            .contains("GOT REPLY: SQLite please"),
        "{screen}"
    );
    let status = status_json(proj.path()).await;
    assert_eq!(status["tasks"][0]["status"], "completed", "{status}");
    assert_eq!(status["tasks"][0]["attempts"], 0, "{status}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_agent_over_its_timeout_is_stopped_on_the_server() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let proj = project(&[&["Never ends", "--validate", "true", "--max-attempts", "1"]]).await;
    let data_dir = data.path().display().to_string();
    let out = harness(
        proj.path(),
        &[
            "run",
            "--agent",
            "sleep 60",
            "--agent-timeout",
            "2",
            "--data-dir",
            &data_dir,
        ],
    )
    .output()
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let tasks = server_tasks(&s).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0]["execution"]["status"], "STOPPED", "{}", tasks[0]);
    let status = status_json(proj.path()).await;
    let t = &status["tasks"][0];
    assert_eq!(t["status"], "failed", "{status}");
    assert!(
        t["last_error"].as_str().unwrap().starts_with("[TIMEOUT]"),
        "{status}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_runs_the_agent_directly_even_with_a_server_running() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let proj = project(&[&["Direct", "--validate", "grep -q Direct out.txt"]]).await;
    let data_dir = data.path().display().to_string();
    // Direct mode: the prompt is on stdin.
    let out = harness(
        proj.path(),
        &[
            "run",
            "--agent",
            "cat > out.txt",
            "--no-server",
            "--data-dir",
            &data_dir,
        ],
    )
    .output()
    .await
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("direct mode (--no-server)"), "{stderr}");
    assert!(server_tasks(&s).await.is_empty(), "no server task created");
    assert_eq!(
        status_json(proj.path()).await["tasks"][0]["status"],
        "completed"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_discovery_file_falls_back_to_direct_mode() {
    let proj = project(&[
        &["One", "--validate", "grep -q One out-task-001.txt"],
        &["Two", "--validate", "grep -q Two out-task-002.txt"],
    ])
    .await;
    let agent = r#"cat > "out-$HARNESS_TASK_ID.txt""#;
    // A dead pid.
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let gone = tempfile::tempdir().unwrap();
    std::fs::write(
        gone.path().join("server.json"),
        json!({"url": "http://127.0.0.1:9", "pid": dead_pid, "startedAt": 0}).to_string(),
    )
    .unwrap();
    // A live pid (this test) but nothing answers at the URL.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let deaf = tempfile::tempdir().unwrap();
    std::fs::write(
        deaf.path().join("server.json"),
        json!({"url": url, "pid": std::process::id(), "startedAt": 0}).to_string(),
    )
    .unwrap();
    for (dir, why) in [
        (gone.path(), "is gone"),
        (deaf.path(), "no Harness server answers"),
    ] {
        let out = harness(
            proj.path(),
            &[
                "run",
                "--agent",
                agent,
                "--max-tasks",
                "1",
                "--data-dir",
                &dir.display().to_string(),
            ],
        )
        .output()
        .await
        .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains("direct mode: ignoring the stale") && stderr.contains(why),
            "{stderr}"
        );
    }
    let status = status_json(proj.path()).await;
    for t in status["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "completed", "{t}");
    }
    // No discovery file at all: direct mode too.
    let none = tempfile::tempdir().unwrap();
    let out = harness(
        proj.path(),
        &[
            "run",
            "--agent",
            "true",
            "--data-dir",
            &none.path().display().to_string(),
        ],
    )
    .output()
    .await
    .unwrap();
    assert!(text(&out.stderr).contains("direct mode: no Harness server running"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_server_that_does_not_answer_is_a_usage_error() {
    let proj = project(&[&["One", "--validate", "true"]]).await;
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = harness(proj.path(), &["run", "--agent", "true", "--server", &url])
        .output()
        .await
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--server {url}: no Harness server answers")),
        "{stderr}"
    );
    // The same through HARNESS_SERVER_URL; nothing was claimed.
    let out = harness(proj.path(), &["run", "--agent", "true"])
        .env("HARNESS_SERVER_URL", &url)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        status_json(proj.path()).await["tasks"][0]["status"],
        "pending"
    );
    // A bad URL names the flag.
    let out = harness(
        proj.path(),
        &["run", "--agent", "true", "--server", "localhost:1"],
    )
    .output()
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("must be an http://"));
}

/// `harness status` says why a task failed — the exit code
/// of the supervised agent's execution, as the plan recorded it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_why_a_supervised_task_failed() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let proj = project(&[&[
        "Breaks",
        "--validate",
        "test -f never-made.txt",
        "--max-attempts",
        "1",
    ]])
    .await;
    let data_dir = data.path().display().to_string();
    let out = harness(
        proj.path(),
        &["run", "--agent", "exit 7", "--data-dir", &data_dir],
    )
    .output()
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let tasks = server_tasks(&s).await;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0]["execution"]["exitCode"], 7, "{}", tasks[0]);
    let out = cli(proj.path(), &["status"]).await;
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("[failed] task-001: Breaks (1/1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    last error: [TASK_EXEC] agent exited 7;"),
        "{stdout}"
    );
    s.shutdown().await;
}
