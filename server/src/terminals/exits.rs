//! The exits whose handling is under way on this node. An agent's exit is
//! recorded by its own path ([`Terminals::record_exit`]): the execution
//! finished, its state with what it says (the recovery it plans, the push)
//! and the parent's inbox event. The automatic restart of a crash is
//! planned by that very record, so with `crashRestartDelaySecs` 0 the action
//! worker may claim it while the record is still being written. An action
//! waits here until the exit it answers is settled
//! ([`Terminals::exit_settled`]) — a condition, not a delay: the record's
//! own path ends it.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard},
    time::Duration,
};

use tokio::sync::Notify;

use super::Terminals;

/// Exits being recorded, by execution id (a count: the PTY's exit and a
/// holder's exit file may both be recorded).
#[derive(Default)]
pub(super) struct Exits {
    settling: Mutex<HashMap<String, usize>>,
    settled: Notify,
}

/// One exit being recorded; settled when dropped (also on an early return).
pub(super) struct Settling<'a> {
    exits: &'a Exits,
    execution_id: String,
}

impl Exits {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        self.settling.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The exit of `execution_id` is being recorded until the guard drops.
    pub(super) fn begin(&self, execution_id: &str) -> Settling<'_> {
        *self.lock().entry(execution_id.to_string()).or_default() += 1;
        Settling {
            exits: self,
            execution_id: execution_id.to_string(),
        }
    }

    fn is_settling(&self, execution_id: &str) -> bool {
        self.lock().contains_key(execution_id)
    }

    /// Wait until no exit of `execution_id` is being recorded here, at most
    /// `max`; false when one still is.
    async fn settled(&self, execution_id: &str, max: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + max;
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            // Registered before the check: an end in between wakes it.
            notified.as_mut().enable();
            if !self.is_settling(execution_id) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return !self.is_settling(execution_id);
            }
        }
    }
}

impl Drop for Settling<'_> {
    fn drop(&mut self) {
        {
            let mut settling = self.exits.lock();
            if let Some(n) = settling.get_mut(&self.execution_id) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    settling.remove(&self.execution_id);
                }
            }
        }
        self.exits.settled.notify_waiters();
    }
}

impl Terminals {
    /// Wait (at most `max`) until the exit of `execution_id` is recorded in
    /// full on this node — at once when none is being recorded here. False:
    /// its record is still under way.
    pub async fn exit_settled(&self, execution_id: &str, max: Duration) -> bool {
        self.inner.exits.settled(execution_id, max).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_ends_when_the_exit_is_recorded_and_not_before() {
        let exits = std::sync::Arc::new(Exits::default());
        assert!(exits.settled("e", Duration::ZERO).await, "none under way");
        let guard = exits.begin("e");
        let again = exits.begin("e");
        assert!(!exits.settled("e", Duration::from_millis(20)).await);
        assert!(exits.settled("other", Duration::ZERO).await);
        drop(again);
        assert!(
            !exits.settled("e", Duration::ZERO).await,
            "one still under way"
        );
        let waiter = {
            let exits = exits.clone();
            tokio::spawn(async move { exits.settled("e", Duration::from_secs(30)).await })
        };
        tokio::task::yield_now().await;
        drop(guard);
        assert!(waiter.await.unwrap(), "woken by the end, not the bound");
    }
}
