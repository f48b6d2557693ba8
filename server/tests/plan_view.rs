//! `GET /api/projects/{id}/plan`: a real server and a project directory
//! whose task list was made by the real `harness` CLI (init, add, claim, fail).

use crate::common;

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

fn run(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(HARNESS)
        .current_dir(dir)
        .args(args)
        .env_remove("HARNESS_STATE_ROOT")
        .env_remove("HARNESS_TASK_ID")
        .env_remove("HARNESS_WORKER_ID")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn git(dir: &Path, args: &[&str]) {
    let o = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// task-001 completed, task-002 (after 001) failed for good, task-003 (after 002) blocked,
/// task-004 (after 001) pending and next.
fn make_plan(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join("README"), "x\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-qm", "base"]);
    run(dir, &["init"]);
    run(
        dir,
        &["add", "Base", "--validate", "true", "--priority", "P0"],
    );
    run(
        dir,
        &[
            "add",
            "Parser",
            "--depends-on",
            "task-001",
            "--validate",
            "false",
            "--max-attempts",
            "1",
        ],
    );
    run(
        dir,
        &[
            "add",
            "Printer",
            "--depends-on",
            "task-002",
            "--validate",
            "true",
        ],
    );
    run(
        dir,
        &[
            "add",
            "Docs",
            "--depends-on",
            "task-001",
            "--validate",
            "true",
        ],
    );
    let w = ["--worker-id", "w1"];
    run(dir, &["task", "claim", "--task", "task-001", w[0], w[1]]);
    run(dir, &["task", "complete", "task-001", w[0], w[1]]);
    run(dir, &["task", "claim", "--task", "task-002", w[0], w[1]]);
    run(
        dir,
        &[
            "task",
            "fail",
            "task-002",
            "--category",
            "TEST_FAIL",
            "--message",
            "3 tests failed",
            w[0],
            w[1],
        ],
    );
}

async fn project(s: &common::Server, name: &str, path: &Path) -> String {
    let (status, p) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": name, "path": path.display().to_string()})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{p}");
    p["id"].as_str().unwrap().to_string()
}

