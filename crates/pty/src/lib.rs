//! PTY supervisor for Harness: agents (Claude Code, Codex, any command) run
//! in real pseudo-terminals owned by the server.
//!
//! * [`PtySession::spawn`] starts a [`SpawnSpec`] (argv, cwd, the COMPLETE
//!   environment — see [`base_env`] — and size) in a new PTY. One reader
//!   thread per PTY feeds a bounded channel; the session keeps a
//!   [`harness_term::TerminalModel`], parsed lazily off the output path
//!   (`model`), so [`screen_text`](PtySession::screen_text) and
//!   [`snapshot`](PtySession::snapshot) are always available and current.
//! * [`PtySession::subscribe`] gives each viewer a snapshot plus a bounded,
//!   query-filtered live stream; a stalled viewer is cut off
//!   ([`OutputEvent::Lagged`]) instead of growing memory.
//! * [`PtySession::inject`] writes a reply exactly once per injection id
//!   (bracketed paste when enabled, then the submit key after a settle
//!   delay); [`PtySession::wait_for_input_boundary`] waits for a real
//!   boundary first.
//! * [`PtySession::kill`] / [`terminate`](PtySession::terminate) signal the
//!   whole process group; the exit is reported only after the output was
//!   drained.
//! * [`PtySession::attach_remote`] is the same session over a PTY an agent
//!   holder owns (`remote`): the agent outlives this process.
//! * [`PtyRegistry`] holds sessions by task id with the keepalive rules
//!   (2 h running / 5 min exited after the last viewer; none while parked).

mod error;
mod inject;
pub mod isolate;
mod kill;
mod lines;
mod model;
mod output;
mod registry;
pub mod remote;
pub mod reply;
mod session;
mod sizing;
mod spec;
mod stream;

pub use error::PtyError;
pub use inject::{
    DEFAULT_LEDGER_CAPACITY, DEFAULT_SETTLE, InjectOptions, InjectOutcome, InjectionLedger,
    PasteMode,
};
pub use kill::process_alive;
pub use output::{OutputEvent, SubscriberLimits, Subscription};
pub use registry::{KeepaliveConfig, PtyRegistry};
pub use remote::{RemotePty, RemoteReply, RemoteStart};
pub use session::{Boundary, ExitStatus, PtySession, SessionOptions};
pub use sizing::SizeVote;
pub use spec::{BASE_ENV_KEYS, DEFAULT_TERM, SpawnSpec, base_env};

pub use harness_term::{RowTexts, ScreenLines, ScreenText};
