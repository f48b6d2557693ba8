//! The outbox's started marks as a group commit. Every send commits its
//! "really started" evidence just before its CLI is spawned (the rule is in
//! `Outbox::mark_outbound_started_many`); with several sends starting at
//! about the same time, one writer task commits all the marks waiting in one
//! statement, instead of one commit per send. A mark waits for no timer:
//! the batch is whatever queued up while the previous commit ran, so an idle
//! sender pays one commit as before and a busy one far fewer.
//!
//! Bounded (a channel of [`QUEUE`] marks, at most [`BATCH`] per commit),
//! ends with its last handle (the worker that owns it), restart-safe (the
//! marks are rows; nothing is kept in memory past a commit).

use harness_core::{Harness, outbox::Outbound};
use tokio::sync::{mpsc, oneshot};

/// Marks waiting for the writer task at most (the senders' slots bound it
/// far below this).
const QUEUE: usize = 256;
/// Marks committed in one statement at most.
const BATCH: usize = 64;

/// How one mark ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Marked {
    /// Committed: the CLI may be spawned.
    Started,
    /// The row is not SENDING under this lease at this attempt any more
    /// (recovered by another node): the send must not start.
    LeaseGone,
    /// The mark could not be written: the send must not start.
    Failed(String),
}

struct Mark {
    id: String,
    attempt: u32,
    done: oneshot::Sender<Marked>,
}

/// A handle to the writer task of one sender (`owner`).
#[derive(Clone)]
pub(super) struct StartMarks {
    tx: mpsc::Sender<Mark>,
}

impl StartMarks {
    /// Start the writer task for the leases of `owner`; it ends when the
    /// last handle is dropped.
    pub(super) fn spawn(harness: Harness, owner: String) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_marks(harness, owner, rx));
        Self { tx }
    }

    /// Commit the evidence that `row`'s current attempt is about to start.
    pub(super) async fn mark(&self, row: &Outbound) -> Marked {
        let (done, answer) = oneshot::channel();
        let mark = Mark {
            id: row.id.clone(),
            attempt: row.attempts,
            done,
        };
        if self.tx.send(mark).await.is_err() {
            return Marked::Failed("the started-mark writer stopped".into());
        }
        answer
            .await
            .unwrap_or_else(|_| Marked::Failed("the started-mark writer stopped".into()))
    }
}

async fn write_marks(harness: Harness, owner: String, mut rx: mpsc::Receiver<Mark>) {
    let mut batch: Vec<Mark> = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        let marks: Vec<(String, u32)> = batch.iter().map(|m| (m.id.clone(), m.attempt)).collect();
        let result = harness
            .outbox()
            .mark_outbound_started_many(&owner, &marks)
            .await;
        tracing::trace!(count = marks.len(), "started marks committed");
        for mark in batch.drain(..) {
            let answer = match &result {
                Ok(ids) if ids.contains(&mark.id) => Marked::Started,
                Ok(_) => Marked::LeaseGone,
                Err(err) => Marked::Failed(err.to_string()),
            };
            // A sender that went away (its worker stopped) needs no answer.
            let _ = mark.done.send(answer);
        }
    }
    tracing::debug!(%owner, "started-mark writer stopped");
}
