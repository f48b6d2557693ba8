//! A shell tool's call against the rules: every simple command the command
//! runs, every file it writes and everything the gate cannot read decided
//! on its own, the strictest decision winning (see `policy`'s module docs).

use super::{
    policy::{
        Action, FILE_TOOLS, Lists, Matched, Rule, Source, Subjects, Verdict, first_match, relative,
        tool_matches,
    },
    shell::{self, ScriptReader},
};

/// The task's working directory, and where the command runs (Codex's
/// `workdir`; else the same).
pub(super) struct Dirs<'a> {
    pub cwd: Option<&'a str>,
    pub run_dir: Option<&'a str>,
}

/// The verdict for the shell command `command` of `tool`.
pub(super) fn evaluate(
    lists: &Lists<'_>,
    tool: &str,
    command: &str,
    dirs: Dirs<'_>,
    scripts: &dyn ScriptReader,
) -> Verdict {
    let Dirs { cwd, run_dir } = dirs;
    let whole = command.trim();
    // A terminal turns a carriage return into a newline (text typed into
    // an interactive shell): read it as one; that only ever splits more.
    let analysis = shell::analyze(&command.replace('\r', "\n"), run_dir, scripts);
    // A script whose command an explicit `allow` rule names is trusted: its
    // own commands are not held (`./gradlew*`, which uses `eval`).
    let trusted: Vec<&str> = analysis
        .scripts
        .iter()
        .filter(|s| {
            let v = first_match(
                lists,
                tool,
                &Subjects::Commands(vec![s.by.raw.clone(), s.by.normal.clone()]),
            );
            v.action == Action::Allow && v.matched.is_some()
        })
        .map(|s| s.path.as_str())
        .collect();
    let kept = |script: &Option<String>| script.as_deref().is_none_or(|s| !trusted.contains(&s));
    let mut verdicts: Vec<Verdict> = Vec::new();
    verdicts.push(first_match(
        lists,
        tool,
        &Subjects::Commands(vec![whole.to_string()]),
    ));
    for unit in analysis.units.iter().filter(|u| kept(&u.script)) {
        let mut v = first_match(
            lists,
            tool,
            &Subjects::Commands(vec![unit.raw.clone(), unit.normal.clone()]),
        );
        if let Some(m) = v.matched.as_mut()
            && (unit.raw != whole || unit.via.is_some())
        {
            let via = unit
                .via
                .as_ref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default();
            m.why = Some(format!("runs `{}`{via}", clip(&unit.normal)));
        }
        verdicts.push(v);
    }
    for write in analysis.writes.iter().filter(|w| kept(&w.script)) {
        let path = match run_dir {
            Some(dir) if run_dir != cwd && !write.path.starts_with(['/', '~']) => relative(
                &format!("{}/{}", dir.trim_end_matches('/'), write.path),
                cwd,
            ),
            _ => relative(&write.path, cwd),
        };
        let mut v = first_file_match(lists, &path);
        if let Some(m) = v.matched.as_mut() {
            m.why = Some(format!("writes `{}` ({})", write.path, write.how));
        }
        verdicts.push(v);
    }
    for hidden in analysis.hidden.iter().filter(|h| kept(&h.script)) {
        let guarded = if hidden.write {
            FILE_TOOLS.iter().any(|t| guards(lists, t))
        } else {
            guards(lists, tool)
        };
        if guarded {
            verdicts.push(Verdict {
                action: Action::Ask,
                matched: Some(Matched {
                    source: Source::Gate,
                    index: 0,
                    rule: Rule {
                        tool: tool.to_string(),
                        pattern: None,
                        action: Action::Ask,
                        note: Some("the gate cannot read what this command runs or writes".into()),
                    },
                    why: Some(hidden.reason.clone()),
                }),
            });
        }
    }
    strictest(verdicts)
}

/// Whether the lists hold an `ask` or `deny` rule for `tool`.
fn guards(lists: &Lists<'_>, tool: &str) -> bool {
    lists.iter().any(|(rules, _)| {
        rules
            .iter()
            .any(|r| r.action != Action::Allow && tool_matches(&r.tool, tool))
    })
}

/// The first FILE rule (its tool names a file tool) matching `path`.
fn first_file_match(lists: &Lists<'_>, path: &str) -> Verdict {
    let subjects = Subjects::Paths(vec![path.to_string()]);
    for tool in FILE_TOOLS {
        let v = first_match(lists, tool, &subjects);
        if v.matched.is_some() {
            // The earliest rule across the file tools decides.
            let earliest = FILE_TOOLS
                .iter()
                .filter_map(|t| first_match(lists, t, &subjects).matched)
                .min_by_key(|m| (m.source != Source::Project, m.index));
            return Verdict {
                action: earliest.as_ref().map_or(v.action, |m| m.rule.action),
                matched: earliest,
            };
        }
    }
    Verdict {
        action: Action::Allow,
        matched: None,
    }
}

/// Deny, then ask, then an allow by a rule, then allow; the first of each.
fn strictest(verdicts: Vec<Verdict>) -> Verdict {
    let rank = |v: &Verdict| match (v.action, v.matched.is_some()) {
        (Action::Deny, _) => 3,
        (Action::Ask, _) => 2,
        (Action::Allow, true) => 1,
        (Action::Allow, false) => 0,
    };
    let mut best: Option<Verdict> = None;
    for v in verdicts {
        if best.as_ref().is_none_or(|b| rank(&v) > rank(b)) {
            best = Some(v);
        }
    }
    best.unwrap_or(Verdict {
        action: Action::Allow,
        matched: None,
    })
}

fn clip(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 120 {
        let mut cut: String = one.chars().take(120).collect();
        cut.push('…');
        cut
    } else {
        one
    }
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "scripts_tests.rs"]
mod scripts_tests;
