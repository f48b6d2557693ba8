//! The crate's error type.

use std::path::PathBuf;

/// Errors of the PTY supervisor.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// `SpawnSpec::argv` was empty.
    #[error("empty argv: nothing to spawn")]
    EmptyArgv,
    /// The working directory does not exist or is not a directory.
    #[error("working directory {0} is not a directory")]
    InvalidCwd(PathBuf),
    /// Opening the PTY or starting the program failed.
    #[error("spawn of {program:?} failed: {reason}")]
    Spawn {
        /// argv\[0\].
        program: String,
        /// The underlying error, rendered.
        reason: String,
    },
    /// Resizing the PTY failed.
    #[error("resize failed: {0}")]
    Resize(String),
    /// The session's process has exited; nothing can be written to it.
    #[error("the session has exited")]
    Exited,
    /// Writing to the PTY failed.
    #[error("write to the pty failed: {0}")]
    Write(#[source] std::io::Error),
    /// Signalling the process group failed.
    #[error("signal {signal} to process group {pgid} failed: {source}")]
    Signal {
        /// Signal number.
        signal: i32,
        /// Process group id (the child's pid).
        pgid: u32,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A background task of the session is gone (runtime shutting down).
    #[error("the session's background task is gone")]
    TaskGone,
}

impl PtyError {
    pub(crate) fn spawn(program: &str, reason: impl std::fmt::Display) -> Self {
        Self::Spawn {
            program: program.to_owned(),
            reason: format!("{reason:#}"),
        }
    }
}
