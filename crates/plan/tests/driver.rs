//! `harness run` with a test double agent on real git repos: the loop, retries, timeouts,
//! rollback, cleanup, caps, the session lock, the health check and the recovery matrix.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Project, agent, assert_log_grammar, file_check, git, run_agent, task_json};
use serde_json::json;

#[test]
fn run_completes_tasks_in_order_and_commits_each() {
    let p = Project::git();
    p.write_state(
        json!([
            task_json(
                "task-002",
                "second",
                &["task-001"],
                &file_check("task-002"),
                5
            ),
            task_json("task-001", "first", &[], &file_check("task-001"), 5),
            task_json(
                "task-003",
                "has a checkpoint",
                &[],
                &file_check("task-003"),
                5
            ),
        ]),
        json!({}),
    );
    let (st, script) = agent();
    let r = run_agent(&p, st.path(), &script, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("STATS tasks_total=3 completed=3 failed=0 pending=0 blocked=0 attempts_total=0 checkpoints=1"), "{}", r.stdout);
    let subjects = git(p.path(), &["log", "--format=%s"]);
    let order: Vec<&str> = subjects.lines().collect();
    assert_eq!(order.len(), 4);
    assert!(
        order[0].contains("task-003")
            && order[1].contains("task-002")
            && order[2].contains("task-001"),
        "{subjects}"
    );
    let s = p.state();
    assert_eq!(s["session_count"], 1);
    assert!(s["last_session"].is_string());
    assert!(
        !p.file(".harness-active").exists(),
        "marker removed when nothing is left"
    );
    let prompt = std::fs::read_to_string(st.path().join("task-002.prompt")).expect("prompt");
    assert!(prompt.contains("Task: second") && prompt.contains(&file_check("task-002")));
    assert!(prompt.contains("Recent progress log:") && prompt.contains("Completed [task-001]"));
    p.log().lines().for_each(assert_log_grammar);
    assert!(p.log().contains("LOCK acquired (pid="));
    assert!(p.log().contains("LOCK released"));
    assert_eq!(
        git(
            p.path(),
            &[
                "status",
                "--porcelain",
                "--",
                ".",
                ":(exclude,glob)**/harness-*",
                ":(exclude,glob)**/.harness-*"
            ]
        ),
        ""
    );
}

#[test]
fn flaky_task_fails_twice_then_passes_and_timeout_task_dies() {
    let p = Project::git();
    p.write_state(
        json!([
            task_json("task-001", "flaky one", &[], &file_check("task-001"), 5),
            task_json("task-002", "hangs", &[], "sleep 30", 1),
            task_json("task-003", "after hang", &["task-002"], "true", 5),
        ]),
        json!({}),
    );
    let (st, script) = agent();
    let t0 = Instant::now();
    let r = run_agent(&p, st.path(), &script, &[]);
    assert!(t0.elapsed() < Duration::from_secs(30));
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let t1 = p.task("task-001");
    assert_eq!(t1["status"], "completed");
    assert_eq!(t1["attempts"], 2);
    assert_eq!(t1["error_log"].as_array().map(Vec::len), Some(2));
    let t2 = p.task("task-002");
    assert_eq!(
        (t2["status"].as_str(), t2["attempts"].as_u64()),
        (Some("failed"), Some(3))
    );
    assert!(
        t2["error_log"][0]
            .as_str()
            .expect("e")
            .starts_with("[TIMEOUT]")
    );
    let t3 = p.task("task-003");
    assert_eq!(t3["status"], "failed");
    assert_eq!(
        t3["error_log"][0],
        "[DEPENDENCY] Blocked by failed task-002"
    );
    assert_eq!(p.log_lines("ROLLBACK [task-001]").len(), 2);
    assert_eq!(p.log_lines("ERROR [task-002] [TIMEOUT]").len(), 3);
    assert_eq!(
        std::fs::read_to_string(st.path().join("task-001.count"))
            .expect("c")
            .trim(),
        "3"
    );
    let prompt = std::fs::read_to_string(st.path().join("task-001.prompt")).expect("p");
    assert!(
        prompt.contains("Previous errors") && prompt.contains("[TEST_FAIL]"),
        "{prompt}"
    );
}

