//! The [`EventBus`] port on PostgreSQL LISTEN/NOTIFY:
//! every node sharing the database sees every node's events.
//!
//! * publish: the event goes to this process's subscribers at once (the
//!   in-process broadcast) and, through a bounded queue, to one sender task
//!   that sends what queued up in one statement (`pg_notify` over an array:
//!   one round trip per batch; repeated payloads sent once). Under a stream
//!   of events, statements are at least `MIN_GAP` (20 ms) apart; a lone
//!   event goes at once. A full queue drops the hint (counted in the log): the
//!   database is the truth, the other nodes poll.
//! * the payload is `{"o": <origin>, "e": <event>}` (ids only, far below
//!   NOTIFY's 8000 bytes; a longer one is not sent). `origin` is this
//!   process's random id: a node never hears its own events twice.
//! * one listener task holds a LISTEN connection; a lost connection is
//!   connected again with a bounded backoff (100 ms … 5 s, cancellable) and
//!   then the subscribers get [`HarnessEvent::Resync`]: what was sent while
//!   it was away is lost, so they reload.

use std::{sync::Arc, time::Duration};

use harness_core::{
    EventBus, HarnessEvent,
    events::{EventStream, InProcessBus},
    work::Kind,
};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, postgres::PgListener};
use tokio::{
    sync::{mpsc, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

/// The one NOTIFY channel of Harness events.
pub const CHANNEL: &str = "harness_events";
/// NOTIFY's payload limit is 8000 bytes; leave room.
const MAX_PAYLOAD: usize = 7900;
/// Hints waiting for the sender task.
const QUEUE: usize = 4096;
/// Hints sent in one statement at most.
const BATCH: usize = 256;
/// While hints keep coming, one NOTIFY statement per this gap at most (each
/// statement is a transaction on the server and wakes every node's
/// listener). A lone hint is not delayed. Each node sends its own, so the
/// statements per event grow with the nodes: at 5 ms, three nodes asking
/// made 0.3–0.4 more write transactions per ask than one node did
/// (`cargo bench -p server --bench cluster` prints them).
const MIN_GAP: Duration = Duration::from_millis(20);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

#[derive(Serialize)]
struct Outgoing<'a> {
    o: &'a str,
    e: &'a HarnessEvent,
}

#[derive(Deserialize)]
struct Incoming {
    o: String,
    e: HarnessEvent,
}

/// The LISTEN/NOTIFY bus of one process.
pub struct PgEventBus {
    local: InProcessBus,
    origin: String,
    outgoing: mpsc::Sender<String>,
    listening: watch::Receiver<bool>,
}

impl PgEventBus {
    /// The bus on `pool`'s database and its two tasks (sender, listener),
    /// which end when `cancel` fires.
    pub fn start(pool: PgPool, cancel: CancellationToken) -> (Arc<Self>, JoinHandle<()>) {
        let (outgoing, queue) = mpsc::channel(QUEUE);
        let (connected, listening) = watch::channel(false);
        let bus = Arc::new(Self {
            local: InProcessBus::default(),
            origin: harness_core::ids::new_id(),
            outgoing,
            listening,
        });
        let sender = tokio::spawn(send_loop(pool.clone(), queue, cancel.clone()));
        let listener = tokio::spawn(listen_loop(pool, bus.clone(), connected, cancel));
        let job = tokio::spawn(async move {
            let _ = sender.await;
            let _ = listener.await;
        });
        (bus, job)
    }

    /// Wait until the LISTEN connection is up (at most `within`); whether it is.
    pub async fn listening(&self, within: Duration) -> bool {
        let mut rx = self.listening.clone();
        tokio::time::timeout(within, rx.wait_for(|up| *up))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    fn send_remote(&self, event: &HarnessEvent) {
        let payload = match serde_json::to_string(&Outgoing {
            o: &self.origin,
            e: event,
        }) {
            Ok(p) if p.len() <= MAX_PAYLOAD => p,
            Ok(p) => {
                tracing::warn!(bytes = p.len(), "event too large for NOTIFY; not relayed");
                return;
            }
            Err(err) => {
                tracing::warn!(%err, "event not serialisable; not relayed");
                return;
            }
        };
        if self.outgoing.try_send(payload).is_err() {
            tracing::debug!("NOTIFY queue full or closed; an event hint was dropped");
        }
    }

    /// An event from another process: to this process's subscribers.
    fn receive(&self, payload: &str) {
        match serde_json::from_str::<Incoming>(payload) {
            Ok(incoming) if incoming.o == self.origin => {}
            Ok(incoming) => self.local.publish(incoming.e),
            Err(err) => tracing::debug!(%err, "ignored a foreign NOTIFY payload"),
        }
    }
}

impl EventBus for PgEventBus {
    fn publish(&self, event: HarnessEvent) {
        self.send_remote(&event);
        self.local.publish(event);
    }

    fn subscribe(&self) -> EventStream {
        self.local.subscribe()
    }

    fn wake_others(&self, kind: Kind) {
        self.send_remote(&HarnessEvent::WorkQueued { kind });
    }
}

/// Send the queued hints, a batch per statement, until `cancel`. A hint
/// after a quiet spell goes at once; while hints keep coming, statements are
/// at least [`MIN_GAP`] apart and each carries what queued meanwhile.
async fn send_loop(pool: PgPool, mut queue: mpsc::Receiver<String>, cancel: CancellationToken) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut last_sent: Option<tokio::time::Instant> = None;
    loop {
        batch.clear();
        let got = tokio::select! {
            () = cancel.cancelled() => break,
            n = queue.recv_many(&mut batch, BATCH) => n,
        };
        if got == 0 {
            break;
        }
        if let Some(at) = last_sent
            && at.elapsed() < MIN_GAP
        {
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep_until(at + MIN_GAP) => {}
            }
            while batch.len() < BATCH {
                match queue.try_recv() {
                    Ok(more) => batch.push(more),
                    Err(_) => break,
                }
            }
        }
        // PostgreSQL would drop the repeats of one transaction; not sent.
        let mut seen = std::collections::HashSet::with_capacity(batch.len());
        batch.retain(|p| seen.insert(p.clone()));
        last_sent = Some(tokio::time::Instant::now());
        let sent = sqlx::query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p")
            .bind(CHANNEL)
            .bind(&batch)
            .execute(&pool)
            .await;
        if let Err(err) = sent {
            // Hints only: the other nodes poll; never retried into a loop.
            tracing::warn!(%err, dropped = batch.len(), "cannot NOTIFY the other nodes");
        }
    }
    tracing::debug!("event NOTIFY sender stopped");
}

