//! The private copy of the harness executable that agents' hooks and the
//! sandbox launcher run from.
//!
//! The installed binary lives where the server's user can write it
//! (`target/`, `~/.cargo/bin`), and an agent runs as that user: a script
//! moved over it would answer every hook with "allow" and start the next
//! agent without its sandbox. So at start the server copies its own running
//! image (`/proc/self/exe`, never the path, which may already have been
//! replaced) into `<data-dir>/bin/harness-<sha256 prefix>`: a 0700 directory,
//! a 0500 file, written under a temporary name, synced, then renamed. An
//! isolated agent cannot see the data directory; the copy is bound back into
//! its namespace read-only, so its hooks can run it and nothing in there can
//! change it. Copies of earlier builds are removed (a running process keeps
//! its image; an isolated agent keeps its read-only bind).
//!
//! With isolation off an agent could still replace the copy: there is no
//! guarantee then (said at start, by `harness doctor` and in README).

use std::{
    fs::{self, File, OpenOptions},
    io::{self, Read, Write},
    os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

/// The directory of the copy inside the data directory.
pub const DIR: &str = "bin";
const PREFIX: &str = "harness-";
const TEMP_PREFIX: &str = ".harness-tmp-";

/// What the copy is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// This process's own image (`/proc/self/exe`): what `harness serve` runs.
    Running,
    /// Another harness executable (the in-process tests name the built binary).
    File(PathBuf),
}

impl Source {
    /// `Running` when `configured` is this process's executable (the
    /// default of `ServeConfig`), else that file.
    pub fn for_configured(configured: &Path) -> Self {
        match std::env::current_exe() {
            Ok(me) if me == configured => Self::Running,
            _ => Self::File(configured.to_path_buf()),
        }
    }

    fn open(&self) -> io::Result<File> {
        match self {
            // The running image even when its path was replaced or removed.
            Self::Running if Path::new("/proc/self/exe").exists() => File::open("/proc/self/exe"),
            Self::Running => File::open(std::env::current_exe()?),
            Self::File(path) => File::open(path),
        }
    }
}

/// Copies `source` into `<data_dir>/bin/` (see the module comment) and
/// answers the copy's path.
pub fn install(data_dir: &Path, source: &Source) -> io::Result<PathBuf> {
    let dir = data_dir.join(DIR);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    check_private_dir(&dir)?;
    let temp = dir.join(format!("{TEMP_PREFIX}{}", std::process::id()));
    match fs::remove_file(&temp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut input = source.open().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot read the harness executable ({source:?}): {e}"),
        )
    })?;
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&temp)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = fs::remove_file(&temp);
                return Err(e);
            }
        };
        hash.update(&buf[..n]);
        if let Err(e) = out.write_all(&buf[..n]) {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
    }
    out.set_permissions(fs::Permissions::from_mode(0o500))?;
    out.sync_all()?;
    drop(out);
    let digest = hex::encode(hash.finalize());
    let name = format!("{PREFIX}{}", &digest[..16]);
    let path = dir.join(&name);
    fs::rename(&temp, &path)?;
    File::open(&dir)?.sync_all()?;
    remove_stale(&dir, &name);
    Ok(path)
}

/// The directory is this user's and nobody else may write into it (a
/// directory another user can write would let them swap the copy).
fn check_private_dir(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir)?;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me {
        return Err(io::Error::other(format!(
            "{} must be a directory owned by this user",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Earlier copies and temporary files left by a crash.
fn remove_stale(dir: &Path, keep: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(PREFIX) || name.starts_with(TEMP_PREFIX);
        if ours
            && name != keep
            && let Err(err) = fs::remove_file(entry.path())
        {
            tracing::warn!(%err, file = %entry.path().display(), "cannot remove an old copy of the harness executable");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_is_private_named_by_content_and_replaces_stale_ones() {
        let data = tempfile::tempdir().unwrap();
        let exe = data.path().join("harness-src");
        fs::write(&exe, b"#!/bin/sh\necho one\n").unwrap();
        let first = install(data.path(), &Source::File(exe.clone())).unwrap();
        assert_eq!(fs::read(&first).unwrap(), b"#!/bin/sh\necho one\n");
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&first), 0o500);
        assert_eq!(mode(&data.path().join(DIR)), 0o700);
        // The same content, the same name.
        assert_eq!(
            install(data.path(), &Source::File(exe.clone())).unwrap(),
            first
        );
        // Replacing the source afterwards changes nothing in the copy…
        fs::write(&exe, b"#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(fs::read(&first).unwrap(), b"#!/bin/sh\necho one\n");
        // …until the next start, which copies the new build and removes the old.
        let second = install(data.path(), &Source::File(exe)).unwrap();
        assert_ne!(second, first);
        assert!(!first.exists(), "the stale copy is removed");
        let left: Vec<_> = fs::read_dir(data.path().join(DIR)).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn the_running_image_is_read_not_the_path() {
        let data = tempfile::tempdir().unwrap();
        let copy = install(data.path(), &Source::Running).unwrap();
        let me = fs::read("/proc/self/exe").unwrap();
        assert_eq!(fs::read(copy).unwrap(), me);
    }
}
