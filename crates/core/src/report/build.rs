//! Facts → the report: pure and deterministic (the same facts and `now`
//! give the same report, text included). The facts are read by
//! [`super::facts`]; the text is written by [`super::text`].

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::{
    model::{Asked, Commits, Progress, Report, Run, TaskSection, WaitingItem, task_link},
    rank::{self, Blocking},
};
use crate::{
    model::{ExecutionStatus, MessageKind, MessageState, TaskView},
    receipt::line::ReceiptLine,
    store::{Approval, ApprovalState, Choices, ExecutionFact, ItemKind, ItemRef, MessageFact},
};

/// An agent that needs a person: see [`super::agents`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentNeed {
    pub execution_id: String,
    pub task_id: String,
    /// What happened, in words ("failed with exit code 1").
    pub what: String,
    pub since: DateTime<Utc>,
}

/// Everything a report is built from, already limited to the person's
/// scope.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub executions: Vec<ExecutionFact>,
    pub messages: Vec<MessageFact>,
    pub approvals: Vec<Approval>,
    /// Every task named by a fact, and the parents of live ones.
    pub tasks: BTreeMap<String, TaskView>,
    /// Project id → name.
    pub projects: BTreeMap<String, String>,
    /// The choices of the OPEN questions, by ask id.
    pub choices: BTreeMap<String, Choices>,
    pub agents: Vec<AgentNeed>,
    /// By task id: its agent's commits in the window.
    pub commits: BTreeMap<String, Commits>,
    /// By task id: the plan tasks that depend on it and are not done.
    pub dependents: BTreeMap<String, u32>,
    /// By ask id: the receipt of each answered question of the window.
    pub receipts: BTreeMap<String, ReceiptLine>,
}

/// The window and where the report is kept.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: String,
    pub scope: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
}

