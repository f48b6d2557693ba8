//! `harness hook <event>`: the agent-side hook commands. They read the hook
//! JSON on stdin as Claude Code and Codex send it and answer on stdout.
//! Every hook fails open: an unreadable or missing input never blocks the agent.

use std::{
    io::{IsTerminal, Read},
    path::{Path, PathBuf},
    sync::mpsc,
    time::Duration,
};

use harness_core::{approvals, ladder, native_question, unattended};
use serde_json::{Value, json};

/// What the hook process prints and exits with.
pub struct HookResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
}

impl HookResult {
    fn allow() -> Self {
        Self {
            stdout: String::new(),
            stderr: String::new(),
            exit_code: 0,
        }
    }
}

/// The agent environment the hooks read (docs/contract.md §6).
pub struct HookEnv {
    pub task_id: Option<String>,
    pub has_parent: bool,
    pub signal_dir: Option<PathBuf>,
    pub api_url: Option<String>,
    pub api_token: Option<String>,
    pub execution_id: Option<String>,
    /// The approval policy written at spawn: what decides when
    /// the server cannot be reached.
    pub approval_snapshot: Option<PathBuf>,
}

impl HookEnv {
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self {
            task_id: var("TOWER_TASK_ID"),
            has_parent: var("TOWER_HAS_PARENT").is_some(),
            signal_dir: var("TOWER_SIGNAL_DIR").map(PathBuf::from),
            api_url: var("TOWER_API_URL"),
            api_token: var("TOWER_API_TOKEN"),
            execution_id: var("TOWER_EXECUTION_ID"),
            approval_snapshot: var(approvals::offline::SNAPSHOT_ENV).map(PathBuf::from),
        }
    }
}

/// Read all of stdin, giving up after `timeout` (the hook then fails open).
pub fn read_stdin(timeout: Duration) -> Option<String> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut input = String::new();
        let ok = std::io::stdin()
            .take(4 * 1024 * 1024)
            .read_to_string(&mut input)
            .is_ok();
        let _ = tx.send(ok.then_some(input));
    });
    rx.recv_timeout(timeout).ok().flatten()
}

/// The PreToolUse escalation-ladder gate (decision in `harness_core::ladder`).
pub fn pre_tool(input: Option<&str>, env: &HookEnv) -> HookResult {
    let Some(task_id) = env.task_id.as_deref() else {
        return HookResult::allow(); // not a Harness terminal
    };
    let Some(event) = input.and_then(|i| serde_json::from_str::<Value>(i).ok()) else {
        return HookResult::allow();
    };
    let Some(tool) = event.get("tool_name").and_then(Value::as_str) else {
        return HookResult::allow();
    };
    let unattended = env
        .signal_dir
        .as_deref()
        .is_some_and(|dir| unattended::signal_file(dir, task_id).exists());
    match ladder::decide(tool, env.has_parent, unattended) {
        // The server decides whether the task is attended (its database,
        // not the signal file, which an agent could delete); the file and
        // `TOWER_HAS_PARENT` decide only when it cannot be reached.
        ladder::Decision::Allow => approval_check(tool, &event, env, unattended),
        ladder::Decision::Deny(reason) => HookResult {
            // The native menu becomes a Harness question; when it
            // cannot be recorded (server unreachable…) the plain deny stands.
            stdout: deny(&match record_native_question(tool, &event, env) {
                Ok(request_id) => {
                    native_question::recorded_reason(tool, &request_id, env.has_parent)
                }
                Err(err) => {
                    tracing::debug!(%err, "native question not recorded; plain deny");
                    reason.to_string()
                }
            }),
            stderr: String::new(),
            exit_code: 0,
        },
    }
}

/// How long the hook holds a call for a person's decision; the hook timeout
/// Harness writes into the per-spawn settings ([`PRE_TOOL_TIMEOUT_SECS`]) is
/// longer, so the CLI never kills the hook first.
pub const APPROVAL_WAIT_SECS: u64 = 45;
/// The PreToolUse hook timeout in the per-spawn settings of both CLIs.
pub const PRE_TOOL_TIMEOUT_SECS: u32 = 60;

