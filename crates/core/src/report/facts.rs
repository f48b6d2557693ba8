//! Reading a report's facts: the window's executions, messages and
//! approvals (`ReportStore`), their tasks and projects, the open
//! questions' choices, the agents that need a person ([`super::agents`]),
//! and — through the caller's [`WorkReader`] — what the agents committed
//! and which plan tasks depend on them. Limited to one person's
//! [`Scope`].

use crate::report::Reports;
use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{build::Facts, model::Commits};
use crate::{
    CoreResult, auth::Identity, ladder::Lang, model::TaskView, receipt::line::ReceiptLine,
};

/// The most rows of each kind one report reads.
pub const MAX_ROWS: u32 = 5000;
/// The most answered questions whose receipt one report reads (the
/// latest answered first; older ones show no receipt line).
pub const MAX_RECEIPTS: usize = 200;

/// Whose report: everything (a person: the admin, the browser, a
/// gateway's OWNER), or an agent's own task and its derived children (a
/// Workbench's supervision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    Task(String),
}

impl Scope {
    /// The scope `who` may read, by the access rules of `crate::access`:
    /// an agent reads its own task and its children.
    pub fn of(who: &Identity) -> Self {
        match who {
            Identity::Agent { task_id, .. } => Self::Task(task_id.clone()),
            Identity::Admin | Identity::Browser | Identity::Gateway => Self::All,
        }
    }

    /// As kept with a report: `all`, `task:<id>`.
    pub fn key(&self) -> String {
        match self {
            Self::All => "all".into(),
            Self::Task(id) => format!("task:{id}"),
        }
    }
}

/// What Harness reads of an agent's work without running it: the server's
/// (git as a subprocess with a timeout, the project's `harness-tasks.json`).
#[async_trait]
pub trait WorkReader: Send + Sync {
    /// The commits on `dir`'s current branch since `since` (`None`: not a
    /// repository, or nothing could be read in time).
    async fn commits(&self, dir: &str, since: DateTime<Utc>) -> Option<Commits>;
    /// The plan tasks of the project in `project_dir` that depend on the
    /// plan task run by `task_id`, directly or not, and are not done.
    async fn dependents(&self, project_dir: &str, task_id: &str) -> u32;
}

/// Reads nothing (a caller without a working directory to read).
pub struct NoWork;

#[async_trait]
impl WorkReader for NoWork {
    async fn commits(&self, _: &str, _: DateTime<Utc>) -> Option<Commits> {
        None
    }
    async fn dependents(&self, _: &str, _: &str) -> u32 {
        0
    }
}

