//! A notify target's language (docs/gateways.md, "Chat language"):
//! over a real server, its real store and outbox, and the gateway double
//! (which records every send). A `zh` target's question with options, and
//! the report sent to it, are written in Chinese — the options, numbers,
//! task tokens and reply words unchanged; switched back to `en`, the next
//! report is English. An unknown language is a 400 naming the field, and
//! nothing is stored.

use crate::common;

use common::outbox::double_gateways;

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

/// The texts the double sent.
fn texts(record: &Path) -> Vec<String> {
    common::json_lines(record)
        .iter()
        .filter(|r| r["sent"] == true)
        .filter_map(|r| r["text"].as_str().map(str::to_string))
        .collect()
}

fn target(language: Value) -> Value {
    json!({"label": "phone", "gateway": "openclaw", "downstream": "telegram",
        "dest": "-100555", "scope": "unattended", "language": language})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_zh_targets_question_and_report_are_chinese_and_en_is_english_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(dir.path(), |cfg| {
        cfg.outbox.cli_timeout = Duration::from_secs(5)
    })
    .await;
    let record = dir.path().join("sent.jsonl");
    let env = json!({"env": {"GATEWAY_DOUBLE_RECORD": &record}});
    double_gateways(&s, &["openclaw"], env).await;

    // An unknown language: a 400 naming the field, on every surface.
    for bad in [json!("fr"), json!("ZH-cn"), json!("")] {
        let (st, out) = s
            .admin(
                "POST",
                "/api/settings/notify-targets/add",
                Some(target(bad.clone())),
            )
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad}: {out}");
        assert_eq!(out["field"], "language", "{bad}: {out}");
        let (st, out) = s
            .admin(
                "PUT",
                "/api/settings/notify-targets",
                Some(json!({"targets": [target(bad.clone())]})),
            )
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad}: {out}");
        assert_eq!(out["field"], "language", "{bad}: {out}");
    }
    let (_, stored) = s.admin("GET", "/api/settings/notify-targets", None).await;
    assert_eq!(stored, json!([]), "nothing stored");

    let (st, phone) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(target(json!("zh"))),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{phone}");
    assert_eq!(phone["language"], "zh");
    let id = phone["id"].as_str().unwrap().to_string();

    // A question with options to the zh chat.
    let t = s.task("Nightly build").await;
    let (_, token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let (st, out) = s
        .call(
            "POST",
            "/api/internal/harness/outbound",
            Some(&token),
            Some(
                json!({"message": "Postgres or SQLite?", "scope": "unattended",
                "options": [{"label": "Postgres"}, {"label": "SQLite"}],
                "default": "SQLite", "deadline": 3600}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    common::wait_until("the question sent", Duration::from_secs(30), || {
        !texts(&record).is_empty()
    })
    .await;
    let question = texts(&record)[0].clone();
    assert!(question.contains("Postgres or SQLite?"), "{question}");
    assert!(question.contains("2. SQLite（默认）"), "{question}");
    assert!(question.contains("回复一个编号或选项的标签"), "{question}");
    assert!(
        question.contains("仍无人回答，将采用“SQLite”"),
        "{question}"
    );
    assert!(!question.contains("Reply with"), "{question}");
    assert!(question.contains(&t), "the task token: {question}");

    // The report sent to it: Chinese, the question numbered with its token.
    let (st, sent) = s
        .admin("POST", "/api/report/send", Some(json!({"since": "1h"})))
        .await;
    assert_eq!(st, StatusCode::OK, "{sent}");
    assert!(
        sent["report"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Harness 报告")),
        "{sent}"
    );
    common::wait_until("the zh report sent", Duration::from_secs(30), || {
        texts(&record).iter().any(|t| t.starts_with("Harness 报告"))
    })
    .await;
    let report = texts(&record)
        .into_iter()
        .find(|t| t.starts_with("Harness 报告"))
        .unwrap();
    assert!(
        report.contains("现在等你处理（1），最阻塞的在前："),
        "{report}"
    );
    // The item's question is the pushed text as the agent's message keeps it.
    let item = report
        .lines()
        .find(|l| l.starts_with(&format!("1. [问题] Nightly build [task {t}]: ")))
        .unwrap_or_else(|| panic!("the numbered item: {report}"));
    assert!(item.contains("Postgres or SQLite?"), "{item}");
    assert!(
        report.contains("   选项：1 Postgres · 2 SQLite"),
        "{report}"
    );
    assert!(!report.contains("What waits"), "{report}");

    // Back to English (an edit of the whole target): the next report is.
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{id}"),
            Some(target(json!("en"))),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["language"], "en");
    let (st, sent) = s
        .admin("POST", "/api/report/send", Some(json!({"since": "1h"})))
        .await;
    assert_eq!(st, StatusCode::OK, "{sent}");
    common::wait_until("the en report sent", Duration::from_secs(30), || {
        texts(&record)
            .iter()
            .any(|t| t.starts_with("Harness report"))
    })
    .await;
    s.shutdown().await;
}

/// An agent-state alert (an unattended agent that exited non-zero) is
/// written in its zh target's language, the screen lines and the task token
/// unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_zh_targets_agent_state_alert_is_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(dir.path(), |cfg| {
        cfg.outbox.cli_timeout = Duration::from_secs(5)
    })
    .await;
    let record = dir.path().join("sent.jsonl");
    let env = json!({"env": {"GATEWAY_DOUBLE_RECORD": &record}});
    double_gateways(&s, &["openclaw"], env).await;
    let (st, out) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(target(json!("zh"))),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "boom", "agent": {"provider": "command",
                "command": ["sh", "-c", "echo 'Error: boom'; sleep 1; exit 3"],
                "cwd": std::env::temp_dir()}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, out) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    common::wait_until("the exit alert sent", Duration::from_secs(30), || {
        texts(&record).iter().any(|m| m.contains("Error: boom"))
    })
    .await;
    let alert = texts(&record)
        .into_iter()
        .find(|m| m.contains("Error: boom"))
        .unwrap();
    assert!(alert.contains("[智能体已退出]"), "{alert}");
    assert!(!alert.contains("[Agent exited]"), "{alert}");
    // The reason too (the stored one stays English).
    assert!(
        alert.contains("这个任务的智能体已退出：退出码 3。"),
        "{alert}"
    );
    assert!(!alert.contains("exited with code"), "{alert}");
    assert!(alert.contains(&t), "the task token: {alert}");
    s.shutdown().await;
}

/// An approval pushed to a `zh` target: the words around the call are
/// Chinese (the same words a Chinese page shows), the call, the reply words
/// and the task token as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_zh_targets_approval_push_is_chinese_around_the_call() {
    use crate::approvals_chat::{Chat, chat_task, held, posted};
    let dir = tempfile::tempdir().unwrap();
    let Chat {
        s, record, task, ..
    } = chat_task(dir.path()).await;
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [
                {"label": "phone", "gateway": "hermes", "downstream": "telegram", "dest": "4242",
                 "scope": "unattended", "language": "zh"}
            ]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    held(&s, &task, "git push --force origin main").await;
    let (text, _) = posted(&record, 1).await.remove(0);
    for part in [
        "[需要审批] 批准这次 Bash 调用吗？",
        "$ git push --force origin main",
        "任务：Release 2.0",
        "工作目录：/srv/repo",
        "回复 \"approve\"",
        &task,
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    for english in [
        "Approve this",
        "Task: ",
        "Working directory: ",
        "[Approval needed]",
    ] {
        assert!(!text.contains(english), "{english:?} in {text}");
    }
    s.shutdown().await;
}
