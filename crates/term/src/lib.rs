//! The terminal model shared by the Harness server and the browser terminal.
//!
//! * [`TerminalModel`] wraps a `vt100` screen fed with a PTY's output. It
//!   answers `GET /api/tasks/{id}/screen` ([`TerminalModel::screen_text`])
//!   and gives a (re)connecting browser a [`snapshot`](TerminalModel::snapshot)
//!   of the current screen instead of a raw replay that could start in the
//!   middle of an escape sequence (docs/decisions.md D14).
//! * [`QueryFilter`] strips terminal *queries* (DA, DSR, colour queries, OSC
//!   52 reads, title reports, …) from a live stream before it reaches a
//!   browser, so that the browser never answers them into the agent's input
//!   (engineering-notes §C.6).
//!
//! The crate has no I/O and compiles for `wasm32-unknown-unknown`. Host side
//! effects (bell, title, clipboard) are `vt100`'s no-op defaults.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod lines;
mod model;
mod modes;
mod queries;
mod scan;

pub use lines::{RowTexts, ScreenLines};
pub use model::{
    DEFAULT_SCROLLBACK, MAX_COLS, MAX_ROWS, MIN_SIZE, ScreenText, TerminalModel, clamp_size,
};
pub use modes::{ModeScanner, mode_sequences};
pub use queries::{MAX_STRING_SEQUENCE, QueryFilter, is_query, strip_queries};
pub use vt100;
