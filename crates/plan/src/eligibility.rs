//! The one eligibility module shared by the CLI, the hooks and the driver (docs/decisions.md D16):
//! cycle detection, blocked propagation, pick order, permanent failure, statistics.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::model::{Category, Task, TasksFile, status};

/// Compares ids so that `task-9` < `task-10` (digit runs compare as numbers).
pub fn compare_ids(a: &str, b: &str) -> Ordering {
    let (mut ai, mut bi) = (a.char_indices().peekable(), b.char_indices().peekable());
    loop {
        match (ai.peek().copied(), bi.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((_, ca)), Some((_, cb))) => {
                if ca.is_ascii_digit() && cb.is_ascii_digit() {
                    let da = take_digits(&mut ai);
                    let db = take_digits(&mut bi);
                    let (ta, tb) = (da.trim_start_matches('0'), db.trim_start_matches('0'));
                    let ord = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                    if ord != Ordering::Equal {
                        return ord;
                    }
                } else {
                    if ca != cb {
                        return ca.cmp(&cb);
                    }
                    ai.next();
                    bi.next();
                }
            }
        }
    }
}

fn take_digits(it: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> String {
    let mut s = String::new();
    while let Some((_, c)) = it.peek().copied() {
        if !c.is_ascii_digit() {
            break;
        }
        s.push(c);
        it.next();
    }
    s
}

/// `failed` and (attempts >= max_attempts or a `[DEPENDENCY]` error).
pub fn is_permanently_failed(t: &Task) -> bool {
    t.is(status::FAILED)
        && (t.attempts >= t.max_attempts || t.has_error_category(Category::Dependency))
}

/// A failed task whose last error is `[CONFIG]` and whose validation command is still
/// missing waits for a human: it is not retried automatically.
pub fn needs_human(t: &Task) -> bool {
    t.is(status::FAILED)
        && t.validation_command().is_none()
        && t.last_error().is_some_and(|e| e.starts_with("[CONFIG]"))
}

/// Every dependency exists and is completed (malformed `depends_on` is never satisfied).
pub fn deps_satisfied(file: &TasksFile, t: &Task) -> bool {
    match t.deps() {
        None => false,
        Some(deps) => deps
            .iter()
            .all(|d| file.task(d).is_some_and(|dep| dep.is(status::COMPLETED))),
    }
}

pub fn is_eligible_pending(file: &TasksFile, t: &Task) -> bool {
    t.is(status::PENDING) && deps_satisfied(file, t)
}

pub fn is_retryable(file: &TasksFile, t: &Task) -> bool {
    t.is(status::FAILED) && !is_permanently_failed(t) && !needs_human(t) && deps_satisfied(file, t)
}

fn failed_at_key(t: &Task) -> String {
    t.last_failed_at.clone().unwrap_or_default()
}

/// Eligible pending tasks by priority then id.
pub fn pending_in_order(file: &TasksFile) -> Vec<&Task> {
    let mut v: Vec<&Task> = file
        .tasks
        .iter()
        .filter(|t| is_eligible_pending(file, t))
        .collect();
    v.sort_by(|a, b| {
        a.priority_rank()
            .cmp(&b.priority_rank())
            .then_with(|| compare_ids(&a.id, &b.id))
    });
    v
}

/// Retryable tasks by priority, then oldest failure (`last_failed_at`), then id.
pub fn retries_in_order(file: &TasksFile) -> Vec<&Task> {
    let mut v: Vec<&Task> = file
        .tasks
        .iter()
        .filter(|t| is_retryable(file, t))
        .collect();
    v.sort_by(|a, b| {
        a.priority_rank()
            .cmp(&b.priority_rank())
            .then_with(|| failed_at_key(a).cmp(&failed_at_key(b)))
            .then_with(|| compare_ids(&a.id, &b.id))
    });
    v
}

/// All candidates in pick order: pending first, then retries.
pub fn candidates(file: &TasksFile) -> Vec<&Task> {
    let mut v = pending_in_order(file);
    v.extend(retries_in_order(file));
    v
}

/// The next task to work on.
pub fn next_task(file: &TasksFile) -> Option<&Task> {
    candidates(file).into_iter().next()
}

/// True while there is an eligible pending, retryable or in-progress task.
pub fn has_open_work(file: &TasksFile) -> bool {
    file.tasks.iter().any(|t| t.is(status::IN_PROGRESS)) || next_task(file).is_some()
}

/// Dependency cycle through `start`, as the path `start -> ... -> start`.
pub fn find_cycle(file: &TasksFile, start: &str) -> Option<Vec<String>> {
    let index: HashMap<&str, &Task> = file.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut path = vec![start.to_string()];
    let mut seen = HashSet::new();
    fn dfs(
        index: &HashMap<&str, &Task>,
        start: &str,
        cur: &str,
        path: &mut Vec<String>,
        seen: &mut HashSet<String>,
    ) -> bool {
        let Some(t) = index.get(cur) else {
            return false;
        };
        for d in t.deps().unwrap_or_default() {
            if d == start {
                path.push(d.to_string());
                return true;
            }
            if seen.insert(d.to_string()) {
                path.push(d.to_string());
                if dfs(index, start, d, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    dfs(&index, start, start, &mut path, &mut seen).then_some(path)
}

/// A change made by [`validate_graph`]: the task id and the `[DEPENDENCY]` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphChange {
    pub id: String,
    pub message: String,
}

fn mark_dependency_failed(t: &mut Task, message: &str, now: &str) {
    t.status = status::FAILED.to_string();
    t.error_log
        .push(format!("[{}] {message}", Category::Dependency));
    t.last_failed_at = Some(now.to_string());
    t.clear_claim();
}

/// Runs before every pick (A5): marks tasks on a dependency cycle, then propagates
/// "blocked by failed" until nothing changes. Idempotent.
pub fn validate_graph(file: &mut TasksFile, now: &str) -> Vec<GraphChange> {
    let mut changes = Vec::new();
    let open = |t: &Task| {
        (t.is(status::PENDING) || t.is(status::FAILED))
            && !t.has_error_category(Category::Dependency)
    };
    let ids: Vec<String> = file
        .tasks
        .iter()
        .filter(|t| open(t))
        .map(|t| t.id.clone())
        .collect();
    for id in ids {
        if let Some(path) = find_cycle(file, &id) {
            let message = format!("Circular dependency detected: {}", path.join(" -> "));
            if let Some(t) = file.task_mut(&id) {
                mark_dependency_failed(t, &message, now);
            }
            changes.push(GraphChange { id, message });
        }
    }
    loop {
        let mut found = None;
        for t in file.tasks.iter().filter(|t| open(t)) {
            let blocker = t
                .deps()
                .unwrap_or_default()
                .into_iter()
                .find(|d| file.task(d).is_some_and(is_permanently_failed));
            if let Some(b) = blocker {
                found = Some((t.id.clone(), format!("Blocked by failed {b}")));
                break;
            }
        }
        let Some((id, message)) = found else { break };
        if let Some(t) = file.task_mut(&id) {
            mark_dependency_failed(t, &message, now);
        }
        changes.push(GraphChange { id, message });
    }
    changes
}

/// Pending tasks that can never run as things stand: a dependency is permanently failed,
/// unknown, malformed, on a cycle, or itself blocked (computed, never stored).
pub fn blocked_ids(file: &TasksFile) -> HashSet<String> {
    let mut blocked: HashSet<String> = HashSet::new();
    for t in file.tasks.iter().filter(|t| t.is(status::PENDING)) {
        if find_cycle(file, &t.id).is_some() {
            blocked.insert(t.id.clone());
        }
    }
    loop {
        let before = blocked.len();
        for t in file.tasks.iter().filter(|t| t.is(status::PENDING)) {
            let bad = match t.deps() {
                None => true,
                Some(deps) => deps.iter().any(|d| match file.task(d) {
                    None => true,
                    Some(dep) => is_permanently_failed(dep) || blocked.contains(&dep.id),
                }),
            };
            if bad {
                blocked.insert(t.id.clone());
            }
        }
        if blocked.len() == before {
            return blocked;
        }
    }
}

/// How many tasks still to do wait on the tasks in progress, directly or
/// through other tasks (what an answer to a question of the agent running
/// them unblocks). Completed tasks do not count; cycles are counted once.
pub fn waiting_on_in_progress(file: &TasksFile) -> usize {
    let mut waiting: HashSet<&str> = file
        .tasks
        .iter()
        .filter(|t| t.is(status::IN_PROGRESS))
        .map(|t| t.id.as_str())
        .collect();
    let roots = waiting.len();
    if roots == 0 {
        return 0;
    }
    loop {
        let before = waiting.len();
        for t in file.tasks.iter().filter(|t| !t.is(status::COMPLETED)) {
            if !waiting.contains(t.id.as_str())
                && t.deps()
                    .is_some_and(|deps| deps.iter().any(|d| waiting.contains(d)))
            {
                waiting.insert(t.id.as_str());
            }
        }
        if waiting.len() == before {
            return waiting.len() - roots;
        }
    }
}

/// Counts by raw status string, sorted by key.
pub fn status_counts(file: &TasksFile) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for t in &file.tasks {
        *m.entry(t.status.clone()).or_insert(0) += 1;
    }
    m
}

/// The STATS line fields (A12).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub tasks_total: usize,
    pub completed: usize,
    pub failed: usize,
    pub pending: usize,
    pub blocked: usize,
    pub attempts_total: u64,
    pub checkpoints: usize,
}

impl Stats {
    pub fn of(file: &TasksFile) -> Stats {
        let count = |s: &str| file.tasks.iter().filter(|t| t.is(s)).count();
        Stats {
            tasks_total: file.tasks.len(),
            completed: count(status::COMPLETED),
            failed: count(status::FAILED),
            pending: count(status::PENDING),
            blocked: blocked_ids(file).len(),
            attempts_total: file.tasks.iter().map(|t| u64::from(t.attempts)).sum(),
            checkpoints: file.tasks.iter().map(|t| t.checkpoints.len()).sum(),
        }
    }

    pub fn fields(&self) -> String {
        format!(
            "tasks_total={} completed={} failed={} pending={} blocked={} attempts_total={} checkpoints={}",
            self.tasks_total,
            self.completed,
            self.failed,
            self.pending,
            self.blocked,
            self.attempts_total,
            self.checkpoints
        )
    }
}

/// The next numeric `task-NNN` id.
pub fn next_task_id(file: &TasksFile) -> String {
    let max = file
        .tasks
        .iter()
        .filter_map(|t| t.id.strip_prefix("task-"))
        .filter_map(|n| n.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!("task-{:03}", max + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(tasks: serde_json::Value) -> TasksFile {
        serde_json::from_value(json!({"version":2,"tasks":tasks})).expect("file")
    }

    #[test]
    fn what_waits_on_the_tasks_in_progress() {
        let f = file(json!([
            {"id":"a","status":"in_progress"},
            {"id":"b","status":"pending","depends_on":["a"]},
            {"id":"c","status":"pending","depends_on":["b"]},
            {"id":"d","status":"completed","depends_on":["a"]},
            {"id":"e","status":"pending","depends_on":["x"]},
            {"id":"f","status":"failed","depends_on":["c","e"]},
            {"id":"g","status":"pending","depends_on":["h"]},
            {"id":"h","status":"pending","depends_on":["g","a"]}
        ]));
        // b, c, f (through c), h and g (a cycle through h); not d (done) nor e.
        assert_eq!(waiting_on_in_progress(&f), 5);
        let idle = file(json!([
            {"id":"a","status":"pending"},
            {"id":"b","status":"pending","depends_on":["a"]}
        ]));
        assert_eq!(waiting_on_in_progress(&idle), 0);
    }

    #[test]
    fn numeric_aware_ids() {
        assert_eq!(compare_ids("task-9", "task-10"), Ordering::Less);
        assert_eq!(compare_ids("task-010", "task-9"), Ordering::Greater);
        assert_eq!(compare_ids("a", "b"), Ordering::Less);
        assert_eq!(compare_ids("t2", "t2"), Ordering::Equal);
        let mut v = vec!["task-10", "task-2", "task-1", "task-1000", "task-99"];
        v.sort_by(|a, b| compare_ids(a, b));
        assert_eq!(v, ["task-1", "task-2", "task-10", "task-99", "task-1000"]);
    }

    #[test]
    fn pick_order_priority_then_id_then_retries_by_oldest_failure() {
        let f = file(json!([
            {"id":"task-10","status":"pending","priority":"P1"},
            {"id":"task-9","status":"pending","priority":"P1"},
            {"id":"task-11","status":"pending","priority":"P0"},
            {"id":"task-1","status":"failed","priority":"P0","attempts":1,"last_failed_at":"2026-01-02T00:00:00Z"},
            {"id":"task-2","status":"failed","priority":"P0","attempts":1,"last_failed_at":"2026-01-01T00:00:00Z"},
            {"id":"task-3","status":"failed","priority":"P0","attempts":3},
            {"id":"task-4","status":"pending","depends_on":["task-3"]},
        ]));
        let order: Vec<&str> = candidates(&f).iter().map(|t| t.id.as_str()).collect();
        assert_eq!(order, ["task-11", "task-9", "task-10", "task-2", "task-1"]);
        assert!(blocked_ids(&f).contains("task-4"));
    }

    #[test]
    fn cycle_detection_names_the_path_and_blocks_dependents() {
        let mut f = file(json!([
            {"id":"a","depends_on":["b"]},
            {"id":"b","depends_on":["a"]},
            {"id":"c","depends_on":["a"]},
            {"id":"d","depends_on":["d"]},
            {"id":"e","depends_on":["c"]},
            {"id":"ok"},
        ]));
        let changes = validate_graph(&mut f, "2026-01-01T00:00:00Z");
        let a = f.task("a").expect("a");
        assert_eq!(a.status, "failed");
        assert_eq!(
            a.error_log[0],
            "[DEPENDENCY] Circular dependency detected: a -> b -> a"
        );
        assert_eq!(
            f.task("d").expect("d").error_log[0],
            "[DEPENDENCY] Circular dependency detected: d -> d"
        );
        assert!(f.task("c").expect("c").error_log[0].starts_with("[DEPENDENCY] Blocked by failed"));
        assert_eq!(
            f.task("e").expect("e").error_log[0],
            "[DEPENDENCY] Blocked by failed c"
        );
        assert!(is_permanently_failed(f.task("e").expect("e")));
        assert_eq!(changes.len(), 5);
        assert!(validate_graph(&mut f, "x").is_empty(), "idempotent");
        assert_eq!(next_task(&f).map(|t| t.id.as_str()), Some("ok"));
    }

    #[test]
    fn permanent_failure_and_retryable() {
        let f = file(json!([
            {"id":"x","status":"failed","attempts":3,"max_attempts":3},
            {"id":"y","status":"failed","attempts":1,"error_log":["[DEPENDENCY] Blocked by failed x"]},
            {"id":"z","status":"failed","attempts":1},
            {"id":"w","status":"failed","attempts":0,"error_log":["[CONFIG] Missing validation.command"]},
        ]));
        assert!(is_permanently_failed(f.task("x").expect("x")));
        assert!(is_permanently_failed(f.task("y").expect("y")));
        assert!(is_retryable(&f, f.task("z").expect("z")));
        assert!(!is_retryable(&f, f.task("w").expect("w")));
        let s = Stats::of(&f);
        assert_eq!((s.failed, s.attempts_total), (4, 5));
    }

    #[test]
    fn next_id_is_numeric() {
        let f = file(json!([{"id":"task-009"},{"id":"task-010"},{"id":"custom"}]));
        assert_eq!(next_task_id(&f), "task-011");
        assert_eq!(next_task_id(&file(json!([]))), "task-001");
    }
}
