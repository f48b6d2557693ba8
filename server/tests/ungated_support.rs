//! What the tests with the real CLIs of the gate's interactive rules and
//! of the ungated-run watch share: a work repository with a local bare
//! remote, an agent home per CLI pointed at the model stand-in, a server
//! whose watch runs every second, and waiting with a readable failure.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use harness_model_standin::StandIn;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::{claude_env, requests_seen, screen};

/// How long the server holds a call for a decision in these tests.
pub const HOLD: Duration = Duration::from_secs(3);
/// How long a live execution's call waits for its check before the watch
/// counts it (the real default is 75 s).
pub const SETTLE: Duration = Duration::from_secs(4);

pub struct World {
    pub dir: tempfile::TempDir,
    pub work: PathBuf,
    pub remote: PathBuf,
    pub marks: PathBuf,
    pub home: PathBuf,
}

fn git(args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

impl World {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let remote = dir.path().join("remote.git");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let w = work.display().to_string();
        git(&["init", "-q", "-b", "main", &w]);
        git(&["-C", &w, "commit", "-q", "--allow-empty", "-m", "init"]);
        git(&["init", "-q", "--bare", &remote.display().to_string()]);
        git(&[
            "-C",
            &w,
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

    /// A force push of branch `b`, then a line in `marks`.
    pub fn push(&self, b: &str) -> String {
        format!(
            "git push --force origin HEAD:refs/heads/{b} && echo {b} >> {}",
            self.marks.display()
        )
    }

    pub fn marks(&self) -> String {
        std::fs::read_to_string(&self.marks).unwrap_or_default()
    }

    pub fn pushed(&self, b: &str) -> bool {
        Command::new("git")
            .args(["-C", &self.remote.display().to_string()])
            .args(["rev-parse", "--verify", "-q"])
            .arg(format!("refs/heads/{b}"))
            .output()
            .is_ok_and(|o| o.status.success())
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The agent environment of the real Codex against `standin`.
    pub fn codex_env(&self, standin: &StandIn) -> Value {
        let codex_home = self.home.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        let config = format!(
            "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
             [model_providers.standin]\nname = \"standin\"\nbase_url = \"{}/v1\"\n\
             env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
             supports_websockets = false\nrequires_openai_auth = false\n\
             [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            standin.base_url(),
            self.work.display()
        );
        std::fs::write(codex_home.join("config.toml"), config).unwrap();
        json!({"HOME": self.home, "CODEX_HOME": codex_home, "STANDIN_API_KEY": "standin"})
    }

    /// The agent environment of the real Claude Code against `standin`.
    pub fn claude_env(&self, standin: &StandIn) -> Value {
        claude_env(
            &self.home,
            &self.work,
            &standin.base_url(),
            json!({}),
            json!({}),
        )
    }
}

/// A server whose hooks are a program that answers "allow" to everything
/// without asking Harness — what an agent gets when it replaces the hook
/// program on a server whose agents are not isolated (isolation `off`: the
/// probe through this program fails too). Its watch reads every second.
pub async fn start_hookless(data: &Path) -> common::Server {
    let fake = data.parent().unwrap_or(data).join("allow-everything-hook");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    common::start_with(data, |cfg| {
        cfg.harness_bin = fake;
        cfg.approval_wait_max = HOLD;
        cfg.ungated_watch.interval = Duration::from_secs(1);
        cfg.ungated_watch.settle = SETTLE;
    })
    .await
}

/// A server holding calls [`HOLD`], its watch reading every second.
pub async fn start(data: &Path) -> common::Server {
    // No global log subscriber here: `mcp.rs` installs the binary's one to
    // read its log lines, and the first to install wins.
    common::start_with(data, |cfg| {
        cfg.approval_wait_max = HOLD;
        cfg.ungated_watch.interval = Duration::from_secs(1);
        cfg.ungated_watch.settle = SETTLE;
    })
    .await
}

/// An unattended task of `provider` in the work repository, a chat channel
/// for its alerts, started with the prompt.
pub async fn unattended_task(
    s: &common::Server,
    w: &World,
    provider: &str,
    bin: &Path,
    env: Value,
) -> String {
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": format!("watched {provider}"), "agent": {
                "provider": provider, "command": [bin.display().to_string()],
                "cwd": w.work, "env": env}})),
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
            Some(json!({"prompt": common::real_cli::PROMPT})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    t
}

/// Poll `check` until `Some`, at most `secs`; the panic shows the
/// stand-in's requests and the agent's screen.
pub async fn until<T, F, Fut>(
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
        format!(
            "requests:\n{}\nscreen:\n{}\napprovals: {:?}\nflags: {:?}",
            requests_seen(standin, 500),
            screen(s, task).await,
            approvals(s, task).await,
            flags(s, task).await,
        )
    })
    .await
}

pub async fn approvals(s: &common::Server, task: &str) -> Vec<Value> {
    let (status, body) = s
        .admin("GET", &format!("/api/approvals?taskId={task}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

/// The task's ungated-run flags.
pub async fn flags(s: &common::Server, task: &str) -> Vec<Value> {
    let (status, body) = s
        .admin("GET", &format!("/api/tasks/{task}/ungated"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

/// The task's outbound rows under the ungated alert's key.
pub async fn alerts(s: &common::Server, task: &str) -> Vec<Value> {
    let (status, body) = s
        .admin("GET", &format!("/api/tasks/{task}/outbound"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array()
        .or_else(|| body["rows"].as_array())
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| {
            r["dedupKey"]
                .as_str()
                .is_some_and(|k| k.starts_with("ungated:"))
        })
        .collect()
}
