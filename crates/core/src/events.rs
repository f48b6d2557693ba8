//! Change events, published after the transaction that caused them commits,
//! and the bus that carries them ([`EventBus`], a port: in-process on SQLite;
//! on PostgreSQL the store's LISTEN/NOTIFY bus also relays the events of the
//! other nodes, `harness_store::PgEventBus`). The live notification center
//! (SSE), the terminal layer and the core's own caches subscribe; what a
//! node does with the other nodes' events is `crate::cluster`.

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum HarnessEvent {
    /// A message was created or changed state.
    #[serde(rename_all = "camelCase")]
    MessageChanged { id: String, task_id: String },
    /// A message was deleted (dismissed).
    #[serde(rename_all = "camelCase")]
    MessageDeleted { id: String, task_id: String },
    /// A task or its executions changed (created, parked, resumed).
    #[serde(rename_all = "camelCase")]
    TaskChanged { task_id: String },
    /// A delivery into an agent's terminal was queued or changed state.
    #[serde(rename_all = "camelCase")]
    DeliveryChanged {
        id: String,
        task_id: String,
        message_id: Option<String>,
    },
    /// A setting was written (caches of it are stale).
    #[serde(rename_all = "camelCase")]
    SettingChanged { key: String },
    /// An outbound (gateway) message was queued or changed state; `state`
    /// is the row's state as that transaction committed it (a waiter needs
    /// no read to know whether the attempt ended).
    #[serde(rename_all = "camelCase")]
    OutboundChanged {
        id: String,
        task_id: Option<String>,
        message_id: Option<String>,
        state: crate::store::OutboundState,
    },
    /// A task's unattended mode was switched: every node mirrors it into
    /// its signal file (the agent's node among them: its hook reads it).
    #[serde(rename_all = "camelCase")]
    UnattendedChanged { task_id: String, on: bool },
    /// Another node queued work of `kind` (its worker here should look:
    /// the row may be this node's). Published by [`EventBus::wake_others`]
    /// only, never delivered to the node that sent it; not shown to browsers.
    #[serde(rename_all = "camelCase")]
    WorkQueued { kind: crate::work::Kind },
    /// An automatic action on an agent (`crate::agent_actions`) was planned,
    /// claimed, done, given up or cancelled; `state` as committed.
    #[serde(rename_all = "camelCase")]
    AgentActionChanged {
        id: String,
        task_id: String,
        state: crate::store::ActionState,
    },
    /// A node was drained or undrained (`crate::drain`): that node follows
    /// at once (its heartbeat re-reads the flag as the fallback).
    #[serde(rename_all = "camelCase")]
    NodeChanged { node_id: String, draining: bool },
    /// Events of other nodes may have been missed (the bus's connection to
    /// them was lost and is back): every cache and every shown state should
    /// be reloaded, as after `RecvError::Lagged`.
    Resync,
}

/// A subscription: every event published after it was taken. A subscriber
/// that falls behind gets `RecvError::Lagged` (it lost events and should
/// reload); the bus never grows without bound.
pub type EventStream = broadcast::Receiver<HarnessEvent>;

/// The live-event bus port. Events are hints, the database is the truth:
/// publishing never fails and never blocks.
pub trait EventBus: Send + Sync + 'static {
    fn publish(&self, event: HarnessEvent);
    fn subscribe(&self) -> EventStream;
    /// Tell the other processes on this bus that work of `kind` was queued
    /// (they receive [`HarnessEvent::WorkQueued`]). In-process: nobody else.
    fn wake_others(&self, _kind: crate::work::Kind) {}
}

/// The in-process bus: a bounded broadcast channel.
pub struct InProcessBus {
    sender: broadcast::Sender<HarnessEvent>,
}

impl InProcessBus {
    pub const DEFAULT_CAPACITY: usize = 1024;

    pub fn new(capacity: usize) -> Self {
        let (sender, _) = broadcast::channel(capacity.max(1));
        Self { sender }
    }
}

impl Default for InProcessBus {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl EventBus for InProcessBus {
    fn publish(&self, event: HarnessEvent) {
        // No subscribers is fine.
        let _ = self.sender.send(event);
    }

    fn subscribe(&self) -> EventStream {
        self.sender.subscribe()
    }
}
