//! Supervised mode of `harness run --agent CMD`: with a Harness server
//! running, each claimed plan task runs as a Harness task — in a server PTY with a visible
//! terminal, `ask_human` and the rest of the agent API — instead of a local `sh -c`.
//!
//! * [`discovery`]: `<data-dir>/server.json`, written by a running server, read by `harness run`.
//! * [`choose`]: which mode a run uses (`--server`, `HARNESS_SERVER_URL`, the discovery file,
//!   `--no-server`).
//! * [`SupervisedAgent`]: the `harness_plan::driver::AgentRunner` that talks to the admin REST
//!   API with blocking HTTP (the driver is synchronous; no runtime runs in `harness run`).

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use harness_plan::{
    PlanError,
    cli::ServerChoice,
    driver::{AgentRequest, AgentResult, AgentRunner},
};
use serde_json::{Value, json};

/// Why supervised mode cannot be used as asked.
#[derive(Debug, thiserror::Error)]
pub enum SupervisedError {
    #[error("--server {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("--server {0}: must be an http:// or https:// URL")]
    BadUrl(String),
    #[error(
        "no admin token for {url}: set HARNESS_ADMIN_TOKEN or point --data-dir at the server's data directory ({path}: {message})"
    )]
    NoToken {
        url: String,
        path: PathBuf,
        message: String,
    },
    #[error(
        "the server at {url} refused the admin token (HTTP {status}); check HARNESS_ADMIN_TOKEN / --data-dir"
    )]
    TokenRefused { url: String, status: u16 },
}

/// The discovery file a running `harness serve` keeps in its data directory.
pub mod discovery {
    use std::{
        io::Write,
        os::unix::fs::OpenOptionsExt,
        path::{Path, PathBuf},
    };

    use serde::{Deserialize, Serialize};

