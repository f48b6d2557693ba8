//! Interactive programs and what is typed into them: the approval gate's
//! rules for a shell the agent keeps open.
//!
//! Codex can start a command on a terminal (`exec_command` with `tty:
//! true`) and type into it later (`write_stdin {session_id, chars}`). What
//! the real Codex 0.171.0 tells its PreToolUse hook (checked with the real
//! CLI, `server/tests/codex_interactive.rs`):
//!
//! * `exec_command` arrives as tool `Bash` with input `{"command": <cmd>}`
//!   only: `tty`, `workdir` and the rest are not passed, so the hook cannot
//!   tell a terminal session from a plain run;
//! * `write_stdin` never reaches a hook, PreToolUse or PostToolUse, whatever
//!   the matcher (`.*`, `write_stdin`): the characters typed run unchecked.
//!
//! So the gate holds the door instead of the keystrokes: a shell command
//! that starts a program which reads commands from its input (a shell, a
//! language prompt, a database shell, an editor, a login or remote shell)
//! ASKS before it runs, on every task the gate applies to (unattended or
//! derived), unless a rule of the policy names the call itself. Once a
//! person approved it, what the agent types into it is not checked; the
//! ungated-run watch (`crate::ungated`) still reads the session file
//! afterwards. A program that runs commands some other way (`xargs sh -c`,
//! `awk '{system($0)}'`, a script the agent wrote) is beyond this rule.
//!
//! Should a CLI hook `write_stdin` (or a tool like it), its characters are
//! checked as the command they are: [`evaluate`] judges them as an
//! `exec_command` of that text.

use serde_json::{Value, json};

use super::{
    policy::{
        Action, Effective, Matched, Rule, SHELL_TOOLS, Source, Verdict, command_of, default_rules,
    },
    shell::{self, Input, NoScripts},
};

/// Codex's tool that types into a running session.
pub const STDIN_TOOL: &str = "write_stdin";

/// The policy's verdict on a call with the interactive rules applied: the
/// characters of a [`STDIN_TOOL`] call judged as the command they are, and
/// a shell command that opens an interactive program asked first when no
/// rule named it. The one entry point of the hook's check and of the
/// offline decision.
pub fn evaluate(effective: &Effective, tool: &str, input: &Value, cwd: Option<&str>) -> Verdict {
    if tool == STDIN_TOOL {
        let chars = input.get("chars").and_then(Value::as_str).unwrap_or("");
        return evaluate(effective, "exec_command", &json!({"cmd": chars}), cwd);
    }
    let verdict = effective.evaluate(tool, input, cwd);
    // A rule that names the call decides; the gate's own `ask` for what it
    // cannot read (a shell reading its input, say) gives way to this rule's
    // `ask`, which says why.
    let named = verdict
        .matched
        .as_ref()
        .is_some_and(|m| m.source != Source::Gate);
    if named || !SHELL_TOOLS.contains(&tool) {
        return verdict;
    }
    match interactive_program(&command_of(input)) {
        Some(program) => Verdict {
            action: Action::Ask,
            matched: Some(Matched {
                source: Source::Builtin,
                // After the listed built-in rules: a rule of its own.
                index: default_rules().len(),
                rule: Rule {
                    tool: tool.to_string(),
                    pattern: Some(program.clone()),
                    action: Action::Ask,
                    note: Some(format!(
                        "starts an interactive program ({program}): what is typed into it later \
                         is not checked by Harness"
                    )),
                },
                why: Some(format!(
                    "starts `{program}`, which reads commands from its input"
                )),
            }),
        },
        None => verdict,
    }
}

/// The first program of `command` that reads commands from its input — a
/// shell without a script or `-c`, a language prompt, a database shell, an
/// editor or pager, a login or remote shell — with its input left to the
/// terminal (not a `<` file, here-document or here-string of its own). A
/// pipe into it counts as its input being open: what it runs is not in the
/// command. `None` when there is none. The command is read by the gate's
/// shell parser ([`shell::analyze`]): every simple command wherever it is
/// nested (lists, pipelines, `if`/`while`/`for`, substitutions,
/// `bash -c '…'`), wrappers (`sudo`, `env`, `exec`, `nohup`, `timeout 5`,
/// `uv run`, `VAR=x`, …) looked through, and a path's directory dropped
/// (`/bin/bash` is `bash`).
pub fn interactive_program(command: &str) -> Option<String> {
    // A terminal turns a carriage return into a newline (text typed into
    // an interactive shell): read it as one, as the policy does.
    let analysis = shell::analyze(&command.replace('\r', "\n"), None, &NoScripts);
    analysis.units.into_iter().find_map(|unit| {
        let (name, args) = unit.argv.split_first()?;
        let name = name.rsplit('/').next().unwrap_or(name);
        reads_commands(name, args, unit.stdin == Input::Redirected).then(|| name.to_string())
    })
}