#[test]
fn agent_exit_status_never_marks_done() {
    let p = Project::git();
    p.write_state(
        json!([task_json("task-001", "x", &[], "test -f never.txt", 5)]),
        json!({}),
    );
    let r = common::run_cli(
        p.path(),
        &["run", "--agent", "exit 0", "--max-tasks", "1"],
        &[],
        None,
    );
    assert_eq!(r.code, 0, "cap reached, task still retryable: {}", r.stderr);
    assert_eq!(p.task("task-001")["status"], "failed");
    assert_eq!(p.task("task-001")["attempts"], 1);
    let r = common::run_cli(
        p.path(),
        &["run", "--agent", "touch never.txt; exit 3"],
        &[],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.task("task-001")["status"], "completed");
}

#[test]
fn agent_failure_with_failed_validation_is_task_exec() {
    let p = Project::git();
    p.write_state(
        json!([task_json("task-001", "x", &[], "false", 5)]),
        json!({}),
    );
    let r = common::run_cli(
        p.path(),
        &["run", "--agent", "exit 4", "--max-tasks", "1"],
        &[],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let e = p.task("task-001")["error_log"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(e.starts_with("[TASK_EXEC] agent exited 4"), "{e}");
}

#[test]
fn agent_timeout_kills_agent() {
    let p = Project::git();
    p.write_state(
        json!([task_json("task-001", "x", &[], "true", 5)]),
        json!({}),
    );
    let t0 = Instant::now();
    let r = common::run_cli(
        p.path(),
        &[
            "run",
            "--agent",
            "sleep 30",
            "--agent-timeout",
            "1",
            "--max-tasks",
            "1",
        ],
        &[],
        None,
    );
    assert!(t0.elapsed() < Duration::from_secs(15));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        p.task("task-001")["error_log"][0]
            .as_str()
            .unwrap_or_default()
            .starts_with("[TIMEOUT] Agent timed out")
    );
}

#[test]
fn missing_validation_is_config_for_that_task_only() {
    let p = Project::git();
    let mut bad = task_json("task-001", "no validation", &[], "", 5);
    bad["validation"]["command"] = json!(null);
    p.write_state(
        json!([
            bad,
            task_json("task-002", "fine", &[], &file_check("task-002"), 5)
        ]),
        json!({}),
    );
    let (st, script) = agent();
    let r = run_agent(&p, st.path(), &script, &[]);
    assert_eq!(r.code, 1, "a task needs a human");
    assert_eq!(p.task("task-002")["status"], "completed", "the run went on");
    let t1 = p.task("task-001");
    assert_eq!(
        (t1["status"].as_str(), t1["attempts"].as_u64()),
        (Some("failed"), Some(0))
    );
    assert!(p.log().contains("ERROR [task-001] [CONFIG] Missing validation.command (file harness-tasks.json, field tasks[0].validation.command)"));
    assert!(
        !st.path().join("task-001.prompt").exists(),
        "agent never ran for it"
    );
}

#[test]
fn max_tasks_cap_and_max_sessions() {
    let p = Project::git();
    let tasks: Vec<_> = (1..=4)
        .map(|i| {
            let id = format!("task-{i:03}");
            task_json(&id, "t", &[], &file_check(&id), 5)
        })
        .collect();
    p.write_state(
        json!(tasks),
        json!({"session_config": {"max_tasks_per_session": 2, "max_sessions": 2}}),
    );
    let (st, script) = agent();
    let r = run_agent(&p, st.path(), &script, &[]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("max_tasks_per_session reached"));
    assert_eq!(
        p.state()["tasks"]
            .as_array()
            .expect("t")
            .iter()
            .filter(|t| t["status"] == "completed")
            .count(),
        2
    );
    assert!(p.file(".harness-active").exists());
    run_agent(&p, st.path(), &script, &[]);
    let r = run_agent(&p, st.path(), &script, &[]);
    assert!(r.stdout.contains("max_sessions reached"), "{}", r.stdout);
    assert_eq!(p.state()["session_count"], 2);
}

#[test]
fn exclusive_session_lock_fails_fast_for_a_second_run() {
    let p = Project::git();
    p.write_state(
        json!([task_json("task-001", "x", &[], "true", 5)]),
        json!({}),
    );
    let ready = p
        .path()
        .join("..")
        .join(format!("ready-{}", std::process::id()));
    let agent_cmd = format!("touch {}; sleep 3", ready.display());
    let mut first = common::cli_command(p.path())
        .args(["run", "--agent", &agent_cmd])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    while !ready.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let t1 = Instant::now();
    let r = p.cli(&["run", "--agent", "true"]);
    assert!(t1.elapsed() < Duration::from_secs(2), "fails fast");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("lock busy") && r.stderr.contains(&format!("pid={}", first.id())),
        "{}",
        r.stderr
    );
    assert!(first.wait().expect("wait").success());
    let _ = std::fs::remove_file(ready);
    assert_eq!(p.task("task-001")["status"], "completed");
}

