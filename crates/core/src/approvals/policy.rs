//! The approval policy (issue 31, point 1): rules on a tool call's name and
//! input, each `allow`, `ask` or `deny`, evaluated here and nowhere else.
//!
//! **First match wins.** The rules are tried in order — the project's own
//! rules first, then the global rules (the stored global policy, else the
//! built-in [`default_rules`]) — and the first rule whose tool and pattern
//! match decides. No rule matches → `allow` (today's behaviour of an agent
//! running with its CLI's permission prompts off). First-match was chosen
//! over "most specific" because a person can read it top to bottom and
//! predict the answer; "most specific" between `git push*` and `*--force*`
//! has no obvious order. A project that wants to allow what the global
//! rules ask puts an `allow` rule of its own first.
//!
//! What a rule's `pattern` is matched against (the call's *subjects*):
//! * shell tools (`Bash`; Codex `shell`, `exec_command`, `local_shell`):
//!   the command, and each part of it split at `&&`, `||`, `;`, `|` and
//!   newlines (so `cd x && git push` matches `git push*`), trimmed, and each
//!   part also as it runs ([`normalized`]: `sudo`, `env`, `VAR=value`,
//!   `command` dropped, `git -C d push` → `git push`, `rm -r -f` →
//!   `rm -rf`), with the text glob, ignoring ASCII case (`*drop table*` =
//!   `*DROP TABLE*`);
//! * file tools (`Edit`, `Write`, `MultiEdit`, `NotebookEdit`; Codex
//!   `apply_patch`): every file path, relative to the task's working
//!   directory when it lies inside it, with the path glob; a pattern that
//!   does not start with `/` or `**` matches at any directory boundary
//!   (`migrations/**` also matches `sub/migrations/x`), so a rule errs
//!   towards asking;
//! * any other tool (MCP tools, `mcp__<server>__<tool>`): the call's input
//!   as compact JSON, with the text glob. A rule without a pattern matches
//!   every call of its tools.
//!
//! A rule's `tool` is a text glob on the tool name; `|` separates
//! alternatives (`Edit|Write|MultiEdit`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::glob;
use crate::{CoreError, CoreResult};

/// What a rule does with a matching call.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// One rule.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// Text glob on the tool name; `|` separates alternatives.
    pub tool: String,
    /// Glob on the call's subjects (see the module docs); absent = any call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    pub action: Action,
    /// Shown to the person and the agent (why the rule exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Rule {
    fn new(tool: &str, pattern: &str, action: Action, note: &str) -> Self {
        Self {
            tool: tool.into(),
            pattern: Some(pattern.into()),
            action,
            note: Some(note.into()),
        }
    }
}

/// A stored policy: the global one, or a project's override.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    pub rules: Vec<Rule>,
}

pub const MAX_RULES: usize = 200;
pub const MAX_TOOL_CHARS: usize = 200;
pub const MAX_PATTERN_CHARS: usize = 1000;
pub const MAX_NOTE_CHARS: usize = 500;

/// Tools whose subject is a shell command.
pub const SHELL_TOOLS: [&str; 4] = ["Bash", "shell", "exec_command", "local_shell"];
/// Tools whose subjects are file paths.
pub const FILE_TOOLS: [&str; 5] = ["Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch"];
const FILE_TOOL_GLOB: &str = "Edit|Write|MultiEdit|NotebookEdit|apply_patch";
const SHELL_TOOL_GLOB: &str = "Bash|shell|exec_command|local_shell";

/// The built-in global rules, used while no global policy is stored.
pub fn default_rules() -> Vec<Rule> {
    use Action::Ask;
    let sh = SHELL_TOOL_GLOB;
    vec![
        Rule::new(
            sh,
            "git push*",
            Ask,
            "publishes commits (a force push rewrites history)",
        ),
        Rule::new(sh, "git reset --hard*", Ask, "discards uncommitted work"),
        Rule::new(sh, "git clean -*f*", Ask, "deletes untracked files"),
        Rule::new(sh, "rm -rf *", Ask, "deletes a directory tree"),
        Rule::new(sh, "rm -fr *", Ask, "deletes a directory tree"),
        Rule::new(sh, "*DROP TABLE*", Ask, "drops a database table"),
        Rule::new(sh, "*DROP DATABASE*", Ask, "drops a database"),
        Rule::new(sh, "*TRUNCATE TABLE*", Ask, "empties a database table"),
        Rule::new(FILE_TOOL_GLOB, "**/.env*", Ask, "secrets and environment"),
        Rule::new(
            FILE_TOOL_GLOB,
            "**/.git/**",
            Ask,
            "the repository's own metadata",
        ),
    ]
}