fn task<'a>(view: &'a Value, id: &str) -> &'a Value {
    view["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {view}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_route_shows_the_tree_statuses_errors_and_log_tail() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let proj = tempfile::tempdir().unwrap();
    make_plan(proj.path());
    let id = project(&s, "plan", proj.path()).await;

    let (status, v) = s
        .admin("GET", &format!("/api/projects/{id}/plan"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["state"], "ok");
    assert_eq!(v["total"], 4);
    assert_eq!(v["blocked"], 1);
    assert_eq!(v["counts"]["completed"], 1);
    assert_eq!(v["counts"]["failed"], 1);
    assert_eq!(v["counts"]["pending"], 2);
    assert_eq!(v["next"], json!(["task-004", "Docs"]));
    // Tree order: 001, its dependents 002 (with 003 under it) and 004.
    let order: Vec<(String, u64)> = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("task-001".to_string(), 0),
            ("task-002".to_string(), 1),
            ("task-003".to_string(), 2),
            ("task-004".to_string(), 1)
        ]
    );
    assert_eq!(task(&v, "task-001")["status"], "completed");
    let parser = task(&v, "task-002");
    assert_eq!(parser["status"], "failed");
    assert_eq!(
        (parser["attempts"].as_u64(), parser["maxAttempts"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(parser["permanentlyFailed"], true);
    assert_eq!(
        parser["lastError"],
        json!({"category": "TEST_FAIL", "message": "3 tests failed"})
    );
    let printer = task(&v, "task-003");
    assert_eq!(
        (printer["blocked"].as_bool(), &printer["blockedBy"]),
        (Some(true), &json!(["task-002"]))
    );
    assert_eq!(task(&v, "task-004")["parent"], "task-001");
    let tail: Vec<&str> = v["logTail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        tail.iter().any(|l| l.contains("Completed [task-001]")),
        "{tail:?}"
    );
    assert!(
        tail.last().unwrap().contains("ROLLBACK [task-002]"),
        "newest last: {tail:?}"
    );

    // The tail follows the log; `lines` bounds it.
    let (_, short) = s
        .admin("GET", &format!("/api/projects/{id}/plan?lines=2"), None)
        .await;
    assert_eq!(short["logTail"].as_array().unwrap().len(), 2);
    run(
        proj.path(),
        &["task", "claim", "--task", "task-004", "--worker-id", "w2"],
    );
    let (_, v) = s
        .admin("GET", &format!("/api/projects/{id}/plan"), None)
        .await;
    let docs = task(&v, "task-004");
    assert_eq!(
        (docs["status"].as_str(), docs["claimedBy"].as_str()),
        (Some("in_progress"), Some("w2"))
    );
    assert!(docs["leaseExpiresAt"].is_string());
    assert!(
        v["logTail"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("Starting [task-004]")
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_and_corrupt_task_lists_are_states_and_bad_input_is_4xx() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let empty = tempfile::tempdir().unwrap();
    let id = project(&s, "empty", empty.path()).await;
    let (status, v) = s
        .admin("GET", &format!("/api/projects/{id}/plan"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        (v["state"].as_str(), v["tasks"].as_array().map(Vec::len)),
        (Some("missing"), Some(0))
    );

    std::fs::write(
        empty.path().join("harness-tasks.json"),
        "{\"version\": 2, \"tasks\": [",
    )
    .unwrap();
    let (status, v) = s
        .admin("GET", &format!("/api/projects/{id}/plan"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["state"], "error");
    let err = v["error"].as_str().unwrap();
    assert!(
        err.starts_with("[CONFIG] ") && err.contains("harness-tasks.json: invalid JSON at line 1"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(empty.path().join("harness-tasks.json")).unwrap(),
        "{\"version\": 2, \"tasks\": [",
        "the view never rewrites the file"
    );

    let (status, e) = s.admin("GET", "/api/projects/not-a-cuid/plan", None).await;
    assert_eq!(
        (status, e["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("id")),
        "{e}"
    );
    let (status, e) = s
        .admin("GET", &format!("/api/projects/{id}/plan?lines=0"), None)
        .await;
    assert_eq!(
        (status, e["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("lines")),
        "{e}"
    );
    let unknown = harness_core::ids::new_id();
    let (status, _) = s
        .admin("GET", &format!("/api/projects/{unknown}/plan"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s
        .call("GET", &format!("/api/projects/{id}/plan"), None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    s.shutdown().await;
}

#[tokio::test]
async fn a_plan_file_linked_out_of_the_project_is_refused_and_paths_are_canonical() {
    let data = tempfile::tempdir().unwrap();
    let s = common::start(data.path()).await;
    let proj = tempfile::tempdir().unwrap();
    std::fs::write(
        proj.path().join("harness-tasks.json"),
        r#"{"version": 2, "tasks": []}"#,
    )
    .unwrap();
    // A cloned repository plants a link to the server's own admin token.
    std::os::unix::fs::symlink(
        data.path().join("secrets/admin.token"),
        proj.path().join("harness-progress.txt"),
    )
    .unwrap();
    // Registered through a `..` detour: stored canonical.
    let detour = proj
        .path()
        .join("..")
        .join(proj.path().file_name().unwrap());
    let id = project(&s, "linked", &detour).await;
    let (_, projects) = s.admin("GET", "/api/projects", None).await;
    let stored = projects
        .as_array()
        .and_then(|a| a.iter().find(|p| p["id"] == id.as_str()))
        .map(|p| p["path"].clone())
        .unwrap_or_else(|| panic!("{projects}"));
    assert_eq!(
        stored,
        proj.path().canonicalize().unwrap().display().to_string()
    );
    let (status, v) = s
        .admin("GET", &format!("/api/projects/{id}/plan"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["state"], "error");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("[SECURITY] harness-progress.txt is a link"),
        "{v}"
    );
    assert!(!v.to_string().contains(&s.admin), "the token never shows");
    // Relative paths are refused at registration, with the field named.
    for path in ["../../../../etc", "relative/dir"] {
        let (status, body) = s
            .admin(
                "POST",
                "/api/projects",
                Some(json!({"name": format!("rel {path}"), "path": path})),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["field"], "path");
    }
    s.shutdown().await;
}
