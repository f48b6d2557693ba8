//! `harness-agent-double`: a small, deterministic stand-in for an
//! interactive agent CLI (Claude Code / Codex shaped) for tests. See the
//! crate README for flags and the script language.

mod hooks;
mod mcp;
mod script;
mod settings;
mod tty;

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::hooks::{HookResult, ToolVerdict};
use crate::script::Action;
use crate::settings::{Endpoint, McpConfig, Settings};
use crate::tty::{Input, LineReader, RawMode};

#[derive(Default, Debug)]
struct Args {
    settings: Option<String>,
    mcp_configs: Vec<String>,
    resume: Option<String>,
    resume_last: bool,
    continue_: bool,
    session_id: Option<String>,
    script: Option<String>,
    system_prompt: Option<String>,
    model: Option<String>,
    configs: Vec<String>,
    prompt: Option<String>,
    no_paste: bool,
    ignored: Vec<String>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args::default();
    let mut positional = Vec::new();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--settings" => a.settings = Some(value("--settings")?),
            "--mcp-config" => a.mcp_configs.push(value("--mcp-config")?),
            "--resume" | "-r" => a.resume = Some(value("--resume")?),
            "--continue" => a.continue_ = true,
            "--session-id" => a.session_id = Some(value("--session-id")?),
            "--script" => a.script = Some(value("--script")?),
            "--append-system-prompt" | "--system-prompt" => {
                a.system_prompt = Some(value("--append-system-prompt")?);
            }
            // Claude Code reads the text from a file (how Harness passes it).
            "--append-system-prompt-file" | "--system-prompt-file" => {
                let path = value("--append-system-prompt-file")?;
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read the system prompt file {path}: {e}"))?;
                a.system_prompt = Some(text);
            }
            "--model" | "-m" => a.model = Some(value("--model")?),
            // Codex: `-c key=value`; Claude: `-c` = --continue.
            "-c" => match it.next() {
                Some(v) if v.contains('=') => a.configs.push(v),
                Some(v) => {
                    a.continue_ = true;
                    positional.push(v);
                }
                None => a.continue_ = true,
            },
            "--no-bracketed-paste" => a.no_paste = true,
            "--last" => a.resume_last = true,
            s if s.starts_with('-') => a.ignored.push(s.to_owned()),
            _ => positional.push(arg),
        }
    }
    // Codex: `resume <id>` / `resume --last`.
    if positional.first().map(String::as_str) == Some("resume") {
        positional.remove(0);
        if !a.resume_last && !positional.is_empty() {
            a.resume = Some(positional.remove(0));
        }
    }
    if !positional.is_empty() {
        a.prompt = Some(mentioned_file(positional.join(" ")));
    }
    Ok(a)
}

/// Like Claude Code: a prompt that is only a file mention (`@"<path>"` or
/// `@<path>`) is that file's text.
fn mentioned_file(prompt: String) -> String {
    let path = prompt.strip_prefix('@').map(|p| {
        p.strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .unwrap_or(p)
    });
    match path.and_then(|p| std::fs::read_to_string(p).ok()) {
        Some(text) => text.trim_end_matches('\n').to_string(),
        None => prompt,
    }
}

struct Double {
    args: Args,
    session_id: String,
    cwd: String,
    settings: Settings,
    endpoint: Option<Endpoint>,
    mcp: Option<mcp::McpClient>,
    reader: LineReader<std::io::Stdin>,
    out: std::io::Stdout,
    paste: bool,
    raw: Option<RawMode>,
    /// Stop hooks run so far (the turn id).
    turns: u32,
}

fn new_session_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let h = format!("{:032x}", nanos ^ (u128::from(std::process::id()) << 64));
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

impl Double {
    fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    fn prompt(&mut self) {
        let _ = write!(self.out, "> ");
        let _ = self.out.flush();
    }

    fn transcript_path(&self) -> String {
        std::env::temp_dir()
            .join(format!("harness-double-{}.jsonl", self.session_id))
            .display()
            .to_string()
    }

