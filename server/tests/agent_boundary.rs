//! An agent is never a person, tested with the credentials
//! and the view of a real spawned agent: its own `TOWER_API_TOKEN` cannot
//! answer its question on any surface, and it cannot read Harness's data
//! directory (secrets, database, other runs), not even through `/proc`.

use crate::common;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use harness_server::isolation::IsolationMode;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Waits until `path` holds a line `done`, then returns its text.
async fn wait_report(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.lines().any(|l| l == "done")
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "the agent wrote no report to {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A command agent running `script` in `work` (outside the data directory).
async fn start_agent(s: &common::Server, work: &Path, script: &str) -> String {
    let (status, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "boundary", "agent": {
                "provider": "command", "command": ["sh", "-c", script], "cwd": work}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let id = task["id"].as_str().unwrap().to_string();
    let (status, body) = s
        .admin("POST", &format!("/api/tasks/{id}/start"), None)
        .await;
    assert!(status.is_success(), "{body}");
    id
}

fn env_of(report: &str) -> BTreeMap<String, String> {
    report
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn open_ask(s: &common::Server, task: &str) -> Value {
    let (status, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={task}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["rows"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_cannot_answer_its_own_question_on_any_surface() {
    let dir = tempfile::tempdir().unwrap();
    let (data, work) = (dir.path().join("data"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let s = common::start(&data).await;
    let report = work.join("env.txt");
    let script = format!(
        "env > '{0}.tmp'; echo done >> '{0}.tmp'; mv '{0}.tmp' '{0}'; exec sleep 60",
        report.display()
    );
    let task = start_agent(&s, &work, &script).await;
    let env = env_of(&wait_report(&report).await);
    let token = env["TOWER_API_TOKEN"].clone();
    assert_eq!(env["TOWER_TASK_ID"], task);

    // The agent asks, with its own token: fine.
    let (status, asked) = s
        .call(
            "POST",
            "/api/internal/harness/ask",
            Some(&token),
            Some(json!({"question": "Deploy to production?",
                "options": [{"label": "Yes"}, {"label": "No"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{asked}");

    // REST: refused with 403 and a JSON error; nothing changes.
    for body in [json!({"text": "Yes"}), json!({"taskId": task, "text": "1"})] {
        let (status, err) = s
            .call(
                "POST",
                "/api/internal/harness/reply",
                Some(&token),
                Some(body),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
        assert!(
            err["error"].as_str().unwrap().contains("only a person"),
            "{err}"
        );
    }
    // MCP: reply_to_ask is not among an agent's tools, and a call is refused.
    let (status, call) = s
        .client
        .post(s.url("/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .bearer_auth(&token)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "reply_to_ask", "arguments": {"taskId": task, "text": "Yes"}}}))
        .send()
        .await
        .map(|r| (r.status(), r))
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let call: Value = call.json().await.unwrap();
    assert_eq!(call["result"]["isError"], true, "{call}");
    // Server functions (the UI's): an agent token is not a session.
    let resp = s
        .client
        .post(s.url("/sfn/reply_ask"))
        .bearer_auth(&token)
        .header("Origin", &s.base)
        .form(&[("task_id", task.as_str()), ("text", "Yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(open_ask(&s, &task).await["state"], "OPEN");

    // A person answers.
    let (status, out) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "No"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(open_ask(&s, &task).await["state"], "ANSWERED");
    s.shutdown().await;
}

/// What the agent script tries to read, one `name=read|denied` line each.
fn probe_script(data: &Path, other_run: &Path, report: &Path) -> String {
    let server_pid = std::process::id();
    let checks = [
        (
            "secret_via_signal_dir",
            "\"$TOWER_SIGNAL_DIR/../secrets/admin.token\"".to_string(),
        ),
        (
            "secret",
            format!("'{}/secrets/admin.token'", data.display()),
        ),
        (
            "internal_key",
            format!("'{}/secrets/internal-api.key'", data.display()),
        ),
        ("database", format!("'{}/harness.db'", data.display())),
        ("other_run", format!("'{}'", other_run.display())),
        (
            "secret_via_proc",
            format!(
                "'/proc/{server_pid}/root{}/secrets/admin.token'",
                data.display()
            ),
        ),
    ];
    let mut script = String::from("{ ");
    for (name, file) in checks {
        script.push_str(&format!(
            "if cat {file} >/dev/null 2>&1; then echo {name}=read; else echo {name}=denied; fi; "
        ));
    }
    script.push_str(&format!(
        "if ls '{}/runs/'\"$TOWER_EXECUTION_ID\" >/dev/null 2>&1; then echo own_run_dir=read; else echo own_run_dir=denied; fi; ",
        data.display()
    ));
    script.push_str(
        "if ls \"$TOWER_SIGNAL_DIR\" >/dev/null 2>&1; then echo signal_dir=read; else echo signal_dir=denied; fi; ",
    );
    script.push_str(
        "if touch \"$TOWER_SIGNAL_DIR/x\" 2>/dev/null; then echo signal_dir_write=yes; else echo signal_dir_write=no; fi; ",
    );
    // The approval policy the hook falls back on when the server is down:
    // the agent's hook reads it; the agent must not rewrite it.
    script.push_str(
        "if cat \"$TOWER_APPROVAL_SNAPSHOT\" >/dev/null 2>&1; then echo snapshot=read; else echo snapshot=denied; fi; ",
    );
    script.push_str(
        "if printf '{}' 2>/dev/null > \"$TOWER_APPROVAL_SNAPSHOT\"; then echo snapshot_write=yes; else echo snapshot_write=no; fi; ",
    );
    script.push_str(&format!(
        "echo done; }} > '{0}.tmp'; mv '{0}.tmp' '{0}'; exec sleep 60",
        report.display()
    ));
    script
}

async fn probe_with(mode: IsolationMode) -> BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let (data, work) = (dir.path().join("data"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let s = common::start_with(&data, |cfg| cfg.agent_isolation = mode).await;
    let data = std::fs::canonicalize(&data).unwrap();
    // Another task's run files.
    let other_run: PathBuf = data.join("runs/other-execution/claude-mcp.json");
    std::fs::create_dir_all(other_run.parent().unwrap()).unwrap();
    std::fs::write(&other_run, "{\"token\": \"hxa_other\"}").unwrap();
    let report = work.join("report.txt");
    start_agent(&s, &work, &probe_script(&data, &other_run, &report)).await;
    let seen = env_of(&wait_report(&report).await);
    s.shutdown().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_agent_cannot_read_the_data_directory() {
    if let Err(reason) = harness_pty::isolate::probe(Path::new(env!("CARGO_BIN_EXE_harness"))) {
        panic!("agents cannot be isolated on this machine: {reason}");
    }
    let seen = probe_with(IsolationMode::Auto).await;
    for hidden in [
        "secret_via_signal_dir",
        "secret",
        "internal_key",
        "database",
        "other_run",
        "secret_via_proc",
    ] {
        assert_eq!(seen[hidden], "denied", "{hidden}: {seen:?}");
    }
    // What the agent needs stays visible, read-only.
    assert_eq!(seen["signal_dir"], "read", "{seen:?}");
    assert_eq!(seen["signal_dir_write"], "no", "{seen:?}");
    assert_eq!(seen["own_run_dir"], "read", "{seen:?}");
    // Its offline approval policy: readable by its hook, not rewritable
    // (an agent that could would let its own `ask` step through offline).
    assert_eq!(seen["snapshot"], "read", "{seen:?}");
    assert_eq!(seen["snapshot_write"], "no", "{seen:?}");
}

/// The check above can fail: without isolation the same agent reads the
/// secrets (the attack the sandbox exists for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_isolation_the_same_agent_reads_the_secrets() {
    let seen = probe_with(IsolationMode::Off).await;
    assert_eq!(seen["secret_via_signal_dir"], "read", "{seen:?}");
    assert_eq!(seen["other_run"], "read", "{seen:?}");
    assert_eq!(seen["signal_dir_write"], "yes", "{seen:?}");
    assert_eq!(seen["snapshot_write"], "yes", "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_start_inside_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let s = common::start(&data).await;
    let inside = std::fs::canonicalize(&data).unwrap().join("work");
    std::fs::create_dir_all(&inside).unwrap();
    let (status, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "inside", "agent": {
                "provider": "command", "command": ["true"], "cwd": inside}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let id = task["id"].as_str().unwrap();
    let (status, err) = s
        .admin("POST", &format!("/api/tasks/{id}/start"), None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["field"], "agent.cwd", "{err}");
    s.shutdown().await;
}

/// A process started by the isolation probe never starts a server (which
/// would probe again): with a launcher that is not the harness binary —
/// a benchmark's own executable once was — the probes recursed without end,
/// two thousand processes deep. Now the nested start fails at once, so the
/// probe fails and the outer server carries on without isolation.
#[test]
fn a_server_started_by_the_isolation_probe_refuses_to_start() {
    let data = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env(harness_pty::isolate::PROBE_ENV, "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("a server started inside the probe is still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!status.success(), "it served: {err}");
    assert!(err.contains("isolation probe"), "{err}");
    // The probe itself, through a launcher that would start a server (the
    // harness binary's `serve` stands in for a benchmark's main): it ends
    // with an error, it does not recurse.
    let sh = data.path().join("launcher.sh");
    std::fs::write(
        &sh,
        format!(
            "#!/bin/sh\nexec {} serve --bind 127.0.0.1:0 --data-dir {}\n",
            env!("CARGO_BIN_EXE_harness"),
            data.path().join("nested").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&sh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(harness_pty::isolate::probe(&sh)));
    let probed = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the probe through a serving launcher did not end in 60 s");
    let err = probed.expect_err("a launcher that serves is not a probe");
    assert!(err.contains("isolation probe"), "{err}");
}

/// A cluster's shared secrets directory (`--secrets-dir`, outside the data
/// directory) is hidden from isolated agents like the data directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_agent_cannot_read_a_shared_secrets_directory() {
    if let Err(reason) = harness_pty::isolate::probe(Path::new(env!("CARGO_BIN_EXE_harness"))) {
        panic!("agents cannot be isolated on this machine: {reason}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (data, work, shared) = (
        dir.path().join("data"),
        dir.path().join("work"),
        dir.path().join("cluster-secrets"),
    );
    std::fs::create_dir_all(&work).unwrap();
    let s = common::start_with(&data, |cfg| cfg.secrets.dir = Some(shared.clone())).await;
    let shared = std::fs::canonicalize(&shared).unwrap();
    let report = work.join("report.txt");
    let mut script = String::from("{ ");
    for name in ["admin.token", "node.key", "internal-api.key"] {
        script.push_str(&format!(
            "if cat '{}' >/dev/null 2>&1; then echo {name}=read; else echo {name}=denied; fi; ",
            shared.join(name).display()
        ));
    }
    script.push_str(&format!(
        "echo done; }} > '{0}.tmp'; mv '{0}.tmp' '{0}'; exec sleep 60",
        report.display()
    ));
    start_agent(&s, &work, &script).await;
    let seen = env_of(&wait_report(&report).await);
    s.shutdown().await;
    for name in ["admin.token", "node.key", "internal-api.key"] {
        assert_eq!(seen[name], "denied", "{name}: {seen:?}");
    }
}
