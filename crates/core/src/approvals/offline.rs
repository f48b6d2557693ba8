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

/// Where the call is made, as the hook knows it without its server: the
/// agent's environment and the task's signal file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The task is a derived child (`TOWER_HAS_PARENT`).
    pub has_parent: bool,
    /// The task's unattended signal file exists.
    pub unattended: bool,
}

/// The decision when the server cannot be asked (`err` says why): an
/// attended, top-level terminal runs the call as it would without Harness
/// (a person watches it); anywhere else the policy written at spawn for
/// `task_id` (`snapshot` reads its text, only when needed; without a
/// readable one of this task, the built-in rules) decides as [`decide`]
/// does. `None` allows the call, `Some(reason)` denies it.
pub fn decide_unreachable(
    place: Place,
    task_id: &str,
    snapshot: impl FnOnce() -> Option<String>,
    call: (&str, &Value, Option<&str>),
    err: &str,
) -> Option<String> {
    if !place.has_parent && !place.unattended {
        return None;
    }
    let (tool, input, cwd) = call;
    match snapshot().and_then(|text| read_snapshot(&text, task_id)) {
        Some(policy) => decide(
            &policy,
            tool,
            input,
            cwd,
            err,
            "as saved when this agent started",
        ),
        None => {
            let builtin = Effective {
                project: Vec::new(),
                global: None,
            };
            decide(&builtin, tool, input, cwd, err, "the built-in rules")
        }
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

    #[test]
    fn unreachable_an_attended_top_level_call_runs_elsewhere_the_saved_policy_decides() {
        let p = Effective {
            project: vec![rule("Bash", "make deploy*", Action::Deny)],
            global: Some(vec![]),
        };
        let saved = snapshot_json("ctask", None, &p);
        let deploy = json!({"command": "make deploy"});
        let push = json!({"command": "git push --force"});
        let call = |input| ("Bash", input, None);
        let attended = Place {
            has_parent: false,
            unattended: false,
        };
        let child = Place {
            has_parent: true,
            unattended: false,
        };
        let unattended = Place {
            has_parent: false,
            unattended: true,
        };
        // A person watches an attended top-level terminal: the call runs, and
        // the snapshot is not even read.
        let unread = || -> Option<String> { panic!("the snapshot was read") };
        assert_eq!(
            decide_unreachable(attended, "ctask", unread, call(&deploy), "refused"),
            None
        );
        for place in [child, unattended] {
            let denied =
                decide_unreachable(place, "ctask", || Some(saved.clone()), call(&deploy), "e")
                    .unwrap_or_default();
            assert!(
                denied.contains("as saved when this agent started") && denied.contains("denies"),
                "{denied}"
            );
            // The saved global policy replaced the built-in rules.
            assert_eq!(
                decide_unreachable(place, "ctask", || Some(saved.clone()), call(&push), "e"),
                None
            );
            // No snapshot, or another task's: the built-in rules (a force
            // push needs a person, who cannot be asked: denied).
            for text in [None, Some(snapshot_json("cother", None, &p))] {
                let reason =
                    decide_unreachable(place, "ctask", || text.clone(), call(&push), "refused")
                        .unwrap_or_default();
                assert!(
                    reason.contains("the built-in rules") && reason.contains("refused"),
                    "{reason}"
                );
            }
        }
    }
}
