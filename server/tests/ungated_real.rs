//! An ungated run is noticed, with the REAL Claude Code and Codex
//! (`end2end/real-cli`) against the scripted model stand-ins; the server's
//! watch reads the CLIs' own session records every second here.
//!
//! * Claude Code whose hook program was replaced by one that allows
//!   everything without asking Harness (what an agent can do on a server
//!   whose agents are not isolated; `disableAllHooks` no longer works, the
//!   hooks are managed settings, `real_cli_gate_files.rs`): no check
//!   reaches Harness, its force push goes through; the
//!   watch finds the calls in its transcript with no pre-tool check, flags
//!   the execution once and queues the alert once — still once after more
//!   passes and a server restart.
//! * A normal gated run of each CLI — several allowed calls (shell, a file
//!   read, an MCP tool), one force push held, approved after the hook gave
//!   up and retried — is never flagged, while it runs and after it ends.

use crate::{common, ungated_support::*};

use std::time::Duration;

use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::installed;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "the hookless set-up (a hook program that allows everything on an unisolated server) never starts the agent since the hooks became managed settings; to be redone (the flag path is covered by codex_interactive.rs)"]
async fn real_claude_code_with_its_hooks_switched_off_is_flagged_and_alerted_once() {
    let Some(bin) = installed("claude") else {
        return;
    };
    let w = World::new();
    let echo = format!("echo one >> {}", w.marks.display());
    let standin = StandIn::start(vec![
        Turn::call("Bash", json!({"command": echo, "description": "note"})),
        Turn::call(
            "Bash",
            json!({"command": w.push("ungated"), "description": "push"}),
        ),
        Turn::say("Done."),
    ])
    .await
    .unwrap();
    let s = start_hookless(&w.data()).await;
    let env = w.claude_env(&standin);
    let t = unattended_task(&s, &w, "claude", &bin, env).await;
    // No check reached Harness: the push was never held.
    until(&s, &standin, &t, 90, "the ungated push", || async {
        w.pushed("ungated").then_some(())
    })
    .await;
    assert!(approvals(&s, &t).await.is_empty(), "nothing was checked");
    let flag = until(&s, &standin, &t, 60, "the flag", || async {
        flags(&s, &t).await.into_iter().next()
    })
    .await;
    assert_eq!(flag["evidence"], "transcript", "{flag}");
    assert_eq!(flag["tool"], "Bash", "{flag}");
    // The first call no check saw (the second may be counted with it).
    let detail = flag["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with(&format!("Bash: {echo}")), "{flag}");
    let (_, view) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(flag["executionId"], view["execution"]["id"], "{view}");
    // The person's notice on /harness and the push to the chat, once.
    let (_, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={t}"),
            None,
        )
        .await;
    let notices: Vec<&Value> = page["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("[Ungated run]"))
        })
        .collect();
    assert_eq!(notices.len(), 1, "{page}");
    assert_eq!(notices[0]["id"], flag["messageId"]);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(flags(&s, &t).await.len(), 1, "flagged once");
    assert_eq!(alerts(&s, &t).await.len(), 1, "alerted once");
    // A restart (the agent dies with the server): still once.
    s.shutdown().await;
    let s = start_hookless(&w.data()).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(flags(&s, &t).await.len(), 1);
    assert_eq!(alerts(&s, &t).await.len(), 1);
    s.shutdown().await;
}

/// The gated run of one CLI: `calls` are its allowed calls; then the push,
/// held; the person approves once the model was told to wait; the retried
/// push runs; the task is stopped. Never flagged.
async fn gated_run(provider: &str, bin: &std::path::Path, shell: &str, args: fn(&str) -> Value) {
    let w = World::new();
    std::fs::write(w.work.join("notes.txt"), "notes\n").unwrap();
    let push = w.push("gated");
    let mut script: Vec<Turn> = vec![
        Turn::call(shell, args("ls -la")),
        Turn::call(shell, args("git status --short")),
    ];
    if provider == "claude" {
        script.push(Turn::call(
            "Read",
            json!({"file_path": w.work.join("notes.txt")}),
        ));
    }
    script.extend([
        Turn::call("notify_human", json!({"message": "halfway there"})),
        Turn::call(shell, args(&push)),
        Turn::say("Waiting for approval."),
        Turn::call(shell, args(&push)),
        Turn::call(shell, args("git log --oneline -1")),
        Turn::say("Done."),
    ]);
    let turns = script.len();
    let standin = StandIn::start(script).await.unwrap();
    let s = start(&w.data()).await;
    let env = if provider == "claude" {
        w.claude_env(&standin)
    } else {
        w.codex_env(&standin)
    };
    let t = unattended_task(&s, &w, provider, bin, env).await;
    let a = until(&s, &standin, &t, 120, "the held push", || async {
        approvals(&s, &t)
            .await
            .into_iter()
            .find(|a| a["state"] == "PENDING" && a["parked"] == true)
    })
    .await;
    let (status, d) = s
        .admin(
            "POST",
            &format!("/api/approvals/{}/decide", a["id"].as_str().unwrap()),
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    until(&s, &standin, &t, 120, "the last turn", || async {
        (standin.turns_served() == turns && w.pushed("gated")).then_some(())
    })
    .await;
    assert_eq!(w.marks(), "gated\n");
    // Live: past the settle time, several passes.
    tokio::time::sleep(SETTLE + Duration::from_secs(4)).await;
    assert_eq!(flags(&s, &t).await, Vec::<Value>::new(), "live");
    // Ended: every call counts now.
    let (status, body) = s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(flags(&s, &t).await, Vec::<Value>::new(), "ended");
    assert_eq!(alerts(&s, &t).await, Vec::<Value>::new());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gated_real_claude_code_run_is_never_flagged() {
    let Some(bin) = installed("claude") else {
        return;
    };
    gated_run(
        "claude",
        &bin,
        "Bash",
        |c| json!({"command": c, "description": "run"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gated_real_codex_run_is_never_flagged() {
    let Some(bin) = installed("codex") else {
        return;
    };
    gated_run("codex", &bin, "exec_command", |c| json!({"cmd": c})).await;
}
