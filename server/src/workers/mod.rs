//! Background workers that do what Harness owes somebody, one module per
//! kind on one skeleton (durable-work.md): woken in-process by a `Notify`
//! on enqueue, a polling interval as the fallback, a bounded number of rows
//! in flight, cancelled by the token from `launch`, restart-safe because the
//! rows (not memory) say what is left to do.

pub mod deliveries;
pub mod gateway_cli;
pub mod inbox;
pub mod outbox;
mod outbox_loop;
pub mod spawn_journal;
