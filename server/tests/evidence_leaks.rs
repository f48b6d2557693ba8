//! The agent's screen in chat pushes, and nothing leaks (docs/evidence.md): a
//! question pushed through the gateway double carries the redacted screen
//! only when its notify target allows it (off by default); a fake API key
//! planted on the agent's screen — before the question and after the
//! answer — is absent from the stored snapshots, the pushes, the
//! evidence and receipt JSON and the backup; the snapshots are deleted
//! with their message. An approval's and a derived task's native
//! question's screens are kept and pushed the same way, and an exit's
//! screen lines (`agent_states.lines`, the exit alert, the task's JSON and
//! page) are redacted too.

use crate::{
    common::{self, outbox::DOUBLE},
    evidence::screen_shows,
};

use std::{path::Path, process::Stdio, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

/// A fake Anthropic key the agent shows on its screen.
const PLANTED: &str = "sk-ant-api03-LEAKCHECKfakeKEY0123456789abcdefXYZ";
const PLANTED_PART: &str = "LEAKCHECKfakeKEY";

fn sent(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("sent.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The text the double sent for the message containing `needle`.
async fn sent_text(dir: &Path, needle: &str) -> String {
    for _ in 0..300 {
        if let Some(t) = sent(dir)
            .iter()
            .filter_map(|r| r["text"].as_str())
            .find(|t| t.contains(needle))
        {
            return t.to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the double never sent {needle:?}: {:?}", sent(dir));
}

async fn push(s: &common::Server, task: &str, message: &str) -> String {
    let (status, out) = s
        .admin(
            "POST",
            "/api/internal/harness/outbound",
            Some(json!({"taskId": task, "message": message, "scope": "unattended"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    out["messageId"].as_str().expect("a question").to_string()
}

async fn open(s: &common::Server, id: &str) {
    for _ in 0..300 {
        let (_, r) = s
            .admin("GET", &format!("/api/messages/{id}/receipt"), None)
            .await;
        if r["state"] == "OPEN" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the pushed question never became OPEN");
}

#[tokio::test]
async fn the_screen_goes_to_chat_only_when_allowed_and_a_planted_key_never_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let s = common::start(&data).await;
    let settings = json!({"cliPath": DOUBLE, "env": {
        "GATEWAY_DOUBLE_RECORD": dir.path().join("sent.jsonl"), "GATEWAY_DOUBLE_MODE": "ok"}});
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": settings})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, target) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(
                json!({"label": "phone", "gateway": "openclaw", "downstream": "telegram",
                "dest": "telegram:4242", "scope": "unattended"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{target}");
    // Off by default.
    assert_eq!(target.get("includeScreen"), None, "{target}");
    let target_id = target["id"].as_str().unwrap().to_string();

    let script = format!(
        "say running migration 7 of 9\nsay using key {PLANTED}\nwait_reply\n\
         say after the answer {PLANTED}\nsay keeping the legacy format\nwait_reply"
    );
    // From a file: the key is on the agent's screen only, never in the
    // task's own definition (which a backup holds as written).
    let script_file = dir.path().join("script.txt");
    std::fs::write(&script_file, script).unwrap();
    let body = json!({"title": "leaks", "agent": {
        "provider": "command", "command": [common::double().display().to_string()],
        "cwd": std::env::temp_dir(), "env": {"HARNESS_DOUBLE_SCRIPT_FILE": script_file}}});
    let (status, t) = s.admin("POST", "/api/tasks", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{task}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    screen_shows(&s, &task, PLANTED_PART).await;

    // Off: the push is the question only; the screen is kept with it.
    let first = push(&s, &task, "First: keep the legacy invoice format?").await;
    let text = sent_text(dir.path(), "First: keep").await;
    assert!(!text.contains("running migration"), "{text}");
    assert!(!text.contains("Agent's screen"), "{text}");
    let (_, evidence) = s
        .admin("GET", &format!("/api/messages/{first}/evidence"), None)
        .await;
    let kept = evidence["screen"].as_str().expect("the screen is kept");
    assert!(kept.contains("using key sk-ant-[REDACTED]"), "{kept}");

    // On (REST: the target as a whole, with the flag).
    let mut edited = target.clone();
    edited["includeScreen"] = json!(true);
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{target_id}"),
            Some(edited),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["includeScreen"], true, "{out}");
    let second = push(&s, &task, "Second: keep the legacy invoice format?").await;
    let text = sent_text(dir.path(), "Second: keep").await;
    assert!(text.contains("Agent's screen (redacted):"), "{text}");
    assert!(text.contains("running migration 7 of 9"), "{text}");
    assert!(text.contains("using key sk-ant-[REDACTED]"), "{text}");
    assert!(
        text.contains(&format!("[[tower:task={task}]]")),
        "the token still answers: {text}"
    );

    // Answered on the web: the screen after the answer shows the key again.
    open(&s, &second).await;
    let (status, reply) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": task, "text": "keep it"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    screen_shows(&s, &task, "keeping the legacy format").await;
    let mut receipt = Value::Null;
    for _ in 0..300 {
        let (_, r) = s
            .admin("GET", &format!("/api/messages/{second}/receipt"), None)
            .await;
        receipt = r;
        let after = receipt["steps"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["step"] == "screen_after"))
            .cloned();
        if after.is_some_and(|a| a["status"] == "done") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let receipt_text = receipt.to_string();
    assert!(
        receipt_text.contains("after the answer sk-ant-[REDACTED]"),
        "{receipt:#}"
    );
    let pushed = receipt["steps"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["step"] == "pushed"))
        .cloned()
        .expect("a pushed step");
    assert_eq!(pushed["status"], "done", "{receipt:#}");
    assert_eq!(pushed["gateway"], "openclaw");
    assert!(pushed["platformMessageId"].is_string(), "{receipt:#}");

    // Nowhere: the stored snapshots, the pushes, the JSON, the backup.
    let (_, e1) = s
        .admin(
            "GET",
            &format!("/api/harness/messages/{first}/evidence"),
            None,
        )
        .await;
    let (_, e2) = s
        .admin("GET", &format!("/api/messages/{second}/evidence"), None)
        .await;
    let (_, r1) = s
        .admin("GET", &format!("/api/messages/{first}/receipt"), None)
        .await;
    for (what, text) in [
        ("evidence 1", e1.to_string()),
        ("evidence 2", e2.to_string()),
        ("receipt 1", r1.to_string()),
        ("receipt 2", receipt_text.clone()),
        (
            "pushes",
            std::fs::read_to_string(dir.path().join("sent.jsonl")).unwrap(),
        ),
    ] {
        assert!(!text.contains(PLANTED_PART), "{what} leaks: {text}");
    }
    let pool = common::gateway::pool(&data).await;
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT screen FROM ask_evidence UNION ALL SELECT screen FROM answer_screens",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(stored.len() >= 3, "{stored:?}");
    for screen in &stored {
        assert!(!screen.contains(PLANTED_PART), "stored: {screen}");
    }
    let file = dir.path().join("backup.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("backup")
        .arg(&file)
        .arg("--data-dir")
        .arg(&data)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "backup: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&file).unwrap();
    assert!(
        !bytes
            .windows(PLANTED_PART.len())
            .any(|w| w == PLANTED_PART.as_bytes()),
        "the backup holds the key"
    );
    assert!(
        bytes.windows(17).any(|w| w == b"sk-ant-[REDACTED]"),
        "the backup holds the redacted screens"
    );

    // Deleted with its message (its foreign keys: every row of a
    // question goes with it).
    let (mut conn, id) = (pool.acquire().await.unwrap(), second.clone());
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("DELETE FROM harness_messages WHERE id = $1")
        .bind(&id)
        .execute(&mut *conn)
        .await
        .unwrap();
    for table in ["ask_evidence", "answer_screens"] {
        let left: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM {table} WHERE message_id = $1"
        )))
        .bind(&id)
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        assert_eq!(left, 0, "{table} outlived its message");
    }
    drop(conn);
    pool.close().await;
    let (status, _) = s
        .admin("GET", &format!("/api/messages/{second}/receipt"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A value of the task's own environment the agent shows.
const ENV_VALUE: &str = "correct-horse-battery-staple";

/// The evidence stored with message `id`.
async fn evidence_of(s: &common::Server, id: &str) -> Value {
    let (status, e) = s
        .admin("GET", &format!("/api/messages/{id}/evidence"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{e}");
    e
}

/// A held call of `task` (the hook stops waiting at once): its ask's id.
async fn approval_request(s: &common::Server, task: &str, cmd: &str) -> String {
    let (st, v) = s
        .admin(
            "POST",
            "/api/internal/approvals/check",
            Some(
                json!({"taskId": task, "tool": "Bash", "input": {"command": cmd},
                "cwd": "/srv/repo", "waitSeconds": 0}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(v["waiting"], true, "{v}");
    let id = v["approvalId"].as_str().expect("an approval").to_string();
    let (st, a) = s.admin("GET", &format!("/api/approvals/{id}"), None).await;
    assert_eq!(st, StatusCode::OK, "{a}");
    a["requestId"].as_str().unwrap().to_string()
}

/// The approvals' and the native questions' screens, and an agent's exit:
/// a planted key (and a value of the agent's own environment) is absent
/// from the stored snapshots, the approval's push (which carries the
/// screen only once its target allows it), `agent_states.lines`, the exit
/// alert through the gateway double, the task JSON and the task page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_native_questions_and_exits_never_leak_the_planted_key() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let s = common::start_with(&data, |c| {
        c.holders.enabled = false;
        // A derived task's approval goes to the person at once.
        c.approval_parent_step = Duration::ZERO;
    })
    .await;
    let settings = json!({"cliPath": DOUBLE, "env": {
        "GATEWAY_DOUBLE_RECORD": dir.path().join("sent.jsonl"), "GATEWAY_DOUBLE_MODE": "ok"}});
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": settings})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, target) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(
                json!({"label": "phone", "gateway": "openclaw", "downstream": "telegram",
                "dest": "telegram:4242", "scope": "unattended"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{target}");
    let target_id = target["id"].as_str().unwrap().to_string();

    // A derived task whose agent shows the key and its own variable.
    let parent = s.task("leaks parent").await;
    let script_file = dir.path().join("script.txt");
    std::fs::write(
        &script_file,
        format!("say using key {PLANTED}\nprint_env DEPLOY_HINT\nwait_reply\nwait_reply"),
    )
    .unwrap();
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "child", "parentTaskId": parent, "agent": {
                "provider": "command", "command": [common::double().display().to_string()],
                "cwd": std::env::temp_dir(),
                "env": {"HARNESS_DOUBLE_SCRIPT_FILE": script_file, "DEPLOY_HINT": ENV_VALUE}}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let child = t["id"].as_str().unwrap().to_string();
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{child}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    screen_shows(&s, &child, PLANTED_PART).await;
    screen_shows(&s, &child, ENV_VALUE).await;

    // A native question of the derived task keeps the screen, redacted.
    let (status, asked) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(
                json!({"taskId": child, "question": "[Format] Keep the legacy format?",
                "nativeTool": "AskUserQuestion",
                "options": [{"label": "Keep"}, {"label": "Drop"}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    let native = asked["requestId"].as_str().unwrap().to_string();
    let e = evidence_of(&s, &native).await;
    let kept = e["screen"]
        .as_str()
        .expect("a native question keeps the screen");
    assert!(kept.contains("using key sk-ant-[REDACTED]"), "{kept}");
    assert!(kept.contains("DEPLOY_HINT=[REDACTED]"), "{kept}");

    // An approval keeps it too; its push carries it only when allowed.
    let first = approval_request(&s, &child, "git push --force origin main").await;
    let kept = evidence_of(&s, &first).await["screen"]
        .as_str()
        .expect("an approval keeps the screen")
        .to_string();
    assert!(kept.contains("using key sk-ant-[REDACTED]"), "{kept}");
    let text = sent_text(dir.path(), "git push --force origin main").await;
    assert!(text.contains("[Approval needed]"), "{text}");
    assert!(!text.contains("Agent's screen"), "off by default: {text}");
    let mut edited = target.clone();
    edited["includeScreen"] = json!(true);
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{target_id}"),
            Some(edited),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let second = approval_request(&s, &child, "rm -rf /srv/repo/build").await;
    let text = sent_text(dir.path(), "rm -rf /srv/repo/build").await;
    assert!(text.contains("Agent's screen (redacted):"), "{text}");
    assert!(text.contains("using key sk-ant-[REDACTED]"), "{text}");
    assert!(
        text.contains(&format!("[[tower:task={child}]]")),
        "the token still answers: {text}"
    );

    // An unattended agent exits non-zero with the key on its screen.
    let screen_file = dir.path().join("screen.txt");
    std::fs::write(&screen_file, format!("using key {PLANTED}\n")).unwrap();
    let line = format!(
        "cat '{}'; echo \"hint $DEPLOY_HINT\"; echo 'Error: boom'; sleep 1; exit 3",
        screen_file.display()
    );
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "boom", "agent": {"provider": "command",
                "command": ["sh", "-c", line], "cwd": std::env::temp_dir(),
                "env": {"DEPLOY_HINT": ENV_VALUE}}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let boom = t["id"].as_str().unwrap().to_string();
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{boom}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (status, started) = s
        .admin("POST", &format!("/api/tasks/{boom}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    let mut task = Value::Null;
    for _ in 0..300 {
        let (_, t) = s.admin("GET", &format!("/api/tasks/{boom}"), None).await;
        task = t;
        if task["agentState"]["state"] == "exited" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(task["agentState"]["state"], "exited", "{task:#}");
    let lines = task["agentState"]["lines"].to_string();
    assert!(lines.contains("using key sk-ant-[REDACTED]"), "{lines}");
    assert!(lines.contains("hint [REDACTED]"), "{lines}");
    assert!(lines.contains("Error: boom"), "{lines}");
    let alert = sent_text(dir.path(), "exited with code 3").await;
    assert!(alert.contains("> using key sk-ant-[REDACTED]"), "{alert}");
    let cookie = s.session().await;
    let page = s
        .client
        .get(s.url(&format!("/tasks/{boom}")))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(
        page.contains("using key sk-ant-[REDACTED]"),
        "the page shows the lines"
    );

    // Nowhere: the JSON, the page, the pushes, the stored rows.
    let mut shown = vec![
        ("task JSON", task.to_string()),
        ("task page", page),
        (
            "native evidence",
            evidence_of(&s, &native).await.to_string(),
        ),
        (
            "approval evidence 1",
            evidence_of(&s, &first).await.to_string(),
        ),
        (
            "approval evidence 2",
            evidence_of(&s, &second).await.to_string(),
        ),
    ];
    let pool = common::gateway::pool(&data).await;
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT lines || reason || COALESCE(error_kind, '') || COALESCE(reset_text, '') \
         || COALESCE(dialog_title, '') || dialog_options FROM agent_states WHERE task_id = $1",
    )
    .bind(&boom)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0].contains("sk-ant-[REDACTED]"), "{stored:?}");
    let screens: Vec<String> = sqlx::query_scalar("SELECT screen FROM ask_evidence")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(screens.len() >= 3, "{screens:?}");
    let outbound: Vec<String> = sqlx::query_scalar("SELECT message FROM harness_outbound")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    // These hold the agent's own value nowhere either (the task's JSON and
    // page show its definition, variables included).
    let mut secret_free = vec![
        (
            "pushes",
            std::fs::read_to_string(dir.path().join("sent.jsonl")).unwrap(),
        ),
        ("agent_states", stored.join("\n")),
        ("ask_evidence", screens.join("\n")),
        ("outbound rows", outbound.join("\n")),
    ];
    for (what, text) in &secret_free {
        assert!(
            !text.contains(ENV_VALUE),
            "{what} leaks the env value: {text}"
        );
    }
    shown.append(&mut secret_free);
    for (what, text) in shown {
        assert!(!text.contains(PLANTED_PART), "{what} leaks: {text}");
    }
    s.shutdown().await;
}
