//! The REAL Codex and Claude Code (`end2end/real-cli`) hit their usage limit
//! against the model stand-ins, with the reset 70 s ahead. Codex: the
//! server's own watcher sees the limit and plans the wake-up, the person is
//! told once when it resumes, and the agent is
//! woken after its printed reset with one "continue" — the
//! model's next request is that one, and the agent carries on; Claude Code
//! on a subscription waits for its reset by itself ("Continuing
//! automatically at …"): Harness leaves it alone and checks after the
//! reset — it went on by itself (nothing typed), or one "continue" wakes it. A viewer holds the terminal at 160 × 45, the size the
//! recognisers' fixtures were recorded at.
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::{common, reboot_resume::Reaper};

use std::{
    path::Path,
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use harness_core::{
    agent_actions::{ActionReason, ActionState, Tell},
    agent_state::{self, AgentState, Cli, Observation, Screen, StateChange},
};
use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::{PROMPT, claude_env, installed, screen, task_json};

const AFTER: &str = "Back after the reset";

async fn until<T, F, Fut>(secs: u64, what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    common::until(what, Duration::from_secs(secs), check).await
}

fn epoch_in(secs: i64) -> i64 {
    Utc::now().timestamp() + secs
}

/// The watcher's part: the screen's usage limit as a change, its reset
/// time the instant the printed one names (the agents run in UTC).
fn usage_limit(
    cli: Cli,
    text: &str,
    task: &str,
    exec: &str,
) -> Option<(StateChange, DateTime<Utc>)> {
    let screen = Screen::from_text(text);
    let Observation::UsageLimited { reset: Some(reset) } = agent_state::observe(cli, &screen)
    else {
        return None;
    };
    let now = jiff::ZonedDateTime::now().with_time_zone(jiff::tz::TimeZone::UTC);
    let at = reset.next_after(&now)?;
    let reset_at = DateTime::from_timestamp(at.timestamp().as_second(), 0)?;
    let shown: Vec<String> = screen
        .rows()
        .iter()
        .filter(|r| !r.trim().is_empty())
        .cloned()
        .collect();
    let lines = shown[shown.len().saturating_sub(agent_state::MAX_EVIDENCE_LINES)..].to_vec();
    let change = StateChange {
        task_id: task.into(),
        execution_id: exec.into(),
        previous: Some(AgentState::Working),
        state: AgentState::UsageLimited { reset: Some(reset) },
        lines,
        reset_at: Some(reset_at),
        at: Utc::now(),
    };
    Some((change, reset_at))
}

/// Wait (≤ 2 min) until the task's screen shows its usage limit; the
/// last screen in the failure.
async fn limited(
    s: &common::Server,
    cli: Cli,
    task: &str,
    exec: &str,
) -> (StateChange, DateTime<Utc>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = screen(s, task).await;
        if let Some(found) = usage_limit(cli, &text, task, exec) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no usage limit seen on the screen:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The main-conversation requests whose text has the user message
/// "continue".
fn continues(standin: &StandIn) -> usize {
    standin
        .main_requests()
        .iter()
        .filter(|r| r.to_string().contains("\"continue\""))
        .count()
}

/// A browser viewer of the task's terminal voting for 160 × 45 (the PTY
/// takes the largest viewer's size), reading what it is sent until aborted.
fn wide_viewer(s: &common::Server, task: &str) -> tokio::task::JoinHandle<()> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let url = format!("ws://{}/ws/terminal/{task}", s.running.addr);
    let request = s.ws_request(&url);
    tokio::spawn(async move {
        let Ok((mut ws, _)) = tokio_tungstenite::connect_async(request).await else {
            return;
        };
        let vote = json!({"type": "resize", "rows": 45, "cols": 160}).to_string();
        if ws.send(Message::Text(vote.into())).await.is_err() {
            return;
        }
        let mut seen = 0u64;
        while let Some(Ok(msg)) = ws.next().await {
            if let Message::Binary(bytes) = msg {
                seen += bytes.len() as u64;
                let ack = json!({"type": "ack", "bytes": seen}).to_string();
                if ws.send(Message::Text(ack.into())).await.is_err() {
                    return;
                }
            }
        }
    })
}

/// Starts the CLI as an unattended task (a wide viewer on its terminal);
/// returns the server, the task, its execution and the viewer.
async fn start(
    dir: &Path,
    provider: &str,
    bin: &Path,
    env: Value,
    policy: Value,
) -> (common::Server, String, String, tokio::task::JoinHandle<()>) {
    let s = common::start(&dir.join("data")).await;
    // An unattended channel through the gateway double (it records what
    // it is given to send).
    common::outbox::unattended_channel(&s, &dir.join("sent.jsonl")).await;
    let (st, out) = s.admin("PUT", "/api/settings/recovery", Some(policy)).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": format!("limit {provider}"), "agent": {
                "provider": provider, "command": [bin.display().to_string()],
                "cwd": dir.join("work"), "env": env}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let exec = out["executionId"].as_str().unwrap().to_string();
    let viewer = wide_viewer(&s, &t);
    (s, t, exec, viewer)
}

