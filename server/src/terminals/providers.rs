//! Command lines per provider (docs/tower-workbench.md §4.5), with the MCP
//! endpoint, the agent token and this binary's hooks passed per spawn —
//! the user's global configuration is never edited.
//!
//! Secrets off the command line: any local user can read
//! a process's arguments (`ps`, `/proc/<pid>/cmdline`). For Claude Code the
//! system directive goes in a 0600 file (`--append-system-prompt-file`) and
//! the prompt too, mentioned as `@"<file>"` (Claude Code reads a mentioned
//! file into the first message; checked with the real CLI in
//! `tests/real_cli.rs`). Codex 0.171 takes developer instructions and the
//! prompt only as arguments (`-c developer_instructions=…`, `[PROMPT]`; a
//! profile file would have to live in the user's `$CODEX_HOME`), so for
//! Codex they stay visible to other local users (docs/security.md).

use std::{
    os::unix::fs::DirBuilderExt,
    path::{Path, PathBuf},
};

use harness_core::model::{AgentConfig, Provider};
use serde_json::json;

/// How the agent is (re)started (also as a node-to-node call carries it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StartMode {
    /// A fresh session, optionally with an initial prompt.
    Fresh { prompt: Option<String> },
    /// Resume a provider session by id. There is deliberately no "continue
    /// the most recent session": that is the directory's latest session,
    /// possibly another task's (`terminals::resume` finds the id instead).
    Resume { session_id: String },
}

/// Which Codex hooks run without the user's review (docs/agent-clis.md,
/// "Codex hook trust"). Codex runs a non-managed hook only once its exact definition was
/// trusted in `/hooks` (stored in `~/.codex/config.toml`); trust cannot be
/// granted per spawn (Codex 0.171 ignores `hooks.state` in `-c` overrides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CodexHookTrust {
    /// `--dangerously-bypass-hook-trust`: Harness's hooks (the escalation
    /// gate, Stop, SessionStart) run at once — and so does every other
    /// enabled hook of the user's or the project's, reviewed or not.
    #[default]
    Bypass,
    /// Codex's own review: Harness's hooks run once the user trusted them in
    /// `/hooks` (their definitions are stable per `harness` binary path);
    /// until then the gate and the turn-end report do not run.
    Review,
}

impl CodexHookTrust {
    /// `HARNESS_CODEX_HOOK_TRUST`: `bypass` (default) or `review`.
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::trim) {
            None | Some("") | Some("bypass") => Ok(Self::Bypass),
            Some("review") => Ok(Self::Review),
            Some(other) => Err(format!(
                "HARNESS_CODEX_HOOK_TRUST must be \"bypass\" or \"review\", not {other:?}"
            )),
        }
    }
}

pub struct SpawnInputs<'a> {
    pub agent: &'a AgentConfig,
    pub mode: &'a StartMode,
    pub directive: &'a str,
    /// Per-execution directory for generated settings files.
    pub run_dir: &'a Path,
    /// Path of the private `harness` copy (for hook commands).
    pub harness_bin: &'a Path,
    pub mcp_url: &'a str,
    pub codex_hook_trust: CodexHookTrust,
    /// The agent's `/etc` layer (isolated agents): the hooks are written
    /// there as the CLI's managed settings, which the user's and the
    /// project's settings cannot switch off. `None`: the hooks go on the
    /// command line (`--settings` / `-c`).
    pub managed_etc: Option<&'a Path>,
}

/// One hook Harness installs: the CLIs' event name, the `harness hook`
/// subcommand it runs, its timeout (seconds) and Claude Code's matcher (Codex
/// runs these on every tool or session source). Every provider's settings,
/// command line and managed files are made from this one list.
pub struct HookSpec {
    pub event: &'static str,
    pub subcommand: &'static str,
    pub timeout: u32,
    pub claude_matcher: Option<&'static str>,
    /// Installed for Codex too (Codex has no Notification event).
    pub codex: bool,
}

