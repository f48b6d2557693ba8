//! The private copy of the harness executable that agents' hooks and the
//! sandbox launcher run from, and the small holder binary agents' holders
//! run from.
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
//! **Reuse.** Copying and hashing the whole image takes seconds for a large
//! build, at every start. After verified copies, `copies.json` records the
//! source's identity and each file's ([`record`]); a start whose running
//! image and files have exactly those identities (device, inode, size,
//! mtime, ctime: a file rewritten or replaced has another ctime or inode)
//! and whose files are still this user's 0500 regular files with one name
//! skips the copy and the hash. Anything else, a directory that had to be
//! made private again included, copies as before.
//!
//! **The holder.** Holders (`harness-holder`) run one per agent for as long
//! as the agent: run from this large image, each would carry its relocated
//! read-only data privately (≈ 1.4 MB per agent in release). The build
//! embeds the holder crate's own small binary (`server/build.rs`); it is
//! written from this process's memory (the same trusted build, never a file
//! an agent could have changed) into the same directory, the same way:
//! `harness-hold-<sha256 prefix>`, 0500, temporary name, fsync, rename.
//! Without an embedded holder (a build made with `HARNESS_EMBED_HOLDER=off`)
//! holders run from the copy (`harness hold`).
//!
//! With isolation off an agent could still replace the copy: there is no
//! guarantee then (said at start, by `harness doctor` and in docs/security.md).

mod record;

use std::{
    fs::{self, File, OpenOptions},
    io::{self, Read, Write},
    os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

use record::{Identity, Made, Record};
use sha2::{Digest, Sha256};

/// The directory of the copy inside the data directory.
pub const DIR: &str = "bin";
const PREFIX: &str = "harness-";
const HOLDER_PREFIX: &str = "harness-hold-";
const TEMP_PREFIX: &str = ".harness-tmp-";
/// Hex digits of the SHA-256 in a file's name.
const NAME_HASH: usize = 16;

mod embedded {
    // `HOLDER: Option<(&[u8], &str)>`: the small holder binary and its
    // SHA-256, written by `server/build.rs`.
    include!(concat!(env!("OUT_DIR"), "/embedded_holder.rs"));
}

/// A holder binary to write next to the copy.
#[derive(Debug, Clone, Copy)]
pub struct HolderImage {
    pub bytes: &'static [u8],
    /// SHA-256 of `bytes`, lower-case hex.
    pub sha256: &'static str,
}

impl HolderImage {
    /// The holder this build embeds, if it does.
    pub fn embedded() -> Option<Self> {
        embedded::HOLDER.map(|(bytes, sha256)| Self { bytes, sha256 })
    }
}

/// What [`install`] made (or found intact).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The copy of the harness executable.
    pub harness: PathBuf,
    /// The holder binary, when the build embeds one.
    pub holder: Option<PathBuf>,
    /// The copy was reused: no copy, no hash.
    pub reused: bool,
}

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

    fn path(&self) -> io::Result<PathBuf> {
        match self {
            // The running image even when its path was replaced or removed.
            Self::Running if Path::new("/proc/self/exe").exists() => {
                Ok(PathBuf::from("/proc/self/exe"))
            }
            Self::Running => std::env::current_exe(),
            Self::File(path) => Ok(path.clone()),
        }
    }

    fn open(&self) -> io::Result<File> {
        File::open(self.path()?)
    }

    /// The identity of the file the copy is made from (through the
    /// `/proc/self/exe` link: the running inode).
    fn identity(&self) -> io::Result<Identity> {
        Ok(Identity::of(&fs::metadata(self.path()?)?))
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `<prefix><16 hex digits>`, nothing else (a record cannot name another path).
fn named(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix).is_some_and(|hash| {
        hash.len() == NAME_HASH
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Copies `source` into `<data_dir>/bin/` and writes `holder` next to it
/// (see the module comment), or reuses both when the record says they are
/// intact copies of this very source and build.
pub fn install(
    data_dir: &Path,
    source: &Source,
    holder: Option<HolderImage>,
) -> io::Result<Installed> {
    let dir = data_dir.join(DIR);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    let was_private = check_private_dir(&dir)?;
    // A directory others could write into: nothing in it is trusted.
    let previous = was_private.then(|| Record::read(&dir)).flatten();
    let source_before = source.identity().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot read the harness executable ({source:?}): {e}"),
        )
    })?;
    let reusable = previous
        .as_ref()
        .filter(|r| r.source == source_before && r.copy.intact(&dir, |n| named(n, PREFIX)));
    let (copy, source_id, reused) = match reusable {
        Some(r) => (r.copy.clone(), source_before, true),
        None => {
            let name = copy_source(&dir, source)?;
            (Made::stat(&dir, &name)?, source_before, false)
        }
    };
    let holder = match holder {
        None => None,
        Some(image) => {
            let name = format!(
                "{HOLDER_PREFIX}{}",
                image.sha256.get(..NAME_HASH).unwrap_or(image.sha256)
            );
            let intact = previous
                .as_ref()
                .and_then(|r| r.holder.as_ref())
                .filter(|h| h.name == name && h.intact(&dir, |n| named(n, HOLDER_PREFIX)));
            Some(match intact {
                Some(made) => made.clone(),
                None => {
                    write_file(&dir, &name, image.bytes)?;
                    Made::stat(&dir, &name)?
                }
            })
        }
    };
    // Recorded only when the source did not change while it was read:
    // otherwise the next start copies again.
    let unchanged = source.identity().is_ok_and(|now| now == source_id);
    let record = Record {
        source: source_id,
        copy,
        holder,
    };
    let changed = !unchanged || previous.as_ref() != Some(&record);
    if !unchanged {
        let _ = fs::remove_file(dir.join(record::FILE));
    } else if changed {
        record.write(&dir)?;
    }
    if changed {
        File::open(&dir)?.sync_all()?;
    }
    let mut keep = vec![record.copy.name.as_str()];
    keep.extend(record.holder.as_ref().map(|h| h.name.as_str()));
    remove_stale(&dir, &keep);
    Ok(Installed {
        harness: dir.join(&record.copy.name),
        holder: record.holder.as_ref().map(|h| dir.join(&h.name)),
        reused,
    })
}