impl Reports<'_> {
    /// Whether a task is in `scope`: every task, or an agent's own task
    /// and its children.
    /// The approvals of the window and the agents that need a person now,
    /// in `keep`'s scope, into `facts` (the report's and the count's).
    pub(crate) async fn approvals_and_agents(
        &self,
        facts: &mut Facts,
        keep: &impl Fn(&str) -> bool,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> CoreResult<()> {
        let store = self.h.store();
        for id in store.report_approval_ids(since, until, MAX_ROWS).await? {
            if let Some(a) = store.get_approval(&id).await?
                && keep(&a.task_id)
            {
                facts.approvals.push(a);
            }
        }
        facts.agents = self
            .agents_needing_person()
            .await?
            .into_iter()
            .filter(|n| keep(&n.task_id))
            .collect();
        Ok(())
    }

    pub(crate) async fn scope_filter(
        &self,
        scope: &Scope,
    ) -> CoreResult<impl Fn(&str) -> bool + use<>> {
        let allowed = match scope {
            Scope::All => None,
            Scope::Task(own) => {
                let mut ids: BTreeSet<String> = self
                    .h
                    .deliveries()
                    .children(own)
                    .await?
                    .into_iter()
                    .map(|v| v.task.id)
                    .collect();
                ids.insert(own.clone());
                Some(ids)
            }
        };
        Ok(move |task_id: &str| allowed.as_ref().is_none_or(|ids| ids.contains(task_id)))
    }

    /// The facts of `[since, until)` in `scope`.
    pub(crate) async fn report_facts(
        &self,
        scope: &Scope,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        work: &dyn WorkReader,
    ) -> CoreResult<Facts> {
        let store = self.h.store();
        let keep = self.scope_filter(scope).await?;
        let mut facts = Facts {
            executions: store.report_executions(since, until, MAX_ROWS).await?,
            messages: store.report_messages(since, until, MAX_ROWS).await?,
            ..Facts::default()
        };
        facts.executions.retain(|e| keep(&e.execution.task_id));
        facts.messages.retain(|m| keep(&m.message.task_id));
        self.approvals_and_agents(&mut facts, &keep, since, until)
            .await?;
        let mut task_ids: BTreeSet<String> = BTreeSet::new();
        task_ids.extend(facts.executions.iter().map(|e| e.execution.task_id.clone()));
        task_ids.extend(facts.messages.iter().map(|m| m.message.task_id.clone()));
        task_ids.extend(facts.approvals.iter().map(|a| a.task_id.clone()));
        task_ids.extend(facts.agents.iter().map(|n| n.task_id.clone()));
        for id in task_ids {
            if let Some(view) = store.get_task(&id).await? {
                facts.tasks.insert(id, view);
            }
        }
        let projects = store.list_projects().await?;
        let paths: BTreeMap<String, String> = projects
            .iter()
            .map(|p| (p.id.clone(), p.path.clone()))
            .collect();
        facts.projects = projects.into_iter().map(|p| (p.id, p.name)).collect();
        let open: Vec<String> = facts
            .messages
            .iter()
            .filter(|m| m.message.state == crate::model::MessageState::Open)
            .map(|m| m.message.id.clone())
            .collect();
        if !open.is_empty() {
            facts.choices = store.choices_for(&open).await?.into_iter().collect();
        }
        // What each task's agent committed since its first run of the window.
        let mut first_run: BTreeMap<&str, DateTime<Utc>> = BTreeMap::new();
        for e in &facts.executions {
            let x = &e.execution;
            let at = first_run.entry(x.task_id.as_str()).or_insert(x.created_at);
            *at = (*at).min(x.created_at);
        }
        let mut commits = BTreeMap::new();
        for (task_id, started) in first_run {
            let Some(dir) = facts
                .tasks
                .get(task_id)
                .and_then(|v| working_dir(v, &paths))
            else {
                continue;
            };
            if let Some(c) = work.commits(&dir, started).await
                && c.count > 0
            {
                commits.insert(task_id.to_string(), c);
            }
        }
        facts.commits = commits;
        // Which plan tasks wait on each waiting item's task.
        let mut dependents = BTreeMap::new();
        let waiting_tasks: BTreeSet<&str> = facts
            .messages
            .iter()
            .filter(|m| m.message.state == crate::model::MessageState::Open)
            .map(|m| m.message.task_id.as_str())
            .chain(facts.agents.iter().map(|n| n.task_id.as_str()))
            .collect();
        for task_id in waiting_tasks {
            let Some(dir) = facts
                .tasks
                .get(task_id)
                .and_then(|v| v.task.project_id.as_ref())
                .and_then(|p| paths.get(p))
            else {
                continue;
            };
            let n = work.dependents(dir, task_id).await;
            if n > 0 {
                dependents.insert(task_id.to_string(), n);
            }
        }
        facts.dependents = dependents;
        facts.receipts = self.report_receipts(&facts, until).await?;
        Ok(facts)
    }
}

impl Reports<'_> {
    /// The receipt line of each answered question among `facts` (not an
    /// approval's carrying ask), judged at `until`: the report's end, so
    /// a report of a seeded night reads the same every time.
    async fn report_receipts(
        &self,
        facts: &Facts,
        until: DateTime<Utc>,
    ) -> CoreResult<BTreeMap<String, ReceiptLine>> {
        let approval_asks: BTreeSet<&str> = facts
            .approvals
            .iter()
            .map(|a| a.request_id.as_str())
            .collect();
        let mut answered: Vec<&crate::model::Message> = facts
            .messages
            .iter()
            .map(|m| &m.message)
            .filter(|m| {
                m.kind == crate::model::MessageKind::Ask
                    && m.state == crate::model::MessageState::Answered
                    && !approval_asks.contains(m.id.as_str())
            })
            .collect();
        answered.sort_by(|a, b| (b.replied_at, &b.id).cmp(&(a.replied_at, &a.id)));
        let mut out = BTreeMap::new();
        for m in answered.into_iter().take(MAX_RECEIPTS) {
            let receipt = crate::receipt::build(self.receipt_facts(m.clone()).await?, until);
            out.insert(m.id.clone(), ReceiptLine::of(&receipt, until, Lang::En));
        }
        Ok(out)
    }
}

/// Where a task's agent works: its `cwd`, else its project's directory.
fn working_dir(view: &TaskView, projects: &BTreeMap<String, String>) -> Option<String> {
    view.task.agent.cwd.clone().or_else(|| {
        view.task
            .project_id
            .as_ref()
            .and_then(|p| projects.get(p))
            .cloned()
    })
}