/// Harness's hooks. PreToolUse on every tool: the ladder's gate (the blocked
/// tools) and, on unattended or derived tasks, the approval policy; the
/// timeout covers the hook's wait for a person.
pub const HOOKS: &[HookSpec] = &[
    HookSpec {
        event: "PreToolUse",
        subcommand: "pre-tool",
        timeout: crate::hooks::PRE_TOOL_TIMEOUT_SECS,
        claude_matcher: None,
        codex: true,
    },
    HookSpec {
        event: "Stop",
        subcommand: "stop",
        timeout: 10,
        claude_matcher: None,
        codex: true,
    },
    HookSpec {
        event: "SessionStart",
        subcommand: "session-start",
        // It waits up to 20 s for the agent's MCP tool listing (`mcp_ready`).
        timeout: 30,
        claude_matcher: Some("startup|resume|clear|compact"),
        codex: true,
    },
    // Each call that ran, for the ungated-run watch.
    HookSpec {
        event: "PostToolUse",
        subcommand: "post-tool",
        timeout: 10,
        claude_matcher: None,
        codex: true,
    },
    // Claude Code's own prompts (a permission prompt, an MCP server's
    // question, waiting at its prompt) for the agent watcher: waiting, not
    // stalled (`agent_state::notification`).
    HookSpec {
        event: "Notification",
        subcommand: "notification",
        timeout: 10,
        claude_matcher: None,
        codex: false,
    },
];

/// Where Claude Code reads managed settings drop-ins (Linux), relative to `/etc`.
pub const CLAUDE_MANAGED_FILE: &str = "claude-code/managed-settings.d/harness.json";
/// Where Codex reads its administrators' requirements, relative to `/etc`.
pub const CODEX_REQUIREMENTS_FILE: &str = "codex/requirements.toml";

fn hook_command(bin: &Path, event: &str) -> String {
    format!(
        "'{}' hook {event}",
        bin.display().to_string().replace('\'', "'\\''")
    )
}

/// Claude Code's `hooks` object for [`HOOKS`].
pub fn claude_hooks(bin: &Path) -> serde_json::Value {
    let mut hooks = serde_json::Map::new();
    for h in HOOKS {
        let mut e = json!({"hooks": [{"type": "command",
            "command": hook_command(bin, h.subcommand), "timeout": h.timeout}]});
        if let Some(m) = h.claude_matcher {
            e["matcher"] = json!(m);
        }
        hooks.insert(h.event.to_string(), json!([e]));
    }
    serde_json::Value::Object(hooks)
}

/// Claude Code settings (`--settings <file>`): our hooks, alongside (never
/// replacing) the user's own settings files. `skipDangerousModePermissionPrompt`
/// answers the one-time "Bypass Permissions mode" warning for this spawn only
/// (without it a first-time user's agent waits at "No, exit").
pub fn claude_settings(bin: &Path) -> serde_json::Value {
    json!({"skipDangerousModePermissionPrompt": true, "hooks": claude_hooks(bin)})
}

/// Claude Code's managed settings drop-in ([`CLAUDE_MANAGED_FILE`]): our
/// hooks. A `disableAllHooks` in the user's, the project's or the local
/// settings leaves managed hooks running (checked with the real CLI in
/// `tests/real_cli_gate_files.rs`).
pub fn claude_managed_settings(bin: &Path) -> serde_json::Value {
    json!({"hooks": claude_hooks(bin)})
}

/// Claude Code MCP config (`--mcp-config <file>`): the token comes from the
/// agent's environment, never written to disk.
pub fn claude_mcp_config(mcp_url: &str) -> serde_json::Value {
    json!({"mcpServers": {"harness": {
        "type": "http",
        "url": mcp_url,
        "headers": {"Authorization": "Bearer ${TOWER_API_TOKEN}"},
    }}})
}

/// Codex hooks as `-c` config overrides (TOML values), so `~/.codex` is
/// never edited: PreToolUse on every tool (the ladder and the approval policy),
/// Stop, SessionStart.
pub fn codex_hook_overrides(bin: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for h in HOOKS.iter().filter(|h| h.codex) {
        out.push("-c".to_string());
        out.push(format!(
            "hooks.{}=[{{hooks=[{{type=\"command\",command={},timeout={}}}]}}]",
            h.event,
            toml_string(&hook_command(bin, h.subcommand)),
            h.timeout
        ));
    }
    out
}

/// A JSON string literal is a valid TOML basic string.
fn toml_string(text: &str) -> String {
    json!(text).to_string()
}

