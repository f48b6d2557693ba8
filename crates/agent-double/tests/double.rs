//! The double in a real PTY, driven through harness-pty: prompt and input,
//! bracketed paste, exactly-once replies, Claude-shaped flags, hooks, and
//! MCP calls against a recording HTTP listener.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_pty::{InjectOptions, InjectOutcome, OutputEvent, PtySession, SpawnSpec, Subscription};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_harness-agent-double");
const T: Duration = Duration::from_secs(15);

fn spec(args: &[&str], env: &[(&str, &str)]) -> SpawnSpec {
    let mut argv = vec![BIN.to_owned()];
    argv.extend(args.iter().map(|s| (*s).to_owned()));
    let mut spec = SpawnSpec::new(argv, std::env::temp_dir()).size(40, 120);
    for (k, v) in env {
        spec.env.insert((*k).to_owned(), (*v).to_owned());
    }
    spec
}

struct Term {
    session: Arc<PtySession>,
    sub: Subscription,
    out: Vec<u8>,
}

impl Term {
    async fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        let session = PtySession::spawn(spec(args, env))
            .await
            .expect("spawn double");
        let mut sub = session.subscribe();
        let out = sub.take_snapshot();
        Self { session, sub, out }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }

    async fn expect(&mut self, pat: &str) {
        let r = tokio::time::timeout(T, async {
            while !self.text().contains(pat) {
                match self.sub.recv().await {
                    OutputEvent::Data(d) => self.out.extend_from_slice(&d),
                    other => panic!("ended ({other:?}) before {pat:?}:\n{}", self.text()),
                }
            }
        })
        .await;
        assert!(r.is_ok(), "timed out waiting for {pat:?}:\n{}", self.text());
    }

    async fn exit_code(&mut self) -> u32 {
        loop {
            match tokio::time::timeout(T, self.sub.recv())
                .await
                .expect("exit")
            {
                OutputEvent::Data(d) => self.out.extend_from_slice(&d),
                OutputEvent::Exited(s) => return s.code,
                other => panic!("{other:?}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_input_and_exit() {
    let mut t = Term::start(
        &[],
        &[
            (
                "HARNESS_DOUBLE_SCRIPT",
                "say hello from the script\nprint_env TOWER_TASK_ID",
            ),
            ("TOWER_TASK_ID", "ctask1"),
        ],
    )
    .await;
    t.expect("harness-agent-double").await;
    t.expect("hello from the script").await;
    t.expect("ENV TOWER_TASK_ID=ctask1").await;
    t.expect("> ").await;
    t.session.sync_model().await;
    assert!(
        t.session.bracketed_paste_enabled(),
        "the double enables bracketed paste"
    );
    t.session.write(b"typed line\r").await.unwrap();
    t.expect("GOT INPUT: typed line").await;
    t.session.write(b"!say via action\r").await.unwrap();
    t.expect("via action").await;
    t.session.write(b"!exit 4\r").await.unwrap();
    assert_eq!(t.exit_code().await, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reply_is_received_exactly_once_as_a_paste() {
    let mut t = Term::start(
        &[],
        &[(
            "HARNESS_DOUBLE_SCRIPT",
            "say waiting\nwait_reply\nwait_reply",
        )],
    )
    .await;
    t.expect("waiting").await;
    t.expect("> ").await;
    let b = t
        .session
        .wait_for_idle(Duration::from_millis(200), Duration::from_secs(5))
        .await;
    assert_eq!(b, harness_pty::Boundary::Idle);
    let reply = "use option B\nand keep the tests";
    let (a, b) = tokio::join!(
        t.session.inject("reply-1", reply, InjectOptions::default()),
        t.session.inject("reply-1", reply, InjectOptions::default()),
    );
    let outcomes = [a.unwrap(), b.unwrap()];
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == InjectOutcome::Written)
            .count(),
        1
    );
    t.expect("GOT REPLY: use option B").await;
    // A retry of the same reply is not typed again.
    let again = t
        .session
        .inject("reply-1", reply, InjectOptions::default())
        .await
        .unwrap();
    assert_eq!(again, InjectOutcome::AlreadyInjected);
    t.session
        .inject("reply-2", "second", InjectOptions::default())
        .await
        .unwrap();
    t.expect("GOT REPLY: second").await;
    assert_eq!(
        t.text().matches("GOT REPLY: use option B").count(),
        1,
        "{}",
        t.text()
    );
    // The pasted newline did not submit early: both lines are one reply.
    t.session.sync_model().await;
    assert!(t.session.screen_text().text.contains("and keep the tests"));
    t.session.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_shaped_flags_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls.jsonl");
    let record = record.to_str().unwrap();
    let mut t = Term::start(
        &[
            "--dangerously-skip-permissions",
            "--append-system-prompt",
            "Escalation ladder\nmore",
            "--model",
            "m-1",
            "--resume",
            "sess-123",
        ],
        &[
            ("HARNESS_DOUBLE_RECORD", record),
            ("TOWER_TASK_ID", "ctask2"),
        ],
    )
    .await;
    t.expect("RESUMED sess-123").await;
    t.expect("SYSTEM PROMPT: Escalation ladder").await;
    t.expect("MODEL: m-1").await;
    t.session.kill().unwrap();
    let line = std::fs::read_to_string(record).unwrap();
    let v: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(v["resume"], "sess-123");
    assert_eq!(v["session_id"], "sess-123");
    assert_eq!(v["env"]["TOWER_TASK_ID"], "ctask2");
    assert_eq!(v["system_prompt"], "Escalation ladder\nmore");

    let mut t = Term::start(&["resume", "--last"], &[]).await;
    t.expect("CONTINUED").await;
    t.session.kill().unwrap();
    let mut t = Term::start(&["Fix the bug"], &[]).await;
    t.expect("GOT PROMPT: Fix the bug").await;
    t.session.kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_run_like_claude_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no human watches this terminal"}}"#;
    let settings = json!({"hooks": {
        "PreToolUse": [{"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": format!("cat > {d}/pre.json; echo '{deny}'"), "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": format!("cat > {d}/stop.json; echo '{{\"decision\":\"block\",\"reason\":\"keep going\"}}'")}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": format!("cat > {d}/start.json")}]}]
    }});
    let settings_path = dir.path().join("settings.json");
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    let script =
        "session_start\ntool AskUserQuestion\ntool Bash {\"command\":\"ls\"}\nstop_hook\nsay END";
    let mut t = Term::start(
        &[
            "--settings",
            settings_path.to_str().unwrap(),
            "--session-id",
            "s-hooks",
        ],
        &[("HARNESS_DOUBLE_SCRIPT", script)],
    )
    .await;
    t.expect("SESSION START HOOKS: 1").await;
    t.expect("TOOL DENIED: no human watches this terminal")
        .await;
    t.expect("TOOL ALLOWED: Bash").await;
    t.expect("STOP BLOCKED: keep going").await;
    t.expect("END").await;
    t.session.kill().unwrap();

    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
    };
    let pre = read("pre.json");
    assert_eq!(pre["hook_event_name"], "PreToolUse");
    assert_eq!(pre["tool_name"], "AskUserQuestion");
    assert_eq!(pre["session_id"], "s-hooks");
    assert!(pre["tool_input"]["questions"].is_array());
    assert!(pre["transcript_path"].is_string() && pre["cwd"].is_string());
    let stop = read("stop.json");
    assert_eq!(stop["hook_event_name"], "Stop");
    assert_eq!(stop["stop_hook_active"], false);
    let start = read("start.json");
    assert_eq!(start["hook_event_name"], "SessionStart");
    assert_eq!(start["source"], "startup");
}

/// One recorded request: lower-cased headers and the JSON body.
type Recorded = (BTreeMap<String, String>, Value);

/// A recording MCP endpoint: answers initialize / initialized / tools/call.
struct Recorder {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

fn mcp_listener() -> Recorder {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let rec = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let rec = rec.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut headers = BTreeMap::new();
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        let (k, v) = h.split_once(':').unwrap();
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                    }
                    let len: usize = headers
                        .get("content-length")
                        .map_or(0, |l| l.parse().unwrap());
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    let req: Value = serde_json::from_slice(&body).unwrap();
                    rec.lock().unwrap().push((headers, req.clone()));
                    let (status, extra, answer) = match req["method"].as_str().unwrap() {
                        "initialize" => ("200 OK", "Mcp-Session-Id: sess-mcp-1\r\n", json!({"jsonrpc":"2.0","id":req["id"],"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"test","version":"0"}}}).to_string()),
                        "notifications/initialized" => ("202 Accepted", "", String::new()),
                        "tools/call" => {
                            let name = req["params"]["name"].as_str().unwrap();
                            let text = json!({"ok": true, "tool": name, "requestId": "req-7"}).to_string();
                            ("200 OK", "", json!({"jsonrpc":"2.0","id":req["id"],"result":{"content":[{"type":"text","text":text}],"isError":false}}).to_string())
                        }
                        _ => ("400 Bad Request", "", "{}".into()),
                    };
                    let resp = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{answer}",
                        answer.len()
                    );
                    stream.write_all(resp.as_bytes()).unwrap();
                }
            });
        }
    });
    Recorder { url, requests }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_human_over_mcp_then_wait_for_the_reply() {
    let mcp = mcp_listener();
    let script = "ask_human Which database should I use?\nnotify_human FYI started\nwait_reply";
    let mut t = Term::start(
        &[],
        &[
            ("HARNESS_DOUBLE_SCRIPT", script),
            ("TOWER_MCP_URL", &mcp.url),
            ("TOWER_API_TOKEN", "agent-token-1"),
        ],
    )
    .await;
    t.expect("ASKED: ").await;
    t.expect("\"requestId\":\"req-7\"").await;
    t.expect("NOTIFIED: ").await;
    t.expect("> ").await;
    t.session
        .inject("ask-1", "Use SQLite", InjectOptions::default())
        .await
        .unwrap();
    t.expect("GOT REPLY: Use SQLite").await;
    t.session.kill().unwrap();

    let reqs = mcp.requests.lock().unwrap().clone();
    let methods: Vec<&str> = reqs
        .iter()
        .map(|(_, b)| b["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/call"
        ]
    );
    for (h, _) in &reqs {
        assert_eq!(h["authorization"], "Bearer agent-token-1");
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["accept"], "application/json, text/event-stream");
        assert_eq!(h["mcp-protocol-version"], "2025-06-18");
    }
    assert!(!reqs[0].0.contains_key("mcp-session-id"));
    assert_eq!(
        reqs[2].0["mcp-session-id"], "sess-mcp-1",
        "session id echoed"
    );
    assert_eq!(reqs[0].1["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(reqs[2].1["params"]["name"], "ask_human");
    assert_eq!(
        reqs[2].1["params"]["arguments"],
        json!({"question": "Which database should I use?"})
    );
    assert_eq!(reqs[3].1["params"]["name"], "notify_human");
    assert_eq!(
        reqs[3].1["params"]["arguments"],
        json!({"message": "FYI started"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_config_file_like_claude() {
    let mcp = mcp_listener();
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"harness": {"type": "http", "url": mcp.url, "headers": {"Authorization": "Bearer ${TOWER_API_TOKEN}"}}}});
    let path = dir.path().join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut t = Term::start(
        &["--mcp-config", path.to_str().unwrap()],
        &[
            ("HARNESS_DOUBLE_SCRIPT", "ask_human From config?"),
            ("TOWER_API_TOKEN", "tok-from-env"),
        ],
    )
    .await;
    t.expect("ASKED: ").await;
    t.session.kill().unwrap();
    let reqs = mcp.requests.lock().unwrap().clone();
    assert_eq!(reqs[0].0["authorization"], "Bearer tok-from-env");
    assert_eq!(
        reqs.last().unwrap().1["params"]["arguments"]["question"],
        "From config?"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_mcp_is_reported_not_fatal() {
    let mut t = Term::start(
        &[],
        &[
            (
                "HARNESS_DOUBLE_SCRIPT",
                "ask_human anyone?\nsay still alive",
            ),
            ("TOWER_MCP_URL", "http://127.0.0.1:9/mcp"),
        ],
    )
    .await;
    t.expect("MCP ERROR").await;
    t.expect("still alive").await;
    t.session.kill().unwrap();
    let mut t = Term::start(&[], &[("HARNESS_DOUBLE_SCRIPT", "fly away")]).await;
    assert_eq!(t.exit_code().await, 2, "bad scripts fail loudly");
}