    fn run_hooks(&mut self, event: &str, tool: Option<&str>, input: &Value) -> Vec<HookResult> {
        let commands = self.settings.commands(event, tool);
        let mut results = Vec::new();
        for hook in &commands {
            let r = hooks::run(hook, input, &self.cwd);
            if let HookResult::Error(e) = &r {
                self.say(&format!("HOOK ERROR {event}: {e}"));
            }
            results.push(r);
        }
        results
    }

    fn base_event(&self, event: &str) -> Value {
        json!({
            "session_id": self.session_id,
            "transcript_path": self.transcript_path(),
            "cwd": self.cwd,
            "permission_mode": "bypassPermissions",
            "hook_event_name": event,
        })
    }

    fn mcp_call(&mut self, tool: &str, arguments: Value) -> Result<(bool, String), String> {
        if self.mcp.is_none() {
            let endpoint = self.endpoint.clone().ok_or("no MCP server configured")?;
            self.mcp = Some(mcp::McpClient::new(endpoint));
        }
        match self.mcp.as_mut() {
            Some(client) => client.call_tool(tool, arguments),
            None => Err("no MCP client".into()),
        }
    }

    fn read_input(&mut self) -> Option<String> {
        match self.reader.read_line(&mut self.out) {
            Input::Line(line) => {
                log_input(&line);
                Some(line)
            }
            Input::Interrupt => self.exit(130),
            Input::Eof => None,
        }
    }

    fn exit(&mut self, code: i32) -> ! {
        if self.paste {
            let _ = write!(self.out, "\x1b[?2004l");
        }
        let _ = self.out.flush();
        // process::exit skips destructors: restore the terminal first.
        drop(self.raw.take());
        std::process::exit(code)
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Say(text) => self.say(&text),
            Action::Sleep(ms) => std::thread::sleep(std::time::Duration::from_millis(ms)),
            Action::AskHuman(question) => {
                match self.mcp_call("ask_human", json!({"question": question})) {
                    Ok((false, text)) => self.say(&format!("ASKED: {text}")),
                    Ok((true, text)) => self.say(&format!("ASK ERROR: {text}")),
                    Err(e) => self.say(&format!("MCP ERROR: {e}")),
                }
            }
            Action::NotifyHuman(message) => {
                match self.mcp_call("notify_human", json!({"message": message})) {
                    Ok((false, text)) => self.say(&format!("NOTIFIED: {text}")),
                    Ok((true, text)) => self.say(&format!("NOTIFY ERROR: {text}")),
                    Err(e) => self.say(&format!("MCP ERROR: {e}")),
                }
            }
            Action::Tool { name, input } => {
                let tool_input = match input.as_deref().map(serde_json::from_str::<Value>) {
                    Some(Ok(v)) => v,
                    Some(Err(_)) | None => json!({"questions": [{
                        "question": "Which option?", "header": "Choice", "multiSelect": false,
                        "options": [{"label": "A", "description": "first"}, {"label": "B", "description": "second"}]
                    }]}),
                };
                let mut event = self.base_event("PreToolUse");
                event["tool_name"] = json!(name);
                event["tool_input"] = tool_input;
                event["tool_use_id"] = json!(format!("toolu_double_{}", std::process::id()));
                let results = self.run_hooks("PreToolUse", Some(&name), &event);
                match hooks::tool_verdict(&results) {
                    ToolVerdict::Allow => self.say(&format!("TOOL ALLOWED: {name}")),
                    ToolVerdict::Deny(reason) => self.say(&format!("TOOL DENIED: {reason}")),
                    ToolVerdict::Ask(reason) => self.say(&format!("TOOL ASK: {reason}")),
                }
            }
            Action::WaitReply => {
                self.prompt();
                match self.read_input() {
                    Some(reply) => self.say(&format!("GOT REPLY: {reply}")),
                    None => self.exit(0),
                }
            }
            Action::StopHook(reply) => {
                let mut event = self.base_event("Stop");
                event["stop_hook_active"] = json!(false);
                event["last_assistant_message"] = json!(reply.as_deref().unwrap_or("done"));
                // Codex-shaped: a stable id per turn of this session.
                self.turns += 1;
                event["turn_id"] = json!(format!("{}-turn-{}", self.session_id, self.turns));
                let results = self.run_hooks("Stop", None, &event);
                match hooks::stop_block(&results) {
                    Some(reason) => self.say(&format!("STOP BLOCKED: {reason}")),
                    None => self.say("STOP OK"),
                }
            }
            Action::SessionStart => {
                let mut event = self.base_event("SessionStart");
                let source = if self.args.resume.is_some() {
                    "resume"
                } else {
                    "startup"
                };
                event["source"] = json!(source);
                let results = self.run_hooks("SessionStart", None, &event);
                let ran = results.len();
                self.say(&format!("SESSION START HOOKS: {ran}"));
            }
            Action::PrintEnv(name) => match std::env::var(&name) {
                Ok(v) => self.say(&format!("ENV {name}={v}")),
                Err(_) => self.say(&format!("ENV {name} unset")),
            },
            Action::BracketedPaste(on) => {
                self.paste = on;
                let _ = write!(
                    self.out,
                    "{}",
                    if on { "\x1b[?2004h" } else { "\x1b[?2004l" }
                );
                let _ = self.out.flush();
            }
            Action::Exit(code) => self.exit(code),
            Action::Mcp { tool, arguments } => {
                let args = serde_json::from_str(&arguments).unwrap_or_else(|_| json!({}));
                match self.mcp_call(&tool, args) {
                    Ok((false, text)) => self.say(&format!("MCP OK: {text}")),
                    Ok((true, text)) => self.say(&format!("MCP FAILED: {text}")),
                    Err(e) => self.say(&format!("MCP ERROR: {e}")),
                }
            }
        }
    }
}

