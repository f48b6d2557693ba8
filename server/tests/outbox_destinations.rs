//! Destination resolution on the way to the gateway CLI (docs/tower-messaging.md
//! docs/tower-messaging.md §6.2), end to end with the gateway double: an alias of
//! `harness.destinations`; the OpenClaw group directory (`openclaw directory
//! groups list`, answered by the double) whose hit is cached as an alias so
//! the next send runs no lookup; the Hermes channel directory file of the
//! profile; the raw fallback; and the REST settings of the aliases.

use crate::common;

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

async fn start(dir: &Path) -> common::Server {
    common::start_with(dir, |cfg| cfg.outbox.cli_timeout = Duration::from_secs(5)).await
}

fn lines(path: &Path) -> Vec<Value> {
    common::json_lines(path)
}

/// The `--target` / `--to` of the last send recorded.
fn last_target(record: &Path) -> String {
    let rec = lines(record);
    rec.last().unwrap()["target"].as_str().unwrap().to_string()
}

async fn send(s: &common::Server, task: &str, gateway: &str, platform: &str, to: &str) -> Value {
    let (st, out) = s
        .admin(
            "POST",
            "/api/internal/harness/outbound",
            Some(
                json!({"taskId": task, "message": format!("to {to}"), "scope": "work",
                "gateway": gateway, "downstream": platform, "dest": to}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_eq!(out["state"], "DELIVERED", "{out}");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aliases_directories_and_the_fallback_resolve_the_destination() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let record = dir.path().join("sent.jsonl");
    let lookups = dir.path().join("directory.jsonl");
    let home = dir.path().join("home");
    let file = home.join(".hermes/profiles/work/channel_directory.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        r#"{"platforms": {"feishu": [{"id": "oc_ops", "name": "Ops", "type": "group"}]}}"#,
    )
    .unwrap();
    let groups = json!([
        {"id": "-100555666", "name": "Night Shift"},
        {"id": "-100555667", "name": "Night Shift Archive"}
    ]);
    let env = json!({"GATEWAY_DOUBLE_RECORD": record, "GATEWAY_DOUBLE_DIRECTORY_RECORD": lookups,
        "GATEWAY_DOUBLE_GROUPS": groups.to_string(), "HOME": home});
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"cliPath": DOUBLE, "env": env},
                "hermes": {"cliPath": DOUBLE, "profile": "work", "env": env}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");

    // The aliases over REST: a bad entry names its field.
    let (st, err) = s
        .admin(
            "PUT",
            "/api/settings/destinations",
            Some(json!({"destinations": [{"alias": "x", "gateway": "sms", "dest": "1"}]})),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(err["field"], "gateway", "{err}");
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/destinations",
            Some(json!({"destinations": [
                {"alias": "team", "label": "The Team", "gateway": "openclaw", "platform": "telegram", "dest": "telegram:-100123"}
            ]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let t = s.task("Destinations").await;

    // An alias (quotes, a trailing 群 and case do not matter); no lookup.
    send(&s, &t, "openclaw", "telegram", "「The TEAM群」").await;
    assert_eq!(last_target(&record), "telegram:-100123");
    assert!(
        lines(&lookups).is_empty(),
        "an alias runs no directory lookup"
    );

    // The OpenClaw directory: one exact name among the hits.
    send(&s, &t, "openclaw", "telegram", "night shift").await;
    assert_eq!(last_target(&record), "telegram:-100555666");
    let l = lines(&lookups);
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(
        (l[0]["channel"].as_str(), l[0]["query"].as_str()),
        (Some("telegram"), Some("night shift"))
    );
    // … cached as an alias: the next send runs no lookup.
    let (_, cached) = s.admin("GET", "/api/settings/destinations", None).await;
    let hit = cached
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["alias"] == "night shift")
        .unwrap_or_else(|| panic!("not cached: {cached}"));
    assert_eq!(hit["dest"], "telegram:-100555666");
    assert_eq!(hit["label"], "Night Shift");
    send(&s, &t, "openclaw", "telegram", "Night Shift").await;
    assert_eq!(last_target(&record), "telegram:-100555666");
    assert_eq!(lines(&lookups).len(), 1, "served from the cache");

    // Id-like values skip the directory and get their platform.
    send(&s, &t, "openclaw", "telegram", "-1009876543").await;
    assert_eq!(last_target(&record), "telegram:-1009876543");
    // No match in the directory: the raw value.
    send(&s, &t, "openclaw", "telegram", "nobody here").await;
    assert_eq!(last_target(&record), "nobody here");
    assert_eq!(lines(&lookups).len(), 2);

    // Hermes: the channel directory file of the profile.
    send(&s, &t, "hermes", "feishu", "Ops群").await;
    assert_eq!(last_target(&record), "feishu:oc_ops");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn adding_or_editing_a_target_names_the_bad_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    for (target, field) in [
        (
            json!({"label": "t", "gateway": "openclaw", "dest": "-100", "scope": "work"}),
            "downstream",
        ),
        (
            json!({"label": "t", "gateway": "hermes", "downstream": "telegram", "scope": "work"}),
            "dest",
        ),
        (
            json!({"label": "t", "gateway": "sms", "dest": "1", "scope": "work"}),
            "gateway",
        ),
        // "Add" with every field empty, an unknown platform, a
        // destination that is none.
        (
            json!({"label": "", "gateway": "hermes", "scope": "unattended"}),
            "downstream",
        ),
        (
            json!({"label": "t", "gateway": "openclaw", "downstream": "carrier-pigeon", "dest": "-100", "scope": "work"}),
            "downstream",
        ),
        (
            json!({"label": "t", "gateway": "hermes", "downstream": "telegram", "dest": "???", "scope": "work"}),
            "dest",
        ),
    ] {
        let (st, err) = s
            .admin("POST", "/api/settings/notify-targets/add", Some(target))
            .await;
        assert_eq!(
            (st, err["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some(field)),
            "{err}"
        );
    }
    let (st, added) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(json!({"label": "t", "gateway": "openclaw", "downstream": "telegram", "dest": "-100", "scope": "work"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{added}");
    let id = added["id"].as_str().unwrap();
    let (st, err) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{id}"),
            Some(json!({"label": "t", "gateway": "openclaw", "downstream": " ", "dest": "-100", "scope": "work"})),
        )
        .await;
    assert_eq!(
        (st, err["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("downstream")),
        "{err}"
    );
    s.shutdown().await;
}
