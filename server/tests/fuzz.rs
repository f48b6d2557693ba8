//! Random and hostile bodies to every endpoint: never a 5xx, never a panic,
//! the server stays healthy, and nothing half-written appears.

use crate::common;

use rand::{Rng, SeedableRng, rngs::StdRng};
use reqwest::StatusCode;
use serde_json::{Value, json};

const FIELDS: &[&str] = &[
    "taskId",
    "question",
    "text",
    "message",
    "allowRetry",
    "title",
    "description",
    "projectId",
    "parentTaskId",
    "agent",
    "name",
    "path",
    "workspace",
    "targets",
    "provider",
    "command",
    "env",
];

fn random_value(rng: &mut StdRng, depth: u32) -> Value {
    match rng.random_range(0..10) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(rng.random::<i64>()),
        3 => json!(rng.random::<f64>()),
        4 => json!("x".repeat(rng.random_range(0..10_000))),
        5 => json!(harness_core::ids::new_id()),
        6 => json!("问题\u{0}\u{202e}<script>'\"; DROP TABLE tasks;--"),
        7 if depth < 3 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        8 if depth < 3 => random_object(rng, depth + 1),
        _ => json!(""),
    }
}

fn random_object(rng: &mut StdRng, depth: u32) -> Value {
    let mut map = serde_json::Map::new();
    for _ in 0..rng.random_range(0..6) {
        let key = if rng.random_bool(0.8) {
            FIELDS[rng.random_range(0..FIELDS.len())].to_string()
        } else {
            format!("k{}", rng.random::<u16>())
        };
        map.insert(key, random_value(rng, depth));
    }
    Value::Object(map)
}

fn random_bytes(rng: &mut StdRng) -> Vec<u8> {
    match rng.random_range(0..4) {
        0 => (0..rng.random_range(0..300))
            .map(|_| rng.random())
            .collect(),
        1 => b"{\"taskId\":".to_vec(),
        2 => b"[1,2,3]".to_vec(),
        _ => serde_json::to_vec(&random_object(rng, 0)).unwrap_or_default(),
    }
}

#[tokio::test]
async fn random_bodies_never_cause_server_errors() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let t = s.task("fuzz target").await;
    let (_, agent) = s.running.harness.tasks().begin_execution(&t).await.unwrap();
    let endpoints: Vec<(&str, String)> = vec![
        ("POST", "/api/internal/harness/ask".into()),
        ("POST", "/api/internal/harness/reply".into()),
        ("POST", "/api/internal/harness/notify".into()),
        ("GET", "/api/internal/harness/pending?taskId=".into()),
        ("POST", "/api/projects".into()),
        ("POST", "/api/tasks".into()),
        ("GET", format!("/api/tasks/{t}")),
        ("POST", format!("/api/tasks/{t}/start")),
        ("PUT", "/api/settings/notify-targets".into()),
        ("POST", "/api/settings/notify-targets/add".into()),
        ("POST", "/api/internal/harness/outbound".into()),
        ("POST", "/api/settings/destinations".into()),
        ("PUT", "/api/settings/destinations".into()),
        ("PUT", "/api/settings/gateways".into()),
        ("GET", "/api/harness/messages?view=".into()),
        ("POST", "/mcp".into()),
        ("POST", "/sfn/reply_ask".into()),
    ];
    let mut rng = StdRng::seed_from_u64(0x4a52_4e53);
    let tokens = [
        Some(s.admin.clone()),
        Some(agent.clone()),
        None,
        Some("garbage".to_string()),
    ];
    for round in 0..900 {
        let (method, path) = &endpoints[round % endpoints.len()];
        let token = &tokens[rng.random_range(0..tokens.len())];
        let mut path = path.clone();
        if path.ends_with('=') {
            let junk: String = (0..rng.random_range(0..40))
                .map(|_| rng.random_range(b' '..=b'~') as char)
                .collect();
            path.push_str(&urlencode(&junk));
        }
        let mut req = s
            .client
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                s.url(&path),
            )
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(tok) = token {
            req = req.bearer_auth(tok);
        }
        if *method != "GET" {
            req = req.body(random_bytes(&mut rng));
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let body = resp.text().await.unwrap_or_default();
        assert!(
            !status.is_server_error() || status == StatusCode::NOT_IMPLEMENTED,
            "{method} {path} → {status}: {body}"
        );
    }
    let (status, _) = s.call("GET", "/healthz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    // An oversize body is refused with 413, not buffered.
    let resp = s
        .client
        .post(s.url("/api/internal/harness/notify"))
        .bearer_auth(&s.admin)
        .body(vec![b'a'; 2 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    s.shutdown().await;
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
