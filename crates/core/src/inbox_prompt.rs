//! The text of a workbench batch typed into the parent (docs/tower-workbench.md
//! docs/tower-workbench.md §2.10): one child review → the child-review template; otherwise a
//! numbered list (HIGH first) with the hub guidance. Every prompt carries the
//! anti-loop rule and ends with the batch protocol footer.

use serde_json::Value;

use crate::inbox::{EventKind, WorkbenchEvent};

const DETAIL_MAX: usize = 1600;

fn field<'a>(payload: &'a Value, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Value::as_str)
}

fn clip(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() > DETAIL_MAX {
        let mut s: String = t.chars().take(DETAIL_MAX).collect();
        s.push('…');
        s
    } else {
        t.to_string()
    }
}

fn reply_of(e: &WorkbenchEvent) -> String {
    let r = field(&e.payload, "childReply").unwrap_or_default();
    if r.trim().is_empty() {
        "(no text reply)".into()
    } else {
        clip(r)
    }
}

fn title_of(e: &WorkbenchEvent) -> (&str, &str) {
    (
        field(&e.payload, "childTitle").unwrap_or(&e.source_task_id),
        field(&e.payload, "childTaskId").unwrap_or(&e.source_task_id),
    )
}

/// The rule that keeps decisions flowing upward.
pub const ANTI_LOOP_RULE: &str = "If a child escalated a decision, decide it and send the answer \
back down with send_task_terminal_input. If you cannot decide either, escalate upward (your own \
parent, else ask_human) — never bounce the same question back down to the child.";

fn footer(batch_id: &str, generation: u32, lease_token: &str) -> String {
    format!(
        "[Tower durable batch: {batch_id}]\n\
         Delivery generation: {generation}\n\
         Right after reading this, call ack_workbench_batch({{ batchId: \"{batch_id}\", leaseToken: \"{lease_token}\" }}).\n\
         When every item is handled or durably delegated, call resolve_workbench_batch({{ batchId: \"{batch_id}\", leaseToken: \"{lease_token}\" }}).\n\
         While working, renew the lease with heartbeat_workbench_batch every two minutes rather than let the five-minute lease lapse.\n\
         A replay with the same batch id is not new work: continue idempotently."
    )
}

fn single_review(e: &WorkbenchEvent) -> String {
    let (title, id) = title_of(e);
    format!(
        "[Tower] The derived sub-task \"{title}\" (taskId: {id}) just finished a round and awaits \
         instructions; it may or may not be done.\n\
         Its last reply:\n{reply}\n\n\
         As the hub:\n\
         1. Verify through the git commits of the child's worktree (log/show/diff); fall back to \
         get_task_terminal_output only when no commits were made this round.\n\
         2. If it is done correctly: stop_task_execution and move the task to DONE.\n\
         3. If not: send concrete feedback with send_task_terminal_input.\n\
         4. {ANTI_LOOP_RULE}\n\
         5. Record your judgment in the project notes.",
        reply = reply_of(e)
    )
}

fn heading(kind: EventKind) -> &'static str {
    match kind {
        EventKind::ChildDecisionRequired => "DECISION REQUIRED",
        EventKind::ChildExecutionFailed => "EXECUTION FAILED",
        EventKind::ChildReviewRequired => "REVIEW REQUIRED",
        EventKind::GatewayDiscussionRequest => "GATEWAY DISCUSSION",
        EventKind::GatewayWorkRequest => "GATEWAY WORK REQUEST",
    }
}

