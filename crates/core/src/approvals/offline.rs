//! The hook without its server: the policy in force for
//! the task is written at spawn into the run directory
//! (`<runs>/<execution>/approval-policy.json`, named to the agent by
//! `TOWER_APPROVAL_SNAPSHOT`), so that when the server cannot be reached
//! the hook still denies what a `deny` rule names and fails closed for what
//! an `ask` rule names — the project's rules and the stored global ones, not
//! only the built-in ones. Without a readable snapshot of this task the
//! built-in rules decide. Calls no rule names run (open).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    policy::{Action, Effective},
    text,
};

/// The snapshot's file name in the execution's run directory.
pub const SNAPSHOT_FILE: &str = "approval-policy.json";
/// The variable naming the snapshot's path to the hook.
pub const SNAPSHOT_ENV: &str = "TOWER_APPROVAL_SNAPSHOT";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub task_id: String,
    pub project_id: Option<String>,
    pub written_at: DateTime<Utc>,
    pub policy: Effective,
}

/// The snapshot's text.
pub fn snapshot_json(task_id: &str, project_id: Option<&str>, policy: &Effective) -> String {
    let s = Snapshot {
        task_id: task_id.to_string(),
        project_id: project_id.map(str::to_string),
        written_at: Utc::now(),
        policy: policy.clone(),
    };
    serde_json::to_string_pretty(&s).unwrap_or_default()
}

/// The policy of a snapshot written for `task_id`; `None` when the text is
/// not one, or is another task's.
pub fn read_snapshot(text: &str, task_id: &str) -> Option<Effective> {
    let s: Snapshot = serde_json::from_str(text).ok()?;
    (s.task_id == task_id).then_some(s.policy)
}

/// The offline decision: `None` allows the call, `Some(reason)` denies it.
/// `err` says why the server could not be asked; `from` what decided.
pub fn decide(
    policy: &Effective,
    tool: &str,
    input: &Value,
    cwd: Option<&str>,
    err: &str,
    from: &str,
) -> Option<String> {
    let verdict = super::interactive::evaluate(policy, tool, input, cwd);
    let call = text::short_why(tool, input, verdict.matched.as_ref());
    match verdict.action {
        Action::Allow => None,
        Action::Deny => {
            let note = verdict
                .matched
                .and_then(|m| m.rule.note)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            Some(format!(
                "Harness: the approval policy ({from}) denies {call}{note}. Do not run it; choose \
                 another way or end your turn."
            ))
        }
        Action::Ask => Some(format!(
            "Harness: this call needs a person's approval ({call}; {from}), but the Harness \
             server cannot be reached to ask for it ({err}). Do not run it and do not work around \
             it: end your turn and report that the step is waiting for approval."
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::approvals::policy::Rule;

    fn rule(tool: &str, pattern: &str, action: Action) -> Rule {
        serde_json::from_value(json!({"tool": tool, "pattern": pattern, "action": action})).unwrap()
    }

    #[test]
    fn a_snapshot_is_read_back_only_for_its_task() {
        let p = Effective {
            project: vec![rule("Bash", "terraform apply*", Action::Deny)],
            global: None,
        };
        let text = snapshot_json("ctask", Some("cproj"), &p);
        assert_eq!(read_snapshot(&text, "ctask"), Some(p));
        assert_eq!(read_snapshot(&text, "cother"), None);
        assert_eq!(read_snapshot("{not json", "ctask"), None);
    }

    #[test]
    fn deny_rules_deny_ask_rules_fail_closed_and_the_rest_runs() {
        let p = Effective {
            project: vec![
                rule("Bash", "terraform apply*", Action::Deny),
                rule("Bash", "make deploy*", Action::Ask),
            ],
            global: Some(vec![]),
        };
        let bash = |c: &str| json!({"command": c});
        let deny = decide(
            &p,
            "Bash",
            &bash("terraform apply -auto-approve"),
            None,
            "e",
            "s",
        )
        .unwrap();
        assert!(deny.contains("denies Bash: terraform apply"), "{deny}");
        let ask = decide(&p, "Bash", &bash("make deploy"), None, "refused", "s").unwrap();
        assert!(
            ask.contains("cannot be reached") && ask.contains("refused"),
            "{ask}"
        );
        assert_eq!(decide(&p, "Bash", &bash("ls"), None, "e", "s"), None);
        // The stored global policy replaced the built-in rules: git push runs.
        assert_eq!(
            decide(&p, "Bash", &bash("git push --force"), None, "e", "s"),
            None
        );
    }
}
