//! A read-only view of a project's task list for the web UI and `GET /api/projects/{id}/plan`:
//! the tasks as an indented dependency tree with their status, attempts, last error, claim and
//! what blocks them, the counts, and the tail of the progress log. One function, [`plan_view`],
//! used by both adapters.
//!
//! It reads through the crate's own loaders without taking a lock: every write is an atomic
//! rename, so a reader always sees one whole generation of `harness-tasks.json`. A corrupt
//! file is reported (the `[CONFIG]` text), never restored from here.
//!
//! A cloned repository is not trusted: a task list or progress log that is a
//! symbolic link (it could lead to `secrets/admin.token`, `/etc/shadow`) or
//! not a regular file (a FIFO would block the reader) is refused and the
//! refusal is the view's error (`[SECURITY] …`), never the file's content.
//! Each file is opened once (`O_NOFOLLOW`, checked with `fstat` on the opened
//! descriptor) and read from that descriptor, so a file swapped in between a
//! check and a read cannot be shown.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::eligibility::{self, Stats};
use crate::error::PlanError;
use crate::model::{Task, TasksFile, status};
use crate::progress_log;
use crate::state_file::{PROGRESS_FILE, StateRoot, TASKS_FILE};

/// Progress-log lines the view carries by default.
pub const DEFAULT_LOG_LINES: usize = 50;

// Whether the list could be read is the shared vocabulary's (also in the
// browser).
pub use harness_types::PlanState;

/// The last `error_log` entry, split into its `[CATEGORY]` and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastError {
    pub category: Option<String>,
    pub message: String,
}

/// One task, in tree order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanTask {
    pub id: String,
    pub title: String,
    /// The raw status (`pending`, `in_progress`, `completed`, `failed`, …).
    pub status: String,
    pub priority: Option<String>,
    pub attempts: u32,
    pub max_attempts: u32,
    /// The dependency ids as written (empty when `depends_on` is malformed).
    pub depends_on: Vec<String>,
    /// Indentation in the tree: 0 for a root.
    pub depth: u32,
    /// The dependency it is shown under (`None` at the root).
    pub parent: Option<String>,
    /// Can never run as things stand (computed, like `harness status`).
    pub blocked: bool,
    /// For a blocked task: the dependencies that block it (unknown, permanently failed,
    /// on a cycle, blocked) — or `depends_on` when that field is malformed.
    pub blocked_by: Vec<String>,
    /// Dependencies not completed yet (for a pending task that is not blocked).
    pub waiting_on: Vec<String>,
    pub permanently_failed: bool,
    pub retryable: bool,
    pub needs_human: bool,
    pub last_error: Option<LastError>,
    pub errors: usize,
    pub claimed_by: Option<String>,
    pub lease_expires_at: Option<String>,
    pub checkpoints: usize,
    pub completed_at: Option<String>,
    pub validation: Option<String>,
}

/// The whole page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanView {
    /// The directory read.
    pub root: String,
    pub state: PlanState,
    /// With `state == error`: the `[CONFIG] <file>: …` text.
    pub error: Option<String>,
    /// `.harness-active` exists.
    pub active: bool,
    pub concurrent: bool,
    pub session_count: u64,
    pub last_session: Option<String>,
    /// Tasks per raw status.
    pub counts: BTreeMap<String, usize>,
    pub total: usize,
    pub blocked: usize,
    /// The next task `harness run` would pick: `[id, title]`.
    pub next: Option<(String, String)>,
    pub tasks: Vec<PlanTask>,
    /// The last lines of `harness-progress.txt`, oldest first.
    pub log_tail: Vec<String>,
}

impl PlanView {
    fn empty(root: &Path, state: PlanState, error: Option<String>) -> Self {
        PlanView {
            root: root.display().to_string(),
            state,
            error,
            active: false,
            concurrent: false,
            session_count: 0,
            last_session: None,
            counts: BTreeMap::new(),
            total: 0,
            blocked: 0,
            next: None,
            tasks: Vec::new(),
            log_tail: Vec::new(),
        }
    }
}

