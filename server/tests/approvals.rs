//! Approvals of risky tool calls on a real server: the policy
//! over REST (field errors, reset to the built-in rules), the real `harness
//! hook pre-tool` holding a `git push --force` of a derived task until a
//! person approves it, a decision that comes too late for the hook (typed
//! into the terminal, a one-time grant for exactly that call), a denial
//! with its reason, "already decided", the audit, and the hook failing
//! closed for an `ask` rule (open otherwise) when the server is unreachable.

use crate::common;

use std::{
    io::Write,
    process::{Command, Stdio},
    time::Duration,
};

use reqwest::StatusCode;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_harness");

/// Runs the real hook; answers its stdout (empty = allow).
pub(crate) async fn hook(payload: Value, env: Vec<(&'static str, String)>) -> String {
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(BIN);
        cmd.args(["hook", "pre-tool"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).to_string()
    })
    .await
    .unwrap()
}

pub(crate) fn bash(cmd: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": cmd},
        "cwd": "/repo"})
}

pub(crate) fn reason(stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|_| panic!("not JSON: {stdout:?}"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(crate) async fn child_task(server: &common::Server) -> String {
    let parent = server.task("approvals parent").await;
    let (status, body) = server
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "approvals child", "parentTaskId": parent,
                "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_string()
}

pub(crate) async fn approvals_of(server: &common::Server, task: &str) -> Vec<Value> {
    let (status, body) = server
        .admin("GET", &format!("/api/approvals?taskId={task}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_is_read_and_edited_over_rest_with_field_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let (status, g) = server
        .admin("GET", "/api/settings/approval-policy", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{g}");
    assert_eq!(g["builtin"], true);
    assert!(
        g["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["pattern"] == "git push*")
    );
    let (status, e) = server
        .admin("PUT", "/api/settings/approval-policy",
            Some(json!({"rules": [{"tool": "Bash", "action": "ask"}, {"tool": " ", "action": "deny"}]})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["field"], "tool", "{e}");
    assert!(e["error"].as_str().unwrap().contains("rules[1]"), "{e}");
    let (status, e) = server
        .admin(
            "PUT",
            "/api/settings/approval-policy",
            Some(json!({"rules": [{"tool": "Bash", "action": "maybe"}]})),
        )
        .await;
    assert!(status.is_client_error(), "{status} {e}");
    let mine = json!({"rules": [{"tool": "Bash", "pattern": "terraform apply*", "action": "ask"}]});
    let (status, g) = server
        .admin("PUT", "/api/settings/approval-policy", Some(mine.clone()))
        .await;
    assert_eq!(status, StatusCode::OK, "{g}");
    assert_eq!(g["builtin"], false);
    assert_eq!(g["rules"], mine["rules"]);
    let (_, g) = server
        .admin("DELETE", "/api/settings/approval-policy", None)
        .await;
    assert_eq!(g["builtin"], true);
    // A project's own rules.
    let (status, p) = server
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "p", "path": dir.path().display().to_string()})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{p}");
    let id = p["id"].as_str().unwrap();
    let path = format!("/api/projects/{id}/approval-policy");
    let (status, got) = server.admin("GET", &path, None).await;
    assert_eq!((status, got), (StatusCode::OK, json!({"rules": []})));
    let (status, got) = server.admin("PUT", &path, Some(mine.clone())).await;
    assert_eq!(
        (status, got["rules"].clone()),
        (StatusCode::OK, mine["rules"].clone())
    );
    let (status, _) = server
        .admin(
            "GET",
            "/api/projects/cnosuchprojectxxxxxxxxxxx/approval-policy",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_is_approved_in_time_later_or_denied_and_each_decision_is_used_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let task = child_task(&server).await;
    let env = vec![
        ("TOWER_TASK_ID", task.clone()),
        ("TOWER_HAS_PARENT", "1".to_string()),
        ("TOWER_API_URL", server.base.clone()),
        ("TOWER_API_TOKEN", server.admin.clone()),
    ];
    // Not matched by any rule: runs, nothing recorded.
    assert_eq!(hook(bash("cargo test"), env.clone()).await, "");
    assert!(approvals_of(&server, &task).await.is_empty());

    // 1. Held by the real hook until a person approves (in time).
    let held = tokio::spawn(hook(bash("git push --force"), env.clone()));
    let pending = loop {
        let rows = approvals_of(&server, &task).await;
        if let Some(r) = rows.first() {
            break r.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(pending["state"], "PENDING");
    assert_eq!(pending["tool"], "Bash");
    assert_eq!(pending["cwd"], "/repo");
    assert!(pending["rule"].as_str().unwrap().contains("git push*"));
    // It is an ask with the options Approve / Deny, pending for a person.
    let (_, page) = server
        .admin(
            "GET",
            &format!("/api/harness/messages?view=pending&taskId={task}"),
            None,
        )
        .await;
    let row = &page["rows"][0];
    assert_eq!(row["id"], pending["requestId"]);
    assert_eq!(row["options"][0]["label"], "Approve");
    assert_eq!(row["options"][1]["label"], "Deny");
    assert!(
        row["content"]
            .as_str()
            .unwrap()
            .contains("$ git push --force"),
        "{row}"
    );
    let id = pending["id"].as_str().unwrap().to_string();
    let (status, d) = server
        .admin(
            "POST",
            &format!("/api/approvals/{id}/decide"),
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(held.await.unwrap(), "", "approved in time: the call runs");
    let a = &approvals_of(&server, &task).await[0];
    assert_eq!(a["state"], "APPROVED");
    assert_eq!(a["outcome"], "ran");
    assert_eq!(a["decidedBy"], "admin");
    assert_eq!(a["decidedVia"], "rest");
    assert!(a["consumedAt"].is_string() && a["decidedAt"].is_string());
    // A second decision: already decided.
    let (status, e) = server
        .admin(
            "POST",
            &format!("/api/approvals/{id}/decide"),
            Some(json!({"decision": "deny"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("already decided"),
        "{e}"
    );
    let (status, e) = server
        .admin(
            "POST",
            &format!("/api/approvals/{id}/decide"),
            Some(json!({"decision": "perhaps"})),
        )
        .await;
    assert_eq!(
        (status, e["field"].clone()),
        (StatusCode::BAD_REQUEST, json!("decision"))
    );

    // 2. Not answered in time: denied with "end your turn"; the answer comes
    //    later through /reply ("1"), and the retried call passes once.
    let check = json!({"taskId": task, "tool": "Bash", "input": {"command": "rm -rf build"},
        "cwd": "/repo", "waitSeconds": 1});
    let (status, v) = server
        .admin("POST", "/api/internal/approvals/check", Some(check.clone()))
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["waiting"], true);
    assert!(
        v["reason"].as_str().unwrap().contains("END YOUR TURN"),
        "{v}"
    );
    // Retried while pending: the same approval, no second question.
    let (_, again) = server
        .admin("POST", "/api/internal/approvals/check", Some(check.clone()))
        .await;
    assert_eq!(again["approvalId"], v["approvalId"]);
    let (status, r) = server
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["requestId"], v["requestId"]);
    let (status, r) = server
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "Deny"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("already decided"),
        "{r}"
    );
    // The late decision is owed to the terminal, keyed to the approval.
    let (_, deliveries) = server
        .admin("GET", &format!("/api/tasks/{task}/deliveries"), None)
        .await;
    let typed: Vec<&Value> = deliveries
        .as_array()
        .or_else(|| deliveries["deliveries"].as_array())
        .unwrap()
        .iter()
        .filter(|d| {
            d["text"]
                .as_str()
                .is_some_and(|t| t.contains("Approved by admin: Bash: rm -rf build"))
        })
        .collect();
    assert_eq!(typed.len(), 1, "{deliveries}");
    let no_wait = json!({"taskId": task, "tool": "Bash", "input": {"command": "rm -rf build"}, "cwd": "/repo"});
    let (_, v1) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(no_wait.clone()),
        )
        .await;
    assert_eq!(v1["decision"], "allow", "{v1}");
    assert_eq!(v1["approvalId"], v["approvalId"]);
    let (_, v2) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(no_wait.clone()),
        )
        .await;
    assert_eq!(v2["decision"], "deny", "a grant is used once: {v2}");
    assert_ne!(v2["approvalId"], v["approvalId"], "a new approval");

    // 3. Denied with a reason: the next try is refused with it, once.
    let id2 = v2["approvalId"].as_str().unwrap();
    let (status, _) = server
        .admin(
            "POST",
            &format!("/api/approvals/{id2}/decide"),
            Some(json!({"decision": "deny", "reason": "not on main"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, v3) = server
        .admin("POST", "/api/internal/approvals/check", Some(no_wait))
        .await;
    assert_eq!(v3["decision"], "deny");
    assert!(
        v3["reason"]
            .as_str()
            .unwrap()
            .contains("because not on main"),
        "{v3}"
    );
    let audit = approvals_of(&server, &task).await;
    assert_eq!(audit.len(), 3);
    let denied = audit.iter().find(|a| a["id"] == id2).unwrap();
    assert_eq!(
        (denied["state"].clone(), denied["outcome"].clone()),
        (json!("DENIED"), json!("held"))
    );
    assert_eq!(denied["reason"], "not on main");

    // The audit export: the same rows as CSV, or a 400 naming `format`.
    let resp = server
        .client
        .get(server.url(&format!("/api/approvals?taskId={task}&format=csv")))
        .bearer_auth(&server.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/csv; charset=utf-8");
    assert!(
        resp.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment")
    );
    let csv = resp.text().await.unwrap();
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 4, "a header and one line per approval: {csv}");
    assert!(lines[0].starts_with("id,taskId,executionId,requestId,tool,input,cwd,rule,state"));
    assert!(lines[1].starts_with(&format!("{id2},{task},")), "{csv}");
    assert!(
        lines[1].contains(",DENIED,true,admin,rest,")
            && lines[1].contains(",not on main,")
            && lines[1].contains(",held,"),
        "{csv}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(r#""{""command"":""rm -rf build""}""#)),
        "the exact call, quoted: {csv}"
    );
    let (status, e) = server.admin("GET", "/api/approvals?format=xml", None).await;
    assert_eq!(
        (status, e["field"].clone()),
        (StatusCode::BAD_REQUEST, json!("format"))
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_approval_replaced_by_a_newer_question_is_cancelled_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let task = child_task(&server).await;
    let check = |cmd: &str| {
        json!({"taskId": task, "tool": "Bash", "input": {"command": cmd}, "cwd": "/repo",
            "waitSeconds": 1})
    };
    let (_, first) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(check("rm -rf build")),
        )
        .await;
    assert_eq!(first["waiting"], true, "{first}");
    // A newer question of the task (another held call) replaces the ask.
    let (_, second) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(check("git push --force")),
        )
        .await;
    assert_eq!(second["waiting"], true, "{second}");
    assert_ne!(second["approvalId"], first["approvalId"]);
    let audit = approvals_of(&server, &task).await;
    let old = audit
        .iter()
        .find(|a| a["id"] == first["approvalId"])
        .unwrap();
    assert_eq!(old["state"], "CANCELLED", "{old}");
    assert_eq!(old["decidedBy"], "harness");
    let id = first["approvalId"].as_str().unwrap();
    let (status, e) = server
        .admin(
            "POST",
            &format!("/api/approvals/{id}/decide"),
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    assert!(e["error"].as_str().unwrap().starts_with("cancelled"), "{e}");
    // Nothing was granted: the retried call asks again.
    let (_, again) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(check("rm -rf build")),
        )
        .await;
    assert_eq!(again["decision"], "deny", "{again}");
    assert_ne!(again["approvalId"], first["approvalId"]);
    // Decided by a reply from chat: the gateway's sender is who decided.
    let (status, r) = server
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "Deny: not today", "senderId": "ou_42"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let audit = approvals_of(&server, &task).await;
    let by_chat = audit
        .iter()
        .find(|a| a["id"] == again["approvalId"])
        .unwrap();
    assert_eq!(by_chat["state"], "DENIED", "{by_chat}");
    assert_eq!(by_chat["decidedBy"], "gateway:ou_42");
    assert_eq!(by_chat["decidedVia"], "chat");
    assert_eq!(by_chat["reason"], "not today");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attended_top_level_tasks_keep_todays_behaviour_and_an_unreachable_server_fails_closed_only_for_ask()
 {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let top = server.task("attended").await;
    let env = vec![
        ("TOWER_TASK_ID", top.clone()),
        ("TOWER_API_URL", server.base.clone()),
        ("TOWER_API_TOKEN", server.admin.clone()),
    ];
    assert_eq!(hook(bash("git push --force"), env).await, "");
    assert!(approvals_of(&server, &top).await.is_empty());
    // The server's own answer for an attended top-level task: allow.
    let (_, v) = server
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(json!({"taskId": top, "tool": "Bash", "input": {"command": "git push"}})),
        )
        .await;
    assert_eq!(v["decision"], "allow", "{v}");
    let down = vec![
        ("TOWER_TASK_ID", top.clone()),
        ("TOWER_HAS_PARENT", "1".to_string()),
        ("TOWER_API_URL", "http://127.0.0.1:9".to_string()),
        ("TOWER_API_TOKEN", "x".to_string()),
    ];
    let r = reason(&hook(bash("git push --force"), down.clone()).await);
    assert!(r.contains("cannot be reached"), "{r}");
    assert_eq!(
        hook(bash("ls -la"), down).await,
        "",
        "open for calls no rule asks about"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_the_hook_decides_by_the_policy_saved_at_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let (status, p) = server
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "offline", "path": dir.path().display().to_string()})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{p}");
    let project = p["id"].as_str().unwrap().to_string();
    let own = json!({"rules": [
        {"tool": "Bash", "pattern": "terraform apply*", "action": "deny", "note": "never from an agent"},
        {"tool": "Bash", "pattern": "make deploy*", "action": "ask"}
    ]});
    let (status, body) = server
        .admin(
            "PUT",
            &format!("/api/projects/{project}/approval-policy"),
            Some(own),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The stored global policy replaces the built-in rules.
    let (status, body) = server
        .admin(
            "PUT",
            "/api/settings/approval-policy",
            Some(
                json!({"rules": [{"tool": "Bash", "pattern": "kubectl delete*", "action": "ask"}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let parent = server.task("offline parent").await;
    let seen = dir.path().join("snapshot-path");
    let script = format!(
        "printf %s \"$TOWER_APPROVAL_SNAPSHOT\" > '{}'",
        seen.display()
    );
    let (status, body) = server
        .admin(
            "POST",
            "/api/tasks",
            Some(
                json!({"title": "offline child", "parentTaskId": parent, "projectId": project,
                "agent": {"provider": "command", "command": ["sh", "-c", script]}}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let child = body["id"].as_str().unwrap().to_string();
    let (status, body) = server
        .admin(
            "POST",
            &format!("/api/tasks/{child}/start"),
            Some(json!({})),
        )
        .await;
    assert!(
        status.is_success() || status == StatusCode::CONFLICT,
        "{status} {body}"
    );
    // The agent was told where its snapshot is, and it is there.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let path = loop {
        if let Ok(p) = std::fs::read_to_string(&seen)
            && !p.is_empty()
        {
            break std::path::PathBuf::from(p);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent never ran"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(path.ends_with("approval-policy.json"), "{}", path.display());
    assert!(path.starts_with(dir.path().join("data").join("runs")));
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(snap["taskId"], child.as_str());
    assert_eq!(snap["projectId"], project.as_str());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    server.shutdown().await;

    // The server is gone: the snapshot decides.
    let down = |task: &str| {
        vec![
            ("TOWER_TASK_ID", task.to_string()),
            ("TOWER_HAS_PARENT", "1".to_string()),
            ("TOWER_API_URL", "http://127.0.0.1:9".to_string()),
            ("TOWER_API_TOKEN", "x".to_string()),
            ("TOWER_APPROVAL_SNAPSHOT", path.display().to_string()),
        ]
    };
    let r = reason(&hook(bash("terraform apply -auto-approve"), down(&child)).await);
    assert!(
        r.contains("denies") && r.contains("never from an agent"),
        "{r}"
    );
    assert!(!r.contains("cannot be reached"), "a deny rule denies: {r}");
    for ask in ["make deploy prod", "kubectl delete ns prod"] {
        let r = reason(&hook(bash(ask), down(&child)).await);
        assert!(r.contains("cannot be reached"), "{ask}: {r}");
    }
    assert_eq!(
        hook(bash("git push --force"), down(&child)).await,
        "",
        "the stored global policy has no git push rule"
    );
    assert_eq!(hook(bash("ls -la"), down(&child)).await, "");
    // Another task's snapshot is not this task's: the built-in rules.
    let r = reason(&hook(bash("git push --force"), down("cotherxxxxxxxxxxxxxxxxxxx")).await);
    assert!(r.contains("cannot be reached"), "{r}");
}