/// The approval policy's check of one call, by the server (the
/// hook has no database) whenever it can be reached: it alone knows whether
/// the task is attended. Server unreachable: the core's offline rule
/// (`approvals::offline::decide_unreachable`) decides from the signal file,
/// `TOWER_HAS_PARENT` and the policy written at spawn
/// (`TOWER_APPROVAL_SNAPSHOT`).
fn approval_check(tool: &str, event: &Value, env: &HookEnv, unattended: bool) -> HookResult {
    let input = event.get("tool_input").cloned().unwrap_or(Value::Null);
    let cwd = event.get("cwd").and_then(Value::as_str);
    // The call's id: the ungated-run watch matches the CLI's own record by it.
    let tool_use_id = event.get("tool_use_id").and_then(Value::as_str);
    let body = json!({"taskId": env.task_id, "tool": tool, "input": input, "cwd": cwd,
        "toolUseId": tool_use_id, "waitSeconds": APPROVAL_WAIT_SECS});
    let timeout = Duration::from_secs(APPROVAL_WAIT_SECS + 10);
    match post(env, "/api/internal/approvals/check", body, timeout) {
        Ok(v) if v.get("decision").and_then(Value::as_str) == Some("deny") => {
            let reason = v
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("Harness: the approval policy denies this call.");
            denied(reason)
        }
        Ok(_) => HookResult::allow(),
        // The server cannot be asked: the core's offline rule decides.
        Err(err) => {
            let place = approvals::offline::Place {
                has_parent: env.has_parent,
                unattended,
            };
            let task_id = env.task_id.as_deref().unwrap_or_default();
            let snapshot = || read_snapshot(env);
            match approvals::offline::decide_unreachable(
                place,
                task_id,
                snapshot,
                (tool, &input, cwd),
                &err,
            ) {
                None => HookResult::allow(),
                Some(reason) => denied(&reason),
            }
        }
    }
}

/// The text of this task's policy snapshot, if one was written and is readable.
fn read_snapshot(env: &HookEnv) -> Option<String> {
    let path = env.approval_snapshot.as_deref()?;
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) => {
            tracing::debug!(%err, path = %path.display(), "no approval snapshot; the built-in rules decide");
            None
        }
    }
}

fn denied(reason: &str) -> HookResult {
    HookResult {
        stdout: deny(reason),
        stderr: String::new(),
        exit_code: 0,
    }
}

/// The PreToolUse deny answer with `reason` shown to the agent.
fn deny(reason: &str) -> String {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
    .to_string()
}

/// Record a denied native question menu as an ask with its options
/// (`POST /api/internal/harness/ask`); returns the request id.
fn record_native_question(tool: &str, event: &Value, env: &HookEnv) -> Result<String, String> {
    let input = event.get("tool_input").unwrap_or(&Value::Null);
    let q = native_question::from_tool_input(tool, input)
        .ok_or_else(|| "no question in the tool input".to_string())?;
    let mut body = q.choices;
    body.insert("taskId".into(), json!(env.task_id));
    body.insert("question".into(), json!(q.question));
    // On a derived task the server also puts it in the parent's inbox.
    body.insert("nativeTool".into(), json!(tool));
    let out = report(env, "/api/internal/harness/ask", Value::Object(body))?;
    out.get("requestId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("no requestId in {out}"))
}

/// The SessionStart hook's wait for the tool listing: the server's own
/// bound (`TOOLS_WAIT_MAX`, 20 s) and a margin, under the hook's timeout.
const TOOLS_READY_TIMEOUT: Duration = Duration::from_secs(24);

/// POST a JSON body to the Harness server with the agent's token; bounded
/// by a short timeout. Failures are returned, never fatal for the hook.
fn report(env: &HookEnv, path: &str, body: Value) -> Result<Value, String> {
    post(env, path, body, Duration::from_secs(3))
}

fn post(env: &HookEnv, path: &str, body: Value, timeout: Duration) -> Result<Value, String> {
    let (Some(base), Some(token)) = (env.api_url.as_deref(), env.api_token.as_deref()) else {
        return Err("TOWER_API_URL / TOWER_API_TOKEN not set".into());
    };
    let url = format!("{}{path}", base.trim_end_matches('/'));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| e.to_string())?;
        let resp = client
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = resp.status();
        let value: Value = resp.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            Ok(value)
        } else {
            Err(format!("{status}: {value}"))
        }
    })
}

/// PostToolUse: report the call that ran (`POST /api/internal/hooks/post-tool`)
/// so that the server notices one no pre-tool check saw (an ungated run,
/// `harness_core::ungated`). Runs in the agent's sandbox and never blocks
/// it: it prints nothing and exits 0 whatever happens.
pub fn post_tool(input: Option<&str>, env: &HookEnv) -> HookResult {
    let event = input.and_then(|i| serde_json::from_str::<Value>(i).ok());
    if let Some(event) = event
        && let Some(tool) = event.get("tool_name").and_then(Value::as_str)
    {
        let body = json!({"taskId": env.task_id, "tool": tool,
            "input": event.get("tool_input").cloned().unwrap_or(Value::Null),
            "cwd": event.get("cwd"), "toolUseId": event.get("tool_use_id")});
        if let Err(err) = report(env, "/api/internal/hooks/post-tool", body) {
            tracing::debug!(%err, "the ran call was not reported");
        }
    }
    HookResult::allow()
}