/// Reads `<dir>/harness-tasks.json` and the last `log_lines` lines of
/// `<dir>/harness-progress.txt`. Never fails: a missing or bad file is a state of the view.
pub fn plan_view(dir: &Path, log_lines: usize) -> PlanView {
    // Each file is opened once and read from that descriptor: a check on the
    // path followed by a read of the path is two lookups, and a file swapped
    // between them (a link to `secrets/admin.token`) was shown.
    let tasks = open_untrusted(dir, TASKS_FILE);
    let progress = open_untrusted(dir, PROGRESS_FILE);
    for opened in [&tasks, &progress] {
        if let Opened::Refused(refusal) = opened {
            return PlanView::empty(dir, PlanState::Error, Some(refusal.clone()));
        }
    }
    let root = StateRoot::new(dir);
    let path = root.tasks_path();
    let log_tail = match progress {
        Opened::File(f) => progress_log::tail_of(f, log_lines),
        _ => Vec::new(),
    };
    let text = match tasks {
        Opened::File(mut f) => {
            let mut text = String::new();
            match f.read_to_string(&mut text) {
                Ok(_) => text,
                Err(e) => {
                    let mut v = PlanView::empty(
                        dir,
                        PlanState::Error,
                        Some(PlanError::io("read", &path, e).to_string()),
                    );
                    v.log_tail = log_tail;
                    return v;
                }
            }
        }
        _ => return PlanView::empty(dir, PlanState::Missing, None),
    };
    let file = match crate::state_file::parse_tasks(&text, &path) {
        Ok(f) => f,
        Err(e) => {
            let mut v = PlanView::empty(dir, PlanState::Error, Some(e.to_string()));
            v.log_tail = log_tail;
            return v;
        }
    };
    let blocked = eligibility::blocked_ids(&file);
    let stats = Stats::of(&file);
    PlanView {
        root: dir.display().to_string(),
        state: PlanState::Ok,
        error: None,
        active: root.is_active(),
        concurrent: file.concurrent(),
        session_count: file.session_count,
        last_session: file.last_session.clone(),
        counts: eligibility::status_counts(&file),
        total: stats.tasks_total,
        blocked: stats.blocked,
        next: eligibility::next_task(&file).map(|t| (t.id.clone(), t.title.clone())),
        tasks: tree(&file, &blocked),
        log_tail,
    }
}

/// A file of an untrusted directory, opened for reading.
enum Opened {
    File(File),
    Missing,
    /// The view's error text.
    Refused(String),
}

/// Opens `dir/name` once, never following a symbolic link (`O_NOFOLLOW`) and
/// without blocking on a FIFO (`O_NONBLOCK`); the opened descriptor must be a
/// regular file (`fstat`). The caller reads from this descriptor only, so
/// nothing swapped in after the check is read.
fn open_untrusted(dir: &Path, name: &str) -> Opened {
    let path = dir.join(name);
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&path);
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Opened::Refused(format!(
                "[SECURITY] {name} is a link (it could lead out of the project directory \
                 {}); refused, not read",
                dir.display()
            ));
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Opened::Missing;
        }
        Err(e) => return Opened::Refused(PlanError::io("open", &path, e).to_string()),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Opened::File(file),
        Ok(_) => Opened::Refused(format!(
            "[SECURITY] {name} is not a regular file; refused, not read"
        )),
        Err(e) => Opened::Refused(PlanError::io("stat", &path, e).to_string()),
    }
}

fn split_error(e: &str) -> LastError {
    if let Some(rest) = e.strip_prefix('[')
        && let Some((cat, msg)) = rest.split_once(']')
        && !cat.is_empty()
        && cat.chars().all(|c| c.is_ascii_uppercase() || c == '_')
    {
        return LastError {
            category: Some(cat.to_string()),
            message: msg.trim().to_string(),
        };
    }
    LastError {
        category: None,
        message: e.to_string(),
    }
}

/// The tasks depth-first: each task under its first existing dependency (its other
/// dependencies are in `depends_on`), siblings in file order. Tasks not reachable from a
/// root (a cycle) follow as roots, so every task appears exactly once.
fn tree(file: &TasksFile, blocked: &HashSet<String>) -> Vec<PlanTask> {
    let index: HashMap<&str, usize> = file
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let parent_of = |t: &Task| -> Option<usize> {
        t.deps()?
            .into_iter()
            .find_map(|d| index.get(d).copied())
            .filter(|&p| file.tasks[p].id != t.id)
    };
    let parents: Vec<Option<usize>> = file.tasks.iter().map(parent_of).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); file.tasks.len()];
    for (i, p) in parents.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    let mut out = Vec::with_capacity(file.tasks.len());
    let mut seen = vec![false; file.tasks.len()];
    let roots: Vec<usize> = (0..file.tasks.len())
        .filter(|&i| parents[i].is_none())
        .collect();
    let visit = |start: usize, out: &mut Vec<PlanTask>, seen: &mut Vec<bool>| {
        let mut stack = vec![(start, 0u32, None::<usize>)];
        while let Some((i, depth, parent)) = stack.pop() {
            if seen[i] {
                continue;
            }
            seen[i] = true;
            out.push(task_view(
                file,
                &file.tasks[i],
                depth,
                parent.map(|p| file.tasks[p].id.clone()),
                blocked,
            ));
            for &c in children[i].iter().rev() {
                if !seen[c] {
                    stack.push((c, depth + 1, Some(i)));
                }
            }
        }
    };
    for r in roots {
        visit(r, &mut out, &mut seen);
    }
    for i in 0..file.tasks.len() {
        if !seen[i] {
            visit(i, &mut out, &mut seen);
        }
    }
    out
}

