//! The words of an approval: the question a person sees, the reasons the
//! agent reads, the line typed into its terminal after a late decision.

use serde_json::Value;

use super::policy::{FILE_TOOLS, Matched, SHELL_TOOLS, Source, command_of, paths_of};
use crate::store::Approval;

const MAX_SHOWN: usize = 2500;

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push_str(" …[cut]");
    out
}

/// The call in one short line (for reasons and the typed decision).
pub fn short(tool: &str, input: &Value) -> String {
    let what = if SHELL_TOOLS.contains(&tool) {
        command_of(input)
    } else if FILE_TOOLS.contains(&tool) {
        paths_of(input).join(", ")
    } else {
        input.to_string()
    };
    clip(&format!("{tool}: {what}"), 300)
}

/// [`short`], with why the gate holds it when the call's text alone does
/// not show it (`— runs \`git push\` inside \`bash -c\``, `— eval runs
/// text computed when it runs`): the words the agent reads.
pub fn short_why(tool: &str, input: &Value, matched: Option<&Matched>) -> String {
    let short = short(tool, input);
    match matched.and_then(|m| m.why.as_deref()) {
        Some(why) => format!("{short} — {}", clip(why, 300)),
        None => short,
    }
}

/// The exact call as the person sees it: the command, or the file and its
/// change, else the input JSON.
fn exact(tool: &str, input: &Value) -> String {
    let body = if SHELL_TOOLS.contains(&tool) {
        format!("$ {}", command_of(input))
    } else if FILE_TOOLS.contains(&tool) {
        let mut out = format!("files: {}", paths_of(input).join(", "));
        for (label, key) in [
            ("- ", "old_string"),
            ("+ ", "new_string"),
            ("", "content"),
            ("", "input"),
            ("", "patch"),
        ] {
            if let Some(v) = input.get(key).and_then(Value::as_str) {
                out.push('\n');
                for line in v.lines() {
                    out.push_str(label);
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    } else {
        serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string())
    };
    clip(&body, MAX_SHOWN)
}

/// The question of the approval's ask.
pub fn question(
    tool: &str,
    input: &Value,
    cwd: Option<&str>,
    task_title: &str,
    matched: &Matched,
) -> String {
    let rule = &matched.rule;
    if matched.source == Source::Gate {
        return format!(
            "Approve this {tool} call?\n\n{}\n\nTask: {}\nWorking directory: {}\nWhy: the gate \
             cannot read what this command runs, so it asks: {}",
            exact(tool, input),
            clip(task_title, 200),
            cwd.unwrap_or("(unknown)"),
            clip(
                matched.why.as_deref().unwrap_or("(no reason recorded)"),
                500
            ),
        );
    }
    let why = rule
        .note
        .as_deref()
        .map(|n| format!(" — {n}"))
        .unwrap_or_default();
    let because = matched
        .why
        .as_deref()
        .map(|w| format!("\nWhy: the command {}", clip(w, 500)))
        .unwrap_or_default();
    format!(
        "Approve this {tool} call?\n\n{}\n\nTask: {}\nWorking directory: {}\nRule: {:?} #{} `{}` {}{}{}",
        exact(tool, input),
        clip(task_title, 200),
        cwd.unwrap_or("(unknown)"),
        matched.source,
        matched.index,
        rule.tool,
        rule.pattern.as_deref().unwrap_or("*"),
        why,
        because
    )
}

/// The deny reason while the approval waits (the hook stops waiting).
pub fn waiting_reason(call: &str, request_id: &str) -> String {
    format!(
        "Harness: this step needs a person's approval and is waiting for it ({call}; approval \
         request {request_id}). Do not retry it now and do not try another way around it: END \
         YOUR TURN now and wait. The decision will be typed into this terminal; if it is \
         approved, run exactly the same call again and it will be allowed once."
    )
}

/// The line typed into the terminal after a decision came too late for the hook.
pub fn typed_decision(a: &Approval, call: &str) -> String {
    let who = a.decided_by.as_deref().unwrap_or("a person");
    match a.state {
        crate::store::ApprovalState::Approved => format!(
            "[Harness approval {}] Approved by {who}: {call} — run it now (exactly the same call; \
             it is allowed once).",
            a.request_id
        ),
        _ => format!(
            "[Harness approval {}] Denied by {who}: {call}{} — do not run it; choose another way \
             or end your turn with a short report.",
            a.request_id,
            a.reason
                .as_deref()
                .map(|r| format!(" because {r}"))
                .unwrap_or_default()
        ),
    }
}

/// The deny reason for a denied call.
pub fn denied_reason(a: &Approval, call: &str) -> String {
    format!(
        "Harness: {call} was DENIED by {}{}. Do not run it; choose another way or end your turn \
         with a short report.",
        a.decided_by.as_deref().unwrap_or("a person"),
        a.reason
            .as_deref()
            .map(|r| format!(" because {r}"))
            .unwrap_or_default()
    )
}
