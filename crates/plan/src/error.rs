//! The crate's single error type.

use std::path::PathBuf;

/// Every failure the task-list loop can report.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// An OS or filesystem call failed.
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A state file does not parse (CONFIG): names the file and the JSON position.
    #[error("[CONFIG] {file}: invalid JSON at line {line}, column {column}: {message}")]
    Corrupt {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A state file parses but a field is wrong (CONFIG): names the file and the field.
    #[error("[CONFIG] {file}: field `{field}`: {message}")]
    Config {
        file: PathBuf,
        field: String,
        message: String,
    },
    /// Bad command-line usage or a request the state does not allow.
    #[error("{0}")]
    Usage(String),
    /// No state root (no `harness-tasks.json`) was found.
    #[error("no harness-tasks.json found in {0} or its parents (run `harness init` first)")]
    NoStateRoot(PathBuf),
    /// The referenced task does not exist.
    #[error("task not found: {0}")]
    TaskNotFound(String),
    /// The lock is held by another live process.
    #[error("lock busy: {path} is held by {holder}")]
    LockBusy { path: PathBuf, holder: String },
    /// The state does not allow the transition (wrong status, foreign claim...).
    #[error("{0}")]
    Conflict(String),
    /// A git command failed.
    #[error("git {args}: {message}")]
    Git { args: String, message: String },
    /// A child process could not be started or waited for.
    #[error("process `{command}`: {message}")]
    Process { command: String, message: String },
}

impl PlanError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        PlanError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Exit code of the CLI for this error: 2 for bad usage or a bad state file, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            PlanError::Corrupt { .. }
            | PlanError::Config { .. }
            | PlanError::Usage(_)
            | PlanError::NoStateRoot(_)
            | PlanError::TaskNotFound(_) => 2,
            _ => 1,
        }
    }
}

pub type Result<T> = std::result::Result<T, PlanError>;
