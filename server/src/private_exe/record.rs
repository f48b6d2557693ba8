//! What a start may reuse: `<data-dir>/bin/copies.json`, written after
//! verified copies, names the source they were made from (its identity) and
//! every file made (name and identity). A later start whose source and
//! files still have exactly those identities skips the copy and the hash.
//!
//! An identity is what no process of this user can keep while changing a
//! file: device, inode, size, mtime and ctime (ctime is set by the kernel
//! on every write, chmod, rename or `utimes`; nobody can set it back). So
//! a copy rewritten in place (it needs a chmod first: it is 0500) or
//! replaced by another file, even of the same size and mtime, no longer
//! matches, and the next start copies again.

use std::{
    fs, io,
    io::Write,
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::Path,
};

use serde::{Deserialize, Serialize};

/// The record's file name (not a copy's prefix: never removed as stale).
pub(super) const FILE: &str = "copies.json";

/// A file's identity (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    pub(super) fn of(meta: &fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// One file this module made in the directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Made {
    /// Its name in the directory (checked: a plain name of ours).
    pub name: String,
    pub identity: Identity,
}

impl Made {
    /// Stats `dir/name` as it is now.
    pub(super) fn stat(dir: &Path, name: &str) -> io::Result<Self> {
        let meta = fs::symlink_metadata(dir.join(name))?;
        Ok(Self {
            name: name.to_owned(),
            identity: Identity::of(&meta),
        })
    }

    /// Whether the file is still exactly the one made: a name of ours, a
    /// regular file (not a link) of this user, mode 0500, no other name,
    /// the same identity.
    pub(super) fn intact(&self, dir: &Path, valid_name: impl Fn(&str) -> bool) -> bool {
        if !valid_name(&self.name) {
            return false;
        }
        let Ok(meta) = fs::symlink_metadata(dir.join(&self.name)) else {
            return false;
        };
        meta.file_type().is_file()
            && meta.uid() == super::euid()
            && meta.mode() & 0o7777 == 0o500
            && meta.nlink() == 1
            && Identity::of(&meta) == self.identity
    }
}

/// The record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Record {
    /// The harness executable the copy was made from, as it was then.
    pub source: Identity,
    /// The copy of it.
    pub copy: Made,
    /// The holder written from this build's embedded holder, if any.
    #[serde(default)]
    pub holder: Option<Made>,
}

impl Record {
    /// The record in `dir`; `None` when missing, unreadable, not this
    /// user's 0600 regular file, or not a record.
    pub(super) fn read(dir: &Path) -> Option<Self> {
        let path = dir.join(FILE);
        let meta = fs::symlink_metadata(&path).ok()?;
        if !meta.file_type().is_file() || meta.uid() != super::euid() || meta.mode() & 0o077 != 0 {
            return None;
        }
        serde_json::from_slice(&fs::read(&path).ok()?).ok()
    }

    /// Writes the record atomically (temporary file, fsync, rename); the
    /// caller syncs the directory.
    pub(super) fn write(&self, dir: &Path) -> io::Result<()> {
        let temp = dir.join(format!(
            "{}record-{}",
            super::TEMP_PREFIX,
            std::process::id()
        ));
        let _ = fs::remove_file(&temp);
        let body = serde_json::to_vec(self).map_err(io::Error::other)?;
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        if let Err(e) = out.write_all(&body).and_then(|()| out.sync_all()) {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        drop(out);
        fs::rename(&temp, dir.join(FILE))
    }
}
