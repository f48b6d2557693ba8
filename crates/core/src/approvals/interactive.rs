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

use super::policy::{
    Action, Effective, Matched, Rule, SHELL_TOOLS, Source, Verdict, command_of, default_rules,
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
    if verdict.matched.is_some() || !SHELL_TOOLS.contains(&tool) {
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
                why: Some(format!("starts `{program}`, which reads commands from its input")),
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
/// command. `None` when there is none. Words are split the way a shell
/// splits them (quotes, `\`), at `;`, `&`, `|`, newlines, parentheses,
/// braces and command substitutions; wrappers (`sudo`, `env`, `exec`,
/// `nohup`, `timeout 5`, `nice -n 5`, `VAR=x`, …) are looked through, and a
/// path's directory is dropped (`/bin/bash` is `bash`).
pub fn interactive_program(command: &str) -> Option<String> {
    simple_commands(command).into_iter().find_map(|c| {
        let words = unwrap(&c.words);
        let (name, args) = words.split_first()?;
        let name = name.rsplit('/').next().unwrap_or(name);
        reads_commands(name, args, c.stdin_redirected).then(|| name.to_string())
    })
}

/// One simple command: its words and whether it redirects its own input.
#[derive(Debug, Default)]
struct Simple {
    words: Vec<String>,
    stdin_redirected: bool,
}

/// The simple commands of `command`, in order (a small, quote-aware split;
/// anything it cannot read errs towards more commands, not fewer).
fn simple_commands(command: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    let mut cur = Simple::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let flush_word = |cur: &mut Simple, word: &mut String, in_word: &mut bool| {
        if *in_word {
            cur.words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    in_word = true;
                    word.push(n);
                }
            }
            '<' => {
                // `<file`, `<<EOF`, `<<<word`, `0<file`: this command's input.
                if word == "0" {
                    word.clear();
                    in_word = false;
                }
                flush_word(&mut cur, &mut word, &mut in_word);
                cur.stdin_redirected = true;
                while chars.peek() == Some(&'<') {
                    chars.next();
                }
                // The target word is not an argument.
                skip_blank(&mut chars);
                skip_word(&mut chars);
            }
            '>' => {
                flush_word(&mut cur, &mut word, &mut in_word);
                while matches!(chars.peek(), Some('>' | '&' | '|')) {
                    chars.next();
                }
                skip_blank(&mut chars);
                skip_word(&mut chars);
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' | '`' => {
                flush_word(&mut cur, &mut word, &mut in_word);
                out.push(std::mem::take(&mut cur));
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                flush_word(&mut cur, &mut word, &mut in_word);
                out.push(std::mem::take(&mut cur));
            }
            c if c.is_whitespace() => flush_word(&mut cur, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    flush_word(&mut cur, &mut word, &mut in_word);
    out.push(cur);
    out.retain(|c| !c.words.is_empty());
    out
}

fn skip_blank(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
        chars.next();
    }
}

fn skip_word(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.peek() {
        if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>') {
            break;
        }
        chars.next();
    }
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The words as they run: leading assignments and wrappers dropped.
fn unwrap(words: &[String]) -> &[String] {
    let mut rest = words;
    loop {
        let Some((first, tail)) = rest.split_first() else {
            return rest;
        };
        let name = first.rsplit('/').next().unwrap_or(first);
        rest = match name {
            _ if is_assignment(first) => tail,
            "command" | "exec" | "nohup" | "time" | "setsid" | "builtin" => skip_opts(tail, &[]),
            "env" => {
                let mut t = skip_opts(tail, &["-u", "-C", "-S"]);
                while t.first().is_some_and(|w| is_assignment(w)) {
                    t = &t[1..];
                }
                t
            }
            "sudo" | "doas" => {
                // `sudo -s` / `sudo -i` open a shell themselves.
                if tail
                    .iter()
                    .take_while(|w| w.starts_with('-'))
                    .any(|w| w == "-s" || w == "-i" || w == "--shell" || w == "--login")
                {
                    return rest;
                }
                skip_opts(
                    tail,
                    &["-u", "-g", "-U", "-C", "-p", "-h", "-r", "-t", "-D"],
                )
            }
            "nice" | "ionice" | "stdbuf" | "chrt" | "taskset" => {
                skip_opts(tail, &["-n", "-c", "-o", "-e", "-i", "-p"])
            }
            "timeout" => {
                let t = skip_opts(tail, &["-s", "-k", "--signal", "--kill-after"]);
                t.get(1..).unwrap_or_default()
            }
            _ => return rest,
        };
    }
}

/// `words` past the leading options (`value_opts` take the next word).
fn skip_opts<'a>(words: &'a [String], value_opts: &[&str]) -> &'a [String] {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if w == "--" {
            return words.get(i + 1..).unwrap_or_default();
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        i += if value_opts.contains(&w.as_str()) {
            2
        } else {
            1
        };
    }
    words.get(i..).unwrap_or_default()
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
        // Left by [`unwrap`] only as `sudo -s` / `sudo -i`: a root shell.
        "sudo" | "doas" => true,
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
    skip_opts(args, value_opts).first().map(String::as_str)
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
