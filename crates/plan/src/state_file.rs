//! The state root, its file names, discovery, and durable atomic writes of
//! `harness-tasks.json` with one `.bak` generation.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::error::{PlanError, Result};
use crate::model::TasksFile;

pub const TASKS_FILE: &str = "harness-tasks.json";
pub const BAK_FILE: &str = "harness-tasks.json.bak";
pub const PROGRESS_FILE: &str = "harness-progress.txt";
pub const INIT_SCRIPT: &str = "harness-init.sh";
pub const ACTIVE_MARKER: &str = ".harness-active";
pub const REFLECT_MARKER: &str = ".harness-reflect";
pub const STOP_COUNTER: &str = ".harness-stop-counter";
pub const SESSION_LOCK: &str = ".harness-session.lock";
pub const SESSION_PID: &str = ".harness-session.pid";
pub const TX_LOCK: &str = ".harness-tx.lock";

/// Patterns (git pathspec basenames) of every file the loop owns. Rollback never resets or
/// cleans these away; commits never include them.
pub const STATE_PATTERNS: &[&str] = &[
    "harness-tasks.json",
    "harness-tasks.json.*",
    "harness-progress.txt",
    "harness-init.sh",
    ".harness-*",
];

/// The directory holding `harness-tasks.json` and the other state files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateRoot {
    dir: PathBuf,
}

impl StateRoot {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        StateRoot { dir: dir.into() }
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    pub fn tasks_path(&self) -> PathBuf {
        self.path(TASKS_FILE)
    }
    pub fn bak_path(&self) -> PathBuf {
        self.path(BAK_FILE)
    }
    pub fn progress_path(&self) -> PathBuf {
        self.path(PROGRESS_FILE)
    }
    pub fn exists(&self) -> bool {
        self.tasks_path().is_file()
    }
    pub fn is_active(&self) -> bool {
        self.path(ACTIVE_MARKER).exists()
    }
    /// Creates `.harness-active`.
    pub fn activate(&self) -> Result<()> {
        let p = self.path(ACTIVE_MARKER);
        write_atomic(&p, b"")
    }
    /// Removes `.harness-active` (missing is fine).
    pub fn deactivate(&self) -> Result<()> {
        remove_if_exists(&self.path(ACTIVE_MARKER))
    }
}

/// Walks up from `start` to the first directory holding `harness-tasks.json`.
pub fn find_root_from(start: &Path, max_parents: Option<usize>) -> Option<StateRoot> {
    let mut dir = Some(start);
    let mut steps = 0usize;
    while let Some(d) = dir {
        if d.join(TASKS_FILE).is_file() {
            return Some(StateRoot::new(d));
        }
        if max_parents.is_some_and(|m| steps >= m) {
            return None;
        }
        steps += 1;
        dir = d.parent();
    }
    None
}

/// State root of the CLI: `HARNESS_STATE_ROOT` when it holds the tasks file, else the
/// nearest ancestor of `cwd` holding it.
pub fn discover(cwd: &Path) -> Result<StateRoot> {
    if let Some(env) = std::env::var_os("HARNESS_STATE_ROOT").filter(|v| !v.is_empty()) {
        let root = StateRoot::new(PathBuf::from(env));
        if root.exists() {
            return Ok(root);
        }
    }
    find_root_from(cwd, None).ok_or_else(|| PlanError::NoStateRoot(cwd.to_path_buf()))
}

