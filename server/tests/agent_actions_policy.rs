//! The automatic recovery's policy over REST and in Settings: the
//! defaults until one is stored, a value out of range refused naming its
//! field, a project's override over the global policy and a task's over
//! its project's, each value shown next to its default.

use crate::common;

use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_policy_is_global_with_project_and_task_overrides_shown_in_settings() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    // The defaults until one is stored.
    let (st, out) = s.admin("GET", "/api/settings/recovery", None).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["policy"], out["defaults"]);
    assert_eq!(out["defaults"]["crashMaxPerHour"], 2);
    assert_eq!(out["defaults"]["apiErrorMaxPerHour"], 3);
    assert_eq!(out["defaults"]["usageLimitWaitSecs"], 3600);
    assert_eq!(out["defaults"]["stalledNudge"], "");
    // A value out of range is refused, naming it; a misspelt one too.
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/recovery",
            Some(json!({"crashMaxPerHour": 61})),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "crashMaxPerHour", "{out}");
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/recovery",
            Some(json!({"crashRestrat": 1})),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/recovery",
            Some(json!({"crashMaxPerHour": 5, "apiErrorMaxPerHour": 4})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["policy"]["crashMaxPerHour"], 5);
    // A project's override, and a task's over it.
    let (st, p) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "p", "path": std::env::temp_dir().canonicalize().unwrap()})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    let project = p["id"].as_str().unwrap();
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/projects/{project}/recovery"),
            Some(json!({"crashMaxPerHour": 1, "stalledNudge": "Carry on."})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["override"]["crashMaxPerHour"], 1);
    assert_eq!(
        out["effective"]["apiErrorMaxPerHour"], 4,
        "the global value"
    );
    let (st, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "t", "projectId": project,
                "agent": {"provider": "claude", "recovery": {"stalledNudge": ""}}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let (st, out) = s
        .admin(
            "GET",
            &format!("/api/tasks/{}/recovery", t["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let p = &out["policy"];
    assert_eq!(
        (
            &p["crashMaxPerHour"],
            &p["apiErrorMaxPerHour"],
            &p["stalledNudge"]
        ),
        (&json!(1), &json!(4), &json!("")),
        "task ← project ← global: {p}"
    );
    assert_eq!(out["actions"], json!([]));
    let (st, out) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "bad", "agent": {"provider": "claude",
                "recovery": {"usageLimitWaitSecs": 1}}})),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "agent.recovery", "{out}");
    // Settings shows each value next to its default.
    let html = s
        .client
        .get(s.url("/settings"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("id=\"recovery-values\""), "{html}");
    assert!(
        html.contains("data-name=\"crashMaxPerHour\" data-changed=\"true\""),
        "{html}"
    );
    assert!(
        html.contains("data-name=\"crashRestartDelaySecs\" data-changed=\"false\""),
        "{html}"
    );
    s.shutdown().await;
}