/// Notification (Claude Code): report what the CLI notifies
/// (`POST /api/internal/hooks/notification`: its `notification_type` and
/// message) so that the agent watcher knows the CLI waits for the person or
/// at its prompt. Never blocks the agent: prints nothing, exits 0.
pub fn notification(input: Option<&str>, env: &HookEnv) -> HookResult {
    let event = input.and_then(|i| serde_json::from_str::<Value>(i).ok());
    if let Some(event) = event {
        let body = json!({"taskId": env.task_id, "executionId": env.execution_id,
            "notificationType": event.get("notification_type"),
            "message": event.get("message")});
        if let Err(err) = report(env, "/api/internal/hooks/notification", body) {
            tracing::debug!(%err, "the notification was not reported");
        }
    }
    HookResult::allow()
}

/// SessionStart: report the provider session id (first write wins; used by
/// resume), then the task-list context of `harness_plan` when active.
pub fn session_start(input: Option<&str>, env: &HookEnv, cwd: &Path) -> HookResult {
    let mut stderr = String::new();
    if env.task_id.is_some() {
        let event = input.and_then(|i| serde_json::from_str::<Value>(i).ok());
        let field = |name: &str| {
            event
                .as_ref()
                .and_then(|v| v.get(name))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let session = field("session_id");
        if let Some(session_id) = session {
            let body = json!({"taskId": env.task_id, "executionId": env.execution_id, "sessionId": session_id});
            if let Err(err) = report(env, "/api/internal/hooks/session", body) {
                stderr.push_str(&format!(
                    "harness: could not report the session id: {err}\n"
                ));
            }
        }
        // The first model request waits for this hook, not for the MCP
        // servers: hold it until the Harness tools are listed
        // (`terminals::mcp_ready`). A clear or a compact keeps the tools.
        if matches!(
            field("source").as_deref(),
            Some("startup" | "resume") | None
        ) {
            let body = json!({"taskId": env.task_id, "executionId": env.execution_id});
            match post(
                env,
                "/api/internal/hooks/tools-ready",
                body,
                TOOLS_READY_TIMEOUT,
            ) {
                Ok(out) if out.get("listed") == Some(&Value::Bool(true)) => {}
                Ok(_) => stderr.push_str(
                    "harness: the Harness tools were not listed yet; starting without them\n",
                ),
                Err(err) => stderr.push_str(&format!(
                    "harness: could not wait for the Harness tools: {err}\n"
                )),
            }
        }
    }
    let plan = harness_plan::hook_main("session-start", input.unwrap_or_default(), cwd);
    HookResult {
        stdout: plan.stdout,
        stderr: stderr + &plan.stderr,
        exit_code: plan.exit_code,
    }
}

/// Dispatch one hook event.
pub fn run(event: &str, env: &HookEnv, cwd: &Path) -> HookResult {
    match event {
        "pre-tool" | "pre-tool-use" => {
            if env.task_id.is_none() {
                return HookResult::allow();
            }
            let input = read_stdin(Duration::from_secs(5));
            pre_tool(input.as_deref(), env)
        }
        "post-tool" => {
            if env.task_id.is_none() {
                return HookResult::allow();
            }
            let input = read_stdin(Duration::from_secs(5));
            post_tool(input.as_deref(), env)
        }
        "notification" => {
            if env.task_id.is_none() {
                return HookResult::allow();
            }
            let input = read_stdin(Duration::from_secs(5));
            notification(input.as_deref(), env)
        }
        "session-start" => {
            let input = read_stdin(Duration::from_secs(5));
            session_start(input.as_deref(), env, cwd)
        }
        "stop" => {
            let input = read_stdin(Duration::from_secs(5));
            let mut stderr = String::new();
            if env.task_id.is_some()
                && let Err(err) = report(
                    env,
                    "/api/internal/hooks/stop",
                    crate::hook_stop::body(env, input.as_deref()),
                )
            {
                stderr.push_str(&format!("harness: could not report the turn end: {err}\n"));
            }
            let out = harness_plan::hook_main("stop", input.as_deref().unwrap_or_default(), cwd);
            HookResult {
                stdout: out.stdout,
                stderr: stderr + &out.stderr,
                exit_code: out.exit_code,
            }
        }
        other => {
            let input = read_stdin(Duration::from_secs(5)).unwrap_or_default();
            let out = harness_plan::hook_main(other, &input, cwd);
            HookResult {
                stdout: out.stdout,
                stderr: out.stderr,
                exit_code: out.exit_code,
            }
        }
    }
}