fn detail(e: &WorkbenchEvent) -> String {
    match e.kind {
        EventKind::ChildDecisionRequired if is_approval(&e.payload) => format!(
            "Approval of a risky step (the child's call is held): {}\n{APPROVAL_RULE}",
            field(&e.payload, "question").map(clip).unwrap_or_default()
        ),
        EventKind::ChildDecisionRequired => {
            let q = field(&e.payload, "question")
                .filter(|q| !q.trim().is_empty())
                .map(clip)
                .unwrap_or_else(|| reply_of(e));
            format!("Question: {q}{}", choices_of(&e.payload))
        }
        // The child's agent is stuck while its process runs (logged out,
        // stalled, usage-limited, given up on API errors).
        EventKind::ChildExecutionFailed if field(&e.payload, "agentState").is_some() => {
            let exec = field(&e.payload, "executionId").unwrap_or("unknown");
            let reason = field(&e.payload, "reason").map(clip).unwrap_or_default();
            let lines: Vec<&str> = e
                .payload
                .get("lines")
                .and_then(Value::as_array)
                .map(|l| l.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut text = format!("Execution: {exec}; its agent is {reason}");
            if !lines.is_empty() {
                text.push_str("\nLast lines on its screen:\n");
                text.push_str(&clip(&lines.join("\n")));
            }
            text
        }
        EventKind::ChildExecutionFailed => {
            let exec = field(&e.payload, "executionId").unwrap_or("unknown");
            let code = e
                .payload
                .get("exitCode")
                .and_then(Value::as_i64)
                .map_or_else(|| "unknown".to_string(), |c| c.to_string());
            format!("Execution: {exec}; exit code: {code}")
        }
        EventKind::ChildReviewRequired => format!("Last reply: {}", reply_of(e)),
        // A chat request routed to this Workbench: its instruction, whole.
        EventKind::GatewayDiscussionRequest | EventKind::GatewayWorkRequest => {
            field(&e.payload, "instruction")
                .unwrap_or_default()
                .to_string()
        }
    }
}

/// A child's held tool call: an approval, never the parent's
/// to grant.
fn is_approval(payload: &Value) -> bool {
    payload.get("approval").and_then(Value::as_bool) == Some(true)
}

/// What a parent may do with a child's approval: an agent never approves.
pub const APPROVAL_RULE: &str = "You cannot approve it: an agent never approves; only a person \
may (they are asked on /harness and in chat, and their decision is typed into the child). If the \
step must not run, tell the child so with send_task_terminal_input (\"Do not run it: <why>; do \
<this> instead\"); otherwise leave it to the person (tell the child to wait if it asks). Do not \
send \"Approve\" down: it decides nothing.";

/// A decision's options, numbered, with its default and
/// deadline; empty when the question has none.
fn choices_of(payload: &Value) -> String {
    let options: Vec<&Value> = payload
        .get("options")
        .and_then(Value::as_array)
        .map(|o| o.iter().collect())
        .unwrap_or_default();
    if options.is_empty() {
        return String::new();
    }
    let default = field(payload, "default");
    let mut s = String::from(
        if payload.get("multiSelect").and_then(Value::as_bool) == Some(true) {
            "\nOptions (several may be chosen):"
        } else {
            "\nOptions:"
        },
    );
    for (i, o) in options.iter().enumerate() {
        let label = field(o, "label").unwrap_or_default();
        s.push_str(&format!("\n{}. {label}", i + 1));
        if default == Some(label) {
            s.push_str(" (default)");
        }
        if let Some(d) = field(o, "description").filter(|d| !d.trim().is_empty()) {
            s.push_str(&format!(" — {}", clip(d)));
        }
    }
    if let (Some(label), Some(at)) = (default, field(payload, "deadlineAt")) {
        s.push_str(&format!(
            "\nIf nobody answers by {at}, \"{label}\" will be taken."
        ));
    }
    s
}

fn is_gateway(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::GatewayDiscussionRequest | EventKind::GatewayWorkRequest
    )
}