#[test]
fn init_script_failing_twice_stops_with_env_setup() {
    let p = Project::git();
    p.write_state(
        json!([task_json("task-001", "x", &[], "true", 5)]),
        json!({}),
    );
    std::fs::write(
        p.file("harness-init.sh"),
        "#!/bin/sh\necho broken >&2\nexit 1\n",
    )
    .expect("w");
    let r = p.cli(&["run", "--agent", "true"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        p.log_lines("ERROR [ENV_SETUP] harness-init.sh failed:")
            .len(),
        2
    );
    assert!(p.log().contains("environment broken"));
    assert_eq!(p.task("task-001")["status"], "pending");
}

#[test]
fn missing_validation_program_is_env_setup() {
    let p = Project::git();
    p.write_state(
        json!([task_json(
            "task-001",
            "x",
            &[],
            "no-such-tool-zz --check",
            5
        )]),
        json!({}),
    );
    let r = p.cli(&["run", "--agent", "true"]);
    assert_eq!(r.code, 1);
    assert!(
        p.task("task-001")["error_log"][0]
            .as_str()
            .unwrap_or_default()
            .starts_with("[ENV_SETUP] validation program not found")
    );
    assert!(p.log().contains("ENV_SETUP failed twice"));
}

// ---------- recovery matrix (A8) ----------

fn interrupted(p: &Project, checkpoints: serde_json::Value, validation: &str) -> String {
    let head = git(p.path(), &["rev-parse", "HEAD"]);
    let mut t = task_json("task-001", "interrupted", &[], validation, 5);
    t["status"] = json!("in_progress");
    t["started_at_commit"] = json!(head);
    t["claimed_by"] = json!("old-worker");
    t["checkpoints"] = checkpoints;
    p.write_state(json!([t]), json!({"session_count": 1}));
    head
}

fn cp() -> serde_json::Value {
    json!([{"step":1,"total":2,"description":"did half","timestamp":"2026-01-01T00:00:00Z"}])
}

#[test]
fn recovery_row1_no_progress() {
    let p = Project::git();
    interrupted(&p, json!([]), "true");
    let r = p.cli(&["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = p.task("task-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("failed"), Some(1))
    );
    assert_eq!(t["error_log"][0], "[SESSION_TIMEOUT] No progress detected");
    let rec = p.log_lines("RECOVERY [task-001]");
    assert_eq!(rec.len(), 1);
    assert!(
        rec[0].contains("action=\"marked failed\"") && rec[0].contains("row 1"),
        "{}",
        rec[0]
    );
    assert!(rec[0].contains("[SESSION-2]"));
}

#[test]
fn recovery_row2_checkpoints_verified_by_validation() {
    let p = Project::git();
    interrupted(&p, cp(), "grep -q base README");
    p.cli(&["run"]);
    assert_eq!(p.task("task-001")["status"], "completed");
    let q = Project::git();
    interrupted(&q, cp(), "test -f missing.txt");
    q.cli(&["run"]);
    let t = q.task("task-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("failed"), Some(1))
    );
    assert!(
        t["error_log"][0]
            .as_str()
            .unwrap_or_default()
            .starts_with("[SESSION_TIMEOUT] Checkpointed work lost")
    );
    assert!(q.log_lines("RECOVERY [task-001]")[0].contains("row 2"));
}

#[test]
fn recovery_row3_task_commit_validated_or_rolled_back() {
    let p = Project::git();
    let _ = interrupted(&p, json!([]), "test -f task-001.txt");
    std::fs::write(p.file("task-001.txt"), "x").expect("w");
    git(p.path(), &["add", "task-001.txt"]);
    git(p.path(), &["commit", "-qm", "wip task-001 part"]);
    p.cli(&["run"]);
    assert_eq!(p.task("task-001")["status"], "completed");
    assert!(p.log_lines("RECOVERY [task-001]")[0].contains("row 3"));

    let q = Project::git();
    let base = interrupted(&q, json!([]), "test -f never.txt");
    std::fs::write(q.file("task-001.txt"), "x").expect("w");
    git(q.path(), &["add", "task-001.txt"]);
    git(q.path(), &["commit", "-qm", "wip task-001"]);
    q.cli(&["run"]);
    let t = q.task("task-001");
    assert_eq!(
        (t["status"].as_str(), t["attempts"].as_u64()),
        (Some("failed"), Some(1))
    );
    assert_eq!(
        git(q.path(), &["rev-parse", "HEAD"]),
        base,
        "rolled back to started_at_commit"
    );
    assert!(
        q.log()
            .contains(&format!("ROLLBACK [task-001] git reset --hard {base}"))
    );
}

#[test]
fn recovery_row4_dirty_tree_validated_and_committed() {
    let p = Project::git();
    interrupted(&p, json!([]), "test -f work.txt");
    std::fs::write(p.file("work.txt"), "w").expect("w");
    p.cli(&["run"]);
    assert_eq!(p.task("task-001")["status"], "completed");
    assert!(git(p.path(), &["log", "-1", "--format=%s"]).contains("task-001"));
    assert!(git(p.path(), &["show", "--name-only", "--format=", "HEAD"]).contains("work.txt"));
    assert!(p.log_lines("RECOVERY [task-001]")[0].contains("row 4"));

    let q = Project::git();
    interrupted(&q, json!([]), "test -f other.txt");
    std::fs::write(q.file("work.txt"), "w").expect("w");
    q.cli(&["run"]);
    assert_eq!(q.task("task-001")["attempts"], 1);
    assert!(!q.file("work.txt").exists(), "reset + clean");
    assert!(q.file("harness-tasks.json").exists() && q.file("harness-progress.txt").exists());
}

#[test]
fn recovery_row5_dirty_plus_commits() {
    let p = Project::git();
    interrupted(&p, json!([]), "test -f a.txt && test -f b.txt");
    std::fs::write(p.file("a.txt"), "a").expect("w");
    git(p.path(), &["add", "a.txt"]);
    git(p.path(), &["commit", "-qm", "task-001: part a"]);
    std::fs::write(p.file("b.txt"), "b").expect("w");
    p.cli(&["run"]);
    assert_eq!(p.task("task-001")["status"], "completed");
    assert!(git(p.path(), &["log", "-1", "--format=%s"]).contains("task-001 recovered"));
    assert!(p.log_lines("RECOVERY [task-001]")[0].contains("row 5"));
}

#[test]
fn recovery_in_concurrent_mode_only_touches_own_or_expired_claims() {
    let p = Project::git();
    let head = git(p.path(), &["rev-parse", "HEAD"]);
    let mut mine = task_json("task-001", "mine", &[], "true", 5);
    mine["status"] = json!("in_progress");
    mine["claimed_by"] = json!("w1");
    mine["started_at_commit"] = json!(head);
    let mut theirs = task_json("task-002", "theirs", &[], "true", 5);
    theirs["status"] = json!("in_progress");
    theirs["claimed_by"] = json!("w2");
    theirs["lease_expires_at"] = json!("2999-01-01T00:00:00Z");
    let mut expired = task_json("task-003", "expired", &[], "true", 5);
    expired["status"] = json!("in_progress");
    expired["claimed_by"] = json!("w3");
    expired["lease_expires_at"] = json!("2000-01-01T00:00:00Z");
    p.write_state(
        json!([mine, theirs, expired]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.cli(&["run", "--worker-id", "w1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.task("task-001")["status"], "failed");
    assert_eq!(p.task("task-002")["status"], "in_progress");
    assert_eq!(
        p.task("task-003")["error_log"][0],
        "[SESSION_TIMEOUT] Lease expired (claimed_by=w3)"
    );
    assert!(
        p.file(".harness-active").exists(),
        "another worker still holds a task"
    );
}

#[test]
fn unrecoverable_state_file_stops_run_with_config_exit() {
    let p = Project::git();
    std::fs::write(p.file("harness-tasks.json"), "{\"tasks\": [").expect("w");
    let r = p.cli(&["run", "--agent", "true"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("harness-tasks.json") && r.stderr.contains("line 1"),
        "{}",
        r.stderr
    );
    assert!(
        p.log()
            .contains("ERROR [ENV_SETUP] harness-tasks.json corrupted and unrecoverable")
    );
    // with a valid .bak it is restored instead and the run proceeds
    std::fs::write(
        p.file("harness-tasks.json.bak"),
        serde_json::to_string(
            &json!({"version": 2, "tasks": [task_json("task-001", "x", &[], "true", 5)]}),
        )
        .expect("ser"),
    )
    .expect("w");
    let r = p.cli(&["run", "--agent", "true"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(p.task("task-001")["status"], "completed");
    assert!(
        p.log()
            .contains("WARN harness-tasks.json was corrupt; restored")
    );
}