/// Copies and hashes `source` into `dir` (temporary name, 0500, fsync,
/// rename); answers the copy's name.
fn copy_source(dir: &Path, source: &Source) -> io::Result<String> {
    let mut input = source.open().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot read the harness executable ({source:?}): {e}"),
        )
    })?;
    let temp = temp_path(dir)?;
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
    let digest = hex::encode(hash.finalize());
    let name = format!("{PREFIX}{}", &digest[..NAME_HASH]);
    finish(out, &temp, &dir.join(&name))?;
    Ok(name)
}

/// Writes `bytes` as `dir/name` (temporary name, 0500, fsync, rename).
fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let temp = temp_path(dir)?;
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&temp)?;
    if let Err(e) = out.write_all(bytes) {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    finish(out, &temp, &dir.join(name))
}

fn temp_path(dir: &Path) -> io::Result<PathBuf> {
    let temp = dir.join(format!("{TEMP_PREFIX}{}", std::process::id()));
    match fs::remove_file(&temp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(temp),
    }
}

fn finish(out: File, temp: &Path, path: &Path) -> io::Result<()> {
    let done = out
        .set_permissions(fs::Permissions::from_mode(0o500))
        .and_then(|()| out.sync_all());
    drop(out);
    if let Err(e) = done.and_then(|()| fs::rename(temp, path)) {
        let _ = fs::remove_file(temp);
        return Err(e);
    }
    Ok(())
}

/// The directory is this user's and nobody else may write into it (a
/// directory another user can write would let them swap the copy). Answers
/// whether it already was private (`false`: its mode had to be narrowed).
fn check_private_dir(dir: &Path) -> io::Result<bool> {
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != euid() {
        return Err(io::Error::other(format!(
            "{} must be a directory owned by this user",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        return Ok(false);
    }
    Ok(true)
}

/// Earlier copies and holders, and temporary files left by a crash.
fn remove_stale(dir: &Path, keep: &[&str]) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(PREFIX) || name.starts_with(TEMP_PREFIX);
        if ours
            && !keep.contains(&name.as_ref())
            && let Err(err) = fs::remove_file(entry.path())
        {
            tracing::warn!(%err, file = %entry.path().display(), "cannot remove an old copy of the harness executable");
        }
    }
}

#[cfg(test)]
mod tests;