/// The report (its `text` written by [`super::text::render`]) and its
/// numbered items as they are kept.
pub fn build(frame: &Frame, facts: &Facts) -> (Report, Vec<ItemRef>) {
    let (since, until) = (frame.since, frame.until);
    let in_window = |t: DateTime<Utc>| t >= since && t < until;
    let approval_asks: BTreeSet<&str> = facts
        .approvals
        .iter()
        .map(|a| a.request_id.as_str())
        .collect();
    let mut sections: BTreeMap<String, TaskSection> = BTreeMap::new();
    fn section<'s>(
        sections: &'s mut BTreeMap<String, TaskSection>,
        facts: &Facts,
        task_id: &str,
    ) -> Option<&'s mut TaskSection> {
        let view = facts.tasks.get(task_id)?;
        Some(
            sections
                .entry(task_id.to_string())
                .or_insert_with(|| new_section(view, facts)),
        )
    }
    for e in &facts.executions {
        let x = &e.execution;
        let start = x.created_at.max(since);
        let end = x.ended_at.unwrap_or(until).min(until);
        if let Some(s) = section(&mut sections, facts, &x.task_id) {
            s.runs.push(Run {
                execution_id: x.id.clone(),
                status: x.status,
                started_at: x.created_at,
                ended_at: x.ended_at,
                exit_code: x.exit_code,
                end_reason: e.end_reason.clone(),
                minutes: (end - start).num_minutes().max(0),
            });
            if let Some(words) = crate::reboot::note_words(e.reboot_note.as_deref()) {
                s.resumed.push(words);
                s.resumed_notes.extend(e.reboot_note.clone());
            }
        }
    }
    for m in &facts.messages {
        let msg = &m.message;
        let relevant = in_window(msg.created_at) || msg.replied_at.is_some_and(in_window);
        if !relevant || approval_asks.contains(msg.id.as_str()) {
            continue;
        }
        let Some(s) = section(&mut sections, facts, &msg.task_id) else {
            continue;
        };
        match msg.kind {
            MessageKind::Notify => s.progress.push(Progress {
                at: msg.created_at,
                text: msg.content.clone(),
            }),
            MessageKind::Ask => s.asked.push(Asked {
                id: msg.id.clone(),
                kind: ItemKind::Question,
                text: msg.content.clone(),
                asked_at: msg.created_at,
                state: msg.state.into(),
                answer: msg.reply_text.clone(),
                by: (msg.state == MessageState::Answered).then(|| {
                    if m.by_default {
                        "default"
                    } else if m.via_chat {
                        "chat"
                    } else {
                        "web"
                    }
                    .to_string()
                }),
                after_minutes: msg
                    .replied_at
                    .map(|at| (at - msg.created_at).num_minutes().max(0)),
                reminders: m.reminders,
                receipt: facts.receipts.get(&msg.id).cloned(),
            }),
        }
    }
    let reminders: BTreeMap<&str, u32> = facts
        .messages
        .iter()
        .map(|m| (m.message.id.as_str(), m.reminders))
        .collect();
    for a in &facts.approvals {
        if !(in_window(a.created_at) || a.decided_at.is_some_and(in_window)) {
            continue;
        }
        if let Some(s) = section(&mut sections, facts, &a.task_id) {
            s.asked.push(Asked {
                id: a.request_id.clone(),
                kind: ItemKind::Approval,
                text: call_text(a),
                asked_at: a.created_at,
                state: a.state.into(),
                answer: a.reason.clone(),
                by: a.decided_by.clone(),
                after_minutes: a
                    .decided_at
                    .map(|at| (at - a.created_at).num_minutes().max(0)),
                reminders: reminders.get(a.request_id.as_str()).copied().unwrap_or(0),
                receipt: None,
            });
        }
    }
    for (task, c) in &facts.commits {
        if let Some(s) = section(&mut sections, facts, task) {
            s.commits = Some(c.clone());
        }
    }
    let mut tasks: Vec<TaskSection> = sections.into_values().collect();
    tasks.sort_by(|a, b| {
        (
            a.project_name.is_none(),
            &a.project_name,
            &a.title,
            &a.task_id,
        )
            .cmp(&(
                b.project_name.is_none(),
                &b.project_name,
                &b.title,
                &b.task_id,
            ))
    });
    for t in &mut tasks {
        t.runs
            .sort_by(|a, b| (a.started_at, &a.execution_id).cmp(&(b.started_at, &b.execution_id)));
        t.progress
            .sort_by(|a, b| (a.at, &a.text).cmp(&(b.at, &b.text)));
        t.asked
            .sort_by(|a, b| (a.asked_at, &a.id).cmp(&(b.asked_at, &b.id)));
    }
    let (waiting, refs) = waiting(facts, until);
    let report = Report {
        id: frame.id.clone(),
        scope: frame.scope.clone(),
        since,
        until,
        tasks,
        waiting_count: waiting.len() as u64,
        waiting,
        text: String::new(),
    };
    (report, refs)
}

fn new_section(view: &TaskView, facts: &Facts) -> TaskSection {
    let t = &view.task;
    TaskSection {
        task_id: t.id.clone(),
        title: t.title.clone(),
        project_id: t.project_id.clone(),
        project_name: t
            .project_id
            .as_ref()
            .and_then(|p| facts.projects.get(p))
            .cloned(),
        link: task_link(&t.id),
        runs: Vec::new(),
        progress: Vec::new(),
        asked: Vec::new(),
        resumed: Vec::new(),
        resumed_notes: Vec::new(),
        commits: None,
    }
}

/// The held call of an approval, in a person's words.
fn call_text(a: &Approval) -> String {
    let input = serde_json::from_str(&a.input).unwrap_or(serde_json::Value::Null);
    crate::approvals::text::short(&a.tool, &input)
}

/// One thing that waits for a person.
#[derive(Debug, Clone, Copy)]
pub enum Wait<'a> {
    /// An OPEN question (not an approval's carrying ask).
    Question(&'a MessageFact),
    /// A PENDING approval.
    Approval(&'a Approval),
    /// An agent that needs a person ([`super::agents`]).
    Agent(&'a AgentNeed),
}

impl Wait<'_> {
    pub fn kind(&self) -> ItemKind {
        match self {
            Self::Question(_) => ItemKind::Question,
            Self::Approval(_) => ItemKind::Approval,
            Self::Agent(_) => ItemKind::Agent,
        }
    }
}

/// What waits for a person among `facts`: the one rule of the report's
/// "what waits for you" and of the waiting count ([`super::waits`]) —
/// the OPEN questions but an approval's carrying ask, the PENDING
/// approvals, the agents that need a person.
pub fn waits(facts: &Facts) -> Vec<Wait<'_>> {
    let approval_asks: BTreeSet<&str> = facts
        .approvals
        .iter()
        .map(|a| a.request_id.as_str())
        .collect();
    let questions = facts
        .messages
        .iter()
        .filter(|m| {
            let msg = &m.message;
            msg.kind == MessageKind::Ask
                && msg.state == MessageState::Open
                && !approval_asks.contains(msg.id.as_str())
        })
        .map(Wait::Question);
    let approvals = facts
        .approvals
        .iter()
        .filter(|a| a.state == ApprovalState::Pending)
        .map(Wait::Approval);
    let agents = facts.agents.iter().map(Wait::Agent);
    questions.chain(approvals).chain(agents).collect()
}