    pub const FILE: &str = "server.json";

    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Discovery {
        /// Base URL (loopback when bound to all interfaces).
        pub url: String,
        pub pid: u32,
        pub started_at: i64,
    }

    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(FILE)
    }

    /// Writes `<data-dir>/server.json` (mode 0600) through a temp file and a rename.
    pub fn write(data_dir: &Path, url: &str) -> std::io::Result<()> {
        let d = Discovery {
            url: url.to_string(),
            pid: std::process::id(),
            started_at: chrono::Utc::now().timestamp_millis(),
        };
        let text = serde_json::to_vec_pretty(&d).map_err(std::io::Error::other)?;
        let tmp = data_dir.join(format!(".{FILE}.tmp.{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path(data_dir))
    }

    /// Reads the file; `None` when it is missing or unreadable.
    pub fn read(data_dir: &Path) -> Option<Discovery> {
        let text = std::fs::read(path(data_dir)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Removes the file if this process wrote it (a successor's file is left alone).
    pub fn remove(data_dir: &Path) {
        if read(data_dir).is_some_and(|d| d.pid == std::process::id())
            && let Err(err) = std::fs::remove_file(path(data_dir))
        {
            tracing::warn!(%err, "cannot remove the discovery file");
        }
    }
}

/// A server `harness run` talks to.
#[derive(Debug, Clone)]
pub struct ServerTarget {
    pub base: String,
    pub token: String,
}

/// The mode a run uses, with the line to print about it.
#[derive(Debug)]
pub enum Mode {
    Direct { note: String },
    Supervised { server: ServerTarget, note: String },
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn http(timeout: Duration) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .build()
        .unwrap_or_else(|_| reqwest::blocking::Client::new())
}

/// `GET /healthz` answers `{"status":"ok"}`.
fn healthy(base: &str) -> Result<(), String> {
    let resp = http(Duration::from_secs(3))
        .get(format!("{base}/healthz"))
        .send()
        .map_err(|e| format!("no Harness server answers ({e})"))?;
    if !resp.status().is_success() {
        return Err(format!("/healthz answered HTTP {}", resp.status().as_u16()));
    }
    let body: Value = resp
        .json()
        .map_err(|e| format!("/healthz did not answer JSON ({e})"))?;
    if body["status"] == "ok" {
        Ok(())
    } else {
        Err(format!("/healthz answered {body}"))
    }
}

fn admin_token(base: &str, data_dir: &Path) -> Result<String, SupervisedError> {
    if let Some(t) = env_nonempty("HARNESS_ADMIN_TOKEN") {
        return Ok(t.trim().to_string());
    }
    let path = data_dir.join("secrets").join("admin.token");
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => Ok(t.trim().to_string()),
        Ok(_) => Err(SupervisedError::NoToken {
            url: base.to_string(),
            path,
            message: "empty".into(),
        }),
        Err(e) => Err(SupervisedError::NoToken {
            url: base.to_string(),
            path,
            message: e.to_string(),
        }),
    }
}

/// The token must be accepted before the first task is claimed.
fn check_token(base: &str, token: &str) -> Result<(), SupervisedError> {
    let resp = http(Duration::from_secs(5))
        .get(format!("{base}/api/projects"))
        .bearer_auth(token)
        .send()
        .map_err(|e| SupervisedError::Unreachable {
            url: base.to_string(),
            message: e.to_string(),
        })?;
    if resp.status().is_success() {
        Ok(())
    } else {
        Err(SupervisedError::TokenRefused {
            url: base.to_string(),
            status: resp.status().as_u16(),
        })
    }
}

/// Picks the mode of `harness run --agent CMD`:
///
/// 1. `--no-server` → direct.
/// 2. `--server URL` or `HARNESS_SERVER_URL` → supervised; unreachable is an error (exit 2).
/// 3. `<data-dir>/server.json` (`--data-dir`, `HARNESS_DATA_DIR`, `~/.harness`) of a live
///    server → supervised; a stale file (pid dead or `/healthz` failing) → direct, with a note.
/// 4. Otherwise direct.
///
/// The admin token is `HARNESS_ADMIN_TOKEN`, else `<data-dir>/secrets/admin.token`.
pub fn choose(choice: &ServerChoice) -> Result<Mode, SupervisedError> {
    if choice.no_server {
        return Ok(Mode::Direct {
            note: "direct mode (--no-server): the agent runs here, without a Harness terminal"
                .into(),
        });
    }
    let data_dir = choice
        .data_dir
        .clone()
        .or_else(|| env_nonempty("HARNESS_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(crate::config::default_data_dir);
    if let Some(url) = choice
        .server
        .clone()
        .or_else(|| env_nonempty("HARNESS_SERVER_URL"))
    {
        let base = url.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(SupervisedError::BadUrl(url));
        }
        healthy(&base).map_err(|message| SupervisedError::Unreachable {
            url: base.clone(),
            message: format!("{message}; start `harness serve` or use --no-server"),
        })?;
        let token = admin_token(&base, &data_dir)?;
        check_token(&base, &token)?;
        return Ok(Mode::Supervised {
            note: format!("supervised mode: each task runs as a Harness task on {base}"),
            server: ServerTarget { base, token },
        });
    }
    let file = discovery::path(&data_dir);
    let Some(found) = discovery::read(&data_dir) else {
        return Ok(Mode::Direct {
            note: format!(
                "direct mode: no Harness server running for {} (start `harness serve` for visible terminals and ask_human)",
                data_dir.display()
            ),
        });
    };
    let pid_alive = i32::try_from(found.pid).is_ok_and(harness_plan::lock::pid_alive);
    let stale = if !pid_alive {
        Some(format!("its process {} is gone", found.pid))
    } else {
        healthy(&found.url).err()
    };
    if let Some(why) = stale {
        return Ok(Mode::Direct {
            note: format!("direct mode: ignoring the stale {} ({why})", file.display()),
        });
    }
    let base = found.url.trim_end_matches('/').to_string();
    let token = admin_token(&base, &data_dir)?;
    check_token(&base, &token)?;
    Ok(Mode::Supervised {
        note: format!(
            "supervised mode: each task runs as a Harness task on {base} (found in {})",
            file.display()
        ),
        server: ServerTarget { base, token },
    })
}

/// Runs each plan task as a Harness task: create (`POST /api/tasks`, provider `command`,
/// `["sh","-c",CMD]`), start, then poll about once a second until the execution ends.
///
/// * The agent's stdin is its terminal, so replies typed in the browser (or injected after
///   `ask_human`) reach it. The prompt is in the task description and in the file named by
///   `HARNESS_PROMPT_FILE` (`<state root>/.harness-prompt-<id>.md`, removed afterwards);
///   unlike direct mode it is not on stdin.
/// * The agent timeout counts only time the execution is RUNNING: while it is PAUSED on
///   `ask_human` the clock stops, so a parked agent is never killed for waiting on a human.
///   On a timeout the task is stopped (`POST /api/tasks/{id}/stop`).
pub struct SupervisedAgent {
    server: ServerTarget,
    command: String,
    client: reqwest::blocking::Client,
    poll: Duration,
    /// Longest run of failed polls before giving up on the server.
    unreachable_limit: Duration,
    project: Option<Option<String>>,
    report: Box<dyn FnMut(&str)>,
}

impl SupervisedAgent {
    /// `report` gets one line per task (the Harness task URL) for the user.
    pub fn new(server: ServerTarget, command: String, report: Box<dyn FnMut(&str)>) -> Self {
        Self {
            server,
            command,
            client: http(Duration::from_secs(15)),
            poll: Duration::from_secs(1),
            unreachable_limit: Duration::from_secs(60),
            project: None,
            report,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base)
    }

    fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, CallError> {
        let mut req = self
            .client
            .request(method.clone(), self.url(path))
            .bearer_auth(&self.server.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().map_err(|e| CallError {
            status: None,
            message: format!("{method} {path}: {e}"),
        })?;
        let status = resp.status();
        let text = resp.text().unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if status.is_success() {
            return Ok(value);
        }
        let msg = value["error"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| value.to_string());
        Err(CallError {
            status: Some(status.as_u16()),
            message: format!("{method} {path}: HTTP {}: {msg}", status.as_u16()),
        })
    }

    /// The server project whose path is the state root, if any (looked up once).
    fn project_for(&mut self, root: &Path) -> Option<String> {
        if let Some(p) = &self.project {
            return p.clone();
        }
        let want = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let found = self
            .call(reqwest::Method::GET, "/api/projects", None)
            .ok()
            .and_then(|v| {
                v.as_array()?.iter().find_map(|p| {
                    let path = Path::new(p["path"].as_str()?);
                    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
                    (path == want).then(|| p["id"].as_str().map(str::to_string))?
                })
            });
        self.project = Some(found.clone());
        found
    }

    fn error(&self, message: String) -> PlanError {
        PlanError::Process {
            command: format!("supervised agent on {}", self.server.base),
            message,
        }
    }

    fn wait(
        &mut self,
        task_id: &str,
        timeout: Option<Duration>,
        tick: &mut dyn FnMut(),
    ) -> Result<AgentResult, PlanError> {
        let mut running_for = Duration::ZERO;
        let mut last = Instant::now();
        let mut last_status = String::from("RUNNING");
        let mut failing_since: Option<Instant> = None;
        let mut seen: Option<String> = None;
        loop {
            std::thread::sleep(self.poll);
            tick();
            let now = Instant::now();
            if last_status == "RUNNING" {
                running_for += now - last;
            }
            last = now;
            let view = match self.call(reqwest::Method::GET, &format!("/api/tasks/{task_id}"), None)
            {
                Ok(v) => {
                    failing_since = None;
                    v
                }
                Err(e) if e.status.is_some_and(|s| s < 500) => return Err(self.error(e.message)),
                Err(e) => {
                    let since = *failing_since.get_or_insert(now);
                    tracing::warn!(error = %e.message, "polling the supervised task failed");
                    if since.elapsed() >= self.unreachable_limit {
                        return Err(self.error(format!("server unreachable: {}", e.message)));
                    }
                    continue;
                }
            };
            let exec = &view["execution"];
            let status = exec["status"].as_str().unwrap_or("RUNNING").to_string();
            let exec_id = exec["id"].as_str().map(str::to_string);
            if seen.is_some() && exec_id != seen {
                // A reply after a server restart resumes the agent as a new execution:
                // follow the latest one.
                tracing::info!(task = task_id, "following a new execution of the task");
            }
            seen = exec_id;
            if status != last_status {
                tracing::info!(task = task_id, %status, "supervised execution");
            }
            last_status = status.clone();
            match status.as_str() {
                "COMPLETED" | "FAILED" | "STOPPED" => {
                    let exit_code = exec["exitCode"]
                        .as_i64()
                        .and_then(|c| i32::try_from(c).ok());
                    return Ok(AgentResult {
                        exit_code,
                        timed_out: false,
                    });
                }
                _ => {}
            }
            if timeout.is_some_and(|t| running_for >= t) {
                if let Err(e) = self.call(
                    reqwest::Method::POST,
                    &format!("/api/tasks/{task_id}/stop"),
                    None,
                ) {
                    tracing::warn!(error = %e.message, "cannot stop the timed-out task");
                }
                return Ok(AgentResult {
                    exit_code: None,
                    timed_out: true,
                });
            }
        }
    }
}

/// A failed REST call: the HTTP status when the server answered.
#[derive(Debug)]
struct CallError {
    status: Option<u16>,
    message: String,
}

fn truncate(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).collect()
}

fn file_safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl AgentRunner for SupervisedAgent {
    fn run_agent(
        &mut self,
        request: &AgentRequest,
        _on_spawn: &mut dyn FnMut(i32),
        tick: &mut dyn FnMut(),
    ) -> Result<AgentResult, PlanError> {
        let root = request
            .env
            .iter()
            .find(|(k, _)| k == "HARNESS_STATE_ROOT")
            .map(|(_, v)| PathBuf::from(v))
            .unwrap_or_else(|| request.dir.clone());
        let prompt_file = root.join(format!(
            ".harness-prompt-{}.md",
            file_safe(&request.task.id)
        ));
        std::fs::write(&prompt_file, &request.prompt).map_err(|e| PlanError::Io {
            op: "write",
            path: prompt_file.clone(),
            source: e,
        })?;
        let result = self.run_task(request, &root, &prompt_file, tick);
        if let Err(err) = std::fs::remove_file(&prompt_file) {
            tracing::warn!(%err, file = %prompt_file.display(), "cannot remove the prompt file");
        }
        result
    }
}

impl SupervisedAgent {
    fn run_task(
        &mut self,
        request: &AgentRequest,
        root: &Path,
        prompt_file: &Path,
        tick: &mut dyn FnMut(),
    ) -> Result<AgentResult, PlanError> {
        let mut env: serde_json::Map<String, Value> = request
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        env.insert(
            "HARNESS_PROMPT_FILE".into(),
            json!(prompt_file.display().to_string()),
        );
        let mut body = json!({
            "title": truncate(&format!("{}: {}", request.task.id, request.task.title), harness_core::validate::MAX_TITLE_CHARS),
            "description": truncate(&request.prompt, harness_core::validate::MAX_DESCRIPTION_CHARS),
            "agent": {
                "provider": "command",
                "command": ["sh", "-c", self.command],
                "cwd": request.dir.display().to_string(),
                "env": env,
            },
        });
        if let Some(project) = self.project_for(root) {
            body["projectId"] = json!(project);
        }
        let task = self
            .call(reqwest::Method::POST, "/api/tasks", Some(body))
            .map_err(|e| self.error(e.message))?;
        let Some(task_id) = task["id"].as_str().map(str::to_string) else {
            return Err(self.error(format!("POST /api/tasks answered without an id: {task}")));
        };
        let line = format!(
            "{} runs as Harness task {}",
            request.task.id,
            self.url(&format!("/tasks/{task_id}"))
        );
        (self.report)(&line);
        tracing::info!(plan_task = %request.task.id, %task_id, "supervised task created");
        self.call(
            reqwest::Method::POST,
            &format!("/api/tasks/{task_id}/start"),
            None,
        )
        .map_err(|e| self.error(e.message))?;
        self.wait(&task_id, request.timeout, tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_round_trip_private_and_owned() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        discovery::write(dir.path(), "http://127.0.0.1:9").unwrap();
        let d = discovery::read(dir.path()).unwrap();
        assert_eq!(
            (d.url.as_str(), d.pid),
            ("http://127.0.0.1:9", std::process::id())
        );
        let mode = std::fs::metadata(discovery::path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        discovery::remove(dir.path());
        assert!(discovery::read(dir.path()).is_none());
        // another process's file is left alone
        std::fs::write(
            discovery::path(dir.path()),
            r#"{"url":"http://x","pid":1,"startedAt":0}"#,
        )
        .unwrap();
        discovery::remove(dir.path());
        assert!(discovery::read(dir.path()).is_some());
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_safe("task-1"), "task-1");
        assert_eq!(file_safe("../a b"), ".._a_b");
    }
}
