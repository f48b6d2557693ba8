//! Claude Code hooks (A13): `stop`, `session-start`, `subagent-stop`, `teammate-idle`, and
//! `self-reflect` (the v3 reflection Stop hook). All share root discovery, the
//! `.harness-active` guard and the eligibility module; all fail open on bad input.
//!
//! Allow = exit 0 with empty stdout. Block = `{"decision":"block","reason":...}` on stdout
//! with exit 0 (Stop, SubagentStop) or exit 2 with the reason on stderr (TeammateIdle).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::eligibility;
use crate::model::{TasksFile, status};
use crate::progress_log::read_tail_bytes;
use crate::state_file::{self, REFLECT_MARKER, STOP_COUNTER, StateRoot};

/// Consecutive Stop blocks after which the safety valve lets the agent stop.
pub const MAX_CONSECUTIVE_BLOCKS: u32 = 8;

/// What a hook run produces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutcome {
    pub stdout: String,
    /// Warnings, and the TeammateIdle message (exit 2).
    pub stderr: String,
    pub exit_code: i32,
}

impl HookOutcome {
    fn allow() -> Self {
        HookOutcome::default()
    }
    fn allow_warn(msg: String) -> Self {
        HookOutcome {
            stderr: msg,
            ..HookOutcome::default()
        }
    }
    fn block(reason: String) -> Self {
        HookOutcome {
            stdout: json!({"decision": "block", "reason": reason}).to_string(),
            ..HookOutcome::default()
        }
    }
    fn exit2(msg: String) -> Self {
        HookOutcome {
            stderr: msg,
            exit_code: 2,
            ..HookOutcome::default()
        }
    }
}

/// Runs the hook for `event` with the JSON payload `stdin`; `cwd` is the process cwd.
pub fn hook_main(event: &str, stdin: &str, cwd: &Path) -> HookOutcome {
    let payload: Value = serde_json::from_str(stdin)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let p = Payload { v: &payload };
    match event {
        "stop" => stop(&p, cwd),
        "session-start" => session_start(&p, cwd),
        "subagent-stop" => subagent_stop(&p, cwd),
        "teammate-idle" => teammate_idle(&p, cwd),
        "self-reflect" => self_reflect(&p, cwd),
        other => HookOutcome::allow_warn(format!("harness hook: unknown event {other}")),
    }
}

struct Payload<'a> {
    v: &'a Value,
}

impl Payload<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.v
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    fn stop_hook_active(&self) -> bool {
        self.v
            .get("stop_hook_active")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.trim().is_empty())
}

/// Root discovery: `HARNESS_STATE_ROOT` (if it holds the tasks file), then
/// `CLAUDE_PROJECT_DIR` and up to 8 parents, then the payload `cwd` (or the process cwd)
/// and up to 8 parents.
pub fn find_hook_root(payload_cwd: Option<&str>, cwd: &Path) -> Option<StateRoot> {
    if let Some(r) = env("HARNESS_STATE_ROOT") {
        let root = StateRoot::new(PathBuf::from(r));
        if root.exists() {
            return Some(root);
        }
    }
    if let Some(d) = env("CLAUDE_PROJECT_DIR")
        && let Some(r) = state_file::find_root_from(Path::new(&d), Some(8))
    {
        return Some(r);
    }
    let start = payload_cwd
        .map(PathBuf::from)
        .unwrap_or_else(|| cwd.to_path_buf());
    state_file::find_root_from(&start, Some(8))
}

/// The guards shared by the hooks: a root, and `.harness-active` in it.
fn active_root(p: &Payload<'_>, cwd: &Path) -> Option<StateRoot> {
    find_hook_root(p.str("cwd"), cwd).filter(StateRoot::is_active)
}

fn load(root: &StateRoot) -> Result<TasksFile, String> {
    state_file::load(root).map_err(|e| e.to_string())
}

/// `completed=1 failed=2 ... total=N` (status keys sorted) plus ` next=<id>: <title>`.
fn summary(file: &TasksFile) -> String {
    let counts: BTreeMap<String, usize> = eligibility::status_counts(file);
    let mut s: Vec<String> = counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let blocked = eligibility::blocked_ids(file).len();
    if blocked > 0 {
        s.push(format!("blocked={blocked}"));
    }
    s.push(format!("total={}", file.tasks.len()));
    let mut out = format!("HARNESS: {}", s.join(" "));
    if let Some(t) = eligibility::next_task(file) {
        out.push_str(&format!(" next={}: {}", t.id, t.title));
    }
    out
}

fn reset_counter(root: &StateRoot) {
    let _ = state_file::remove_if_exists(&root.path(STOP_COUNTER));
}

fn read_counter(root: &StateRoot) -> (u32, usize) {
    let text = std::fs::read_to_string(root.path(STOP_COUNTER)).unwrap_or_default();
    let mut parts = text.trim().split(',');
    let blocks = parts
        .next()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let completed = parts
        .next()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    (blocks, completed)
}

