//! Approvals with the REAL Claude Code and Codex CLIs
//! (`end2end/real-cli`) against the scripted model stand-ins: the model runs
//! a `git push --force` into a local bare repository (`… && echo <branch> >>
//! marks`, so every run leaves a line) on an unattended task, and the
//! CLI's own PreToolUse hook (the real `harness hook pre-tool`) holds it:
//!
//! * approved from the API while held → it runs, exactly once;
//! * denied with a reason → it never runs, the model reads the reason;
//! * unanswered (the server holds a call 3 s here) → the model is told the
//!   step waits and to end its turn; the server restarts (the agent dies with
//!   it); the approval is still pending and answerable; the later approval
//!   (a reply "1") resumes the agent and is typed in through the delivery
//!   queue; the retried call runs once;
//! * replayed answers (the same reply, the same decision by id) get "already
//!   decided" and grant nothing: the model's next identical call is held
//!   again as a new approval.
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::{PROMPT, claude_env, installed, requests_seen, screen};

/// How long the server holds a call for a decision in these tests.
const HOLD: Duration = Duration::from_secs(3);

struct World {
    dir: tempfile::TempDir,
    work: PathBuf,
    remote: PathBuf,
    marks: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let remote = dir.path().join("remote.git");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q", "-b", "main", &work.display().to_string()]);
        git(&[
            "-C",
            &work.display().to_string(),
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ]);
        git(&["init", "-q", "--bare", &remote.display().to_string()]);
        git(&[
            "-C",
            &work.display().to_string(),
            "remote",
            "add",
            "origin",
            &remote.display().to_string(),
        ]);
        let marks = dir.path().join("marks");
        Self {
            dir,
            work,
            remote,
            marks,
            home,
        }
    }

    /// The risky call: a force push of branch `b`, then a line in `marks`.
    fn push(&self, b: &str) -> String {
        format!(
            "git push --force origin HEAD:refs/heads/{b} && echo {b} >> {}",
            self.marks.display()
        )
    }

    fn marks(&self) -> String {
        std::fs::read_to_string(&self.marks).unwrap_or_default()
    }

    fn pushed(&self, b: &str) -> bool {
        Command::new("git")
            .args([
                "-C",
                &self.remote.display().to_string(),
                "rev-parse",
                "--verify",
                "-q",
            ])
            .arg(format!("refs/heads/{b}"))
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

/// Holders off: the agent dies with its server (the restart below is a
/// reboot's); `holders.rs` covers agents that outlive it.
async fn start(data: &Path) -> common::Server {
    common::start_with(data, |cfg| {
        cfg.approval_wait_max = HOLD;
        cfg.holders.enabled = false;
    })
    .await
}

/// Poll `check` until `Some`, at most `secs`; the panic shows the stand-in's
/// requests and the agent's screen.
async fn until<T, F, Fut>(
    s: &common::Server,
    standin: &StandIn,
    task: &str,
    secs: u64,
    what: &str,
    check: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    common::until_with(what, Duration::from_secs(secs), check, || async {
        let (_, deliveries) = s
            .admin("GET", &format!("/api/tasks/{task}/deliveries"), None)
            .await;
        let (_, view) = s.admin("GET", &format!("/api/tasks/{task}"), None).await;
        // What matters first: a CI log keeps only the start of a panic.
        format!(
            "deliveries: {deliveries}\ntask: {view}\nscreen:\n{}\nrequests:\n{}",
            screen(s, task).await,
            requests_seen(standin, 160),
        )
    })
    .await
}

async fn approvals(s: &common::Server, task: &str) -> Vec<Value> {
    let (status, body) = s
        .admin("GET", &format!("/api/approvals?taskId={task}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

/// The newest approval of `task` for exactly `command`.
async fn approval_of(s: &common::Server, task: &str, command: &str) -> Option<Value> {
    // The input as the CLI's hook reported it (Claude Code: `command`;
    // Codex: its own shape), holding the command verbatim.
    approvals(s, task).await.into_iter().find(|a| {
        serde_json::from_str::<Value>(a["input"].as_str().unwrap_or("null")).is_ok_and(|i| {
            i.to_string()
                .contains(&Value::String(command.into()).to_string())
        })
    })
}

async fn decide(s: &common::Server, id: &str, body: Value) -> (StatusCode, Value) {
    s.admin("POST", &format!("/api/approvals/{id}/decide"), Some(body))
        .await
}

/// The scripted model for one CLI: `shell` is its shell tool and how it
/// takes a command.
fn script(w: &World, shell: &str, args: fn(&str) -> Value) -> Vec<Turn> {
    let call = |b: &str| Turn::call(shell, args(&w.push(b)));
    vec![
        call("approved"),
        call("denied"),
        call("later"),
        Turn::say("Waiting for approval."),
        call("later"),
        call("later"),
        Turn::say("Done."),
    ]
}

/// The whole flow for one CLI; `env` makes the agent's environment.
async fn drive(
    provider: &str,
    bin: &Path,
    shell: &str,
    args: fn(&str) -> Value,
    env: impl FnOnce(&World, &str) -> Value,
) {
    let w = World::new();
    let standin = StandIn::start(script(&w, shell, args)).await.unwrap();
    let mut s = start(&w.data()).await;
    let env = env(&w, &standin.base_url());
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(
                json!({"title": format!("approvals with {provider}"), "agent": {
                "provider": provider, "command": [bin.display().to_string()],
                "cwd": w.work, "env": env}}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let (status, body) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [{"gateway": "openclaw", "scope": "unattended", "active": true}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // 1. Held by the CLI's hook, approved from the API in time: runs once.
    let cmd = w.push("approved");
    let a = until(&s, &standin, &t, 90, "the first approval", || async {
        approval_of(&s, &t, &cmd).await
    })
    .await;
    assert_eq!(a["state"], "PENDING", "{a}");
    assert!(
        harness_core::approvals::policy::SHELL_TOOLS.contains(&a["tool"].as_str().unwrap_or("")),
        "a shell tool: {a}"
    );
    assert!(a["rule"].as_str().unwrap().contains("git push*"), "{a}");
    let cwd = a["cwd"].as_str().unwrap_or_default().to_string();
    assert!(
        Path::new(&cwd).canonicalize().ok() == w.work.canonicalize().ok(),
        "the hook reports the agent's working directory: {a}"
    );
    // The person sees the exact command, the task and the directory.
    let (_, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=pending&taskId={t}"),
            None,
        )
        .await;
    let question = page["rows"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        question.contains(&format!("$ {cmd}"))
            && question.contains(&format!("Task: approvals with {provider}"))
            && question.contains(&format!("Working directory: {cwd}")),
        "{question}"
    );
    assert_eq!(w.marks(), "", "held: not run yet");
    let (status, d) = decide(
        &s,
        a["id"].as_str().unwrap(),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    until(
        &s,
        &standin,
        &t,
        60,
        "the approved call's result",
        || async { standin.main_requests().get(1).cloned() },
    )
    .await;
    assert_eq!(w.marks(), "approved\n", "ran once");
    assert!(w.pushed("approved"));

    // 2. Denied with a reason: never runs; the model reads why.
    let cmd = w.push("denied");
    let b = until(&s, &standin, &t, 60, "the second approval", || async {
        approval_of(&s, &t, &cmd).await
    })
    .await;
    let (status, d) = decide(
        &s,
        b["id"].as_str().unwrap(),
        json!({"decision": "deny", "reason": "not on a Friday"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    let after_deny = until(&s, &standin, &t, 60, "the denied call's result", || async {
        standin.main_requests().get(2).cloned()
    })
    .await;
    assert!(
        after_deny
            .to_string()
            .contains("DENIED by admin because not on a Friday"),
        "{after_deny}"
    );
    assert_eq!(w.marks(), "approved\n");
    assert!(!w.pushed("denied"), "a denied push never ran");

    // 3. Unanswered: the model is told to wait and end its turn.
    let cmd = w.push("later");
    let told = until(&s, &standin, &t, 60, "the waiting reason", || async {
        standin.main_requests().get(3).cloned()
    })
    .await;
    assert!(told.to_string().contains("END YOUR TURN"), "{told}");
    let c = approval_of(&s, &t, &cmd).await.expect("the third approval");
    assert_eq!(
        (
            c["state"].clone(),
            c["parked"].clone(),
            c["outcome"].clone()
        ),
        (json!("PENDING"), json!(true), json!("told-to-wait")),
        "{c}"
    );
    let c_id = c["id"].as_str().unwrap().to_string();
    let (_, view) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    assert_eq!(view["execution"]["status"], "PAUSED", "waiting: {view}");
    until(&s, &standin, &t, 60, "the turn end", || async {
        s.running
            .terminals
            .live(&t)
            .is_some_and(|p| p.turn_complete())
            .then_some(())
    })
    .await;
    // A server restart in the middle (the agent dies with it).
    s.shutdown().await;
    s = start(&w.data()).await;
    let (_, c) = s
        .admin("GET", &format!("/api/approvals/{c_id}"), None)
        .await;
    assert_eq!(c["state"], "PENDING", "survives the restart: {c}");
    // The later approval, as a reply ("1"), then replayed: already decided.
    let (status, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let (status, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "1"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{r}");
    assert!(
        r["error"]
            .as_str()
            .unwrap_or_default()
            .contains("already decided"),
        "{r}"
    );
    let (status, r) = decide(&s, &c_id, json!({"decision": "approve"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{r}");
    // Typed in through the delivery queue: the agent is resumed to read it.
    let typed = until(&s, &standin, &t, 90, "the typed approval", || async {
        standin.main_requests().get(4).cloned()
    })
    .await;
    let typed_text = typed.to_string();
    assert!(
        typed_text.contains("Approved by admin") && typed_text.contains("run it now"),
        "{typed_text}"
    );
    assert!(
        typed_text.contains(&w.push("approved")),
        "the same conversation continues"
    );
    let (_, deliveries) = s
        .admin("GET", &format!("/api/tasks/{t}/deliveries"), None)
        .await;
    let keyed: Vec<&Value> = deliveries
        .as_array()
        .or_else(|| deliveries["deliveries"].as_array())
        .into_iter()
        .flatten()
        .filter(|d| {
            d["text"]
                .as_str()
                .is_some_and(|x| x.contains("Approved by admin"))
        })
        .collect();
    assert_eq!(keyed.len(), 1, "typed once: {deliveries}");
    // The retried call passes once…
    until(
        &s,
        &standin,
        &t,
        60,
        "the retried call's result",
        || async { standin.main_requests().get(5).cloned() },
    )
    .await;
    assert_eq!(w.marks(), "approved\nlater\n");
    let (_, c) = s
        .admin("GET", &format!("/api/approvals/{c_id}"), None)
        .await;
    assert_eq!(
        (
            c["state"].clone(),
            c["outcome"].clone(),
            c["decidedVia"].clone()
        ),
        (json!("APPROVED"), json!("ran"), json!("reply")),
        "{c}"
    );
    // …and only once: the same call again is held as a new approval.
    let again = until(
        &s,
        &standin,
        &t,
        60,
        "the replayed call's result",
        || async { standin.main_requests().get(6).cloned() },
    )
    .await;
    assert!(again.to_string().contains("END YOUR TURN"), "{again}");
    assert_eq!(w.marks(), "approved\nlater\n", "no second run");
    let audit = approvals(&s, &t).await;
    assert_eq!(audit.len(), 4, "{audit:?}");
    assert_eq!(audit[0]["state"], "PENDING", "{audit:?}");
    assert_ne!(audit[0]["id"], json!(c_id));
    until(&s, &standin, &t, 60, "the last turn", || async {
        (standin.turns_served() == 7).then_some(())
    })
    .await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_code_force_push_is_held_approved_denied_and_typed_in_after_a_restart() {
    let Some(bin) = installed("claude") else {
        return;
    };
    drive(
        "claude",
        &bin,
        "Bash",
        |c| json!({"command": c, "description": "force push"}),
        |w, base| claude_env(&w.home, &w.work, base, json!({}), json!({})),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_force_push_is_held_approved_denied_and_typed_in_after_a_restart() {
    let Some(bin) = installed("codex") else {
        return;
    };
    drive(
        "codex",
        &bin,
        "exec_command",
        |c| json!({"cmd": c}),
        |w, base| {
            let codex_home = w.home.join(".codex");
            std::fs::create_dir_all(&codex_home).unwrap();
            let config = format!(
                "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
                 [model_providers.standin]\nname = \"standin\"\nbase_url = \"{base}/v1\"\n\
                 env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
                 supports_websockets = false\nrequires_openai_auth = false\n\
                 [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                w.work.display()
            );
            std::fs::write(codex_home.join("config.toml"), config).unwrap();
            json!({"HOME": w.home, "CODEX_HOME": codex_home, "STANDIN_API_KEY": "standin"})
        },
    )
    .await;
}
