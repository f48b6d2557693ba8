//! Running hook commands the way Claude Code does: `sh -c <command>` with
//! the event JSON on stdin; exit 0 + JSON on stdout is a decision, exit 2
//! blocks with stderr as the reason, anything else is a non-blocking error.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::settings::HookCommand;

/// What one hook command answered.
#[derive(Debug)]
pub enum HookResult {
    /// Exit 0; stdout parsed as JSON when not empty.
    Ok(Option<Value>),
    /// Exit 2: blocking, with stderr.
    Block(String),
    /// Any other failure (non-blocking in Claude Code).
    Error(String),
}

/// Runs one hook command with `input` on stdin.
pub fn run(hook: &HookCommand, input: &Value, cwd: &str) -> HookResult {
    let timeout = Duration::from_secs(hook.timeout.unwrap_or(60));
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(&hook.command)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return HookResult::Error(format!("spawn failed: {e}")),
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input must not fail the run.
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    let read_all = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = read_all(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = read_all(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return HookResult::Error("timed out".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return HookResult::Error(format!("wait failed: {e}")),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status.code() {
        Some(0) if stdout.trim().is_empty() => HookResult::Ok(None),
        Some(0) => match serde_json::from_str(stdout.trim()) {
            Ok(v) => HookResult::Ok(Some(v)),
            Err(_) => HookResult::Ok(None), // plain text output is not a decision
        },
        Some(2) => HookResult::Block(stderr.trim().to_owned()),
        code => HookResult::Error(format!("exit {code:?}: {}", stderr.trim())),
    }
}

/// The PreToolUse verdict over all matching hooks (`deny` wins).
#[derive(Debug, PartialEq, Eq)]
pub enum ToolVerdict {
    Allow,
    Deny(String),
    Ask(String),
}

/// Folds PreToolUse hook results: deny > ask > allow.
pub fn tool_verdict(results: &[HookResult]) -> ToolVerdict {
    let mut verdict = ToolVerdict::Allow;
    for r in results {
        let (decision, reason) = match r {
            HookResult::Block(reason) => ("deny", reason.clone()),
            HookResult::Ok(Some(v)) => {
                let specific = &v["hookSpecificOutput"];
                let decision = specific["permissionDecision"]
                    .as_str()
                    .or_else(|| (v["decision"].as_str() == Some("block")).then_some("deny"))
                    .unwrap_or("allow");
                let reason = specific["permissionDecisionReason"]
                    .as_str()
                    .or_else(|| v["reason"].as_str())
                    .unwrap_or_default();
                (decision, reason.to_owned())
            }
            _ => continue,
        };
        match decision {
            "deny" => return ToolVerdict::Deny(reason),
            "ask" => verdict = ToolVerdict::Ask(reason),
            _ => {}
        }
    }
    verdict
}

/// A Stop hook's block, if any (`{"decision":"block","reason":…}` or exit 2).
pub fn stop_block(results: &[HookResult]) -> Option<String> {
    results.iter().find_map(|r| match r {
        HookResult::Block(reason) => Some(reason.clone()),
        HookResult::Ok(Some(v)) if v["decision"].as_str() == Some("block") => {
            Some(v["reason"].as_str().unwrap_or_default().to_owned())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hook(cmd: &str) -> HookCommand {
        HookCommand {
            kind: "command".into(),
            command: cmd.into(),
            timeout: Some(5),
        }
    }

    #[test]
    fn runs_with_stdin_and_parses_decisions() {
        let deny = r#"cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}'"#;
        let r = run(&hook(deny), &json!({"tool_name":"AskUserQuestion"}), "/");
        assert_eq!(tool_verdict(&[r]), ToolVerdict::Deny("nope".into()));
        let echo = run(&hook("cat"), &json!({"a":1}), "/");
        assert!(matches!(echo, HookResult::Ok(Some(v)) if v["a"] == 1));
        let block = run(&hook("echo why >&2; exit 2"), &json!({}), "/");
        assert!(matches!(&block, HookResult::Block(r) if r == "why"));
        assert_eq!(stop_block(&[block]), Some("why".into()));
        let err = run(&hook("exit 1"), &json!({}), "/");
        assert!(matches!(err, HookResult::Error(_)));
        assert_eq!(tool_verdict(&[err]), ToolVerdict::Allow);
        let silent = run(&hook("true"), &json!({}), "/");
        assert_eq!(tool_verdict(&[silent]), ToolVerdict::Allow);
    }

    #[test]
    fn timeouts_do_not_hang() {
        let h = HookCommand {
            timeout: Some(1),
            ..hook("sleep 30")
        };
        let started = Instant::now();
        assert!(matches!(run(&h, &json!({}), "/"), HookResult::Error(_)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
