//! The outbox sender's spawn journal: which leased rows it really started.
//!
//! The sender leases a few due rows ahead of a free CLI slot, so that a slot
//! that frees up starts the next send at once instead of waiting for a
//! database turn. A leased row is therefore not proof of a send. Just before
//! each gateway CLI is spawned, one line `<outbound id> <attempt>\n` is
//! appended here with one `write(2)` (`O_APPEND`); the spawn happens only
//! after the write succeeded. After a crash, start-up recovery reads the
//! journals of this node's earlier boots
//! ([`harness_core::Harness::recover_boot_outbound`]): a journaled row may
//! have been sent (SENT_UNVERIFIED), an unjournaled one was not (released,
//! due again).
//!
//! Durability: a `write(2)` that returned survives the process being killed
//! (it is in the page cache), not a power cut. The database's commits
//! (`synchronous = NORMAL` in WAL mode) are in the same class, so a power
//! cut can lose a claim as well as its journal line: the row is sent again,
//! exactly as it would have been without leasing ahead.
//!
//! Files: `<dir>/<hex of the lease owner>.<segment>.log`, mode 0600. A
//! segment is rotated after [`ROTATE_AFTER`] lines (configurable, see
//! `OutboxConfig::journal_rotate_after`): the new one starts with
//! the lines of the sends still running, then the old one is removed (a
//! crash in between leaves both, and both are read).

use std::{
    collections::{HashMap, HashSet},
    fs::{self, File, OpenOptions},
    io::{self, Write},
    os::unix::fs::{DirBuilderExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

/// Lines per segment before it is rotated.
pub const ROTATE_AFTER: usize = 4096;

fn hex(owner: &str) -> String {
    owner.bytes().map(|b| format!("{b:02x}")).collect()
}

fn segment_path(dir: &Path, owner_hex: &str, seq: u64) -> PathBuf {
    dir.join(format!("{owner_hex}.{seq}.log"))
}

/// `(owner hex, segment)` of a journal file name.
fn parse_name(name: &str) -> Option<(&str, u64)> {
    let stem = name.strip_suffix(".log")?;
    let (owner, seq) = stem.rsplit_once('.')?;
    Some((owner, seq.parse().ok()?))
}

fn append_only(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

/// This sender's journal.
pub struct SpawnJournal {
    dir: PathBuf,
    owner_hex: String,
    seq: u64,
    file: File,
    lines: usize,
    rotate_after: usize,
    /// Sends started whose end is not committed yet: carried into a new segment.
    live: HashMap<String, u32>,
}

impl SpawnJournal {
    /// Create the directory (0700) and this owner's first segment; rotate
    /// after `rotate_after` lines (at least 1).
    pub fn open(dir: &Path, owner: &str, rotate_after: usize) -> io::Result<Self> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let owner_hex = hex(owner);
        let file = append_only(&segment_path(dir, &owner_hex, 0))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            owner_hex,
            seq: 0,
            file,
            lines: 0,
            rotate_after: rotate_after.max(1),
            live: HashMap::new(),
        })
    }

    /// Record that attempt `attempt` of row `id` is about to start. The
    /// caller spawns only after this returned `Ok`.
    pub fn started(&mut self, id: &str, attempt: u32) -> io::Result<()> {
        if self.lines >= self.rotate_after {
            self.rotate()?;
        }
        // One write: a line is either whole or (on a failed write) not
        // terminated, and an unterminated line is not read as a start.
        self.file
            .write_all(format!("{id} {attempt}\n").as_bytes())?;
        self.lines += 1;
        self.live.insert(id.to_string(), attempt);
        Ok(())
    }

    /// The end of row `id`'s send is committed (its line need not outlive a
    /// rotation). Not before: a row still SENDING needs its line.
    pub fn finished(&mut self, id: &str) {
        self.live.remove(id);
    }

    fn rotate(&mut self) -> io::Result<()> {
        let next = self.seq + 1;
        let path = segment_path(&self.dir, &self.owner_hex, next);
        let mut file = append_only(&path)?;
        let carried: String = self
            .live
            .iter()
            .map(|(id, attempt)| format!("{id} {attempt}\n"))
            .collect();
        file.write_all(carried.as_bytes())?;
        let old = segment_path(&self.dir, &self.owner_hex, self.seq);
        (self.file, self.seq, self.lines) = (file, next, self.live.len());
        if let Err(err) = fs::remove_file(&old) {
            tracing::warn!(path = %old.display(), error = %err, "cannot remove a rotated spawn journal segment");
        }
        Ok(())
    }
}