/// Lines of the current session that finished a task (Completed, or a task-scoped ERROR).
fn tasks_done_this_session(root: &StateRoot, session: u64) -> usize {
    let tag = format!("[SESSION-{session}]");
    read_tail_bytes(&root.progress_path(), 200 * 1024)
        .lines()
        .filter(|l| l.contains(&tag))
        .filter(|l| {
            l.contains(" Completed [")
                || l.split_once(" ERROR [").is_some_and(|(_, rest)| {
                    let first = rest.split(']').next().unwrap_or("");
                    crate::model::Category::parse(first).is_none()
                })
        })
        .count()
}

fn stop(p: &Payload<'_>, cwd: &Path) -> HookOutcome {
    let Some(root) = active_root(p, cwd) else {
        return HookOutcome::allow();
    };
    let file = match load(&root) {
        Ok(f) => f,
        Err(e) if p.stop_hook_active() => {
            return HookOutcome::allow_warn(format!(
                "HARNESS WARN: harness-tasks.json unreadable ({e}); allowing stop to avoid a loop"
            ));
        }
        Err(e) => {
            return HookOutcome::block(format!(
                "HARNESS: harness-tasks.json is corrupt: {e}\nRestore it from harness-tasks.json.bak if that is valid; otherwise stop and ask a human (CONFIG)."
            ));
        }
    };
    let cfg = &file.session_config;
    if cfg.max_sessions().is_some_and(|m| file.session_count >= m) {
        reset_counter(&root);
        return HookOutcome::allow();
    }
    if !file.concurrent()
        && let Some(cap) = cfg.max_tasks()
        && file.session_count > 0
        && root.progress_path().is_file()
        && tasks_done_this_session(&root, file.session_count) as u64 >= cap
    {
        reset_counter(&root);
        return HookOutcome::allow();
    }
    let worker = env("HARNESS_WORKER_ID");
    let pending = eligibility::pending_in_order(&file);
    let retries = eligibility::retries_in_order(&file);
    let mine_in_progress = file
        .tasks
        .iter()
        .filter(|t| t.is(status::IN_PROGRESS))
        .filter(|t| match (&worker, file.concurrent()) {
            (Some(w), true) => t
                .claimed_by
                .as_deref()
                .is_none_or(|c| c.is_empty() || c == w),
            _ => true,
        })
        .count();
    if pending.is_empty() && retries.is_empty() && mine_in_progress == 0 {
        reset_counter(&root);
        let anyone_working = file.tasks.iter().any(|t| t.is(status::IN_PROGRESS));
        if !anyone_working {
            let _ = state_file::write_atomic(&root.path(REFLECT_MARKER), b"");
            let _ = root.deactivate();
        }
        return HookOutcome::allow();
    }
    let completed = file
        .tasks
        .iter()
        .filter(|t| t.is(status::COMPLETED))
        .count();
    let (mut blocks, last_completed) = read_counter(&root);
    if completed > last_completed {
        blocks = 0;
    }
    blocks += 1;
    let _ = state_file::write_atomic(
        &root.path(STOP_COUNTER),
        format!("{blocks},{completed}").as_bytes(),
    );
    if p.stop_hook_active() && blocks > MAX_CONSECUTIVE_BLOCKS {
        reset_counter(&root);
        return HookOutcome::allow_warn(format!(
            "HARNESS WARN: {blocks} consecutive stop blocks without progress; allowing stop"
        ));
    }
    HookOutcome::block(format!(
        "HARNESS: the stop conditions are not met; keep working on the task list.\n{}\nFollow the selection algorithm and the full cycle: Claim -> Checkpoint -> Validate -> Record outcome -> STATS (if needed) -> Continue.",
        summary(&file)
    ))
}

fn last_log_line(root: &StateRoot) -> Option<String> {
    let text = read_tail_bytes(&root.progress_path(), 8 * 1024);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let lines = &lines[lines.len().saturating_sub(200)..];
    let line = lines
        .iter()
        .rev()
        .find(|l| l.contains(" STATS "))
        .or_else(|| lines.last())?;
    Some(if line.chars().count() > 220 {
        format!("{}...", line.chars().take(217).collect::<String>())
    } else {
        line.to_string()
    })
}