fn task_view(
    file: &TasksFile,
    t: &Task,
    depth: u32,
    parent: Option<String>,
    blocked: &HashSet<String>,
) -> PlanTask {
    let deps = t.deps();
    let depends_on: Vec<String> = match &deps {
        Some(d) => d.iter().map(|s| s.to_string()).collect(),
        None => Vec::new(),
    };
    let is_blocked = blocked.contains(&t.id);
    let blocked_by: Vec<String> = if !is_blocked {
        Vec::new()
    } else if deps.is_none() {
        vec![format!("depends_on: {}", t.depends_on)]
    } else {
        let on_cycle = eligibility::find_cycle(file, &t.id);
        let mut v: Vec<String> = depends_on
            .iter()
            .filter(|d| match file.task(d) {
                None => true,
                Some(dep) => {
                    eligibility::is_permanently_failed(dep)
                        || blocked.contains(&dep.id)
                        || on_cycle.as_ref().is_some_and(|c| c.contains(&dep.id))
                }
            })
            .cloned()
            .collect();
        if v.is_empty()
            && let Some(c) = on_cycle
        {
            v.push(c.join(" -> "));
        }
        v
    };
    let waiting_on = if is_blocked || !t.is(status::PENDING) {
        Vec::new()
    } else {
        depends_on
            .iter()
            .filter(|d| !file.task(d).is_some_and(|x| x.is(status::COMPLETED)))
            .cloned()
            .collect()
    };
    PlanTask {
        id: t.id.clone(),
        title: t.title.clone(),
        status: t.status.clone(),
        priority: t.priority.clone(),
        attempts: t.attempts,
        max_attempts: t.max_attempts,
        depends_on,
        depth,
        parent,
        blocked: is_blocked,
        blocked_by,
        waiting_on,
        permanently_failed: eligibility::is_permanently_failed(t),
        retryable: eligibility::is_retryable(file, t),
        needs_human: eligibility::needs_human(t),
        last_error: t.last_error().map(split_error),
        errors: t.error_log.len(),
        claimed_by: t.claimed_by.clone(),
        lease_expires_at: t.lease_expires_at.clone(),
        checkpoints: t.checkpoints.len(),
        completed_at: t.completed_at.clone(),
        validation: t.validation_command().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state_file;
    use serde_json::json;

    fn write(dir: &Path, tasks: serde_json::Value) {
        let text = json!({"version": 2, "tasks": tasks}).to_string();
        std::fs::write(dir.join(state_file::TASKS_FILE), text).unwrap();
    }

    #[test]
    fn tree_order_depth_blocking_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            json!([
                {"id": "a", "title": "A", "status": "completed"},
                {"id": "b", "title": "B", "depends_on": ["a"], "status": "failed", "attempts": 3,
                 "max_attempts": 3, "error_log": ["[TEST_FAIL] x", "[TIMEOUT] Agent timed out"]},
                {"id": "c", "title": "C", "depends_on": ["b", "a"]},
                {"id": "d", "title": "D", "depends_on": ["a"]},
                {"id": "e", "title": "E", "depends_on": ["f"]},
                {"id": "f", "title": "F", "depends_on": ["e"]},
                {"id": "g", "title": "G", "depends_on": ["zzz"]},
                {"id": "h", "title": "H", "depends_on": "a"},
            ]),
        );
        let v = plan_view(dir.path(), 10);
        assert_eq!(v.state, PlanState::Ok);
        let order: Vec<(&str, u32)> = v.tasks.iter().map(|t| (t.id.as_str(), t.depth)).collect();
        assert_eq!(
            order,
            [
                ("a", 0),
                ("b", 1),
                ("c", 2),
                ("d", 1),
                ("g", 0),
                ("h", 0),
                ("e", 0),
                ("f", 1)
            ]
        );
        let by = |id: &str| v.tasks.iter().find(|t| t.id == id).unwrap();
        assert!(by("b").permanently_failed);
        assert_eq!(
            by("b").last_error,
            Some(LastError {
                category: Some("TIMEOUT".into()),
                message: "Agent timed out".into()
            })
        );
        assert_eq!(by("c").blocked_by, ["b"]);
        assert_eq!(by("g").blocked_by, ["zzz"]);
        assert_eq!(by("e").blocked_by, ["f"]);
        assert!(by("h").blocked && by("h").blocked_by[0].starts_with("depends_on:"));
        assert!(by("d").waiting_on.is_empty() && !by("d").blocked);
        assert_eq!(v.next, Some(("d".into(), "D".into())));
        assert_eq!(v.blocked, 5);
        assert_eq!(v.total, 8);
    }

    #[test]
    fn links_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "TOP SECRET").unwrap();
        let d = tempfile::tempdir().unwrap();
        write(d.path(), serde_json::json!([]));
        std::os::unix::fs::symlink(outside.path().join("secret"), d.path().join(PROGRESS_FILE))
            .unwrap();
        let v = plan_view(d.path(), 10);
        assert_eq!(v.state, PlanState::Error);
        let error = v.error.unwrap();
        assert!(error.contains("[SECURITY] harness-progress.txt"), "{error}");
        assert!(!format!("{:?}", v.log_tail).contains("TOP SECRET"));
        // A link is refused even when it stays inside the project: the file
        // is opened without following links, in one lookup.
        std::fs::remove_file(d.path().join(PROGRESS_FILE)).unwrap();
        std::fs::write(d.path().join("log.txt"), "line\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("log.txt"), d.path().join(PROGRESS_FILE)).unwrap();
        assert_eq!(plan_view(d.path(), 10).state, PlanState::Error);
        std::fs::remove_file(d.path().join(PROGRESS_FILE)).unwrap();
        std::fs::rename(d.path().join("log.txt"), d.path().join(PROGRESS_FILE)).unwrap();
        let v = plan_view(d.path(), 10);
        assert_eq!(v.state, PlanState::Ok);
        assert_eq!(v.log_tail, ["line"]);
        // A FIFO is refused without blocking.
        std::fs::remove_file(d.path().join(PROGRESS_FILE)).unwrap();
        let fifo =
            std::ffi::CString::new(d.path().join(PROGRESS_FILE).to_str().unwrap().as_bytes())
                .unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let error = plan_view(d.path(), 10).error.unwrap();
        assert!(error.contains("not a regular file"), "{error}");
    }

    /// a file swapped between a regular file and a link to
    /// a secret, as fast as possible, while the view is read: the secret is
    /// never shown (the old check-then-read showed it in 30 of 600 views).
    #[test]
    fn a_file_swapped_for_a_link_while_viewing_never_shows_the_secret() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("admin.token");
        std::fs::write(&secret, "hxa_TOPSECRET\n").unwrap();
        let d = tempfile::tempdir().unwrap();
        write(d.path(), serde_json::json!([{"id": "a", "title": "A"}]));
        let dir = d.path().to_path_buf();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swaps = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let swapper = {
            let (stop, swaps) = (stop.clone(), swaps.clone());
            let dir = dir.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for name in [PROGRESS_FILE, TASKS_FILE] {
                        let link = dir.join(format!("{name}.link"));
                        let plain = dir.join(format!("{name}.plain"));
                        let _ = std::fs::remove_file(&link);
                        std::os::unix::fs::symlink(&secret, &link).unwrap();
                        std::fs::write(&plain, "[]\n").unwrap();
                        std::fs::rename(&plain, dir.join(name)).unwrap();
                        std::fs::rename(&link, dir.join(name)).unwrap();
                    }
                    swaps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
        };
        let (mut views, mut refused) = (0u64, 0u64);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while swaps.load(std::sync::atomic::Ordering::Relaxed) < 2000
            && std::time::Instant::now() < deadline
        {
            let v = plan_view(&dir, 10);
            let shown = format!("{v:?}");
            assert!(
                !shown.contains("TOPSECRET"),
                "the secret was shown (view {views}): {shown}"
            );
            if v.error.as_deref().is_some_and(|e| e.contains("[SECURITY]")) {
                refused += 1;
            }
            views += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        let swaps = swaps.load(std::sync::atomic::Ordering::Relaxed);
        eprintln!("{views} views during {swaps} swaps, {refused} refused");
        assert!(swaps >= 2000, "only {swaps} swaps happened");
        assert!(refused > 0, "the link was never seen");
    }

    #[test]
    fn missing_and_corrupt_files_are_states() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(plan_view(dir.path(), 5).state, PlanState::Missing);
        assert_eq!(
            plan_view(&dir.path().join("nope"), 5).state,
            PlanState::Missing
        );
        std::fs::write(dir.path().join(state_file::TASKS_FILE), "{\"tasks\": [").unwrap();
        let v = plan_view(dir.path(), 5);
        assert_eq!(v.state, PlanState::Error);
        let e = v.error.unwrap();
        assert!(e.starts_with("[CONFIG]") && e.contains("line 1"), "{e}");
    }
}
