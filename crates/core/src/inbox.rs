//! The parent's durable inbox (docs/tower-workbench.md §1.4–§2.11,
//! docs/decisions.md D3, docs/decisions.md D4, D5). A derived child's turn end (Stop hook), its
//! decision request (an OPEN ask at turn end) or its failure (process exit)
//! is a `WorkbenchEvent` row in its parent's inbox under a stable
//! `dedupKey`; one review per execution is guarded by the unique
//! `executionReviewKey` (stop hook vs. exit fallback). At the parent's own
//! provider-confirmed turn end (the terminal's boundary latch, opened by its
//! Stop hook and closed by any submitted input) up to [`MAX_BATCH`] PENDING
//! events are claimed with a lease into one batch whose id is a digest of
//! their sorted dedup keys; the batch is stored as a SYSTEM TaskMessage and
//! queued on the delivery queue (delivery id = batch id) in one transaction,
//! so it is typed into the parent exactly once (docs/decisions.md D5). A batch whose delivery
//! fails cleanly returns its events to PENDING; the next drain of the same
//! events replays the same batch id.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::deliveries::Deliveries;
use crate::{
    CoreResult,
    deliveries::Delivery,
    events::HarnessEvent,
    ids,
    model::{ExecutionStatus, TaskView},
    store::NewBatch,
    validate,
    work::{Kind, Scope},
};

pub use crate::inbox_lease::{BatchAction, BatchTransition};

/// Most events in one batch (`WORKBENCH_MAX_BATCH_SIZE`).
pub const MAX_BATCH: u32 = 50;
/// How long a claim holds its events before it becomes a batch.
pub const CLAIM_LEASE: Duration = crate::work::INBOX.lease;
/// Lease of a delivered batch until it is acknowledged.
pub const ACK_LEASE: Duration = Duration::from_secs(120);
/// Lease of an acknowledged batch (renewed by heartbeats).
pub const PROCESSING_LEASE: Duration = Duration::from_secs(300);
/// Setting: when this database first ran the inbox (lower bound of the
/// start-up recovery of missing exit events).
pub const EVENTS_ENABLED_AT_KEY: &str = "workbench.eventsEnabledAt";
/// Longest stored reply / detail.
const MAX_REPLY: usize = 8000;

pub use crate::store::{
    BatchState, EventKind, EventState, MessageRole, NewEvent, Priority, TaskMessage,
    WorkbenchBatch, WorkbenchEvent,
};

/// What a Stop hook report did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    /// The named execution is the task's live one (the turn end counts).
    pub owns_turn: bool,
    /// The event written to the parent's inbox (derived children only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    pub deduped: bool,
}

/// The inbox of a task as the task page shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InboxView {
    pub events: Vec<WorkbenchEvent>,
    pub batches: Vec<WorkbenchBatch>,
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// `child-stop:<kind>:<child>:<execution | session | no-execution>:<eventId | sha256(reply)>`:
/// the execution id wins over the session id, so a changed session id keeps the key.
pub fn child_stop_dedup_key(
    kind: EventKind,
    child_task_id: &str,
    execution_id: Option<&str>,
    session_id: Option<&str>,
    event_id: Option<&str>,
    last_reply: &str,
) -> String {
    let owner = execution_id
        .filter(|s| !s.is_empty())
        .or(session_id.filter(|s| !s.is_empty()))
        .unwrap_or("no-execution");
    let event = match event_id.map(str::trim).filter(|s| !s.is_empty()) {
        Some(e) => e.to_string(),
        None => {
            let reply = last_reply.trim();
            sha256_hex(if reply.is_empty() {
                "(empty-reply)"
            } else {
                reply
            })
        }
    };
    format!(
        "child-stop:{}:{child_task_id}:{owner}:{event}",
        kind.as_str()
    )
}

/// `child-exit:<kind>:<task>:<execution>`.
pub fn child_exit_dedup_key(kind: EventKind, task_id: &str, execution_id: &str) -> String {
    format!("child-exit:{}:{task_id}:{execution_id}", kind.as_str())
}