/// Codex's requirements file ([`CODEX_REQUIREMENTS_FILE`]) with our hooks:
/// managed hooks, which run untrusted-free and which neither `[features]`
/// nor `[hooks.state]` in the user's or the project's `config.toml` switch
/// off (checked with the real CLI in `tests/real_cli_gate_files.rs`). The
/// host's own requirements, when readable, come first.
pub fn codex_requirements(bin: &Path, host: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(host) = host.filter(|h| !h.trim().is_empty()) {
        out.push_str(host);
        out.push_str("\n\n");
    }
    out.push_str(
        "# Harness's hooks (managed: user and project settings cannot switch them off).\n",
    );
    for h in HOOKS.iter().filter(|h| h.codex) {
        out.push_str(&format!(
            "[[hooks.{event}]]\n[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = {}\ntimeout = {}\n",
            toml_string(&hook_command(bin, h.subcommand)),
            h.timeout,
            event = h.event,
        ));
    }
    out
}

/// Writes the agent's `/etc` layer: its CLI's managed settings with our
/// hooks (a fresh directory each spawn; files 0644 so the CLI can read them
/// inside the namespace, where only the agent's own user exists).
fn write_managed(dir: &Path, provider: Provider, bin: &Path) -> std::io::Result<()> {
    let (rel, text) = match provider {
        Provider::Claude => (
            CLAUDE_MANAGED_FILE,
            serde_json::to_string_pretty(&claude_managed_settings(bin))
                .map_err(std::io::Error::other)?,
        ),
        Provider::Codex => {
            let host =
                std::fs::read_to_string(Path::new("/etc").join(CODEX_REQUIREMENTS_FILE)).ok();
            (
                CODEX_REQUIREMENTS_FILE,
                codex_requirements(bin, host.as_deref()),
            )
        }
        Provider::Command => return Ok(()),
    };
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let file = dir.join(rel);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&file, text)
}

fn write_json(path: &Path, value: &serde_json::Value) -> std::io::Result<PathBuf> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    write_private(path, &text)
}

/// Writes `text` to a new 0600 file (private before the first byte; an
/// older file of that name is replaced, never written through).
pub(crate) fn write_private(path: &Path, text: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    Ok(path.to_path_buf())
}

/// Longest prompt line Claude Code's file read keeps whole (it cuts lines
/// at 2000 characters); a prompt with a longer line goes on the command line.
const MENTION_MAX_LINE: usize = 1900;

/// The argument that gives Claude Code the prompt without putting it on the
/// command line: `@"<file>"` of a 0600 file in the run directory. `None`
/// when the mention could not carry it whole (a path with a quote, a line
/// Claude Code would cut); the caller then passes the prompt itself.
fn claude_prompt_mention(run_dir: &Path, prompt: &str) -> std::io::Result<Option<String>> {
    let path = run_dir.join("prompt.md");
    let shown = path.display().to_string();
    if shown.contains(['"', '\n', '\r'])
        || prompt.lines().any(|l| l.chars().count() > MENTION_MAX_LINE)
    {
        tracing::warn!(
            "the prompt is passed on the agent's command line (a path with a quote or a very \
             long line): other local users can read it in ps"
        );
        return Ok(None);
    }
    write_private(&path, prompt)?;
    Ok(Some(format!("@\"{shown}\"")))
}

