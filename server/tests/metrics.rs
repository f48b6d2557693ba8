//! `GET /metrics` (Prometheus text), `GET /api/analytics`, request ids.

use crate::common;

use reqwest::StatusCode;
use serde_json::json;

async fn scrape(s: &common::Server, token: Option<&str>) -> (StatusCode, String) {
    let mut req = s.client.get(s.url("/metrics"));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// The value of the sample line starting with `prefix` (exact labels).
fn sample(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix) && l[prefix.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_outcomes_with_bounded_labels_behind_a_token() {
    metrics_count_outcomes(None).await;
}

/// The same series, read from PostgreSQL (`StatsStore` on `PgStore`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_outcomes_with_bounded_labels_behind_a_token_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        metrics_count_outcomes(Some(&db.url)).await;
    }
}

async fn metrics_count_outcomes(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_on(dir.path(), db.map(str::to_string)).await;
    let metrics_token = std::fs::read_to_string(dir.path().join("secrets/metrics.token")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("secrets/metrics.token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let t = s.task("metrics").await;
    let (_exec, agent_token) = s.running.harness.tasks().begin_execution(&t).await.unwrap();

    // No credential, or an agent's: refused. The metrics token and the admin token: served.
    assert_eq!(scrape(&s, None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        scrape(&s, Some(&agent_token)).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        scrape(&s, Some("hxm_wrong")).await.0,
        StatusCode::UNAUTHORIZED
    );

    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/ask",
            Some(json!({"taskId": t, "question": "Which DB?"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, text) = scrape(&s, Some(metrics_token.trim())).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        sample(&text, r#"harness_messages{kind="ask",state="OPEN"}"#),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, r#"harness_executions{state="PAUSED"}"#),
        Some(1.0),
        "{text}"
    );

    let (status, body) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": "sqlite"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, text) = scrape(&s, Some(&s.admin)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        sample(&text, r#"harness_messages{kind="ask",state="ANSWERED"}"#),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "harness_ask_answer_seconds_count"),
        Some(1.0),
        "{text}"
    );
    // Bucket counts come from SQL: the one answer is in the +Inf bucket.
    assert_eq!(
        sample(&text, r#"harness_ask_answer_seconds_bucket{le="+Inf"}"#),
        Some(1.0),
        "{text}"
    );
    assert!(text.contains("# TYPE harness_outbound gauge"), "{text}");
    // The task, the ask and the answer were write transactions of the store.
    let txns = sample(&text, "harness_store_transaction_seconds_count").unwrap_or(0.0);
    assert!(txns >= 3.0, "{text}");
    assert_eq!(
        sample(
            &text,
            r#"harness_store_transaction_seconds_bucket{le="+Inf"}"#
        ),
        Some(txns),
        "{text}"
    );
    assert!(text.contains("harness_deliveries{state="), "{text}");
    assert!(text.contains("harness_build_info{version="), "{text}");
    assert!(text.contains("harness_live_ptys "), "{text}");
    // Requests are labelled by route template, never by a concrete id.
    let (_, _) = s.admin("GET", &format!("/api/tasks/{t}"), None).await;
    let (_, text) = scrape(&s, Some(&s.admin)).await;
    assert!(
        text.contains(
            r#"harness_http_requests_total{route="/api/tasks/{id}",method="GET",status="200"} 1"#
        ),
        "{text}"
    );
    assert!(!text.contains(&t), "a task id leaked into a label");
    assert!(text.trim_end().ends_with("# EOF"));
    s.shutdown().await;
}

#[tokio::test]
async fn every_response_carries_a_request_id_and_a_given_one_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    for path in ["/healthz", "/api/tasks", "/api/tasks/nope", "/metrics"] {
        let resp = s.client.get(s.url(path)).send().await.unwrap();
        let id = resp
            .headers()
            .get("x-request-id")
            .map(|v| v.to_str().unwrap().to_string());
        assert!(
            id.is_some_and(|v| v.len() >= 16),
            "{path} has no request id"
        );
    }
    let resp = s
        .client
        .get(s.url("/api/tasks"))
        .header("x-request-id", "trace-me-123")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(resp.headers()["x-request-id"], "trace-me-123");
    s.shutdown().await;
}

#[tokio::test]
async fn analytics_reports_answer_times_and_open_questions() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let answered = s.task("answered").await;
    let open = s.task("open").await;
    for t in [&answered, &open] {
        s.running.harness.tasks().begin_execution(t).await.unwrap();
        let (status, body) = s
            .admin(
                "POST",
                "/api/internal/harness/ask",
                Some(json!({"taskId": t, "question": "?"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, _) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": answered, "text": "yes"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, a) = s.admin("GET", "/api/analytics", None).await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(a["response24h"]["count"], 1, "{a}");
    assert!(a["response24h"]["p50Seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(a["unansweredByAge"][0]["key"], "lt1h");
    assert_eq!(a["unansweredByAge"][0]["value"], 1.0);
    assert_eq!(a["questionsPerProject"][0]["value"], 2.0);
    let (status, _) = s.call("GET", "/api/analytics", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    s.shutdown().await;
}