fn load_script(args: &Args) -> Result<Vec<Action>, String> {
    if let Some(path) = args
        .script
        .clone()
        .or_else(|| std::env::var("HARNESS_DOUBLE_SCRIPT_FILE").ok())
    {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        return script::parse(&text);
    }
    match std::env::var("HARNESS_DOUBLE_SCRIPT") {
        Ok(text) => script::parse(&text),
        Err(_) => Ok(Vec::new()),
    }
}

/// Appends every submitted input as a JSON string line to
/// `$HARNESS_DOUBLE_INPUT_LOG` (tests count what reached the agent).
fn log_input(line: &str) {
    let Ok(path) = std::env::var("HARNESS_DOUBLE_INPUT_LOG") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{}", json!(line));
    }
}

/// Appends a JSON line describing this invocation to `$HARNESS_DOUBLE_RECORD`.
fn record_invocation(args: &Args, session_id: &str, cwd: &str) {
    let Ok(path) = std::env::var("HARNESS_DOUBLE_RECORD") else {
        return;
    };
    let env: serde_json::Map<String, Value> = std::env::vars()
        .filter(|(k, _)| k.starts_with("TOWER_") || k.starts_with("HARNESS_") || k == "TERM")
        .map(|(k, v)| (k, json!(v)))
        .collect();
    let line = json!({
        "argv": std::env::args().collect::<Vec<_>>(),
        "cwd": cwd,
        "session_id": session_id,
        "resume": args.resume,
        "continue": args.continue_,
        "prompt": args.prompt,
        "system_prompt": args.system_prompt,
        "env": env,
    });
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{line}");
    }
}

