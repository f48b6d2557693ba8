//! Background workers that do what Harness owes somebody: one skeleton
//! (`engine.rs`: leased turns, a bounded number of attempts in flight, woken
//! in-process by the kind's waker with polling as the fallback, cancelled by
//! the token from `launch`, restart-safe because the rows, not memory, say
//! what is left), and one module per kind with its turn and its runner.

pub mod agent_actions;
pub mod daily_reports;
pub mod deliveries;
pub mod engine;
pub mod gateway_cli;
pub mod gateway_replies;
pub mod inbox;
pub mod outbox;
mod start_marks;
