//! The agent holder: one small process per agent that owns the agent's PTY
//! master, its terminal model and its exit status, so the agent outlives
//! the server (a crash, an upgrade, a SIGTERM).
//!
//! * [`hold::run`] is `harness hold …`: it detaches (its own session),
//!   starts the program on a PTY, listens on `<run-dir>/holder.sock` (mode
//!   0600, in a 0700 directory, same-uid peers only) and runs a
//!   single-threaded `poll(2)` loop ([`event_loop`]).
//! * [`protocol`] is the wire format: a versioned preamble, then
//!   length-prefixed binary frames. Output carries stream positions, so a
//!   re-attaching server gets exactly the bytes it missed while the bounded
//!   ring ([`ring::DEFAULT_RING_BYTES`]) still holds them, else a snapshot.
//! * [`session`] makes a held agent a `harness_pty::PtySession` for the
//!   server ([`attach_session`]).
//! * [`client`] is the server's (tokio) side: [`client::HolderClient`] and
//!   [`client::spawn_holder`].
//!
//! See the crate's README.md for lifetimes, bounds and how the server uses
//! it.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod access;
pub mod client;
mod conn;
mod error;
pub mod event_loop;
pub mod hold;
mod model;
mod payload;
pub mod protocol;
pub mod ring;
pub mod session;
mod spawn;
#[allow(unsafe_code)]
mod sys;
mod typing;

pub use client::{HolderClient, HolderEvent, HolderEvents, HolderInfo};
pub use error::HolderError;
pub use hold::{ExitRecord, HoldConfig, read_exit_file};
pub use protocol::{ExitInfo, InputMode, InputOutcome, SnapshotKind};
pub use session::{Attached, attach_session};
pub use spawn::spawn_holder;