fn main() {
    let fail = |msg: String| -> ! {
        eprintln!("harness-agent-double: {msg}");
        std::process::exit(2)
    };
    let args = parse_args(std::env::args().skip(1)).unwrap_or_else(|e| fail(e));
    let settings = match args
        .settings
        .clone()
        .or_else(|| std::env::var("HARNESS_DOUBLE_SETTINGS").ok())
    {
        Some(v) => settings::load::<Settings>(&v).unwrap_or_else(|e| fail(e)),
        None => Settings::default(),
    }
    .with_managed(std::path::Path::new("/etc/claude-code/managed-settings.d"));
    let mut endpoint = None;
    for c in &args.mcp_configs {
        let config = settings::load::<McpConfig>(c).unwrap_or_else(|e| fail(e));
        endpoint = endpoint.or_else(|| config.endpoint());
    }
    let endpoint = endpoint.or_else(|| {
        let url = std::env::var("TOWER_MCP_URL").ok()?;
        let headers = std::env::var("TOWER_API_TOKEN")
            .map(|t| vec![("Authorization".to_owned(), format!("Bearer {t}"))])
            .unwrap_or_default();
        Some(Endpoint { url, headers })
    });
    let actions = load_script(&args).unwrap_or_else(|e| fail(e));
    let session_id = args
        .resume
        .clone()
        .or_else(|| args.session_id.clone())
        .or_else(|| std::env::var("HARNESS_DOUBLE_SESSION_ID").ok())
        .unwrap_or_else(new_session_id);
    let cwd = std::env::current_dir().map_or_else(|_| ".".into(), |p| p.display().to_string());
    record_invocation(&args, &session_id, &cwd);

    let raw = RawMode::enter();
    let paste = !args.no_paste;
    let mut d = Double {
        args,
        session_id,
        cwd,
        settings,
        endpoint,
        mcp: None,
        reader: LineReader::new(std::io::stdin()),
        out: std::io::stdout(),
        paste,
        raw: Some(raw),
        turns: 0,
    };
    if d.paste {
        let _ = write!(d.out, "\x1b[?2004h");
    }
    let banner = format!(
        "harness-agent-double {} session {}",
        env!("CARGO_PKG_VERSION"),
        d.session_id
    );
    d.say(&banner);
    if let Some(id) = d.args.resume.clone() {
        d.say(&format!("RESUMED {id}"));
    } else if d.args.continue_ || d.args.resume_last {
        d.say("CONTINUED");
    }
    if let Some(sp) = d.args.system_prompt.clone() {
        let first = sp.lines().next().unwrap_or_default().to_owned();
        d.say(&format!("SYSTEM PROMPT: {first}"));
    }
    if let Some(model) = d.args.model.clone() {
        d.say(&format!("MODEL: {model}"));
    }
    for c in d.args.configs.clone() {
        let key = c.split('=').next().unwrap_or_default().to_owned();
        d.say(&format!("CONFIG: {key}"));
    }
    if let Some(prompt) = d.args.prompt.clone() {
        d.say(&format!("GOT PROMPT: {prompt}"));
    }
    for action in actions {
        d.act(action);
    }
    // Interactive: every line is input; `!<action>` runs a script action.
    loop {
        d.prompt();
        let Some(line) = d.read_input() else {
            d.exit(0)
        };
        let trimmed = line.trim();
        if trimmed == "/exit" {
            d.exit(0);
        } else if let Some(action) = trimmed.strip_prefix('!') {
            match script::parse_line(action.trim()) {
                Ok(a) => d.act(a),
                Err(e) => d.say(&format!("BAD ACTION: {e}")),
            }
        } else {
            d.say(&format!("GOT INPUT: {line}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Args {
        parse_args(v.iter().map(|s| (*s).to_owned())).unwrap()
    }

    #[test]
    fn claude_shaped_args() {
        let a = args(&[
            "--dangerously-skip-permissions",
            "--append-system-prompt",
            "Be brief",
            "--model",
            "m1",
            "--settings",
            "/s.json",
            "--mcp-config",
            "/m.json",
            "--resume",
            "abc",
        ]);
        assert_eq!(a.resume.as_deref(), Some("abc"));
        assert_eq!(a.system_prompt.as_deref(), Some("Be brief"));
        assert_eq!(a.settings.as_deref(), Some("/s.json"));
        assert_eq!(a.mcp_configs, ["/m.json"]);
        assert_eq!(a.ignored, ["--dangerously-skip-permissions"]);
        assert!(args(&["--continue"]).continue_);
        assert_eq!(args(&["do", "it"]).prompt.as_deref(), Some("do it"));
    }

    #[test]
    fn codex_shaped_args() {
        let a = args(&[
            "--dangerously-bypass-approvals-and-sandbox",
            "-c",
            "developer_instructions=\"x\"",
            "resume",
            "s-1",
        ]);
        assert_eq!(a.resume.as_deref(), Some("s-1"));
        assert_eq!(a.configs.len(), 1);
        let a = args(&["resume", "--last"]);
        assert!(a.resume_last && a.resume.is_none());
    }
}
