//! CLI surface (docs/contract.md §8) through the real binary: init, add, status, the protocol
//! steps, exit codes, corrupt files, locking races.

mod common;

use common::{Project, assert_log_grammar, git, run_cli};
use serde_json::json;

#[test]
fn init_creates_files_and_is_idempotent() {
    let p = Project::plain();
    let r = p.cli(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = p.state();
    assert_eq!(s["version"], 2);
    assert_eq!(s["tasks"], json!([]));
    assert_eq!(s["session_config"]["concurrency_mode"], "exclusive");
    assert!(p.file(".harness-active").exists());
    let mode = std::fs::metadata(p.file("harness-init.sh")).expect("init.sh");
    use std::os::unix::fs::PermissionsExt;
    assert!(mode.permissions().mode() & 0o111 != 0);
    let log = p.log();
    assert!(log.contains("INIT Harness initialized for project"));
    log.lines().for_each(assert_log_grammar);
    p.cli(&["add", "keep me"]);
    assert_eq!(p.cli(&["init"]).code, 0);
    assert_eq!(p.state()["tasks"].as_array().map(Vec::len), Some(1));
}

#[test]
fn init_with_path_and_gitignore() {
    let p = Project::plain();
    let sub = p.file("proj");
    std::fs::create_dir(&sub).expect("mkdir");
    let r = p.cli(&["init", sub.to_str().expect("utf8"), "--gitignore"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(sub.join("harness-tasks.json").exists());
    let gi = std::fs::read_to_string(sub.join(".gitignore")).expect("gitignore");
    assert!(gi.contains(".harness-*"));
    assert_eq!(p.cli(&["init", "/no/such/dir"]).code, 2);
}

#[test]
fn add_assigns_ids_and_fields() {
    let p = Project::plain();
    p.cli(&["init"]);
    assert_eq!(p.cli(&["add", "first"]).stdout.trim(), "task-001");
    let r = p.cli(&[
        "add",
        "second",
        "--priority",
        "P0",
        "--depends-on",
        "task-001",
        "--validate",
        "test -f x",
        "--timeout",
        "7",
        "--max-attempts",
        "5",
    ]);
    assert_eq!((r.code, r.stdout.trim()), (0, "task-002"), "{}", r.stderr);
    let t = p.task("task-002");
    assert_eq!(t["priority"], "P0");
    assert_eq!(t["depends_on"], json!(["task-001"]));
    assert_eq!(t["validation"]["command"], "test -f x");
    assert_eq!(t["validation"]["timeout_seconds"], 7);
    assert_eq!(t["max_attempts"], 5);
    assert_eq!(t["attempts"], 0);
    assert_eq!(t["status"], "pending");
    assert!(p.file("harness-tasks.json.bak").exists());
}

#[test]
fn add_refuses_unknown_dependency_and_cycles() {
    let p = Project::plain();
    p.cli(&["init"]);
    let r = p.cli(&["add", "x", "--depends-on", "task-042"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("unknown dependency task-042"),
        "{}",
        r.stderr
    );
    let r = p.cli(&["add", "self", "--depends-on", "task-001"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cycle"), "{}", r.stderr);
    // an existing cycle (hand-edited) cannot be extended
    p.write_state(
        json!([{"id":"task-001","title":"a","depends_on":["task-002"]},
               {"id":"task-002","title":"b","depends_on":["task-001"]}]),
        json!({}),
    );
    let r = p.cli(&["add", "c", "--depends-on", "task-001"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("task-001 -> task-002 -> task-001"),
        "{}",
        r.stderr
    );
    let r = p.cli(&["add", "bad", "--priority", "P7"]);
    assert_eq!(r.code, 2);
    assert_eq!(p.state()["tasks"].as_array().map(Vec::len), Some(2));
}

#[test]
fn unknown_fields_survive_rewrites() {
    let p = Project::plain();
    p.write_state(
        json!([{"id":"task-001","title":"a","status":"pending","owner_note":"keep","validation":{"command":"true","env":"x"}}]),
        json!({"custom_top": {"n": 1}, "session_config": {"concurrency_mode":"exclusive","future_knob": true}}),
    );
    assert_eq!(p.cli(&["add", "b"]).code, 0);
    let s = p.state();
    assert_eq!(s["custom_top"]["n"], 1);
    assert_eq!(s["session_config"]["future_knob"], true);
    assert_eq!(s["tasks"][0]["owner_note"], "keep");
    assert_eq!(s["tasks"][0]["validation"]["env"], "x");
}

#[test]
fn status_human_and_json() {
    let p = Project::plain();
    p.write_state(
        json!([
            {"id":"task-001","title":"done","status":"completed"},
            {"id":"task-002","title":"dead","status":"failed","attempts":3,"max_attempts":3},
            {"id":"task-003","title":"waits","status":"pending","depends_on":["task-002"]},
            {"id":"task-010","title":"ten","status":"pending","priority":"P1"},
            {"id":"task-009","title":"nine","status":"pending","priority":"P1"}
        ]),
        json!({"session_count": 4}),
    );
    let r = p.cli(&["status"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("[failed] task-002: dead (3/3)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("blocked=1"));
    assert!(r.stdout.contains("next: task-009: nine"));
    let j = p.cli(&["status", "--json"]).json();
    assert_eq!(j["stats"]["blocked"], 1);
    assert_eq!(j["stats"]["completed"], 1);
    assert_eq!(j["next"]["id"], "task-009");
    assert_eq!(j["session_count"], 4);
    let t3 = j["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .find(|t| t["id"] == "task-003")
        .cloned()
        .expect("t3");
    assert_eq!(t3["blocked"], true);
    // status is read-only: no lock file, no backup, no log
    assert!(!p.file(".harness-tx.lock").exists());
    assert!(!p.file("harness-tasks.json.bak").exists());
}

#[test]
fn corrupt_state_is_reported_with_position_or_restored() {
    let p = Project::plain();
    p.cli(&["init"]);
    p.cli(&["add", "one"]);
    p.cli(&["add", "two"]);
    std::fs::write(
        p.file("harness-tasks.json"),
        "{\n  \"version\": 2,\n  \"tasks\": [\n    {oops}\n",
    )
    .expect("w");
    let r = p.cli(&["status"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("harness-tasks.json"), "{}", r.stderr);
    assert!(r.stderr.contains("line 4"), "{}", r.stderr);
    // a writer restores the previous generation from .bak
    let r = p.cli(&["add", "three"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ids: Vec<String> = p.state()["tasks"]
        .as_array()
        .expect("t")
        .iter()
        .map(|t| t["id"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(ids, ["task-001", "task-002"]);
    assert!(
        p.log()
            .contains("WARN harness-tasks.json was corrupt; restored")
    );
    // both broken: CONFIG error naming the file
    std::fs::write(p.file("harness-tasks.json"), "[1,").expect("w");
    std::fs::write(p.file("harness-tasks.json.bak"), "nope").expect("w");
    let r = p.cli(&["add", "four"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("[CONFIG]") && r.stderr.contains("harness-tasks.json"),
        "{}",
        r.stderr
    );
}

#[test]
fn no_state_root_is_usage_error() {
    let p = Project::plain();
    for args in [vec!["status"], vec!["add", "x"], vec!["task", "claim"]] {
        let r = p.cli(&args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains("harness init"), "{}", r.stderr);
    }
    assert_eq!(p.cli(&["frobnicate"]).code, 2);
}

#[test]
fn state_root_found_from_subdirectory_and_env() {
    let p = Project::plain();
    p.cli(&["init"]);
    let sub = p.file("a/b");
    std::fs::create_dir_all(&sub).expect("mkdir");
    assert_eq!(run_cli(&sub, &["add", "from sub"], &[], None).code, 0);
    let other = Project::plain();
    let root = p.path().to_string_lossy().into_owned();
    let r = run_cli(
        other.path(),
        &["status", "--json"],
        &[("HARNESS_STATE_ROOT", &root)],
        None,
    );
    assert_eq!(r.json()["stats"]["tasks_total"], 1);
}

fn git_project_with(tasks: serde_json::Value) -> Project {
    let p = Project::git();
    p.write_state(tasks, json!({}));
    p
}

#[test]
fn claim_checkpoint_complete_commits_with_task_id() {
    let p = git_project_with(json!([
        {"id":"task-001","title":"make file","status":"pending","validation":{"command":"grep -q ok out.txt","timeout_seconds":5}}
    ]));
    let head = git(p.path(), &["rev-parse", "HEAD"]);
    let c = p.cli(&["task", "claim"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    let cj = c.json();
    assert_eq!(cj["claimed"], true);
    assert_eq!(cj["task_id"], "task-001");
    let t = p.task("task-001");
    assert_eq!(t["status"], "in_progress");
    assert_eq!(t["started_at_commit"], head.as_str());
    assert!(t["lease_expires_at"].is_string() && t["claimed_by"].is_string());
    assert_eq!(
        p.cli(&[
            "task",
            "checkpoint",
            "task-001",
            "--step",
            "1",
            "--total",
            "2",
            "wrote \"file\""
        ])
        .code,
        0
    );
    std::fs::write(p.file("out.txt"), "ok\n").expect("w");
    let r = p.cli(&["task", "complete", "task-001"]);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    let t = p.task("task-001");
    assert_eq!(t["status"], "completed");
    assert!(t["completed_at"].is_string());
    assert!(t.get("claimed_by").is_none());
    assert_eq!(t["checkpoints"][0]["description"], "wrote \"file\"");
    let msg = git(p.path(), &["log", "-1", "--format=%s"]);
    assert!(msg.contains("task-001"), "{msg}");
    let files = git(p.path(), &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "out.txt", "state files are never committed");
    let log = p.log();
    assert!(log.contains(&format!("Starting [task-001] make file (base={head})")));
    assert!(log.contains("CHECKPOINT [task-001] step=1/2 \"wrote 'file'\""));
    assert!(log.contains("Completed [task-001] (commit "));
    log.lines().for_each(assert_log_grammar);
}

#[test]
fn failed_validation_rolls_back_but_keeps_state_files() {
    let p = git_project_with(json!([
        {"id":"task-001","title":"t","status":"pending","validation":{"command":"test -f never"},
         "on_failure":{"cleanup":"touch cleaned.marker"}}
    ]));
    // track the state files in git, as the seed's e2e does: rollback must not rewind them
    std::fs::write(p.file("harness-progress.txt"), "").expect("w");
    git(p.path(), &["add", "-A"]);
    git(p.path(), &["commit", "-qm", "track harness files"]);
    let head = git(p.path(), &["rev-parse", "HEAD"]);
    assert_eq!(p.cli(&["task", "claim"]).code, 0);
    std::fs::write(p.file("new.txt"), "junk").expect("w");
    std::fs::write(p.file("README"), "modified").expect("w");
    let r = p.cli(&["task", "complete", "task-001"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["category"], "TEST_FAIL");
    let t = p.task("task-001");
    assert_eq!(t["status"], "failed");
    assert_eq!(t["attempts"], 1);
    assert!(
        t["error_log"][0]
            .as_str()
            .expect("e")
            .starts_with("[TEST_FAIL] ")
    );
    assert!(t["last_failed_at"].is_string());
    assert!(!p.file("new.txt").exists(), "untracked work cleaned");
    assert_eq!(
        std::fs::read_to_string(p.file("README")).expect("r"),
        "base\n"
    );
    assert_eq!(git(p.path(), &["rev-parse", "HEAD"]), head);
    let log = p.log();
    assert!(log.contains("ERROR [task-001] [TEST_FAIL]"), "{log}");
    assert!(log.contains(&format!("ROLLBACK [task-001] git reset --hard {head}")));
    assert!(
        log.contains("Starting [task-001]"),
        "log not rewound by reset"
    );
    assert!(p.file("cleaned.marker").exists(), "on_failure.cleanup ran");
}

#[test]
fn missing_base_commit_forces_max_attempts() {
    let p = git_project_with(json!([
        {"id":"task-001","title":"t","status":"in_progress","started_at_commit":"0123456789abcdef0123456789abcdef01234567",
         "validation":{"command":"false"}}
    ]));
    let r = p.cli(&[
        "task",
        "fail",
        "task-001",
        "--category",
        "TASK_EXEC",
        "--message",
        "gave up",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["permanent"], true);
    let t = p.task("task-001");
    assert_eq!(t["attempts"], 3);
    assert_eq!(t["error_log"][0], "[TASK_EXEC] gave up");
}

#[test]
fn complete_without_validation_is_config_error_for_that_task() {
    let p = git_project_with(json!([{"id":"task-001","title":"t","status":"pending"}]));
    p.cli(&["task", "claim"]);
    let r = p.cli(&["task", "complete", "task-001"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("tasks[0].validation.command"),
        "{}",
        r.stderr
    );
    let t = p.task("task-001");
    assert_eq!(t["status"], "failed");
    assert_eq!(t["attempts"], 0);
    assert!(
        p.log()
            .contains("ERROR [task-001] [CONFIG] Missing validation.command")
    );
}

#[test]
fn concurrent_mode_requires_worker_id_and_checks_ownership() {
    let p = Project::git();
    p.write_state(
        json!([{"id":"task-001","title":"t","status":"pending","validation":{"command":"true"}}]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.cli(&["task", "claim"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("worker id"));
    assert_eq!(p.task("task-001")["status"], "pending");
    assert_eq!(p.cli(&["task", "claim", "--worker-id", "w1"]).code, 0);
    assert_eq!(p.task("task-001")["claimed_by"], "w1");
    let r = p.cli(&["task", "renew", "task-001", "--worker-id", "w2"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("claimed by w1"));
    let r = p.cli_env(
        &["task", "renew", "--lease", "60"],
        &[("HARNESS_WORKER_ID", "w1"), ("HARNESS_TASK_ID", "task-001")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["renewed"], true);
    let r = p.cli(&[
        "task",
        "checkpoint",
        "task-001",
        "--step",
        "1",
        "--total",
        "1",
        "x",
        "--worker-id",
        "w2",
    ]);
    assert_eq!(r.code, 1);
}

#[test]
fn expired_leases_are_reaped_on_claim() {
    let p = Project::git();
    p.write_state(
        json!([
            {"id":"task-001","title":"stuck","status":"in_progress","claimed_by":"ghost","lease_expires_at":"2020-01-01T00:00:00Z","validation":{"command":"true"}},
            {"id":"task-002","title":"live","status":"in_progress","claimed_by":"w3","lease_expires_at":"2999-01-01T00:00:00Z","validation":{"command":"true"}},
            {"id":"task-003","title":"no lease","status":"in_progress","validation":{"command":"true"}}
        ]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.cli(&["task", "claim", "--worker-id", "w1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["task_id"],
        "task-001",
        "the reaped task is retryable and claimed again"
    );
    let t = p.task("task-001");
    assert_eq!(t["attempts"], 1);
    assert_eq!(
        t["error_log"][0],
        "[SESSION_TIMEOUT] Lease expired (claimed_by=ghost)"
    );
    assert_eq!(p.task("task-002")["claimed_by"], "w3");
    assert_eq!(p.task("task-003")["status"], "in_progress");
    assert!(
        p.log()
            .contains("ERROR [task-001] [SESSION_TIMEOUT] Lease expired")
    );
}

#[test]
fn racing_processes_claim_each_task_exactly_once() {
    let p = Project::git();
    let tasks: Vec<_> = (1..=3)
        .map(|i| json!({"id": format!("task-{i:03}"), "title": "t", "status": "pending", "validation": {"command":"true"}}))
        .collect();
    p.write_state(
        json!(tasks),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let children: Vec<_> = (0..8)
        .map(|i| {
            common::cli_command(p.path())
                .args(["task", "claim", "--worker-id", &format!("w{i}")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let mut claimed = Vec::new();
    let mut misses = 0;
    for c in children {
        let o = c.wait_with_output().expect("wait");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        match o.status.code() {
            Some(0) => claimed.push(v["task_id"].as_str().expect("id").to_string()),
            Some(1) => {
                assert_eq!(v["claimed"], false);
                misses += 1;
            }
            other => panic!(
                "unexpected exit {other:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            ),
        }
    }
    claimed.sort();
    assert_eq!(claimed, ["task-001", "task-002", "task-003"]);
    assert_eq!(misses, 5);
    assert_eq!(p.log_lines("Starting [").len(), 3);
}

#[test]
fn untracked_state_files_survive_rollback_clean() {
    let p = git_project_with(json!([
        {"id":"task-001","title":"t","status":"pending","validation":{"command":"false"}}
    ]));
    p.activate();
    std::fs::write(p.file(".harness-stop-counter"), "1,0").expect("w");
    assert_eq!(p.cli(&["task", "claim"]).code, 0);
    assert!(p.file("harness-tasks.json.bak").exists());
    std::fs::create_dir(p.file("junkdir")).expect("mkdir");
    std::fs::write(p.file("junkdir/f"), "x").expect("w");
    assert_eq!(p.cli(&["task", "complete", "task-001"]).code, 1);
    assert!(!p.file("junkdir").exists(), "git clean -fd ran");
    for f in [
        "harness-tasks.json",
        "harness-tasks.json.bak",
        "harness-progress.txt",
        ".harness-active",
        ".harness-stop-counter",
    ] {
        assert!(p.file(f).exists(), "{f} survived");
    }
    assert_eq!(p.task("task-001")["attempts"], 1);
    assert!(p.log().contains("ROLLBACK [task-001]"));
}
