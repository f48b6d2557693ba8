//! First-run prompts of the REAL agent CLIs (Claude Code 2.1.332, Codex
//! 0.171.0 from npm, installed by `scripts/setup.sh test` into
//! `end2end/real-cli`) are reported on the task: a folder never trusted, a
//! sign-in screen, and (as root) Claude Code's refusal. The rest of the real
//! CLIs' behaviour is in `real_cli.rs`.
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::common;

use std::time::{Duration, Instant};

use common::real_cli::{PROMPT, installed, screen, task_json};
use harness_model_standin::StandIn;
use reqwest::StatusCode;
use serde_json::json;

async fn notices(s: &common::Server, task: &str) -> Vec<String> {
    let (_, rows) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={task}"),
            None,
        )
        .await;
    rows["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["content"].as_str().map(str::to_string))
        .collect()
}

/// First-run prompts of the real Claude Code are reported on the task: a
/// folder never trusted, and (as root without IS_SANDBOX) the refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_code_first_run_prompts_are_reported_on_the_task() {
    let Some(bin) = installed("claude") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    // Onboarding done, but this folder was never trusted.
    std::fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let standin = StandIn::start(Vec::new()).await.unwrap();
    let create = |sandbox: bool| {
        let mut env = json!({"HOME": home, "ANTHROPIC_BASE_URL": standin.base_url(),
            "ANTHROPIC_AUTH_TOKEN": "standin", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"});
        if sandbox {
            env["IS_SANDBOX"] = json!("1");
        }
        json!({"title": "first run", "agent": {"provider": "claude",
            "command": [bin.display().to_string()], "cwd": work, "env": env}})
    };
    let wait_notice = |task: String, needle: &'static str| {
        let s = &s;
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let found = notices(s, &task).await;
                if let Some(n) = found.iter().find(|n| n.contains(needle)) {
                    return n.clone();
                }
                assert!(
                    Instant::now() < deadline,
                    "no notice with {needle:?}; notices {found:?}; screen:\n{}",
                    screen(s, &task).await
                );
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
        }
    };

    let (_, t) = s.admin("POST", "/api/tasks", Some(create(true))).await;
    let t = t["id"].as_str().unwrap().to_string();
    let (status, _) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let notice = wait_notice(t.clone(), "trust this folder").await;
    assert!(
        notice.contains("The agent is waiting at a Claude Code prompt"),
        "{notice}"
    );
    assert!(
        !screen(&s, &t).await.contains("Bypass Permissions mode"),
        "the bypass warning is skipped per spawn"
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        notices(&s, &t).await.len(),
        1,
        "reported once per execution, not on every look at the screen"
    );
    s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;

    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if root {
        let (_, t2) = s.admin("POST", "/api/tasks", Some(create(false))).await;
        let t2 = t2["id"].as_str().unwrap().to_string();
        s.admin(
            "POST",
            &format!("/api/tasks/{t2}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
        let notice = wait_notice(t2.clone(), "IS_SANDBOX=1").await;
        assert!(notice.contains("refused to start"), "{notice}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let view = task_json(&s, &t2).await;
            if view["execution"]["exitCode"] == 1 {
                assert_eq!(view["execution"]["status"], "FAILED", "{view}");
                break;
            }
            assert!(Instant::now() < deadline, "no exit recorded: {view}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    } else {
        eprintln!("not root: the IS_SANDBOX refusal is not exercised");
    }
    assert_eq!(standin.turns_served(), 0);
    s.shutdown().await;
}

/// First-run screens of the real Codex are reported on the task: sign-in (no
/// credentials) and "Trust this folder?" (a git repository never trusted).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_first_run_prompts_are_reported_on_the_task() {
    let Some(bin) = installed("codex") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let standin = StandIn::start(Vec::new()).await.unwrap();
    let case = |name: &str, git: bool, provider_config: bool| {
        let (work, home) = (
            dir.path().join(name),
            dir.path().join(format!("{name}-home")),
        );
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        if git {
            let made = std::process::Command::new("git")
                .args(["init", "-q"])
                .arg(&work)
                .status()
                .is_ok_and(|s| s.success());
            assert!(made, "git init (git is needed by this test)");
        }
        if provider_config {
            std::fs::write(
                home.join(".codex/config.toml"),
                format!(
                    "model = \"m\"\nmodel_provider = \"standin\"\n[model_providers.standin]\n\
                     name = \"standin\"\nbase_url = \"{}/v1\"\nenv_key = \"K\"\n\
                     wire_api = \"responses\"\nsupports_websockets = false\n\
                     requires_openai_auth = false\n",
                    standin.base_url()
                ),
            )
            .unwrap();
        }
        json!({"title": name, "agent": {"provider": "codex", "command": [bin.display().to_string()],
            "cwd": work, "env": {"HOME": home, "K": "standin"}}})
    };
    for (body, needle) in [
        (case("signin", false, false), "Codex prompt: sign-in"),
        (
            case("trust", true, true),
            "Codex prompt: \"Trust this folder?\"",
        ),
    ] {
        let (_, t) = s.admin("POST", "/api/tasks", Some(body)).await;
        let t = t["id"].as_str().unwrap().to_string();
        s.admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let found = notices(&s, &t).await;
            if found.iter().any(|n| n.contains(needle)) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no notice {needle:?}: {found:?}; screen:\n{}",
                screen(&s, &t).await
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    }
    assert_eq!(standin.turns_served(), 0, "nothing reached the model");
    s.shutdown().await;
}