const SHELLS: [&str; 12] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "yash", "busybox",
];
/// Prompts that read code from their input unless given a script or code.
const INTERPRETERS: [&str; 14] = [
    "node",
    "nodejs",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "julia",
    "R",
    "osascript",
    "deno",
    "bun",
];
/// Always interactive (whatever their arguments): REPLs, editors, pagers,
/// terminal multiplexers, login shells — each can run a command typed into it.
const ALWAYS: [&str; 23] = [
    "ipython", "irb", "pry", "ghci", "erl", "iex", "scala", "sbcl", "guile", "vi", "vim", "nvim",
    "ex", "ed", "emacs", "nano", "less", "more", "tmux", "screen", "su", "login", "gdb",
];

fn is_python(name: &str) -> bool {
    name == "python"
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.') && !v.is_empty())
        || name.starts_with("pypy")
}

/// Whether `name args…` reads commands from its (unredirected) input.
fn reads_commands(name: &str, args: &[String], stdin_redirected: bool) -> bool {
    if ALWAYS.contains(&name) {
        return true;
    }
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    let forced = has(&["-i", "--interactive"]);
    if SHELLS.contains(&name) {
        return forced || (!stdin_redirected && shell_reads_input(name, args));
    }
    if is_python(name) {
        if forced {
            return true;
        }
        if has(&["-c", "-m"]) {
            return false;
        }
        let operand = first_operand(args, &["-W", "-X", "-Q"]);
        return !stdin_redirected && operand.is_none_or(|o| o == "-");
    }
    if INTERPRETERS.contains(&name) {
        if forced || has(&["-a", "repl"]) {
            return true;
        }
        let code = [
            "-e", "-E", "-p", "--eval", "--print", "-r", "-x", "run", "-c",
        ];
        if args
            .iter()
            .any(|a| code.contains(&a.as_str()) || a.starts_with("--eval="))
        {
            return false;
        }
        return !stdin_redirected && first_operand(args, &[]).is_none_or(|o| o == "-");
    }
    match name {
        "psql" => !stdin_redirected && !has(&["-c", "--command", "-f", "--file", "-l", "--list"]),
        "mysql" | "mariadb" => !stdin_redirected && !has(&["-e", "--execute"]),
        // `sqlite3 db` reads SQL (and `.shell`); `sqlite3 db "SQL"` does not.
        "sqlite3" => !stdin_redirected && args.iter().filter(|a| !a.starts_with('-')).count() < 2,
        // `ssh host` without a remote command: a remote shell.
        "ssh" => ssh_has_no_command(args),
        // `script` records a new shell unless given `-c`.
        "script" => !has(&["-c", "--command"]),
        // Left by the shell module's unwrapping only when it runs nothing
        // more: `sudo -s` / `sudo -i` open a root shell (`sudo -v` does not).
        "sudo" | "doas" => has(&["-s", "-i", "--shell", "--login"]),
        _ => false,
    }
}

/// A shell reads its input when given neither `-c` nor a script, or with `-s`.
fn shell_reads_input(name: &str, args: &[String]) -> bool {
    let args = if name == "busybox" {
        match args.split_first() {
            Some((applet, rest)) if SHELLS.contains(&applet.as_str()) => rest,
            _ => return false,
        }
    } else {
        args
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            return args.get(i + 1).is_none();
        }
        if let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) {
            if a.starts_with("--") {
                // `--rcfile f`, `--init-file f` take a value.
                i += if matches!(a.as_str(), "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            if flags.contains('s') {
                return true;
            }
            if flags.contains('c') {
                return false;
            }
            // `-o opt` / `-O opt` take a value.
            i += if flags.ends_with('o') || flags.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        // A script operand.
        return false;
    }
    true
}

/// The first word that is not an option (`value_opts` take the next word).
fn first_operand<'a>(args: &'a [String], value_opts: &[&str]) -> Option<&'a str> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if w == "--" {
            return args.get(i + 1).map(String::as_str);
        }
        if !w.starts_with('-') || w == "-" {
            return Some(w);
        }
        i += if value_opts.contains(&w.as_str()) {
            2
        } else {
            1
        };
    }
    None
}

fn ssh_has_no_command(args: &[String]) -> bool {
    const VALUE: &str = "bcDEeFIiJLlmOopQRSWw";
    let mut i = 0;
    let mut host_seen = false;
    while let Some(a) = args.get(i) {
        if !host_seen && a.len() > 1 && a.starts_with('-') {
            let flag = a.chars().nth(1).unwrap_or(' ');
            // `-p 22` (value next) vs `-p22` (value attached).
            i += if a.len() == 2 && VALUE.contains(flag) {
                2
            } else {
                1
            };
            continue;
        }
        if host_seen {
            return false;
        }
        host_seen = true;
        i += 1;
    }
    host_seen
}

#[cfg(test)]
#[path = "interactive_tests.rs"]
mod tests;