fn session_start(p: &Payload<'_>, cwd: &Path) -> HookOutcome {
    let Some(root) = active_root(p, cwd) else {
        return HookOutcome::allow();
    };
    let context = match load(&root) {
        Err(e) => format!("HARNESS: CONFIG error: cannot read harness-tasks.json: {e}"),
        Ok(file) => {
            let mut c = summary(&file);
            if let Some(l) = last_log_line(&root) {
                c.push_str(&format!("\nHARNESS: last_log={l}"));
            }
            c
        }
    };
    HookOutcome {
        stdout: json!({"hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }})
        .to_string(),
        ..HookOutcome::default()
    }
}

fn teammate_idle(p: &Payload<'_>, cwd: &Path) -> HookOutcome {
    let Some(root) = active_root(p, cwd) else {
        return HookOutcome::allow();
    };
    let Ok(file) = load(&root) else {
        return HookOutcome::allow();
    };
    let ids: Vec<String> = [
        env("HARNESS_WORKER_ID"),
        p.str("teammate_name").map(str::to_string),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(t) = file.tasks.iter().find(|t| {
        t.is(status::IN_PROGRESS) && t.claimed_by.as_ref().is_some_and(|c| ids.contains(c))
    }) {
        return HookOutcome::exit2(format!(
            "HARNESS: you still own in_progress task {}: {}. Finish it (validate and record the outcome) before going idle.",
            t.id, t.title
        ));
    }
    if eligibility::next_task(&file).is_some() {
        return HookOutcome::exit2(format!(
            "{}\nHARNESS: tasks are waiting; claim the next one instead of going idle.",
            summary(&file)
        ));
    }
    HookOutcome::allow()
}

fn subagent_stop(p: &Payload<'_>, cwd: &Path) -> HookOutcome {
    if p.stop_hook_active() {
        return HookOutcome::allow();
    }
    let Some(root) = active_root(p, cwd) else {
        return HookOutcome::allow();
    };
    let Ok(file) = load(&root) else {
        return HookOutcome::allow();
    };
    let ids: Vec<String> = [
        env("HARNESS_WORKER_ID"),
        p.str("agent_id").map(str::to_string),
        p.str("teammate_name").map(str::to_string),
    ]
    .into_iter()
    .flatten()
    .collect();
    let in_progress: Vec<_> = file
        .tasks
        .iter()
        .filter(|t| t.is(status::IN_PROGRESS))
        .collect();
    if file.concurrent() && !in_progress.is_empty() && ids.is_empty() {
        return HookOutcome::block(
            "HARNESS: tasks are in_progress in concurrent mode but this subagent has no worker identity (set HARNESS_WORKER_ID); finish or release its claim before stopping.".into(),
        );
    }
    let owned = in_progress
        .iter()
        .find(|t| !file.concurrent() || t.claimed_by.as_ref().is_some_and(|c| ids.contains(c)));
    match owned {
        Some(t) => HookOutcome::block(format!(
            "HARNESS: task {} ({}) is still in_progress; validate it and record the outcome before stopping.",
            t.id, t.title
        )),
        None => HookOutcome::allow(),
    }
}

/// First user message of a Claude Code transcript (JSONL), `message.content` or `content`.
fn first_user_message(transcript: &str) -> String {
    let text = std::fs::read_to_string(transcript).unwrap_or_default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_user = v.get("type").and_then(Value::as_str) == Some("user")
            || v.pointer("/message/role").and_then(Value::as_str) == Some("user")
            || v.get("role").and_then(Value::as_str) == Some("user");
        if !is_user {
            continue;
        }
        let content = v.pointer("/message/content").or_else(|| v.get("content"));
        let s = match content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => continue,
        };
        if !s.trim().is_empty() {
            return s.chars().take(2000).collect();
        }
    }
    String::new()
}

fn self_reflect(p: &Payload<'_>, cwd: &Path) -> HookOutcome {
    let Some(session) = p.str("session_id") else {
        return HookOutcome::allow();
    };
    let Some(root) = find_hook_root(p.str("cwd"), cwd) else {
        return HookOutcome::allow();
    };
    if !root.path(REFLECT_MARKER).exists() {
        return HookOutcome::allow();
    }
    let max: i64 = env("REFLECT_MAX_ITERATIONS")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(5);
    if max <= 0 {
        return HookOutcome::allow();
    }
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let counter = std::env::temp_dir().join(format!("claude-reflect-{safe}"));
    let count: i64 = std::fs::read_to_string(&counter)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    if count >= max {
        let _ = state_file::remove_if_exists(&root.path(REFLECT_MARKER));
        let _ = state_file::remove_if_exists(&counter);
        return HookOutcome::allow();
    }
    let _ = state_file::write_atomic(&counter, (count + 1).to_string().as_bytes());
    let request = p
        .str("transcript_path")
        .map(first_user_message)
        .unwrap_or_default();
    HookOutcome::block(format!(
        "[Self-Reflect] {}/{max}\nOriginal request:\n{request}\n\nBefore finishing, check:\n1. Every requirement of the request is met.\n2. Edge cases and error handling are covered.\n3. Code quality: readability, performance, security.\n4. Tests and documentation are updated.\n5. The changes are consistent with each other and the codebase.\nIf everything is done, summarize the result; otherwise keep fixing.",
        count + 1
    ))
}
