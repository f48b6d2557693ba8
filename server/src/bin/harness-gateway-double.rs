//! A stand-in for the gateway CLIs Harness calls (docs/contract.md §9), for the
//! tests and the benchmark: `openclaw [--profile p] message send --channel c
//! --target t --message m --json` and `hermes [--profile p] send --to t
//! --json -- m`, answering in each CLI's JSON shape.
//!
//! Every invocation is appended as one JSON line to `$GATEWAY_DOUBLE_RECORD`
//! (`sent: true` when the double "posted" the message); with
//! `$GATEWAY_DOUBLE_STARTED`, its pid is appended there when a send starts. The behaviour is
//! chosen by, in order of precedence: a `[[double:MODE]]` marker in the
//! text, the first line of the file `$GATEWAY_DOUBLE_CONTROL`, and
//! `$GATEWAY_DOUBLE_MODE` (default `ok`). Modes:
//! `ok`; `fail` (exit 1, error JSON, nothing sent); `hang` (starts a child
//! and sleeps forever before sending: the caller's timeout must kill the
//! group); `no-id` (sent, exit 0, no message id); `noise` (log lines before
//! the JSON); `error-id` (sent, but exit 1 with an id); `exit:N` (exit N,
//! nothing sent); `slow:MS` (sleep, then ok); `noop` (ok, no record: the
//! benchmark's raw spawn rate).
//!
//! It also answers `openclaw directory groups list` (see [`directory`]).
//!
//! With `$GATEWAY_DOUBLE_TELEGRAM_API` (a Telegram Bot API root, e.g. the
//! platform stand-in of `end2end/real-gateways`), an `ok` send to
//! `telegram:<chat>` is posted there as the real CLI posts it
//! (`sendMessage`), and the message id the platform gives is the one
//! answered (see [`post_to_telegram`]).

