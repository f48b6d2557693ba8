//! Replies typed into the REAL Claude Code 2.1.332 and Codex 0.171.0
//! (`end2end/real-cli`, against the model stand-ins) arrive as text: the
//! model reads them in its next request and nothing runs.
//!
//! What each leading character does when typed into the CLI today (seen
//! with both CLIs in a terminal, pasted the way Harness pastes, then Enter;
//! the table is also in `crates/core/src/typed_text.rs`):
//!
//! * `!touch f` — both run it in a shell at once, without a tool call and
//!   without the model: no hook sees it. ` !touch f` (a space first) is text
//!   in both.
//! * `/exit marker` — Claude Code exits (it trims the input first, so
//!   ` /exit` and `\n/exit` exit too). Codex runs `/quit` alone; with an
//!   argument, or after a space, it is text.
//! * `#note` — text in both (Claude Code 2.1.332 has no `#` memory mode).
//! * `ESC[201~` inside a paste is removed by the PTY layer; written raw it
//!   and every other escape sequence is a key.
//!
//! So the replies below ran a shell command or ended the CLI before Harness
//! neutralised what it types (`harness_core::typed_text`).
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::common;

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::{PROMPT, claude_env, installed, screen};

/// One reply: the text typed, what the model must read of it, and the
/// file a shell would have created.
struct Reply {
    text: String,
    reads: String,
    pwned: Option<PathBuf>,
}

fn replies(provider: &str, dir: &Path) -> Vec<Reply> {
    let file = |name: &str| dir.join(name);
    let bang = file("pwned-bang");
    let paste = file("pwned-paste");
    let hash = file("pwned-hash");
    let mut out = vec![Reply {
        text: format!("!touch {}", bang.display()),
        reads: format!("touch {}", bang.display()),
        pwned: Some(bang),
    }];
    if provider == "claude" {
        // Exits today, with or without whitespace before it.
        for marker in ["slash-marker", "trimmed-slash-marker"] {
            let lead = if marker.starts_with("trimmed") {
                "\n  "
            } else {
                ""
            };
            out.push(Reply {
                text: format!("{lead}/exit {marker}"),
                reads: marker.to_string(),
                pwned: None,
            });
        }
    } else {
        out.push(Reply {
            text: "/quit".into(),
            reads: "/quit".into(),
            pwned: None,
        });
    }
    out.push(Reply {
        text: format!("#remember: touch {}", hash.display()),
        reads: format!("remember: touch {}", hash.display()),
        pwned: Some(hash),
    });
    out.push(Reply {
        text: format!("ok\x1b[201~\r!touch {}\x1b[200~", paste.display()),
        reads: format!("touch {}", paste.display()),
        pwned: Some(paste),
    });
    out
}

/// Every string in a request body's last user message, joined.
fn last_user(body: &Value) -> String {
    fn strings(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            Value::Object(o) => o.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let items = body["messages"].as_array().or(body["input"].as_array());
    let mut out = String::new();
    if let Some(m) = items.and_then(|m| m.iter().rev().find(|m| m["role"] == "user")) {
        strings(&m["content"], &mut out);
    }
    out
}

struct Run {
    server: common::Server,
    standin: StandIn,
    task: String,
    dir: tempfile::TempDir,
}

impl Run {
    async fn until<T, Fut>(&self, secs: u64, what: &str, check: impl FnMut() -> Fut) -> T
    where
        Fut: std::future::Future<Output = Option<T>>,
    {
        common::until_with(what, Duration::from_secs(secs), check, || async {
            let seen: Vec<String> = self
                .standin
                .main_requests()
                .iter()
                .map(|r| last_user(r).chars().take(300).collect())
                .collect();
            format!(
                "last user messages: {seen:#?}\nscreen:\n{}",
                screen(&self.server, &self.task).await
            )
        })
        .await
    }

    async fn open_ask(&self) -> Option<String> {
        let (_, rows) = self
            .server
            .admin(
                "GET",
                &format!("/api/harness/messages?view=pending&taskId={}", self.task),
                None,
            )
            .await;
        rows["rows"][0]["content"].as_str().map(str::to_string)
    }
}

async fn setup(provider: &str, bin: &Path, n: usize) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let mut turns = Vec::new();
    for i in 0..n {
        turns.push(Turn::call(
            "ask_human",
            json!({"question": format!("Question {i}?")}),
        ));
        turns.push(Turn::say("Waiting for the human."));
    }
    turns.push(Turn::say("Thanks: {last_user}"));
    let standin = StandIn::start(turns).await.unwrap();
    let base = standin.base_url();
    let env = if provider == "claude" {
        claude_env(&home, &work, &base, json!({}), json!({}))
    } else {
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
                 [model_providers.standin]\nname = \"standin\"\nbase_url = \"{base}/v1\"\n\
                 env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
                 supports_websockets = false\nrequires_openai_auth = false\n"
            ),
        )
        .unwrap();
        json!({"HOME": home, "CODEX_HOME": codex_home, "STANDIN_API_KEY": "standin"})
    };
    let (status, t) = server
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": format!("typed text {provider}"), "agent": {
                "provider": provider, "command": [bin.display().to_string()],
                "cwd": work, "env": env}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    Run {
        server,
        standin,
        task,
        dir,
    }
}

/// Each reply to a parked ask reaches the model as text; no shell ran and
/// the CLI is still there.
async fn replies_arrive_as_text(provider: &'static str) {
    let Some(bin) = installed(provider) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let replies = replies(provider, dir.path());
    let owned = setup(provider, &bin, replies.len()).await;
    let run = &owned;
    let (s, t) = (&run.server, &run.task);
    let (status, started) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    for (i, reply) in replies.iter().enumerate() {
        let question = &format!("Question {i}?");
        run.until(90, question, || async move {
            run.open_ask().await.filter(|q| q == question)
        })
        .await;
        // The turn ended ("Waiting…" served, the Stop hook reported).
        run.until(60, "the turn end", || async move {
            (run.standin.main_requests().len() > 2 * i + 1
                && s.running
                    .terminals
                    .live(t)
                    .is_some_and(|p| p.turn_complete()))
            .then_some(())
        })
        .await;
        let (status, r) = s
            .admin(
                "POST",
                "/api/internal/harness/reply",
                Some(json!({"taskId": t, "text": reply.text})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{r}");
        let what = format!("the model reading reply {:?}", reply.text);
        let read = run
            .until(60, &what, || async move {
                run.standin.main_requests().get(2 * i + 2).map(last_user)
            })
            .await;
        assert!(read.contains(&reply.reads), "{what}: {read}");
        if let Some(file) = &reply.pwned {
            assert!(!file.exists(), "a shell ran {:?}", reply.text);
        }
        assert!(s.running.terminals.live(t).is_some(), "the CLI is gone");
    }
    // Nothing ran later either.
    for reply in &replies {
        if let Some(file) = &reply.pwned {
            assert!(!file.exists(), "a shell ran {:?}", reply.text);
        }
    }
    let _ = &run.dir;
    owned.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_code_reads_typed_replies_as_text() {
    replies_arrive_as_text("claude").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_reads_typed_replies_as_text() {
    replies_arrive_as_text("codex").await;
}
