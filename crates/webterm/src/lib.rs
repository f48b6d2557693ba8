//! The Harness browser terminal (docs/decisions.md D14).
//!
//! [`harness_term::TerminalModel`] drawn as DOM rows with `web-sys`, wired to
//! the server's `/ws/terminal/{taskId}` WebSocket. The logic lives in plain
//! modules that build and test natively ([`core`], [`keys`], [`protocol`],
//! [`flow`], [`backoff`], [`layout`], [`style`], [`render`]); the DOM and
//! WebSocket glue is compiled for `wasm32` only (`mount`, `TerminalHandle`,
//! and with the `bench` feature the benchmark exports).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod backoff;
pub mod core;
pub mod flow;
pub mod keys;
pub mod layout;
pub mod protocol;
pub mod render;
pub mod style;

#[cfg(target_arch = "wasm32")]
mod web;
#[cfg(target_arch = "wasm32")]
pub use web::{TerminalHandle, mount, terminal_url_for};

#[cfg(all(target_arch = "wasm32", feature = "bench"))]
pub mod bench;
