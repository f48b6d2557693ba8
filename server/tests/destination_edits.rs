//! The destination aliases (`harness.destinations`, docs/tower-messaging.md
//! docs/tower-messaging.md §6.2) edited one at a time over REST: add (201 + the entry with its id),
//! update, remove (404 on an unknown id), each refused field named (400);
//! a list written whole by an older client is addressed by position; and
//! the compare-and-set: 20 concurrent adds all stand, and so do adds made
//! while sends cache OpenClaw directory hits into the same list.

use crate::common;

use std::{collections::BTreeSet, path::Path, time::Duration};

use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");
const LIST: &str = "/api/settings/destinations";

async fn start(dir: &Path) -> common::Server {
    common::start_with(dir, |cfg| cfg.outbox.cli_timeout = Duration::from_secs(5)).await
}

async fn list(s: &common::Server) -> Vec<Value> {
    let (st, body) = s.admin("GET", LIST, None).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    body.as_array().cloned().unwrap_or_default()
}

fn aliases(list: &[Value]) -> BTreeSet<String> {
    list.iter()
        .filter_map(|d| d["alias"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_alias_at_a_time_with_field_errors_and_404s() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;

    // Admin only, like the whole-list routes.
    let (st, _) = s
        .call("POST", LIST, None, Some(json!({"alias": "a", "dest": "x"})))
        .await;
    assert_eq!(st, StatusCode::UNAUTHORIZED);

    // Add: 201 and the tidied entry with its id.
    let (st, team) = s
        .admin(
            "POST",
            LIST,
            Some(
                json!({"alias": " team ", "label": "The Team", "gateway": "OpenClaw",
                "platform": "Telegram", "dest": " telegram:-100123 ", "id": "cforged"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{team}");
    let id = team["id"].as_str().unwrap().to_string();
    assert_ne!(id, "cforged", "the server assigns the id");
    assert_eq!(
        (
            team["alias"].as_str(),
            team["gateway"].as_str(),
            team["platform"].as_str(),
            team["dest"].as_str()
        ),
        (
            Some("team"),
            Some("openclaw"),
            Some("telegram"),
            Some("telegram:-100123")
        )
    );
    assert!(team.get("scope").is_none(), "missing scope means work");

    // Each refused field is named (400, `field`), and nothing is stored.
    for (body, field) in [
        (json!({"dest": "x"}), "alias"),
        (json!({"alias": "a", "dest": "  "}), "dest"),
        (
            json!({"alias": "a", "dest": "x", "gateway": "sms"}),
            "gateway",
        ),
        (
            json!({"alias": "a", "dest": "x", "scope": "always"}),
            "scope",
        ),
        (
            json!({"alias": "a", "dest": "x", "platform": "p".repeat(65)}),
            "platform",
        ),
        (
            json!({"alias": "a", "dest": "x", "label": "l".repeat(201)}),
            "label",
        ),
        // The same alias (under normalize_name) for the same gateway + platform + scope.
        (
            json!({"alias": "「TEAM群」", "gateway": "openclaw", "platform": "telegram", "dest": "telegram:-1"}),
            "alias",
        ),
    ] {
        let (st, err) = s.admin("POST", LIST, Some(body.clone())).await;
        assert_eq!(
            (st, err["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some(field)),
            "{body} → {err}"
        );
        assert!(err["error"].is_string(), "{err}");
    }
    let (_, err) = s
        .admin(
            "POST",
            LIST,
            Some(json!({"alias": "team", "gateway": "openclaw", "platform": "telegram", "dest": "x"})),
        )
        .await;
    assert!(
        err["error"].as_str().unwrap().contains("already exists"),
        "{err}"
    );
    assert_eq!(list(&s).await.len(), 1, "refused adds store nothing");
    // The same alias for another platform is another alias.
    let (st, slack) = s
        .admin(
            "POST",
            LIST,
            Some(json!({"alias": "team", "gateway": "openclaw", "platform": "slack", "dest": "C0123456789"})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{slack}");
    let slack_id = slack["id"].as_str().unwrap().to_string();

    // Update: by id; the id stays; the rules are the same.
    let path = format!("{LIST}/{id}");
    let (st, updated) = s
        .admin(
            "PUT",
            &path,
            Some(
                json!({"alias": "team", "gateway": "openclaw", "platform": "telegram",
                "dest": "telegram:-100999", "scope": "unattended"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{updated}");
    assert_eq!(updated["id"], id.as_str());
    assert_eq!(updated["dest"], "telegram:-100999");
    let (st, err) = s
        .admin(
            "PUT",
            &path,
            Some(
                json!({"alias": "team", "gateway": "openclaw", "platform": "telegram", "dest": ""}),
            ),
        )
        .await;
    assert_eq!(
        (st, err["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("dest")),
        "{err}"
    );
    // Renaming onto another entry's alias is refused.
    let (st, err) = s
        .admin(
            "PUT",
            &format!("{LIST}/{slack_id}"),
            Some(
                json!({"alias": "Team", "gateway": "openclaw", "platform": "telegram",
                "dest": "x", "scope": "unattended"}),
            ),
        )
        .await;
    assert_eq!(
        (st, err["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("alias")),
        "{err}"
    );
    let stored = list(&s).await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0]["dest"], "telegram:-100999");
    assert_eq!(
        stored[1]["platform"], "slack",
        "a refused edit stores nothing"
    );

    // Unknown ids: 404 with the JSON error body.
    for method in ["PUT", "DELETE"] {
        let (st, err) = s
            .admin(
                method,
                &format!("{LIST}/cnosuchdestinationxxxxxxx"),
                Some(json!({"alias": "x", "dest": "x"})),
            )
            .await;
        assert_eq!(st, StatusCode::NOT_FOUND, "{method}: {err}");
        assert!(err["error"].is_string(), "{err}");
    }

    // Remove.
    let (st, ok) = s.admin("DELETE", &path, None).await;
    assert_eq!((st, ok["ok"].as_bool()), (StatusCode::OK, Some(true)));
    let (st, _) = s.admin("DELETE", &path, None).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "removed once");
    assert_eq!(aliases(&list(&s).await), BTreeSet::from(["team".into()]));

    // A list written whole (an older client, no ids): entries are addressed
    // by position; an edited one gets an id. A duplicate alias is refused
    // here too.
    let (st, err) = s
        .admin(
            "PUT",
            LIST,
            Some(
                json!({"destinations": [{"alias": "a", "dest": "1"}, {"alias": "A", "dest": "2"}]}),
            ),
        )
        .await;
    assert_eq!(
        (st, err["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("alias")),
        "{err}"
    );
    let (st, _) = s
        .admin(
            "PUT",
            LIST,
            Some(
                json!({"destinations": [{"alias": "a", "dest": "1"}, {"alias": "b", "dest": "2"}]}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK);
    let (st, b) = s
        .admin(
            "PUT",
            &format!("{LIST}/1"),
            Some(json!({"alias": "b", "dest": "3"})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{b}");
    assert!(b["id"].as_str().is_some_and(|i| i.starts_with('c')), "{b}");
    let (st, _) = s.admin("DELETE", &format!("{LIST}/0"), None).await;
    assert_eq!(st, StatusCode::OK);
    let stored = list(&s).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0]["alias"].as_str(), stored[0]["dest"].as_str()),
        (Some("b"), Some("3"))
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_adds_all_stand() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let sref = &s;
    let adds = (0..20).map(|i| async move {
        sref.admin(
            "POST",
            LIST,
            Some(json!({"alias": format!("alias-{i}"), "dest": format!("telegram:-100{i:03}")})),
        )
        .await
    });
    let results = join_all(adds).await;
    for (st, body) in &results {
        assert_eq!(*st, StatusCode::CREATED, "{body}");
    }
    let stored = list(&s).await;
    let expected: BTreeSet<String> = (0..20).map(|i| format!("alias-{i}")).collect();
    assert_eq!(aliases(&stored), expected, "every concurrent add stands");
    let ids: BTreeSet<&str> = stored.iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!(ids.len(), 20, "one id each");
    // Concurrent removes of different entries all stand as well.
    let removes = results.iter().take(10).map(|(_, body)| {
        let path = format!("{LIST}/{}", body["id"].as_str().unwrap());
        async move { sref.admin("DELETE", &path, None).await }
    });
    for (st, body) in join_all(removes).await {
        assert_eq!(st, StatusCode::OK, "{body}");
    }
    let expected: BTreeSet<String> = (10..20).map(|i| format!("alias-{i}")).collect();
    assert_eq!(aliases(&list(&s).await), expected);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn adds_during_sends_that_cache_directory_hits_are_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path()).await;
    let lookups = dir.path().join("directory.jsonl");
    let groups: Vec<Value> = (0..8)
        .map(|i| json!({"id": format!("-100777{i:03}"), "name": format!("Crew {i}")}))
        .collect();
    let env = json!({"GATEWAY_DOUBLE_RECORD": dir.path().join("sent.jsonl"),
        "GATEWAY_DOUBLE_DIRECTORY_RECORD": lookups,
        "GATEWAY_DOUBLE_GROUPS": Value::Array(groups).to_string()});
    let (st, body) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"cliPath": DOUBLE, "env": env}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let task = s.task("Directory hits").await;
    let sref = &s;
    let task = task.as_str();
    // Eight sends to group names (each a directory hit cached into the list)
    // interleaved with twelve adds through REST.
    let sends =
        (0..8).map(|i| async move {
            let (st, out) = sref
            .admin(
                "POST",
                "/api/internal/harness/outbound",
                Some(json!({"taskId": task, "message": format!("hello crew {i}"), "scope": "work",
                    "gateway": "openclaw", "downstream": "telegram", "dest": format!("crew {i}")})),
            )
            .await;
            assert_eq!(st, StatusCode::OK, "{out}");
            assert_eq!(out["state"], "DELIVERED", "{out}");
        });
    let adds = (0..12).map(|i| async move {
        let (st, body) = sref
            .admin(
                "POST",
                LIST,
                Some(
                    json!({"alias": format!("manual-{i}"), "dest": format!("telegram:-200{i:03}")}),
                ),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{body}");
    });
    tokio::join!(join_all(sends), join_all(adds));

    let stored = list(&s).await;
    let mut expected: BTreeSet<String> = (0..12).map(|i| format!("manual-{i}")).collect();
    expected.extend((0..8).map(|i| format!("crew {i}")));
    assert_eq!(
        aliases(&stored),
        expected,
        "no add and no cached hit is lost"
    );
    for d in &stored {
        assert!(d["id"].as_str().is_some(), "cached hits get ids too: {d}");
        if let Some(n) = d["alias"].as_str().and_then(|a| a.strip_prefix("crew ")) {
            assert_eq!(d["dest"], format!("telegram:-100777{n:0>3}"), "{d}");
            assert_eq!(d["gateway"], "openclaw");
        }
    }
    assert_eq!(
        common::json_lines(&lookups).len(),
        8,
        "one directory lookup per group"
    );
    s.shutdown().await;
}