/// The journals in a directory, read by start-up recovery.
pub struct Journals {
    pub dir: PathBuf,
}

impl Journals {
    fn files(&self) -> Vec<(String, PathBuf)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (owner, _) = parse_name(&name)?;
                Some((owner.to_string(), e.path()))
            })
            .collect()
    }

    /// Remove the journals of every owner but `current` (after recovery
    /// has settled their rows).
    pub fn remove_others(&self, current: &str) {
        let keep = hex(current);
        for (owner, path) in self.files() {
            if owner != keep
                && let Err(err) = fs::remove_file(&path)
            {
                tracing::warn!(path = %path.display(), error = %err, "cannot remove an old spawn journal");
            }
        }
    }
}

impl harness_core::outbox::StartedAttempts for Journals {
    fn started(&self, owner: &str) -> Option<HashSet<(String, u32)>> {
        let want = hex(owner);
        let mut found = false;
        let mut started = HashSet::new();
        for (_, path) in self.files().into_iter().filter(|(o, _)| *o == want) {
            let text = match fs::read(&path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(err) => {
                    // Unreadable: nothing can be ruled out for this owner.
                    tracing::error!(path = %path.display(), error = %err, "cannot read a spawn journal");
                    return None;
                }
            };
            found = true;
            // Only terminated lines: the last may be a write that failed.
            let whole = text.rfind('\n').map_or("", |end| &text[..end]);
            for line in whole.lines() {
                if let Some((id, attempt)) = line.split_once(' ')
                    && let Ok(attempt) = attempt.trim().parse()
                {
                    started.insert((id.to_string(), attempt));
                }
            }
        }
        found.then_some(started)
    }
}

#[cfg(test)]
mod tests {
    use harness_core::outbox::StartedAttempts;

    use super::*;

    #[test]
    fn a_started_attempt_is_read_back_and_an_unterminated_line_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = SpawnJournal::open(dir.path(), "node:boot-1", ROTATE_AFTER).unwrap();
        j.started("a", 1).unwrap();
        j.started("b", 3).unwrap();
        let path = segment_path(dir.path(), &hex("node:boot-1"), 0);
        let mut f = append_only(&path).unwrap();
        f.write_all(b"c 1").unwrap();
        let journals = Journals {
            dir: dir.path().to_path_buf(),
        };
        let got = journals.started("node:boot-1").unwrap();
        let want: HashSet<(String, u32)> = [("a".to_string(), 1), ("b".to_string(), 3)].into();
        assert_eq!(got, want);
        assert_eq!(journals.started("node:boot-2"), None, "no journal");
    }

    #[test]
    fn rotation_keeps_the_sends_still_running_and_drops_the_old_segment() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = SpawnJournal::open(dir.path(), "n:b", ROTATE_AFTER).unwrap();
        for i in 0..ROTATE_AFTER {
            j.started(&format!("r{i}"), 1).unwrap();
            if i != 7 {
                j.finished(&format!("r{i}"));
            }
        }
        j.started("last", 2).unwrap();
        let journals = Journals {
            dir: dir.path().to_path_buf(),
        };
        let got = journals.started("n:b").unwrap();
        let want: HashSet<(String, u32)> = [("r7".to_string(), 1), ("last".to_string(), 2)].into();
        assert_eq!(got, want);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn only_the_current_owners_journal_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        SpawnJournal::open(dir.path(), "n:old", ROTATE_AFTER).unwrap();
        SpawnJournal::open(dir.path(), "n:new", ROTATE_AFTER).unwrap();
        let journals = Journals {
            dir: dir.path().to_path_buf(),
        };
        journals.remove_others("n:new");
        assert_eq!(journals.started("n:old"), None);
        assert_eq!(journals.started("n:new"), Some(HashSet::new()));
    }
}
