//! End-to-end scenarios with the real binary, real git repos and the test double agent:
//! a 30-task scripted run, SIGKILL of `run` mid-task then restart through recovery, and two
//! concurrent workers in separate worktrees sharing one state root.

mod common;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{
    Project, agent, agent_env, assert_log_grammar, file_check, git, run_agent, task_json,
};
use serde_json::json;

fn id(n: usize) -> String {
    format!("task-{n:03}")
}

#[test]
fn thirty_task_scripted_run() {
    let p = Project::git();
    let mut tasks = Vec::new();
    for n in 1..=20 {
        // chains of five: 2 depends on 1, 3 on 2, ...
        let deps: Vec<String> = if n % 5 == 1 { vec![] } else { vec![id(n - 1)] };
        let deps_ref: Vec<&str> = deps.iter().map(String::as_str).collect();
        tasks.push(task_json(
            &id(n),
            &format!("plain {n}"),
            &deps_ref,
            &file_check(&id(n)),
            5,
        ));
    }
    tasks.push(task_json(&id(21), "flaky a", &[], &file_check(&id(21)), 5));
    tasks.push(task_json(
        &id(22),
        "flaky b",
        &[&id(3)],
        &file_check(&id(22)),
        5,
    ));
    tasks.push(task_json(&id(23), "cycle a", &[&id(24)], "true", 5));
    tasks.push(task_json(&id(24), "cycle b", &[&id(23)], "true", 5));
    tasks.push(task_json(
        &id(25),
        "behind the cycle",
        &[&id(23)],
        "true",
        5,
    ));
    tasks.push(task_json(&id(26), "always times out", &[], "sleep 30", 1));
    tasks.push(task_json(
        &id(27),
        "behind the timeout",
        &[&id(26)],
        "true",
        5,
    ));
    tasks.push(task_json(
        &id(28),
        "with checkpoint",
        &[],
        &file_check(&id(28)),
        5,
    ));
    let mut urgent = task_json(&id(29), "urgent", &[], &file_check(&id(29)), 5);
    urgent["priority"] = json!("P0");
    tasks.push(urgent);
    let mut low = task_json(&id(30), "low", &[&id(10)], &file_check(&id(30)), 5);
    low["priority"] = json!("P2");
    tasks.push(low);
    p.write_state(json!(tasks), json!({"future_field": "kept"}));
    p.activate();

    let (st, script) = agent();
    let t0 = Instant::now();
    let r = run_agent(&p, st.path(), &script, &[]);
    assert!(t0.elapsed() < Duration::from_secs(60));
    assert_eq!(
        r.code, 1,
        "failed/blocked tasks remain: {}\n{}",
        r.stdout, r.stderr
    );

    // final JSON
    let s = p.state();
    assert_eq!(s["future_field"], "kept");
    let by_id: BTreeMap<String, serde_json::Value> = s["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| (t["id"].as_str().unwrap_or_default().to_string(), t.clone()))
        .collect();
    let dead = [23, 24, 25, 26, 27];
    for n in 1..=30 {
        let t = &by_id[&id(n)];
        let want = if dead.contains(&n) {
            "failed"
        } else {
            "completed"
        };
        assert_eq!(t["status"], want, "{}", id(n));
    }
    for n in [21, 22] {
        assert_eq!(by_id[&id(n)]["attempts"], 2, "flaky {n}");
    }
    assert_eq!(
        by_id[&id(23)]["error_log"][0],
        "[DEPENDENCY] Circular dependency detected: task-023 -> task-024 -> task-023"
    );
    assert_eq!(
        by_id[&id(24)]["error_log"][0],
        "[DEPENDENCY] Circular dependency detected: task-024 -> task-023 -> task-024"
    );
    assert_eq!(
        by_id[&id(25)]["error_log"][0],
        "[DEPENDENCY] Blocked by failed task-023"
    );
    assert_eq!(by_id[&id(26)]["attempts"], 3);
    assert!(
        by_id[&id(26)]["error_log"]
            .as_array()
            .expect("e")
            .iter()
            .all(|e| e.as_str().unwrap_or_default().starts_with("[TIMEOUT]"))
    );
    assert_eq!(
        by_id[&id(27)]["error_log"][0],
        "[DEPENDENCY] Blocked by failed task-026"
    );
    assert_eq!(by_id[&id(28)]["checkpoints"][0]["description"], "halfway");
    assert!(!p.file(".harness-active").exists());

    // log
    let log = p.log();
    log.lines().for_each(assert_log_grammar);
    let starts: Vec<&str> = log.lines().filter(|l| l.contains(" Starting [")).collect();
    assert!(
        starts[0].contains("Starting [task-029]"),
        "P0 first: {}",
        starts[0]
    );
    for n in 1..=30 {
        let c = log
            .lines()
            .filter(|l| l.contains(&format!("Completed [{}]", id(n))))
            .count();
        assert_eq!(
            c,
            usize::from(!dead.contains(&n)),
            "Completed lines of {}",
            id(n)
        );
    }
    assert_eq!(log.matches(" ROLLBACK [").count(), 2 + 2 + 3);
    assert_eq!(log.matches("ERROR [task-026] [TIMEOUT]").count(), 3);
    let last_stats = log
        .lines()
        .rev()
        .find(|l| l.contains(" STATS "))
        .expect("STATS");
    assert!(last_stats.ends_with("STATS tasks_total=30 completed=25 failed=5 pending=0 blocked=0 attempts_total=7 checkpoints=1"), "{last_stats}");
    assert!(r.stdout.contains("STATS tasks_total=30 completed=25"));

    // git history: one commit per completed task, in the tree, nothing else committed
    let subjects = git(p.path(), &["log", "--format=%s"]);
    assert_eq!(subjects.lines().count(), 26);
    for n in 1..=30 {
        let hits = subjects
            .lines()
            .filter(|s| s.contains(&format!("{} completed", id(n))))
            .count();
        assert_eq!(
            hits,
            usize::from(!dead.contains(&n)),
            "commits of {}",
            id(n)
        );
    }
    let tree = git(p.path(), &["ls-tree", "--name-only", "HEAD"]);
    assert!(
        !tree.contains("harness-"),
        "state files never committed: {tree}"
    );
    assert_eq!(
        tree.lines().count(),
        1 + 25,
        "README + one file per completed task: {tree}"
    );
}

#[test]
fn sigkill_mid_task_then_restart_recovers() {
    let p = Project::git();
    p.write_state(
        json!([
            task_json("task-001", "first", &[], &file_check("task-001"), 5),
            task_json(
                "task-002",
                "will crash",
                &["task-001"],
                &file_check("task-002"),
                5
            ),
            task_json(
                "task-003",
                "after",
                &["task-002"],
                &file_check("task-003"),
                5
            ),
        ]),
        json!({}),
    );
    let (st, script) = agent();
    let env = agent_env(st.path());
    let mut cmd = common::cli_command(p.path());
    cmd.args(["run", "--agent", &format!("sh {}", script.display())]);
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn run");
    let ready = st.path().join("crash.ready");
    let t0 = Instant::now();
    while !ready.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "agent never reached the crash point"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    assert_eq!(p.task("task-002")["status"], "in_progress");
    assert!(!p.log().contains("LOCK released"));

    let r = run_agent(&p, st.path(), &script, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for t in ["task-001", "task-002", "task-003"] {
        assert_eq!(p.task(t)["status"], "completed", "{t}");
    }
    assert_eq!(p.task("task-002")["attempts"], 0);
    let log = p.log();
    let warn = log
        .lines()
        .find(|l| l.contains(" WARN previous session"))
        .expect("stale-holder WARN");
    assert!(warn.contains("killed its orphaned process group"), "{warn}");
    let rec = log
        .lines()
        .find(|l| l.contains("RECOVERY [task-002]"))
        .expect("RECOVERY");
    assert!(rec.contains("row 4") && rec.contains("completed"), "{rec}");
    assert_eq!(log.matches("Completed [task-002]").count(), 1);
    let subjects = git(p.path(), &["log", "--format=%s"]);
    assert_eq!(
        subjects.lines().filter(|s| s.contains("task-002")).count(),
        1
    );
    // the agent of the crashed session ran once for task-002; recovery did not rerun it
    let runs = std::fs::read_to_string(st.path().join("runs.log")).expect("runs");
    assert_eq!(
        runs.lines().filter(|l| l.starts_with("task-002 ")).count(),
        1
    );
    assert!(!p.file(".harness-session.pid").exists());
}

#[test]
fn two_concurrent_workers_in_worktrees_share_one_state_root() {
    let p = Project::git();
    let tasks: Vec<_> = (1..=20)
        .map(|n| {
            task_json(
                &id(n),
                &format!("slow task {n}"),
                &[],
                &file_check(&id(n)),
                5,
            )
        })
        .collect();
    p.write_state(
        json!(tasks),
        json!({"session_config": {"concurrency_mode": "concurrent"}}),
    );
    p.activate();
    let trees = tempfile::tempdir().expect("trees");
    for w in ["w1", "w2"] {
        let path = trees.path().join(w);
        git(
            p.path(),
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                w,
                path.to_str().expect("utf8"),
            ],
        );
    }
    let (st, script) = agent();
    let root = p.path().display().to_string();
    let children: Vec<_> = ["w1", "w2"]
        .iter()
        .map(|w| {
            let mut c = common::cli_command(&trees.path().join(w));
            c.args([
                "run",
                "--worker-id",
                w,
                "--agent",
                &format!("sh {}", script.display()),
            ])
            .env("HARNESS_STATE_ROOT", &root);
            for (k, v) in agent_env(st.path()) {
                c.env(k, v);
            }
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn worker")
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("wait worker");
        assert!(
            o.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let s = p.state();
    let tasks = s["tasks"].as_array().expect("tasks");
    assert!(
        tasks
            .iter()
            .all(|t| t["status"] == "completed" && t["attempts"] == 0)
    );
    let log = p.log();
    for n in 1..=20 {
        assert_eq!(
            log.matches(&format!("Completed [{}]", id(n))).count(),
            1,
            "{}",
            id(n)
        );
        assert_eq!(
            log.matches(&format!("Starting [{}]", id(n))).count(),
            1,
            "{}",
            id(n)
        );
    }
    let runs = std::fs::read_to_string(st.path().join("runs.log")).expect("runs");
    assert_eq!(
        runs.lines().count(),
        20,
        "each task ran exactly once:\n{runs}"
    );
    let per_worker = |w: &str| {
        runs.lines()
            .filter(|l| l.ends_with(&format!(" {w}")))
            .count()
    };
    assert!(
        per_worker("w1") > 0 && per_worker("w2") > 0,
        "both workers worked:\n{runs}"
    );
    let subjects = git(p.path(), &["log", "--format=%s", "w1", "w2"]);
    for n in 1..=20 {
        let c = subjects
            .lines()
            .filter(|s| s.contains(&format!("{} completed", id(n))))
            .count();
        assert_eq!(c, 1, "commits of {}", id(n));
    }
    assert_eq!(
        git(p.path(), &["status", "--porcelain", "--untracked-files=no"]),
        "",
        "main tree untouched"
    );
    assert!(!p.file(".harness-active").exists());
}
