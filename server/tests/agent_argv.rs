//! secrets off the command line. Any local user reads a
//! process's arguments (`ps`, `/proc/<pid>/cmdline`): the prompt and the
//! system directive reach a Claude Code agent through 0600 files, never as
//! arguments; and `harness serve --no-login-link` does not print the link
//! that carries the admin token. Real server, real PTY, real process.

use crate::common;

use std::{
    os::unix::fs::PermissionsExt,
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::json;

const PROMPT: &str = "Task: deploy with the launch code 7781-SECRET";
const DIRECTIVE: &str = "Directive: the vault word is OSPREY-SECRET";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_agents_prompt_and_directive_are_not_in_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let (status, _) = s
        .admin(
            "PUT",
            "/api/settings/directive",
            Some(json!({"directive": DIRECTIVE})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // A stand-in for the `claude` binary: it stays up so `ps` can see it.
    let fake = dir.path().join("claude");
    std::fs::write(&fake, "#!/bin/sh\necho started\nsleep 30\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (status, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "argv", "agent": {"provider": "claude",
                "command": [fake.display().to_string()], "cwd": dir.path()}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().unwrap().to_string();
    let (status, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let pid = s.running.terminals.live(&t).expect("live").pid();
    // What another local user sees: /proc/<pid>/cmdline (`/bin/sh <the
    // fake claude> <arguments>` once the shell runs).
    let deadline = Instant::now() + Duration::from_secs(10);
    let argv: Vec<String> = loop {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.iter().any(|a| a.contains("--settings")) {
            break args;
        }
        assert!(
            Instant::now() < deadline,
            "no agent command line seen: {args:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let line = argv.join(" ");
    assert!(!line.contains("7781-SECRET"), "the prompt is in ps: {line}");
    assert!(
        !line.contains("OSPREY-SECRET"),
        "the directive is in ps: {line}"
    );
    // They are in 0600 files the arguments name.
    let after = |flag: &str| {
        argv.iter()
            .position(|a| a == flag)
            .and_then(|i| argv.get(i + 1))
            .unwrap_or_else(|| panic!("no {flag} in {argv:?}"))
            .clone()
    };
    let directive_file = after("--append-system-prompt-file");
    // The last `--` is the CLI's own (an isolated agent's launcher has one
    // before the agent's argv).
    let mention = argv
        .iter()
        .rposition(|a| a == "--")
        .and_then(|i| argv.get(i + 1))
        .unwrap_or_else(|| panic!("no -- in {argv:?}"))
        .clone();
    let prompt_file = mention
        .strip_prefix("@\"")
        .and_then(|m| m.strip_suffix('"'))
        .unwrap_or_else(|| panic!("the prompt is not a file mention: {mention}"));
    for (file, text) in [(directive_file.as_str(), DIRECTIVE), (prompt_file, PROMPT)] {
        let meta = std::fs::metadata(file).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{file}");
        assert!(
            std::fs::read_to_string(file).unwrap().contains(text),
            "{file}"
        );
    }
    let (status, _) = s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(status, StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_no_login_link_prints_no_token() {
    for (flag, printed) in [(true, false), (false, true)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("stdout.txt");
        let file = std::fs::File::create(&out).unwrap();
        let server = common::process::ServerProcess::start_with(&dir.path().join("data"), |cmd| {
            cmd.stdout(file);
            if flag {
                cmd.env("HARNESS_NO_LOGIN_LINK", "true");
            }
        })
        .await;
        let deadline = Instant::now() + Duration::from_secs(10);
        let text = loop {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            if text.contains("Open the UI") {
                break text;
            }
            assert!(Instant::now() < deadline, "no start-up lines: {text}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(text.contains(&server.admin), printed, "{text}");
        assert_eq!(text.contains("token="), printed, "{text}");
        server.kill();
    }
}