/// The rules every stored policy satisfies; errors name the field and the
/// rule's index (`rules[2]: …`).
pub fn validate(policy: &Policy) -> CoreResult<()> {
    if policy.rules.len() > MAX_RULES {
        return Err(CoreError::invalid(
            "rules",
            format!("at most {MAX_RULES} rules"),
        ));
    }
    for (i, r) in policy.rules.iter().enumerate() {
        let tool = r.tool.trim();
        if tool.is_empty() || tool.split('|').any(|alt| alt.trim().is_empty()) {
            return Err(CoreError::invalid(
                "tool",
                format!("rules[{i}]: tool must name a tool (a glob; `|` between alternatives)"),
            ));
        }
        if tool.chars().count() > MAX_TOOL_CHARS {
            return Err(CoreError::invalid(
                "tool",
                format!("rules[{i}]: tool longer than {MAX_TOOL_CHARS} characters"),
            ));
        }
        if let Some(p) = &r.pattern {
            if p.trim().is_empty() {
                return Err(CoreError::invalid(
                    "pattern",
                    format!("rules[{i}]: pattern is empty (leave it out to match every call)"),
                ));
            }
            if p.chars().count() > MAX_PATTERN_CHARS {
                return Err(CoreError::invalid(
                    "pattern",
                    format!("rules[{i}]: pattern longer than {MAX_PATTERN_CHARS} characters"),
                ));
            }
        }
        if r.note
            .as_ref()
            .is_some_and(|n| n.chars().count() > MAX_NOTE_CHARS)
        {
            return Err(CoreError::invalid(
                "note",
                format!("rules[{i}]: note longer than {MAX_NOTE_CHARS} characters"),
            ));
        }
    }
    Ok(())
}

/// Where the deciding rule came from.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Project,
    Global,
    Builtin,
}

/// The rule that decided a call, with its place.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Matched {
    pub source: Source,
    /// The rule's index in its list.
    pub index: usize,
    pub rule: Rule,
}

/// The decision for one call: `None` = no rule matched (allow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub action: Action,
    pub matched: Option<Matched>,
}

/// The policy in force for a task: the project's rules, then the global
/// ones (`None`: the built-in defaults).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effective {
    pub project: Vec<Rule>,
    pub global: Option<Vec<Rule>>,
}

impl Effective {
    /// Evaluate one call (first match wins; see the module docs).
    pub fn evaluate(&self, tool: &str, input: &Value, cwd: Option<&str>) -> Verdict {
        let builtin;
        let (global, global_source) = match &self.global {
            Some(rules) => (rules, Source::Global),
            None => {
                builtin = default_rules();
                (&builtin, Source::Builtin)
            }
        };
        let subjects = Subjects::of(tool, input, cwd);
        let lists = [(&self.project, Source::Project), (global, global_source)];
        for (rules, source) in lists {
            for (index, rule) in rules.iter().enumerate() {
                if rule_matches(rule, tool, &subjects) {
                    return Verdict {
                        action: rule.action,
                        matched: Some(Matched {
                            source,
                            index,
                            rule: rule.clone(),
                        }),
                    };
                }
            }
        }
        Verdict {
            action: Action::Allow,
            matched: None,
        }
    }
}

/// What a call's patterns are matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subjects {
    /// The whole command and its parts.
    Commands(Vec<String>),
    /// File paths (relative to the working directory where possible).
    Paths(Vec<String>),
    /// Compact JSON of the input.
    Input(String),
}

impl Subjects {
    pub fn of(tool: &str, input: &Value, cwd: Option<&str>) -> Self {
        if SHELL_TOOLS.contains(&tool) {
            return Self::Commands(command_parts(&command_of(input)));
        }
        if FILE_TOOLS.contains(&tool) {
            return Self::Paths(
                paths_of(input)
                    .into_iter()
                    .map(|p| relative(&p, cwd))
                    .collect(),
            );
        }
        Self::Input(input.to_string())
    }
}

/// The command of a shell tool's input: `command` as a string, or an argv
/// array joined with spaces (Codex's `shell`), else `cmd`.
pub fn command_of(input: &Value) -> String {
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            // `bash -lc "<script>"`: the script is the command.
            match words.as_slice() {
                [sh, flag, script]
                    if sh.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') =>
                {
                    (*script).to_string()
                }
                _ => words.join(" "),
            }
        }
        _ => String::new(),
    }
}