/// The argv to spawn. Writes the per-spawn settings files it references.
pub fn argv(inputs: &SpawnInputs<'_>) -> std::io::Result<Vec<String>> {
    let SpawnInputs {
        agent,
        mode,
        directive,
        run_dir,
        harness_bin,
        mcp_url,
        codex_hook_trust,
        managed_etc,
    } = inputs;
    if let Some(dir) = managed_etc {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(run_dir)?;
        write_managed(dir, agent.provider, harness_bin)?;
    }
    match agent.provider {
        Provider::Command => {
            let mut argv = agent.command.clone().unwrap_or_default();
            if argv.is_empty() {
                return Err(std::io::Error::other("provider \"command\" has no command"));
            }
            if let StartMode::Fresh { prompt: Some(p) } = mode
                && !p.trim().is_empty()
            {
                argv.push(p.clone());
            }
            Ok(argv)
        }
        Provider::Claude => {
            std::fs::create_dir_all(run_dir)?;
            let mut settings = claude_settings(harness_bin);
            if managed_etc.is_some() {
                // Managed: in the flag settings too they would run twice.
                if let Some(obj) = settings.as_object_mut() {
                    obj.remove("hooks");
                }
            }
            let settings = write_json(&run_dir.join("claude-settings.json"), &settings)?;
            let mcp = write_json(
                &run_dir.join("claude-mcp.json"),
                &claude_mcp_config(mcp_url),
            )?;
            let mut argv = agent
                .command
                .clone()
                .unwrap_or_else(|| vec!["claude".to_string()]);
            argv.push("--dangerously-skip-permissions".into());
            if !directive.is_empty() {
                let file = write_private(&run_dir.join("directive.md"), directive)?;
                argv.extend([
                    "--append-system-prompt-file".into(),
                    file.display().to_string(),
                ]);
            }
            argv.extend(["--settings".into(), settings.display().to_string()]);
            argv.extend(["--mcp-config".into(), mcp.display().to_string()]);
            match mode {
                // `--mcp-config <configs...>` takes several values: without
                // `--` the prompt would be read as a second config file.
                StartMode::Fresh { prompt: Some(p) } if !p.trim().is_empty() => {
                    let prompt = claude_prompt_mention(run_dir, p)?.unwrap_or_else(|| p.clone());
                    argv.extend(["--".into(), prompt])
                }
                StartMode::Fresh { .. } => {}
                StartMode::Resume { session_id } => {
                    argv.extend(["--resume".into(), session_id.clone()])
                }
            }
            Ok(argv)
        }
        Provider::Codex => {
            let mut argv = agent
                .command
                .clone()
                .unwrap_or_else(|| vec!["codex".to_string()]);
            argv.push("--dangerously-bypass-approvals-and-sandbox".into());
            if *codex_hook_trust == CodexHookTrust::Bypass {
                argv.push("--dangerously-bypass-hook-trust".into());
            }
            // The "Update available" screen would hold an unattended agent.
            argv.extend(["-c".into(), "check_for_update_on_startup=false".into()]);
            if !directive.is_empty() {
                argv.extend([
                    "-c".into(),
                    format!("developer_instructions={}", json!(directive)),
                ]);
            }
            argv.extend(["-c".into(), "features.hooks=true".into()]);
            // Managed hooks are in the requirements file; as `-c` hooks too
            // they would run twice.
            if managed_etc.is_none() {
                argv.extend(codex_hook_overrides(harness_bin));
            }
            argv.extend([
                "-c".into(),
                format!("mcp_servers.harness.url={}", json!(mcp_url)),
            ]);
            argv.extend([
                "-c".into(),
                "mcp_servers.harness.bearer_token_env_var=\"TOWER_API_TOKEN\"".into(),
            ]);
            match mode {
                // `--`: a prompt is never read as an option or a subcommand.
                StartMode::Fresh { prompt: Some(p) } if !p.trim().is_empty() => {
                    argv.extend(["--".into(), p.clone()])
                }
                StartMode::Fresh { .. } => {}
                StartMode::Resume { session_id } => {
                    argv.extend(["resume".into(), session_id.clone()])
                }
            }
            Ok(argv)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(provider: Provider) -> AgentConfig {
        AgentConfig {
            provider,
            command: None,
            cwd: None,
            env: Default::default(),
            restart_on_interrupt: false,
            recovery: None,
        }
    }

    #[test]
    fn claude_modes_and_settings_files() {
        let dir = tempfile::tempdir().unwrap();
        let bin = Path::new("/opt/harness");
        let a = agent(Provider::Claude);
        let build = |mode: StartMode| {
            argv(&SpawnInputs {
                agent: &a,
                mode: &mode,
                directive: "D",
                run_dir: dir.path(),
                harness_bin: bin,
                mcp_url: "http://127.0.0.1:1/mcp",
                codex_hook_trust: CodexHookTrust::Bypass,
                managed_etc: None,
            })
            .unwrap()
        };
        let fresh = build(StartMode::Fresh {
            prompt: Some("Task: x".into()),
        });
        assert_eq!(fresh[0], "claude");
        let directive_file = dir.path().join("directive.md");
        assert_eq!(
            &fresh[1..4],
            [
                "--dangerously-skip-permissions",
                "--append-system-prompt-file",
                &directive_file.display().to_string(),
            ]
        );
        let prompt_file = dir.path().join("prompt.md");
        assert_eq!(
            &fresh[fresh.len() - 2..],
            ["--".to_string(), format!("@\"{}\"", prompt_file.display())],
            "options end before the prompt (--mcp-config is variadic)"
        );
        // neither the directive nor the prompt is an
        // argument (other local users read arguments in ps); their files are
        // private.
        assert!(
            !fresh.iter().any(|a| a == "D" || a.contains("Task: x")),
            "{fresh:?}"
        );
        for (file, text) in [(&directive_file, "D"), (&prompt_file, "Task: x")] {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::read_to_string(file).unwrap(), text);
            let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", file.display());
        }
        // A line Claude Code's read would cut goes on the command line whole.
        let long = "x".repeat(3000);
        let long_prompt = build(StartMode::Fresh {
            prompt: Some(long.clone()),
        });
        assert_eq!(long_prompt.last(), Some(&long));
        let no_prompt = build(StartMode::Fresh { prompt: None });
        assert!(!no_prompt.contains(&"--".to_string()));
        let resume = build(StartMode::Resume {
            session_id: "s1".into(),
        });
        assert_eq!(&resume[resume.len() - 2..], ["--resume", "s1"]);
        assert!(
            resume.contains(&"--append-system-prompt-file".to_string()),
            "directive applied on resume (D3)"
        );
        let settings: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("claude-settings.json")).unwrap(),
        )
        .unwrap();
        assert!(
            settings["hooks"]["PreToolUse"][0].get("matcher").is_none(),
            "every tool: the ladder's gate and the approval policy"
        );
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"],
            60
        );
        assert_eq!(settings["skipDangerousModePermissionPrompt"], true);
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "'/opt/harness' hook pre-tool"
        );
        let mcp = std::fs::read_to_string(dir.path().join("claude-mcp.json")).unwrap();
        assert!(
            mcp.contains("${TOWER_API_TOKEN}") && !mcp.contains("hxa_"),
            "no token on disk"
        );
    }

    #[test]
    fn codex_modes() {
        let dir = tempfile::tempdir().unwrap();
        let a = agent(Provider::Codex);
        let build_with = |mode: StartMode, trust: CodexHookTrust| {
            argv(&SpawnInputs {
                agent: &a,
                mode: &mode,
                directive: "D",
                run_dir: dir.path(),
                harness_bin: Path::new("/h"),
                mcp_url: "http://x/mcp",
                codex_hook_trust: trust,
                managed_etc: None,
            })
            .unwrap()
        };
        let build = |mode: StartMode| build_with(mode, CodexHookTrust::Bypass);
        let fresh = build(StartMode::Fresh { prompt: None });
        let prompted = build(StartMode::Fresh {
            prompt: Some("--help me".into()),
        });
        assert_eq!(&prompted[prompted.len() - 2..], ["--", "--help me"]);
        assert!(fresh.contains(&"--dangerously-bypass-hook-trust".to_string()));
        assert!(fresh.contains(&"check_for_update_on_startup=false".to_string()));
        let reviewed = build_with(StartMode::Fresh { prompt: None }, CodexHookTrust::Review);
        assert!(!reviewed.contains(&"--dangerously-bypass-hook-trust".to_string()));
        assert_eq!(CodexHookTrust::parse(None), Ok(CodexHookTrust::Bypass));
        assert_eq!(
            CodexHookTrust::parse(Some("review")),
            Ok(CodexHookTrust::Review)
        );
        assert!(CodexHookTrust::parse(Some("all")).is_err());
        assert!(fresh.contains(&"developer_instructions=\"D\"".to_string()));
        let pre = fresh
            .iter()
            .find(|a| a.starts_with("hooks.PreToolUse="))
            .unwrap();
        assert_eq!(
            pre,
            r#"hooks.PreToolUse=[{hooks=[{type="command",command="'/h' hook pre-tool",timeout=60}]}]"#
        );
        assert_eq!(
            &build(StartMode::Resume {
                session_id: "t".into()
            })[fresh.len()..],
            ["resume", "t"]
        );
    }

    #[test]
    fn command_provider_needs_argv() {
        let dir = tempfile::tempdir().unwrap();
        let a = agent(Provider::Command);
        assert!(
            argv(&SpawnInputs {
                agent: &a,
                mode: &StartMode::Fresh { prompt: None },
                directive: "",
                run_dir: dir.path(),
                harness_bin: Path::new("/h"),
                mcp_url: "",
                codex_hook_trust: CodexHookTrust::Bypass,
                managed_etc: None,
            })
            .is_err()
        );
    }
}
