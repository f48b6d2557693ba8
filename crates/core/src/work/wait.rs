//! The one "wait until it settled" of the core: a request that caused owed
//! work (a reply typed into a terminal, a message pushed to a gateway) or
//! that waits for a person (a held tool call) waits a short, bounded time
//! for the row to reach a settled state, woken by the change events that
//! concern it and re-reading the row then — never by polling alone.

use std::{future::Future, time::Duration};

use tokio::sync::broadcast::{Receiver, error::RecvError};

use crate::{CoreResult, events::HarnessEvent};

/// Wait up to `wait` until `check` answers `Some` (settled; its value is
/// answered) or the time is up (`None`). `check` runs first and again after
/// every event `wakes` picks (and after a lagged subscription, which may
/// have dropped one); with `poll`, also every `poll` whatever arrived. The
/// caller subscribed (`events`) before the row could change, so no change
/// between its write and this wait is missed.
pub async fn until_settled<V, C, F>(
    wait: Duration,
    poll: Option<Duration>,
    mut events: Receiver<HarnessEvent>,
    wakes: impl Fn(&HarnessEvent) -> bool,
    mut check: C,
) -> CoreResult<Option<V>>
where
    C: FnMut() -> F,
    F: Future<Output = CoreResult<Option<V>>>,
{
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        if let Some(settled) = check().await? {
            return Ok(Some(settled));
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        let until = match poll {
            Some(tick) => deadline.min(now + tick),
            None => deadline,
        };
        let woke = tokio::time::timeout_at(until, async {
            loop {
                match events.recv().await {
                    Ok(event) if wakes(&event) => return true,
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => return true,
                    Err(RecvError::Closed) => return false,
                }
            }
        })
        .await;
        match woke {
            Ok(true) => {}
            // Nobody publishes any more: only the clock can end the wait.
            Ok(false) if poll.is_some() => tokio::time::sleep_until(until).await,
            Ok(false) => return Ok(None),
            // The tick (poll) or the deadline: check again; the loop ends
            // at the deadline.
            Err(_) if poll.is_some() => {}
            Err(_) => return Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    };

    use super::*;

    fn changed(id: &str) -> HarnessEvent {
        HarnessEvent::TaskChanged { task_id: id.into() }
    }

    fn is(id: &'static str) -> impl Fn(&HarnessEvent) -> bool {
        move |e| matches!(e, HarnessEvent::TaskChanged { task_id } if task_id == id)
    }

    #[tokio::test]
    async fn an_event_of_the_row_wakes_the_check_and_others_do_not() {
        let (tx, rx) = tokio::sync::broadcast::channel(16);
        let reads = Arc::new(AtomicU32::new(0));
        let r = reads.clone();
        let waiter = tokio::spawn(until_settled(
            Duration::from_secs(5),
            None,
            rx,
            is("a"),
            move || {
                let n = r.fetch_add(1, Ordering::SeqCst);
                async move { Ok((n >= 1).then_some(n)) }
            },
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
        tx.send(changed("b")).unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            reads.load(Ordering::SeqCst),
            1,
            "another row's event: no read"
        );
        tx.send(changed("a")).unwrap();
        let got = waiter.await.unwrap().unwrap();
        assert_eq!(got, Some(1));
    }

    #[tokio::test]
    async fn the_wait_ends_at_its_deadline_unsettled() {
        let (_tx, rx) = tokio::sync::broadcast::channel::<HarnessEvent>(16);
        let started = tokio::time::Instant::now();
        let got: Option<()> =
            until_settled(Duration::from_millis(50), None, rx, is("a"), || async {
                Ok(None)
            })
            .await
            .unwrap();
        assert_eq!(got, None);
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_poll_checks_again_without_an_event() {
        let (_tx, rx) = tokio::sync::broadcast::channel::<HarnessEvent>(16);
        let reads = Arc::new(AtomicU32::new(0));
        let r = reads.clone();
        let got = until_settled(
            Duration::from_secs(5),
            Some(Duration::from_millis(10)),
            rx,
            |_| false,
            move || {
                let n = r.fetch_add(1, Ordering::SeqCst);
                async move { Ok((n >= 3).then_some(n)) }
            },
        )
        .await
        .unwrap();
        assert_eq!(got, Some(3));
    }
}
