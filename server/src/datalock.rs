//! One server per data directory: `harness serve` holds an exclusive lock on
//! `<data-dir>/harness.lock` for its lifetime (released by the OS if the
//! process dies). `harness restore` takes the same lock, so it cannot swap the
//! database under a running server, and a second server on the same data
//! directory refuses to start instead of fighting the first one.

use std::{
    fs::{File, OpenOptions, TryLockError},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
};

pub const FILE: &str = "harness.lock";

/// Held while alive; dropping it releases the lock.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
    pub path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another Harness process is using the data directory {dir} ({who}); \
         stop it first, or use another --data-dir"
    )]
    Busy { dir: PathBuf, who: String },
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl DataLock {
    /// Take the lock without waiting.
    pub fn acquire(data_dir: &Path) -> Result<Self, LockError> {
        let path = data_dir.join(FILE);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(data_dir).map_err(io)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(LockError::Busy {
                dir: data_dir.to_path_buf(),
                who: match crate::supervised::discovery::read(data_dir) {
                    Some(d) => format!("a server on {} with pid {}", d.url, d.pid),
                    None => "a server, or a restore in progress".to_string(),
                },
            }),
            Err(TryLockError::Error(source)) => Err(LockError::Io { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataLock::acquire(dir.path()).unwrap();
        let err = DataLock::acquire(dir.path()).unwrap_err();
        assert!(matches!(err, LockError::Busy { .. }), "{err}");
        assert!(err.to_string().contains("stop it first"));
        drop(first);
        DataLock::acquire(dir.path()).unwrap();
    }
}