/// What waits now ([`waits`]), ranked by [`rank::rank`] and numbered from 1.
fn waiting(facts: &Facts, now: DateTime<Utc>) -> (Vec<WaitingItem>, Vec<ItemRef>) {
    // Live child agents per parent task.
    let mut children: BTreeMap<&str, u32> = BTreeMap::new();
    for e in &facts.executions {
        let x = &e.execution;
        if !matches!(x.status, ExecutionStatus::Running | ExecutionStatus::Paused) {
            continue;
        }
        if let Some(parent) = facts
            .tasks
            .get(&x.task_id)
            .and_then(|v| v.task.parent_task_id.as_deref())
        {
            *children.entry(parent).or_default() += 1;
        }
    }
    let mut items: Vec<(Blocking, WaitingItem)> = Vec::new();
    let mut push = |kind: ItemKind,
                    ref_id: &str,
                    task_id: &str,
                    text: String,
                    options: Vec<String>,
                    since: DateTime<Utc>,
                    default_at: Option<DateTime<Utc>>| {
        let title = facts
            .tasks
            .get(task_id)
            .map(|v| v.task.title.clone())
            .unwrap_or_default();
        items.push((
            Blocking {
                id: ref_id.to_string(),
                live_children: children.get(task_id).copied().unwrap_or(0),
                dependent_tasks: facts.dependents.get(task_id).copied().unwrap_or(0),
                waiting_since: since,
                default_at,
            },
            WaitingItem {
                number: 0,
                kind,
                ref_id: ref_id.to_string(),
                task_id: task_id.to_string(),
                task_title: title,
                link: task_link(task_id),
                text,
                options,
                waiting_since: since,
                default_at,
                blocks: Default::default(),
                why: String::new(),
            },
        ));
    };
    for w in waits(facts) {
        match w {
            Wait::Question(m) => {
                let msg = &m.message;
                let options = facts
                    .choices
                    .get(&msg.id)
                    .map(|c| c.options.iter().map(|o| o.label.clone()).collect())
                    .unwrap_or_default();
                let default_at = m.default_label.as_ref().and(m.deadline_at);
                push(
                    ItemKind::Question,
                    &msg.id,
                    &msg.task_id,
                    msg.content.clone(),
                    options,
                    msg.created_at,
                    default_at,
                );
            }
            Wait::Approval(a) => push(
                ItemKind::Approval,
                &a.id,
                &a.task_id,
                call_text(a),
                Vec::new(),
                a.created_at,
                None,
            ),
            Wait::Agent(n) => push(
                ItemKind::Agent,
                &n.execution_id,
                &n.task_id,
                n.what.clone(),
                Vec::new(),
                n.since,
                None,
            ),
        }
    }
    let blocking: Vec<Blocking> = items.iter().map(|(b, _)| b.clone()).collect();
    let ranked = rank::rank(&blocking, now);
    let mut out = Vec::new();
    let mut refs = Vec::new();
    for (i, (r, b)) in ranked.iter().enumerate() {
        let Some((_, item)) = items.iter().find(|(x, _)| x.id == b.id) else {
            continue;
        };
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let mut item = item.clone();
        item.number = number;
        item.blocks = r.blocks(b);
        item.why = item.blocks.words();
        refs.push(ItemRef {
            number,
            kind: item.kind,
            ref_id: item.ref_id.clone(),
            task_id: item.task_id.clone(),
        });
        out.push(item);
    }
    (out, refs)
}
