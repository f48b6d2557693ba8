//! What waits for a person, without the report around it: the one
//! "waits for you" count ([`Reports::waiting`], read on every live update)
//! and `/harness`' "most blocking first" ([`Reports::pending_most_blocking`]).
//! Both by the report's own rules: the items are [`super::build::waits`],
//! their order [`super::rank`] through [`super::build::build`].
//!
//! The count reads only what selects the items — the OPEN asks, the
//! PENDING approvals and the agents that need a person — not the tasks,
//! projects, choices or work the report's text needs.

use crate::report::Reports;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{
    build::{Facts, Frame, Wait, build, waits},
    facts::{MAX_ROWS, Scope, WorkReader},
    service::Waiting,
};
use crate::{
    CoreResult,
    auth::Identity,
    model::{MessagePage, MessageQuery, MessageView},
    store::ItemKind,
};

/// The most rows "most blocking first" orders (the pending view: the OPEN
/// questions).
pub const MAX_RANKED_ROWS: usize = 5000;

impl Waiting {
    /// The count of `items`, by kind.
    pub fn of(items: &[Wait<'_>]) -> Self {
        let count = |k: ItemKind| items.iter().filter(|w| w.kind() == k).count() as u64;
        Self {
            total: items.len() as u64,
            questions: count(ItemKind::Question),
            approvals: count(ItemKind::Approval),
            agents: count(ItemKind::Agent),
        }
    }
}

impl Reports<'_> {
    /// The one "waits for you" count of `who`'s scope: open questions,
    /// pending approvals and agents that need a person — the items of the
    /// report's "what waits for you" ([`waits`]), read without the rest of
    /// the report.
    pub async fn waiting(&self, who: &Identity) -> CoreResult<Waiting> {
        let facts = self.waiting_facts(&Scope::of(who), Utc::now()).await?;
        Ok(Waiting::of(&waits(&facts)))
    }

    /// What selects the waiting items at `now`, in `scope`.
    async fn waiting_facts(&self, scope: &Scope, now: DateTime<Utc>) -> CoreResult<Facts> {
        let store = self.h.store();
        let keep = self.scope_filter(scope).await?;
        let mut facts = Facts {
            // An empty window: only the OPEN asks.
            messages: store.report_messages(now, now, MAX_ROWS).await?,
            ..Facts::default()
        };
        facts.messages.retain(|m| keep(&m.message.task_id));
        self.approvals_and_agents(&mut facts, &keep, now, now)
            .await?;
        Ok(facts)
    }

    /// The message ids of what waits for `who` now, most blocking first
    /// (the report's order): a question's ask, an approval's carrying ask.
    pub async fn waiting_order(
        &self,
        who: &Identity,
        work: &dyn WorkReader,
    ) -> CoreResult<Vec<String>> {
        let now = Utc::now();
        let scope = Scope::of(who);
        let facts = self.report_facts(&scope, now, now, work).await?;
        let frame = Frame {
            id: String::new(),
            scope: scope.key(),
            since: now,
            until: now,
        };
        let (report, _) = build(&frame, &facts);
        let carried: BTreeMap<&str, &str> = facts
            .approvals
            .iter()
            .map(|a| (a.id.as_str(), a.request_id.as_str()))
            .collect();
        Ok(report
            .waiting
            .iter()
            .filter_map(|w| match w.kind {
                ItemKind::Question => Some(w.ref_id.clone()),
                ItemKind::Approval => carried.get(w.ref_id.as_str()).map(|s| s.to_string()),
                ItemKind::Agent => None,
            })
            .collect())
    }

    /// `/harness`' pending view (the OPEN questions matching `query`'s
    /// search and filter), most blocking first by the report's rank; rows
    /// it does not rank after them, newest first. One page: no cursor.
    pub async fn pending_most_blocking(
        &self,
        who: &Identity,
        mut query: MessageQuery,
        work: &dyn WorkReader,
    ) -> CoreResult<MessagePage> {
        query.view = MessageView::Pending;
        query.cursor = None;
        query.limit = 500;
        let mut rows = Vec::new();
        loop {
            let page = self.h.asks().list_messages(query.clone()).await?;
            rows.extend(page.rows);
            match page
                .next_cursor
                .and_then(|c| crate::model::Cursor::decode(&c))
            {
                Some(next) if rows.len() < MAX_RANKED_ROWS => query.cursor = Some(next),
                _ => break,
            }
        }
        rows.truncate(MAX_RANKED_ROWS);
        let order = self.waiting_order(who, work).await?;
        let place: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        // Stable: unranked rows keep their newest-first order, after.
        let mut keyed: Vec<(usize, _)> = rows
            .into_iter()
            .map(|r| {
                (
                    place
                        .get(r.message.id.as_str())
                        .copied()
                        .unwrap_or(usize::MAX),
                    r,
                )
            })
            .collect();
        keyed.sort_by_key(|(p, _)| *p);
        Ok(MessagePage {
            rows: keyed.into_iter().map(|(_, r)| r).collect(),
            next_cursor: None,
        })
    }
}