/// The whole prompt of a batch (events already sorted HIGH first).
pub fn batch_prompt(
    batch_id: &str,
    generation: u32,
    lease_token: &str,
    events: &[WorkbenchEvent],
) -> String {
    let body = match events {
        [one] if one.kind == EventKind::ChildReviewRequired => single_review(one),
        [one] if is_gateway(one.kind) => detail(one),
        _ => {
            let mut s = format!(
                "[Tower] {} durable sub-task events are ready for supervisor review.\nBatch: {batch_id}\n\n",
                events.len()
            );
            for (i, e) in events.iter().enumerate() {
                let (title, id) = title_of(e);
                let detail = detail(e).replace('\n', "\n   ");
                s.push_str(&format!(
                    "{}. [{}] \"{title}\" (taskId: {id})\n   {detail}\n",
                    i + 1,
                    heading(e.kind)
                ));
            }
            s.push_str(&format!(
                "\nInspect the children's commits first; do not mark anything DONE unverified. \
                 Give concrete feedback with send_task_terminal_input; stop and move only \
                 verified work to DONE. {ANTI_LOOP_RULE} Record decisions in the project notes."
            ));
            s
        }
    };
    format!("{body}\n\n{}", footer(batch_id, generation, lease_token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::{EventState, Priority};
    use serde_json::json;

    fn decision(payload: Value) -> WorkbenchEvent {
        let now = chrono::Utc::now();
        WorkbenchEvent {
            id: "cevent".into(),
            parent_task_id: "cparent".into(),
            source_task_id: "cchild".into(),
            execution_id: None,
            kind: EventKind::ChildDecisionRequired,
            priority: Priority::High,
            dedup_key: "k".into(),
            execution_review_key: None,
            batch_id: None,
            payload,
            state: EventState::Pending,
            attempts: 0,
            last_error: None,
            created_at: now,
            updated_at: now,
            consumed_at: None,
            lease_owner: None,
        }
    }

    #[test]
    fn a_gateway_request_is_typed_with_its_instruction() {
        let mut e = decision(json!({"childTitle": "shop gateway request",
            "instruction": "[Gateway project work request]\nProject: shop"}));
        e.kind = EventKind::GatewayWorkRequest;
        let one = batch_prompt("cbatch", 1, "lease", std::slice::from_ref(&e));
        assert!(
            one.starts_with("[Gateway project work request]\nProject: shop\n\n"),
            "{one}"
        );
        assert!(one.contains("ack_workbench_batch"), "{one}");
        let two = batch_prompt("cbatch", 1, "lease", &[e.clone(), decision(json!({}))]);
        assert!(two.contains("[GATEWAY WORK REQUEST]"), "{two}");
        assert!(two.contains("Project: shop"), "{two}");
    }

    #[test]
    fn a_decision_lists_its_options_default_and_deadline() {
        let e = decision(json!({"childTitle": "db", "childTaskId": "cchild",
            "question": "Which DB?", "multiSelect": false, "default": "SQLite",
            "deadlineAt": "2026-12-01T08:00:00Z",
            "options": [{"label": "Postgres", "description": "a server"}, {"label": "SQLite"}]}));
        let prompt = batch_prompt("cbatch", 1, "lease", &[e]);
        assert!(
            prompt.contains(
                "Question: Which DB?\n   Options:\n   1. Postgres — a server\n   2. SQLite (default)\n   \
                 If nobody answers by 2026-12-01T08:00:00Z, \"SQLite\" will be taken."
            ),
            "{prompt}"
        );
        let plain = batch_prompt(
            "cbatch",
            1,
            "lease",
            &[decision(json!({"question": "Why?"}))],
        );
        assert!(plain.contains("Question: Why?\n"), "{plain}");
        assert!(!plain.contains("Options"), "{plain}");
    }

    #[test]
    fn a_childs_approval_is_not_the_parents_to_grant() {
        let e = decision(json!({"childTaskId": "c1", "childTitle": "Release",
            "question": "Approve this Bash call?\n\n$ git push --force", "approval": true,
            "options": [{"label": "Approve"}, {"label": "Deny"}]}));
        let p = batch_prompt("b1", 1, "lease", &[e]);
        assert!(p.contains("Approval of a risky step"), "{p}");
        assert!(p.contains("$ git push --force"), "{p}");
        assert!(p.contains("an agent never approves"), "{p}");
        assert!(!p.contains("1. Approve"), "no options to pick: {p}");
    }
}