/// `execution-review:<child>:<execution>`: one review per execution.
pub fn execution_review_key(child_task_id: &str, execution_id: &str) -> String {
    format!("execution-review:{child_task_id}:{execution_id}")
}

/// The batch id: `c` + the first 24 hex chars of sha256 of the sorted dedup
/// keys joined by `\n` — the same events always make the same id (a replay
/// upserts the same batch, TaskMessage and delivery). CUID-shaped, so it is
/// a valid delivery id everywhere ids are checked.
pub fn batch_id(dedup_keys: &[&str]) -> String {
    let mut keys: Vec<&str> = dedup_keys.to_vec();
    keys.sort_unstable();
    format!("c{}", &sha256_hex(&keys.join("\n"))[..24])
}

/// Sort explicitly: HIGH before NORMAL, then created_at, then id.
pub fn sort_events(events: &mut [WorkbenchEvent]) {
    events.sort_by(|a, b| {
        (a.priority.rank(), a.created_at, &a.id).cmp(&(b.priority.rank(), b.created_at, &b.id))
    });
}

pub(crate) fn chrono_of(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or_else(|_| chrono::Duration::seconds(60))
}

impl Deliveries<'_> {
    /// A Stop hook report: the turn end of `execution_id` (fenced: only the
    /// task's live execution owns the turn; a late or foreign callback
    /// changes nothing). For a derived child the event is in the parent's
    /// inbox when this returns. Never cancels an OPEN ask (docs/decisions.md D3) and never
    /// stops the child (docs/decisions.md D4): that is the caller's terminal, left alone.
    pub async fn record_turn_end(
        &self,
        task_id: &str,
        execution_id: &str,
        session_id: Option<&str>,
        event_id: Option<&str>,
        last_reply: Option<&str>,
    ) -> CoreResult<TurnEnd> {
        let view = self.h.tasks().get_task(task_id).await?;
        let execution_id = validate::cuid("executionId", execution_id.trim())?;
        let live = self.h.store().live_execution(&view.task.id).await?;
        let owns_turn = live.as_ref().is_some_and(|e| e.id == execution_id);
        if !owns_turn {
            tracing::info!(task_id, execution_id, "stale turn-end report ignored");
            return Ok(TurnEnd {
                owns_turn,
                event_id: None,
                deduped: false,
            });
        }
        let reply = truncate(last_reply.unwrap_or_default().trim(), MAX_REPLY);
        let now = Utc::now();
        self.h
            .store()
            .record_turn_end(&execution_id, (!reply.is_empty()).then_some(&reply), now)
            .await?;
        // As a parent: a completed turn is the receipt of the batches typed into it.
        for b in self
            .h
            .store()
            .resolve_dispatched_batches(&view.task.id, now)
            .await?
        {
            tracing::info!(batch_id = %b.id, "workbench batch resolved by the parent's turn end");
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: b.parent_task_id.clone(),
            });
        }
        let Some(parent_id) = view.task.parent_task_id.clone() else {
            return Ok(TurnEnd {
                owns_turn,
                event_id: None,
                deduped: false,
            });
        };
        // An OPEN ask at turn end is a decision the parent must make (the ask stays OPEN).
        let pending = if view.open_ask {
            Some(self.h.asks().pending(&view.task.id).await?)
        } else {
            None
        };
        // A native question menu of this turn is already in the parent's
        // inbox with its options: this turn end adds nothing.
        if let Some(request_id) = pending.as_ref().and_then(|p| p.request_id.as_deref())
            && let Some(id) = self
                .h
                .store()
                .undelivered_event(&crate::native_question::parent_event_key(
                    &view.task.id,
                    request_id,
                ))
                .await?
        {
            return Ok(TurnEnd {
                owns_turn,
                event_id: Some(id),
                deduped: true,
            });
        }
        let choices = pending.as_ref().and_then(|p| p.choices.clone());
        let question = pending.and_then(|p| p.question);
        let (kind, priority) = if question.is_some() {
            (EventKind::ChildDecisionRequired, Priority::High)
        } else {
            (EventKind::ChildReviewRequired, Priority::Normal)
        };
        let mut payload = json!({
            "childTaskId": view.task.id, "childTitle": view.task.title,
            "childReply": reply, "executionId": execution_id,
        });
        if let Some(q) = &question {
            payload["question"] = json!(q);
        }
        // The ask's options, default and deadline, for the review prompt.
        if let Some(Value::Object(fields)) = choices.map(|c| json!(c)) {
            for (k, v) in fields {
                payload[k.as_str()] = v;
            }
        }
        let event = NewEvent {
            id: ids::new_id(),
            parent_task_id: parent_id,
            source_task_id: view.task.id.clone(),
            execution_id: Some(execution_id.clone()),
            kind,
            priority,
            dedup_key: child_stop_dedup_key(
                kind,
                &view.task.id,
                Some(&execution_id),
                session_id,
                event_id,
                &reply,
            ),
            execution_review_key: Some(execution_review_key(&view.task.id, &execution_id)),
            fallback: false,
            payload,
            now,
        };
        let (row, created) = self.add_event(event).await?;
        Ok(TurnEnd {
            owns_turn,
            event_id: Some(row.id),
            deduped: !created,
        })
    }

    /// The execution-exit producer: FAILED always adds a HIGH failure event;
    /// COMPLETED adds a NORMAL review only when no Stop-hook review exists
    /// for the execution (the unique review key settles the race). A
    /// parentless task produces nothing (`None`).
    pub async fn record_child_exit(
        &self,
        task_id: &str,
        execution_id: &str,
        status: ExecutionStatus,
        exit_code: Option<i64>,
    ) -> CoreResult<Option<(WorkbenchEvent, bool)>> {
        let view = self.h.tasks().get_task(task_id).await?;
        let Some(parent_id) = view.task.parent_task_id.clone() else {
            return Ok(None);
        };
        let (kind, priority, review_key, payload) = match status {
            ExecutionStatus::Failed => (
                EventKind::ChildExecutionFailed,
                Priority::High,
                None,
                json!({"childTaskId": view.task.id, "childTitle": view.task.title,
                    "executionId": execution_id, "exitCode": exit_code}),
            ),
            ExecutionStatus::Completed => (
                EventKind::ChildReviewRequired,
                Priority::Normal,
                Some(execution_review_key(&view.task.id, execution_id)),
                json!({"childTaskId": view.task.id, "childTitle": view.task.title,
                    "executionId": execution_id, "exitCode": exit_code,
                    "childReply": "The execution completed without a provider stop-hook review event."}),
            ),
            _ => return Ok(None),
        };
        let event = NewEvent {
            id: ids::new_id(),
            parent_task_id: parent_id,
            source_task_id: view.task.id.clone(),
            execution_id: Some(execution_id.to_string()),
            kind,
            priority,
            dedup_key: child_exit_dedup_key(kind, &view.task.id, execution_id),
            fallback: review_key.is_some(),
            execution_review_key: review_key,
            payload,
            now: Utc::now(),
        };
        self.add_event(event).await.map(Some)
    }

    async fn add_event(&self, event: NewEvent) -> CoreResult<(WorkbenchEvent, bool)> {
        let (row, created) = self.h.store().add_workbench_event(event).await?;
        if created {
            tracing::info!(event_id = %row.id, parent_task_id = %row.parent_task_id,
                kind = row.kind.as_str(), "workbench event queued for the parent");
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: row.parent_task_id.clone(),
            });
            // Enqueue wakes the worker (the engine owns the wake-up).
            self.h.wake(Kind::Inbox);
        }
        Ok((row, created))
    }

    /// Drain the parent's inbox: the caller has seen the parent at its
    /// provider-confirmed turn end (`execution_id`: the execution that
    /// reported it). Claims up to [`MAX_BATCH`] PENDING events with a lease,
    /// builds the batch and stores it with its TaskMessage and delivery in
    /// one transaction. `None`: nothing pending (or the claim was lost).
    pub async fn drain_inbox(
        &self,
        parent_task_id: &str,
        execution_id: Option<&str>,
    ) -> CoreResult<Option<(WorkbenchBatch, Delivery)>> {
        let parent = self.h.tasks().get_task(parent_task_id).await?;
        let now = Utc::now();
        let owner = self
            .h
            .config()
            .delivery_owner
            .clone()
            .unwrap_or_else(|| self.h.config().node_id.clone());
        let token = ids::new_id();
        let mut events = self
            .h
            .store()
            .claim_workbench_events(
                &parent.task.id,
                &owner,
                &token,
                MAX_BATCH,
                now,
                now + chrono_of(CLAIM_LEASE),
            )
            .await?;
        if events.is_empty() {
            return Ok(None);
        }
        sort_events(&mut events);
        match self
            .store_batch(&parent, execution_id, &token, &events)
            .await
        {
            Ok(Some((batch, delivery))) => {
                tracing::info!(batch_id = %batch.id, parent_task_id = %parent.task.id,
                    events = events.len(), "workbench batch queued for the parent");
                self.h.publish(HarnessEvent::TaskChanged {
                    task_id: parent.task.id.clone(),
                });
                self.delivery_changed(&delivery);
                self.wake_deliveries();
                Ok(Some((batch, delivery)))
            }
            Ok(None) => Ok(None),
            Err(err) => {
                let msg = err.to_string();
                if let Err(release) = self
                    .h
                    .store()
                    .release_workbench_claim(&owner, &token, &msg, Utc::now())
                    .await
                {
                    tracing::error!(error = ?release, "cannot release a workbench claim (its lease will expire)");
                }
                Err(err)
            }
        }
    }

    async fn store_batch(
        &self,
        parent: &TaskView,
        execution_id: Option<&str>,
        token: &str,
        events: &[WorkbenchEvent],
    ) -> CoreResult<Option<(WorkbenchBatch, Delivery)>> {
        let keys: Vec<&str> = events.iter().map(|e| e.dedup_key.as_str()).collect();
        let id = batch_id(&keys);
        let lease_token = ids::new_id();
        let prompt = crate::inbox_prompt::batch_prompt(&id, 1, &lease_token, events);
        let event_ids: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
        let metadata = json!({"type": "workbench_event_batch", "batchKey": id,
            "generation": 1, "eventIds": event_ids})
        .to_string();
        let now = Utc::now();
        let stored = self
            .h
            .store()
            .store_workbench_batch(NewBatch {
                id,
                parent_task_id: parent.task.id.clone(),
                execution_id: execution_id.map(str::to_string),
                claim_token: token.to_string(),
                event_ids,
                prompt,
                lease_token,
                lease_until: now + chrono_of(ACK_LEASE),
                node_id: Some(self.h.config().node_id.clone()),
                metadata,
                now,
            })
            .await?;
        Ok(stored)
    }

    /// Follow batch deliveries (delivered → events DELIVERED; failed →
    /// events PENDING). `startup`: first take back the claims of this
    /// node's earlier boots and the expired ones through the engine's one
    /// recovery pass (`recover_work(Kind::Inbox, …)`: never batched →
    /// PENDING; a batched claim is its batch's) — later the worker's upkeep
    /// expires them. Answers (claims taken back, batches settled).
    pub async fn maintain_inbox(&self, startup: bool) -> CoreResult<(u64, usize)> {
        let now = Utc::now();
        let mut recovered = 0;
        if startup {
            recovered += self
                .h
                .cluster()
                .recover_work(Kind::Inbox, Scope::Expired)
                .await?
                .released;
            if let Some(owner) = self.h.config().delivery_owner.clone() {
                recovered += self
                    .h
                    .cluster()
                    .recover_work(Kind::Inbox, Scope::Boot(&owner))
                    .await?
                    .released;
            }
        }
        let recovered = u64::try_from(recovered).unwrap_or(u64::MAX);
        if startup && let Err(err) = self.recover_missing_child_events().await {
            tracing::error!(error = ?err, "cannot recover missing child exit events");
        }
        let settled = self.h.store().settle_workbench_batches(now).await?;
        for b in &settled {
            tracing::info!(batch_id = %b.id, state = b.state.as_str(), "workbench batch settled");
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: b.parent_task_id.clone(),
            });
        }
        Ok((recovered, settled.len()))
    }

    /// Start-up: ended executions of derived children that have no event
    /// (the process died between the exit and its event, or the execution
    /// was interrupted by a restart) get one now — FAILED → HIGH failure,
    /// COMPLETED → the fallback review. Only executions that ended after
    /// the inbox was first enabled here ([`EVENTS_ENABLED_AT_KEY`]).
    pub async fn recover_missing_child_events(&self) -> CoreResult<usize> {
        let since = self
            .h
            .store()
            .get_setting(EVENTS_ENABLED_AT_KEY)
            .await?
            .and_then(|v| v.as_str().map(str::to_string))
            .and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
            .map(|d| d.with_timezone(&Utc));
        let Some(since) = since else {
            let now = Utc::now();
            self.h
                .store()
                .put_setting(EVENTS_ENABLED_AT_KEY, &json!(now.to_rfc3339()), now)
                .await?;
            return Ok(0);
        };
        let mut recovered = 0;
        for (task, exec, status, code) in self
            .h
            .store()
            .child_executions_missing_events(since, 500)
            .await?
        {
            match self.record_child_exit(&task, &exec, status, code).await {
                Ok(Some((_, true))) => recovered += 1,
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(error = ?err, task_id = %task, execution_id = %exec, "cannot recover a child's exit event");
                }
            }
        }
        if recovered > 0 {
            tracing::warn!(recovered, "child exit events recovered at start-up");
        }
        Ok(recovered)
    }

    /// Parents whose inbox has PENDING events.
    pub async fn inbox_parents_pending(&self) -> CoreResult<Vec<String>> {
        Ok(self.h.store().workbench_parents_pending(100).await?)
    }

    pub async fn inbox_batch_in_flight(&self, parent_task_id: &str) -> CoreResult<bool> {
        Ok(self
            .h
            .store()
            .workbench_batch_in_flight(parent_task_id)
            .await?)
    }

    /// The task's inbox (events and batches, newest first).
    pub async fn inbox(&self, task_id: &str) -> CoreResult<InboxView> {
        let task_id = validate::task_id(Some(task_id))?;
        Ok(InboxView {
            events: self.h.store().list_workbench_events(&task_id, 200).await?,
            batches: self.h.store().list_workbench_batches(&task_id, 50).await?,
        })
    }

    /// The task's derived children.
    pub async fn children(&self, task_id: &str) -> CoreResult<Vec<TaskView>> {
        let task_id = validate::task_id(Some(task_id))?;
        let mut out = Vec::new();
        for id in self.h.store().child_task_ids(&task_id).await? {
            if let Some(v) = self.h.store().get_task(&id).await? {
                out.push(v);
            }
        }
        Ok(out)
    }

    pub async fn task_messages(&self, task_id: &str) -> CoreResult<Vec<TaskMessage>> {
        let task_id = validate::task_id(Some(task_id))?;
        Ok(self.h.store().list_task_messages(&task_id, 50).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_key_ignores_session_when_execution_known() {
        let k = EventKind::ChildReviewRequired;
        let a = child_stop_dedup_key(k, "ct", Some("e1"), Some("s1"), Some("t1"), "x");
        let b = child_stop_dedup_key(k, "ct", Some("e1"), Some("s2"), Some("t1"), "x");
        let c = child_stop_dedup_key(k, "ct", Some("e2"), Some("s1"), Some("t1"), "x");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, "child-stop:CHILD_REVIEW_REQUIRED:ct:e1:t1");
        let d = child_stop_dedup_key(k, "ct", None, None, None, "  ");
        assert!(d.starts_with("child-stop:CHILD_REVIEW_REQUIRED:ct:no-execution:"));
        assert_eq!(d, child_stop_dedup_key(k, "ct", None, None, None, ""));
    }

    #[test]
    fn batch_id_is_a_cuid_digest_of_the_sorted_keys() {
        let a = batch_id(&["b", "a", "c"]);
        assert_eq!(a, batch_id(&["c", "b", "a"]));
        assert_ne!(a, batch_id(&["a", "b"]));
        assert!(ids::is_cuid(&a), "{a}");
    }
}
