//! What the REAL Claude Code 2.1.332 (`end2end/real-cli`, against the model
//! stand-in) gives its Notification hooks when it has waited at its prompt:
//! the event is recorded by a hook of the user's own settings (beside
//! Harness's), and Harness's reading of it (`agent_state::notification`)
//! must be "idle at its prompt". The idle threshold is Claude Code's
//! `messageIdleNotifThresholdMs` (60 s by default), set to 1.5 s in the
//! test's `~/.claude.json`. The recorded fields are kept in
//! `crates/core/tests/fixtures/hooks/claude_notification_idle_prompt.json`
//! (core's unit test reads it); this test tells when the CLI changes them.
//!
//! A permission prompt (`permission_prompt`) is not recorded: Harness
//! starts Claude Code with `--dangerously-skip-permissions`, where the CLI
//! shows none.
//!
//! Without the CLI the test prints "skipped: …" and passes.

use crate::common;

use std::time::Duration;

use harness_core::agent_state::{self, HookEvent};
use harness_model_standin::{StandIn, Turn};
use serde_json::{Value, json};

use common::real_cli::{claude_env, installed, screen, start_claude_task};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_codes_idle_notification_reads_as_idle() {
    let Some(bin) = installed("claude") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let standin = StandIn::start(vec![Turn::say("Done.")]).await.unwrap();

    let recorded = work.join("notifications.jsonl");
    let user_settings = json!({"hooks": {"Notification": [{"hooks": [{"type": "command",
        "command": format!("cat >> '{}'; echo >> '{}'", recorded.display(), recorded.display())}]}]}});
    std::fs::write(
        home.join(".claude/settings.json"),
        user_settings.to_string(),
    )
    .unwrap();
    let env = claude_env(
        &home,
        &work,
        &standin.base_url(),
        json!({"messageIdleNotifThresholdMs": 1500}),
        json!({}),
    );
    let task = start_claude_task(&s, "idle notification", &bin, &work, env).await;

    let idle = || {
        std::future::ready(
            std::fs::read_to_string(&recorded)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|e| e["notification_type"] == "idle_prompt"),
        )
    };
    let event = common::until_with(
        "the idle notification",
        Duration::from_secs(90),
        idle,
        || async {
            format!(
                "recorded: {:?}\nscreen:\n{}",
                std::fs::read_to_string(&recorded).ok(),
                screen(&s, &task).await
            )
        },
    )
    .await;
    assert_eq!(event["hook_event_name"], "Notification", "{event}");
    let read = agent_state::notification(
        event["notification_type"].as_str(),
        event["message"].as_str(),
    );
    assert_eq!(read, Some(HookEvent::IdlePrompt), "{event}");
    // The fixture holds the same fields and values (ids and paths aside).
    let fixture: Value = serde_json::from_str(include_str!(
        "../../crates/core/tests/fixtures/hooks/claude_notification_idle_prompt.json"
    ))
    .unwrap();
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&event), keys(&fixture["event"]), "{event}");
    for field in ["hook_event_name", "notification_type", "message"] {
        assert_eq!(event[field], fixture["event"][field], "{field}: {event}");
    }
    // And the task shows the agent idle at its prompt.
    common::until("the agent idle", Duration::from_secs(30), || async {
        let (_, t) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
        (t["agentState"]["state"] == "idle").then_some(())
    })
    .await;
    s.shutdown().await;
}