/// Parses the text of `harness-tasks.json`; `tasks` must be a list.
pub fn parse_tasks(text: &str, file: &Path) -> Result<TasksFile> {
    let value: Value = serde_json::from_str(text).map_err(|e| PlanError::Corrupt {
        file: file.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Some(obj) = value.as_object() else {
        return Err(PlanError::Config {
            file: file.to_path_buf(),
            field: "(top level)".into(),
            message: "must be a JSON object".into(),
        });
    };
    if let Some(tasks) = obj.get("tasks")
        && !tasks.is_array()
    {
        return Err(PlanError::Config {
            file: file.to_path_buf(),
            field: "tasks".into(),
            message: "must be a list".into(),
        });
    }
    serde_json::from_value(value).map_err(|e| PlanError::Config {
        file: file.to_path_buf(),
        field: "(document)".into(),
        message: e.to_string(),
    })
}

fn read_text(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| PlanError::io("read", path, e))
}

/// Read-only load (no restore).
pub fn load(root: &StateRoot) -> Result<TasksFile> {
    let path = root.tasks_path();
    parse_tasks(&read_text(&path)?, &path)
}

/// Loads the file; when it is corrupt and `.bak` parses, the backup is restored (atomically)
/// and `restored` is true. Call it while holding the transaction lock.
pub fn load_or_restore(root: &StateRoot) -> Result<(TasksFile, bool)> {
    let path = root.tasks_path();
    let text = read_text(&path)?;
    match parse_tasks(&text, &path) {
        Ok(f) => Ok((f, false)),
        Err(err @ (PlanError::Corrupt { .. } | PlanError::Config { .. })) => {
            let bak = root.bak_path();
            let restored = fs::read_to_string(&bak)
                .ok()
                .and_then(|t| parse_tasks(&t, &bak).ok().map(|f| (t, f)));
            match restored {
                Some((bak_text, f)) => {
                    tracing::warn!(file = %path.display(), error = %err, "restoring from .bak");
                    write_atomic(&path, bak_text.as_bytes())?;
                    Ok((f, true))
                }
                None => Err(err),
            }
        }
        Err(e) => Err(e),
    }
}

/// Writes the file durably: the current (valid) version goes to `.bak` first.
pub fn save(root: &StateRoot, file: &TasksFile) -> Result<()> {
    let path = root.tasks_path();
    if let Ok(current) = fs::read_to_string(&path)
        && parse_tasks(&current, &path).is_ok()
    {
        write_atomic(&root.bak_path(), current.as_bytes())?;
    }
    let mut text = serde_json::to_string_pretty(file).map_err(|e| PlanError::Config {
        file: path.clone(),
        field: "(document)".into(),
        message: e.to_string(),
    })?;
    text.push('\n');
    write_atomic(&path, text.as_bytes())
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Per-writer temp file, fsync, rename over `path`, fsync of the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".into());
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("{name}.tmp.{}.{n}", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| PlanError::io("create", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| PlanError::io("write", &tmp, e))?;
        f.sync_all().map_err(|e| PlanError::io("fsync", &tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| PlanError::io("rename", path, e))?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// fsync of a directory so a rename is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(|e| PlanError::io("open dir", dir, e))?;
    d.sync_all().map_err(|e| PlanError::io("fsync dir", dir, e))
}

pub fn remove_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(PlanError::io("remove", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, StateRoot) {
        let d = tempfile::tempdir().expect("tempdir");
        let r = StateRoot::new(d.path());
        (d, r)
    }

    #[test]
    fn save_keeps_one_bak_generation() {
        let (_d, r) = root();
        let mut f = TasksFile::new("2026-01-01T00:00:00Z");
        save(&r, &f).expect("save1");
        assert!(!r.bak_path().exists());
        f.session_count = 1;
        save(&r, &f).expect("save2");
        f.session_count = 2;
        save(&r, &f).expect("save3");
        let bak = parse_tasks(
            &fs::read_to_string(r.bak_path()).expect("bak"),
            &r.bak_path(),
        )
        .expect("parse bak");
        assert_eq!(bak.session_count, 1);
        assert_eq!(load(&r).expect("load").session_count, 2);
        // no temp files left behind
        let leftovers: Vec<_> = fs::read_dir(r.dir())
            .expect("ls")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn corrupt_restores_from_bak_or_reports_position() {
        let (_d, r) = root();
        let mut f = TasksFile::new("2026-01-01T00:00:00Z");
        save(&r, &f).expect("save");
        f.session_count = 7;
        save(&r, &f).expect("save");
        fs::write(r.tasks_path(), "{\n  \"tasks\": [,\n").expect("corrupt");
        let (got, restored) = load_or_restore(&r).expect("restore");
        assert!(restored);
        assert_eq!(got.session_count, 0);
        assert!(load(&r).is_ok());

        fs::write(r.tasks_path(), "{\n  \"tasks\": [,\n").expect("corrupt");
        fs::write(r.bak_path(), "garbage").expect("corrupt bak");
        match load_or_restore(&r) {
            Err(PlanError::Corrupt {
                line, column, file, ..
            }) => {
                assert_eq!(line, 2);
                assert!(column > 0);
                assert!(file.ends_with(TASKS_FILE));
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn tasks_not_a_list_is_config_error() {
        let (_d, r) = root();
        fs::write(r.tasks_path(), r#"{"tasks":"nope"}"#).expect("write");
        let err = load(&r).expect_err("must fail");
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("tasks"));
    }

    #[test]
    fn find_root_walks_up() {
        let (_d, r) = root();
        save(&r, &TasksFile::new("x")).expect("save");
        let sub = r.dir().join("a/b/c");
        fs::create_dir_all(&sub).expect("mkdir");
        assert_eq!(find_root_from(&sub, None), Some(r.clone()));
        assert_eq!(find_root_from(&sub, Some(1)), None);
    }
}