/// Hold a LISTEN connection until `cancel`; on a loss connect again
/// (bounded backoff) and tell the subscribers to reload.
async fn listen_loop(
    pool: PgPool,
    bus: Arc<PgEventBus>,
    connected: watch::Sender<bool>,
    cancel: CancellationToken,
) {
    let mut backoff = BACKOFF_MIN;
    let mut lost = false;
    while !cancel.is_cancelled() {
        let listener = tokio::select! {
            () = cancel.cancelled() => break,
            l = listen(&pool) => l,
        };
        let mut listener = match listener {
            Ok(l) => l,
            Err(err) => {
                tracing::warn!(%err, retry_in = ?backoff, "cannot LISTEN for other nodes' events");
                lost = true;
                tokio::select! {
                    () = cancel.cancelled() => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        backoff = BACKOFF_MIN;
        connected.send_replace(true);
        if lost {
            tracing::info!("listening for other nodes' events again; subscribers reload");
            bus.local.publish(HarnessEvent::Resync);
        }
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => break,
                n = listener.try_recv() => n,
            };
            match next {
                Ok(Some(notification)) => bus.receive(notification.payload()),
                // The connection was lost (sqlx would reconnect on the next
                // call; a new listener here keeps the backoff ours).
                Ok(None) => {
                    tracing::warn!("the LISTEN connection was lost; connecting again");
                    break;
                }
                Err(err) => {
                    tracing::warn!(%err, "the LISTEN connection failed; connecting again");
                    break;
                }
            }
        }
        // Whatever was sent until the next LISTEN is lost for this node.
        connected.send_replace(false);
        lost = true;
    }
    tracing::debug!("event listener stopped");
}

async fn listen(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_carry_the_origin_and_fit_notify() {
        let event = HarnessEvent::OutboundChanged {
            id: "c".repeat(30),
            task_id: Some("c".repeat(30)),
            message_id: Some("c".repeat(30)),
            state: harness_core::store::OutboundState::Pending,
        };
        let text = serde_json::to_string(&Outgoing {
            o: "origin1",
            e: &event,
        })
        .unwrap();
        assert!(text.len() < 400, "{text}");
        let back: Incoming = serde_json::from_str(&text).unwrap();
        assert_eq!(back.o, "origin1");
        assert_eq!(back.e, event);
        let wake = serde_json::to_string(&HarnessEvent::WorkQueued {
            kind: Kind::Deliveries,
        })
        .unwrap();
        assert_eq!(wake, r#"{"type":"workQueued","kind":"deliveries"}"#);
    }
}