use std::{
    io::Write,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

struct Call {
    gateway: &'static str,
    profile: Option<String>,
    channel: Option<String>,
    target: Option<String>,
    text: Option<String>,
    json: bool,
}

fn parse(args: &[String]) -> Result<Call, String> {
    let mut i = 0;
    let mut profile = None;
    if args.first().map(String::as_str) == Some("--profile") {
        profile = Some(args.get(1).ok_or("--profile needs a value")?.clone());
        i = 2;
    }
    let rest = &args[i..];
    let value = |flag: &str| -> Option<String> {
        rest.iter()
            .position(|a| a == flag)
            .and_then(|p| rest.get(p + 1))
            .cloned()
    };
    let json = rest.iter().any(|a| a == "--json");
    if rest.len() >= 2 && rest[0] == "message" && rest[1] == "send" {
        return Ok(Call {
            gateway: "openclaw",
            profile,
            channel: value("--channel"),
            target: value("--target"),
            text: value("--message"),
            json,
        });
    }
    if rest.first().map(String::as_str) == Some("send") {
        let text = rest
            .iter()
            .position(|a| a == "--")
            .and_then(|p| rest.get(p + 1))
            .cloned();
        return Ok(Call {
            gateway: "hermes",
            profile,
            channel: None,
            target: value("--to"),
            text,
            json,
        });
    }
    Err(format!("usage: unknown command {rest:?}"))
}

fn mode(text: &str) -> String {
    if let Some(at) = text.find("[[double:") {
        let rest = &text[at + 9..];
        if let Some(end) = rest.find("]]") {
            return rest[..end].to_string();
        }
    }
    if let Ok(path) = std::env::var("GATEWAY_DOUBLE_CONTROL")
        && let Ok(content) = std::fs::read_to_string(path)
        && let Some(line) = content.lines().next().filter(|l| !l.trim().is_empty())
    {
        return line.trim().to_string();
    }
    std::env::var("GATEWAY_DOUBLE_MODE").unwrap_or_else(|_| "ok".into())
}

fn record(line: serde_json::Value) {
    let Ok(path) = std::env::var("GATEWAY_DOUBLE_RECORD") else {
        return;
    };
    let mut text = line.to_string();
    text.push('\n');
    // One write on an O_APPEND file: lines from concurrent doubles never interleave.
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

/// `openclaw directory groups list --channel c --query q --json --limit n`:
/// the groups of `$GATEWAY_DOUBLE_GROUPS` (a JSON array of `{id, name}`)
/// whose id or name contains the query (case-insensitive), as
/// `{"groups": [...]}`; each lookup is appended to
/// `$GATEWAY_DOUBLE_DIRECTORY_RECORD` (not the send record).
fn directory(args: &[String]) -> bool {
    let rest = match args.first().map(String::as_str) {
        Some("--profile") => args.get(2..).unwrap_or_default(),
        _ => args,
    };
    if rest.len() < 3 || rest[0] != "directory" || rest[1] != "groups" || rest[2] != "list" {
        return false;
    }
    let value = |flag: &str| {
        rest.iter()
            .position(|a| a == flag)
            .and_then(|p| rest.get(p + 1))
            .cloned()
            .unwrap_or_default()
    };
    let (channel, query) = (value("--channel"), value("--query"));
    let groups: Vec<serde_json::Value> = std::env::var("GATEWAY_DOUBLE_GROUPS")
        .ok()
        .and_then(|g| serde_json::from_str(&g).ok())
        .unwrap_or_default();
    let q = query.to_lowercase();
    let hits: Vec<&serde_json::Value> = groups
        .iter()
        .filter(|g| {
            ["id", "name"].iter().any(|k| {
                g[*k]
                    .as_str()
                    .is_some_and(|v| v.to_lowercase().contains(&q))
            })
        })
        .collect();
    if let Ok(path) = std::env::var("GATEWAY_DOUBLE_DIRECTORY_RECORD") {
        let line = serde_json::json!({"channel": channel, "query": query, "hits": hits.len()});
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
    println!("{}", serde_json::json!({"groups": hits}));
    true
}

/// `POST <api>/bot<token>/sendMessage {chat_id, text}` when
/// `$GATEWAY_DOUBLE_TELEGRAM_API` is set and the target is `telegram:<chat>`:
/// `Some(Ok(message id))`, `Some(Err(why))` when the platform refused or
/// could not be reached, `None` when there is nothing to post to.
fn post_to_telegram(target: Option<&str>, text: &str) -> Option<Result<String, String>> {
    let api = std::env::var("GATEWAY_DOUBLE_TELEGRAM_API").ok()?;
    let chat = target?.strip_prefix("telegram:")?;
    let token = std::env::var("TELEGRAM_BOT_TOKEN").unwrap_or_else(|_| "123456:DOUBLE".into());
    let url = format!("{}/bot{token}/sendMessage", api.trim_end_matches('/'));
    let sent = reqwest::blocking::Client::new()
        .post(url)
        .timeout(Duration::from_secs(10))
        .json(&serde_json::json!({"chat_id": chat, "text": text}))
        .send()
        .and_then(|r| r.json::<serde_json::Value>());
    Some(match sent {
        Ok(v) if v["ok"] == true => v["result"]["message_id"]
            .as_i64()
            .map(|id| id.to_string())
            .ok_or_else(|| format!("no message id in {v}")),
        Ok(v) => Err(v["description"].as_str().unwrap_or("refused").to_string()),
        Err(e) => Err(e.to_string()),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if directory(&args) {
        return;
    }
    let call = match parse(&args) {
        Ok(c) => c,
        Err(e) => {
            println!(
                "{}",
                serde_json::json!({"ok": false, "error": {"type": "cli_error", "message": e}})
            );
            std::process::exit(2);
        }
    };
    let text = call.text.clone().unwrap_or_default();
    let mode = mode(&text);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut id = format!("om_{}_{nanos}", std::process::id());
    let base = serde_json::json!({
        "gateway": call.gateway, "argv": args, "profile": call.profile, "channel": call.channel,
        "target": call.target, "text": text, "json": call.json, "mode": mode,
        "pid": std::process::id(), "at": nanos,
    });
    let with = |extra: serde_json::Value| {
        let mut v = base.clone();
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v
    };
    let success = |id: Option<&str>| -> String {
        match (call.gateway, id) {
            ("openclaw", Some(id)) => serde_json::json!({"action": "send", "channel": call.channel,
                "dryRun": false, "handledBy": "plugin", "messageId": id,
                "payload": {"ok": true, "messageId": id, "chatId": call.target}})
            .to_string(),
            ("openclaw", None) => serde_json::json!({"action": "send", "channel": call.channel,
                "dryRun": false, "handledBy": "plugin", "payload": {"ok": true}})
            .to_string(),
            (_, Some(id)) => serde_json::json!({"success": true, "platform": call.target.as_deref()
                .and_then(|t| t.split(':').next()), "chat_id": call.target, "message_id": id})
            .to_string(),
            (_, None) => {
                serde_json::json!({"success": true, "note": "platform returns no id"}).to_string()
            }
        }
    };
    if text.is_empty() {
        record(with(
            serde_json::json!({"sent": false, "error": "empty text"}),
        ));
        println!("{}", serde_json::json!({"error": "empty message"}));
        std::process::exit(2);
    }
    // A send under way (a test that kills its caller mid-send waits for
    // this, not for the caller's own mark, which comes before the spawn).
    if let Ok(path) = std::env::var("GATEWAY_DOUBLE_STARTED") {
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(format!("{}\n", std::process::id()).as_bytes()));
    }
    let (m, arg) = mode
        .split_once(':')
        .map_or((mode.as_str(), ""), |(a, b)| (a, b));
    match m {
        "noop" => println!("{}", success(Some(&id))),
        "ok" | "slow" | "noise" => {
            if m == "slow" {
                std::thread::sleep(Duration::from_millis(arg.parse().unwrap_or(100)));
            }
            match post_to_telegram(call.target.as_deref(), &text) {
                Some(Ok(platform_id)) => id = platform_id,
                Some(Err(why)) => {
                    record(with(serde_json::json!({"sent": false, "error": why})));
                    println!(
                        "{}",
                        serde_json::json!({"error": format!("Telegram send failed: {why}")})
                    );
                    std::process::exit(1);
                }
                None => {}
            }
            record(with(serde_json::json!({"sent": true, "messageId": id})));
            if m == "noise" {
                println!("[info] connecting to gateway…\nwarning: {{not json}} retrying once");
                eprintln!("debug: handshake ok");
            }
            println!("{}", success(Some(&id)));
        }
        "no-id" => {
            record(with(serde_json::json!({"sent": true, "messageId": null})));
            println!("{}", success(None));
        }
        "error-id" => {
            record(with(serde_json::json!({"sent": true, "messageId": id})));
            println!(
                "{}",
                serde_json::json!({"ok": false, "messageId": id, "error": {"message": "verification failed"}})
            );
            eprintln!("delivery could not be verified");
            std::process::exit(1);
        }
        "hang" => {
            let child = std::process::Command::new("sleep").arg("3600").spawn();
            let child_pid = child.as_ref().map(|c| c.id()).ok();
            record(with(
                serde_json::json!({"sent": false, "hang": true, "childPid": child_pid}),
            ));
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        "exit" => {
            let code: i32 = arg.parse().unwrap_or(1);
            record(with(serde_json::json!({"sent": false, "exit": code})));
            eprintln!("gateway error: exit {code}");
            std::process::exit(code);
        }
        _ => {
            // "fail" and anything unknown: a clean failure.
            record(with(serde_json::json!({"sent": false, "error": "failed"})));
            println!(
                "{}",
                serde_json::json!({"ok": false, "error": {"type": "cli_error", "message": "send failed"}})
            );
            eprintln!("send failed: platform unreachable");
            std::process::exit(1);
        }
    }
}
