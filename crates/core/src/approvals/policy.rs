//! The approval policy: rules on a tool call's name and
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
//!   the command is PARSED ([`super::shell`], with a real shell parser) and
//!   every simple command it runs — wherever it is nested, through known
//!   wrappers, `bash -c '…'` and the workspace scripts it runs — is a
//!   subject of its own, matched with the text glob ignoring ASCII case
//!   (`*drop table*` = `*DROP TABLE*`) both as written (`sudo rm -r -f x`,
//!   after quote removal) and as it runs (`rm -rf x`). The whole command
//!   text is one more subject. Each subject is decided on its own (first
//!   match wins) and the strictest decision is the call's: `deny`, then
//!   `ask`, then `allow` — so an `allow` rule for one part never lets
//!   another part through. Every file the command writes (redirections,
//!   `cp`/`mv`/`tee`/… destinations) is matched against the FILE rules as
//!   a file tool's path would be. What the gate cannot read (`eval`, a
//!   computed command name, an unreadable script, a parse error) asks when
//!   the policy has any `ask` or `deny` rule for the tool (for a computed
//!   file name: for the file tools), with the reason in the approval;
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

use super::{
    glob,
    shell::{NoScripts, ScriptReader, WorkspaceScripts},
};
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
/// Commands are matched as they run (see the module docs): `rm -r*` is
/// every recursive `rm` (`-rf`, `-Rf`, `-r -f`, `--recursive`), `git push*`
/// every push (`+refspec`, `--force-with-lease`, `--mirror`, `-C dir`).
pub fn default_rules() -> Vec<Rule> {
    use Action::Ask;
    let sh = SHELL_TOOL_GLOB;
    let publish = "publishes commits (a force push rewrites history)";
    let tree = "deletes a directory tree";
    let found = "deletes the files it finds";
    vec![
        Rule::new(sh, "git push*", Ask, publish),
        Rule::new(sh, "git send-pack*", Ask, publish),
        Rule::new(sh, "git subtree push*", Ask, publish),
        Rule::new(sh, "git reset --hard*", Ask, "discards uncommitted work"),
        Rule::new(sh, "git clean -*f*", Ask, "deletes untracked files"),
        Rule::new(sh, "rm -r*", Ask, tree),
        Rule::new(sh, "find * -delete*", Ask, found),
        Rule::new(sh, "find -delete*", Ask, found),
        Rule::new(sh, "find * -exec* rm *", Ask, found),
        Rule::new(sh, "find * -ok* rm *", Ask, found),
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
    /// No rule: the gate could not read what a shell command runs, and the
    /// policy has rules to protect (the reason is [`Matched::why`]).
    Gate,
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
    /// Why the rule applies when the call's text alone does not show it
    /// (`runs \`git push\` inside \`bash -c\``, `writes \`.env\``), or
    /// why the gate asks without a rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
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
    /// Evaluate one call (see the module docs); the scripts a shell command
    /// runs are read by [`WorkspaceScripts`] inside `cwd`.
    pub fn evaluate(&self, tool: &str, input: &Value, cwd: Option<&str>) -> Verdict {
        self.evaluate_with(tool, input, cwd, &WorkspaceScripts)
    }

    /// [`Self::evaluate`] with the scripts read by `scripts` (tests pass
    /// their own; nothing else here touches the file system).
    pub fn evaluate_with(
        &self,
        tool: &str,
        input: &Value,
        cwd: Option<&str>,
        scripts: &dyn ScriptReader,
    ) -> Verdict {
        let builtin;
        let (global, global_source) = match &self.global {
            Some(rules) => (rules, Source::Global),
            None => {
                builtin = default_rules();
                (&builtin, Source::Builtin)
            }
        };
        let lists = [
            (self.project.as_slice(), Source::Project),
            (global.as_slice(), global_source),
        ];
        if SHELL_TOOLS.contains(&tool) {
            // Codex names where the command runs (`workdir`).
            let run_dir = ["workdir", "cwd"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .filter(|d| d.starts_with('/'))
                .or(cwd);
            return super::shell_verdict::evaluate(
                &lists,
                tool,
                &command_of(input),
                super::shell_verdict::Dirs { cwd, run_dir },
                scripts,
            );
        }
        first_match(&lists, tool, &Subjects::of(tool, input, cwd))
    }
}

/// The rule lists in the order they are tried.
pub(super) type Lists<'a> = [(&'a [Rule], Source); 2];

/// The first rule of `lists` whose tool and pattern match.
pub(super) fn first_match(lists: &Lists<'_>, tool: &str, subjects: &Subjects) -> Verdict {
    for (rules, source) in lists {
        for (index, rule) in rules.iter().enumerate() {
            if rule_matches(rule, tool, subjects) {
                return Verdict {
                    action: rule.action,
                    matched: Some(Matched {
                        source: *source,
                        index,
                        rule: rule.clone(),
                        why: None,
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
    /// A shell tool's subjects here are the whole command and each simple
    /// command it runs (as written and as it runs; scripts not read); the
    /// evaluation decides each of them on its own.
    pub fn of(tool: &str, input: &Value, cwd: Option<&str>) -> Self {
        if SHELL_TOOLS.contains(&tool) {
            let command = command_of(input);
            let analysis = super::shell::analyze(&command, cwd, &NoScripts);
            let mut out = vec![command.trim().to_string()];
            for u in analysis.units {
                out.push(u.raw);
                out.push(u.normal);
            }
            let mut seen = std::collections::HashSet::new();
            out.retain(|s| !s.is_empty() && seen.insert(s.clone()));
            return Self::Commands(out);
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
/// array (Codex's `shell`: `["bash", "-lc", "<script>"]` is the script;
/// any other argv is joined with each word quoted as the shell would need
/// it, so that parsing it gives back the same words), else `cmd`.
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
                _ => words
                    .iter()
                    .map(|w| shell_quoted(w))
                    .collect::<Vec<_>>()
                    .join(" "),
            }
        }
        _ => String::new(),
    }
}

/// `word` as one shell word: unchanged when it needs no quoting.
fn shell_quoted(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
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
pub(super) fn relative(path: &str, cwd: Option<&str>) -> String {
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

pub(super) fn tool_matches(glob_alts: &str, tool: &str) -> bool {
    glob_alts.split('|').any(|alt| glob::text(alt.trim(), tool))
}

pub(super) fn rule_matches(rule: &Rule, tool: &str, subjects: &Subjects) -> bool {
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

#[cfg(test)]
#[path = "probe_tests.rs"]
mod probe_tests;

#[cfg(test)]
#[path = "usability_tests.rs"]
mod usability_tests;
