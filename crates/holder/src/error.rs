//! The crate's error type.

use std::path::PathBuf;

/// Errors of the holder, its protocol and its client.
#[derive(Debug, thiserror::Error)]
pub enum HolderError {
    /// A frame or preamble could not be decoded.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A frame announced a length above the bound.
    #[error("frame of {len} bytes exceeds the limit of {max} bytes")]
    FrameTooLarge {
        /// Announced length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// The peer is not a holder (wrong magic bytes).
    #[error("not a harness holder socket (bad magic bytes)")]
    NotAHolder,
    /// The holder speaks a protocol version this build cannot read.
    #[error(
        "incompatible holder: it speaks protocol version {holder_version} (build {holder_build:?}), \
         this build reads versions {min}..={max}; {instead}"
    )]
    Incompatible {
        /// The holder's protocol version.
        holder_version: u16,
        /// The holder's build id.
        holder_build: String,
        /// Oldest version this build reads.
        min: u16,
        /// Newest version this build reads.
        max: u16,
        /// What the server does instead.
        instead: String,
    },
    /// The holder refused this connection (its reason).
    #[error("the holder refused the connection: {0}")]
    Refused(String),
    /// A command-line argument of `hold` is missing or invalid.
    #[error("invalid argument {field}: {reason}")]
    Arg {
        /// The argument's name.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The run directory is unusable (not a directory, not ours, open to
    /// other users, …).
    #[error("run directory {path}: {reason}")]
    RunDir {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another holder is listening on the socket already.
    #[error("a holder is already listening on {0}")]
    AlreadyRunning(PathBuf),
    /// Starting the held program or the holder failed.
    #[error("spawn of {program:?} failed: {reason}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        reason: String,
    },
    /// The holder's socket did not appear in time.
    #[error("the holder's socket {path} did not appear within {waited_ms} ms{detail}")]
    NotReady {
        /// The socket path.
        path: PathBuf,
        /// How long we waited.
        waited_ms: u128,
        /// What the holder said, if anything.
        detail: String,
    },
    /// The holder did not answer a request in time (or the events were
    /// not read, which stalls answers too).
    #[error("the holder did not answer the {what} request within {waited_ms} ms")]
    NoAnswer {
        /// The request.
        what: &'static str,
        /// How long we waited.
        waited_ms: u128,
    },
    /// The connection to the holder is closed.
    #[error("the connection to the holder is closed")]
    Closed,
    /// An operating-system call failed.
    #[error("{op}: {source}")]
    Os {
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl HolderError {
    /// An [`HolderError::Os`] from the last OS error.
    pub(crate) fn last_os(op: &'static str) -> Self {
        Self::Os {
            op,
            source: std::io::Error::last_os_error(),
        }
    }

    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(op: &'static str) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Self::Os { op, source }
    }
}