fn command_parts(command: &str) -> Vec<String> {
    let mut out = vec![command.trim().to_string()];
    let mut part = String::new();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        let split = match c {
            ';' | '\n' | '|' => {
                if c == '|' && chars.peek() == Some(&'|') {
                    chars.next();
                }
                true
            }
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                true
            }
            _ => false,
        };
        if split {
            out.push(std::mem::take(&mut part).trim().to_string());
        } else {
            part.push(c);
        }
    }
    out.push(part.trim().to_string());
    out.retain(|p| !p.is_empty());
    // Each part also as it runs: `sudo rm -r -f x` is matched as `rm -rf x`.
    let normal: Vec<String> = out.iter().skip(1).map(|p| normalized(p)).collect();
    out.extend(normal);
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Options of `sudo` / `doas` / `env` that take a value as the next word.
const WRAPPER_VALUE_OPTS: [&str; 12] = [
    "-u", "-g", "-U", "-C", "-p", "-h", "-r", "-t", "-D", "-R", "-S", "-P",
];
/// `git` options before its subcommand that take a value as the next word.
const GIT_VALUE_OPTS: [&str; 5] = ["-C", "-c", "--git-dir", "--work-tree", "--namespace"];

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// A command part as it runs, for matching (issue 31): leading `sudo`,
/// `doas`, `env` (and their options), `VAR=value` assignments, `command`,
/// `exec`, `nohup`, `time` dropped; `git`'s global options before the
/// subcommand dropped (`git -C d push` → `git push`); an `rm` that removes
/// recursively and forcibly written as `rm -rf` (`-Rf`, `-r -f`,
/// `--recursive --force`, `-rfv`). Words are split on whitespace (quotes
/// are not parsed: a rule errs towards asking).
pub fn normalized(part: &str) -> String {
    let words: Vec<&str> = part.split_whitespace().collect();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        match *w {
            "sudo" | "doas" | "env" => {
                i += 1;
                while let Some(opt) = words.get(i) {
                    if WRAPPER_VALUE_OPTS.contains(opt) {
                        i += 2;
                    } else if opt.starts_with('-') || is_assignment(opt) {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            "command" | "exec" | "nohup" | "time" => i += 1,
            w if is_assignment(w) => i += 1,
            _ => break,
        }
    }
    let rest = words.get(i..).unwrap_or_default();
    match rest.first() {
        Some(&"git") => {
            let mut j = 1;
            while let Some(opt) = rest.get(j) {
                if GIT_VALUE_OPTS.contains(opt) {
                    j += 2;
                } else if opt.starts_with('-') {
                    j += 1;
                } else {
                    break;
                }
            }
            let tail = rest.get(j..).unwrap_or_default();
            std::iter::once("git")
                .chain(tail.iter().copied())
                .collect::<Vec<_>>()
                .join(" ")
        }
        Some(&"rm") => rm_normalized(&rest[1..]),
        _ => rest.join(" "),
    }
}

fn rm_normalized(args: &[&str]) -> String {
    let (mut recursive, mut force) = (false, false);
    let mut operands = Vec::new();
    let mut options_done = false;
    for a in args {
        if options_done || !a.starts_with('-') || *a == "-" {
            operands.push(*a);
        } else if *a == "--" {
            options_done = true;
        } else if let Some(long) = a.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else {
            recursive |= a.contains('r') || a.contains('R');
            force |= a.contains('f');
        }
    }
    let flags = match (recursive, force) {
        (true, true) => Some("-rf"),
        (true, false) => Some("-r"),
        (false, true) => Some("-f"),
        (false, false) => None,
    };
    std::iter::once("rm")
        .chain(flags)
        .chain(operands)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The file paths of a file tool's input: `file_path`, `notebook_path`,
/// `path`, and the files an `apply_patch` text names.
pub fn paths_of(input: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["file_path", "notebook_path", "path"] {
        if let Some(p) = input.get(key).and_then(Value::as_str) {
            out.push(p.to_string());
        }
    }
    let mut texts = Vec::new();
    collect_strings(input, &mut texts);
    for text in texts {
        for line in text.lines() {
            for prefix in [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ] {
                if let Some(p) = line.strip_prefix(prefix) {
                    out.push(p.trim().to_string());
                }
            }
        }
    }
    out.retain(|p| !p.is_empty());
    out.dedup();
    out
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// `path` relative to `cwd` when it lies inside it.
fn relative(path: &str, cwd: Option<&str>) -> String {
    let Some(cwd) = cwd
        .map(|c| c.trim_end_matches('/'))
        .filter(|c| !c.is_empty())
    else {
        return path.to_string();
    };
    match path
        .strip_prefix(cwd)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => path.to_string(),
    }
}

fn tool_matches(glob_alts: &str, tool: &str) -> bool {
    glob_alts.split('|').any(|alt| glob::text(alt.trim(), tool))
}

fn rule_matches(rule: &Rule, tool: &str, subjects: &Subjects) -> bool {
    if !tool_matches(&rule.tool, tool) {
        return false;
    }
    let Some(pattern) = rule.pattern.as_deref().map(str::trim) else {
        return true;
    };
    match subjects {
        Subjects::Commands(parts) => {
            let p = pattern.to_ascii_lowercase();
            parts
                .iter()
                .any(|c| glob::text(&p, &c.to_ascii_lowercase()))
        }
        Subjects::Paths(paths) => paths.iter().any(|path| {
            let path = path.trim_start_matches("./");
            glob::path(pattern, path)
                || (!pattern.starts_with('/')
                    && !pattern.starts_with("**")
                    && glob::path(&format!("**/{pattern}"), path))
        }),
        Subjects::Input(json) => glob::text(pattern, json),
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