fn dirs() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    (dir, home)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_parked_at_its_usage_limit_is_woken_once_after_the_reset() {
    let Some(bin) = installed("codex") else {
        return;
    };
    let (dir, home) = dirs();
    let resets_at = epoch_in(70);
    let usage = Turn::Fail {
        status: 429,
        body: json!({"error": {"type": "usage_limit_reached",
            "message": "The usage limit has been reached", "plan_type": "plus",
            "resets_at": resets_at, "resets_in_seconds": 70}}),
        headers: vec![
            ("x-codex-primary-used-percent".into(), "100".into()),
            ("x-codex-primary-window-minutes".into(), "300".into()),
            ("x-codex-primary-reset-at".into(), resets_at.to_string()),
            ("x-codex-primary-reset-after-seconds".into(), "70".into()),
        ],
    };
    let standin = StandIn::start_marked(
        vec![usage.always()],
        &["exec_command", "shell", "apply_patch"],
    )
    .await
    .unwrap();
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
         [model_providers.standin]\nname = \"standin\"\nbase_url = \"{}/v1\"\n\
         env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
         supports_websockets = false\nrequires_openai_auth = false\n",
        standin.base_url()
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    let env = json!({"HOME": home, "CODEX_HOME": codex_home, "STANDIN_API_KEY": "standin",
        "TZ": "UTC"});
    let (s, t, exec, viewer) = start(dir.path(), "codex", &bin, env, json!({})).await;
    let _reaper = Reaper(vec![t.clone()]);
    let (change, reset_at) = limited(&s, Cli::Codex, &t, &exec).await;
    // The server's own watcher sees the limit and plans the wake-up: nothing
    // here plays the watcher.
    let action = until(30, "the watcher's wake-up", || async {
        s.running
            .harness
            .agents()
            .agent_actions(&t)
            .await
            .ok()?
            .into_iter()
            .find(|a| a.reason == ActionReason::UsageLimit)
    })
    .await;
    let wake = action.due_at;
    // The person is told once, with the time it resumes.
    let told = until(30, "the push saying when it resumes", || async {
        let rows = common::outbox::pushes(&s, &format!("agent-state:{exec}:usage_limited")).await;
        (rows.len() == 1).then(|| rows[0]["message"].as_str().unwrap_or("").to_string())
    })
    .await;
    assert!(
        told.contains(&format!("resume it at {}", wake.format("%H:%M"))),
        "{told}"
    );
    // Planning it again (a repeat of the change) finds the same action.
    let plan = s
        .running
        .harness
        .agents()
        .plan_recovery(&change)
        .await
        .unwrap();
    assert_eq!(plan.action.as_ref().map(|a| &a.id), Some(&action.id));
    assert!(!plan.created);
    assert_eq!(plan.tell, Tell::WillResumeAt(wake));
    assert_eq!(wake, reset_at + chrono::Duration::seconds(60), "the margin");
    assert!(wake.timestamp() >= resets_at, "after the real reset");
    // The account's limit lifts at its time.
    until(120, "the real reset", || async {
        (Utc::now().timestamp() >= resets_at).then_some(())
    })
    .await;
    standin.set_script(vec![Turn::say(&format!("{AFTER}: {{last_user}}")).always()]);
    assert_eq!(continues(&standin), 0, "nothing typed before its time");
    let deadline = Instant::now() + Duration::from_secs(150);
    loop {
        let text = screen(&s, &t).await;
        if text.contains(&format!("{AFTER}: continue")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the agent did not carry on: {:?}\n{text}",
            s.running.harness.agents().agent_action(&action.id).await
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(Utc::now() >= wake);
    let done = s
        .running
        .harness
        .agents()
        .agent_action(&action.id)
        .await
        .unwrap();
    assert_eq!(done.state, ActionState::Done, "{done:?}");
    assert_eq!(continues(&standin), 1, "woken once");
    assert_eq!(
        common::outbox::pushes(&s, &format!("agent-state:{exec}:"))
            .await
            .len(),
        1,
        "told once: nothing more after it carried on"
    );
    assert_eq!(
        task_json(&s, &t).await["execution"]["id"],
        exec.as_str(),
        "the same agent, woken"
    );
    viewer.abort();
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_code_waiting_for_its_reset_by_itself_is_left_alone_until_the_check() {
    let Some(bin) = installed("claude") else {
        return;
    };
    let (dir, home) = dirs();
    let reset = epoch_in(70).to_string();
    let headers: Vec<(String, String)> = [
        ("anthropic-ratelimit-unified-status", "rejected"),
        ("anthropic-ratelimit-unified-reset", reset.as_str()),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour",
        ),
        ("anthropic-ratelimit-unified-5h-status", "rejected"),
        ("anthropic-ratelimit-unified-5h-reset", reset.as_str()),
        ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
        ("retry-after", "70"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let usage = Turn::Fail {
        status: 429,
        body: json!({"type": "error", "error": {"type": "rate_limit_error",
            "message": "This request would exceed your account's rate limit. Please try again later."}}),
        headers,
    };
    let standin = StandIn::start_marked(vec![usage.always()], &["Bash"])
        .await
        .unwrap();
    let work = dir.path().join("work");
    // A subscription login (its OAuth token), not an API key.
    let env = claude_env(
        &home,
        &work,
        &standin.base_url(),
        json!({}),
        json!({"TZ": "UTC", "ANTHROPIC_AUTH_TOKEN": null,
            "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-standin"}),
    );
    let (s, t, exec, viewer) = start(
        dir.path(),
        "claude",
        &bin,
        env,
        json!({"selfWaitCheckSecs": 90}),
    )
    .await;
    let _reaper = Reaper(vec![t.clone()]);
    let (change, reset_at) = limited(&s, Cli::Claude, &t, &exec).await;
    let plan = s
        .running
        .harness
        .agents()
        .plan_recovery(&change)
        .await
        .unwrap();
    let action = plan.action.expect("a check after the reset");
    assert_eq!(
        action.reason,
        ActionReason::UsageLimitSelfWait,
        "{:?}",
        change.lines
    );
    assert_eq!(action.due_at, reset_at + chrono::Duration::seconds(90));
    // It sends again only at its reset, by itself: the limit has lifted then.
    standin.set_script(vec![Turn::say(AFTER).always()]);
    // Left alone until the check after the reset: it carries on, by
    // itself at its reset or woken by the check when it did not.
    let carried = until(250, "the agent carrying on", || async {
        screen(&s, &t).await.contains(AFTER).then(Utc::now)
    })
    .await;
    // The check ends DONE, or is cancelled when the watcher saw the agent
    // at work again before it was due (it carried on by itself).
    let done = until(200, "the check after the reset", || async {
        let a = s
            .running
            .harness
            .agents()
            .agent_action(&action.id)
            .await
            .unwrap();
        matches!(a.state, ActionState::Done | ActionState::Cancelled).then_some(a)
    })
    .await;
    let result = done.result.clone().unwrap_or_default();
    if carried < action.due_at {
        assert!(
            done.state == ActionState::Cancelled || result.contains("by itself"),
            "{done:?}"
        );
        assert_eq!(done.delivery_id, None, "nothing typed");
        assert_eq!(continues(&standin), 0);
    } else {
        // (Claude Code 2.1.332 in Harness's bypass-permissions mode has not
        // always gone on by itself.)
        assert!(result.contains("typed"), "{done:?}");
        assert_eq!(continues(&standin), 1, "woken once, at the check");
    }
    viewer.abort();
    s.shutdown().await;
}
