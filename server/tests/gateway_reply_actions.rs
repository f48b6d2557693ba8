//! A person's decisions on gateway replies (docs/decisions.md D7 via docs/decisions.md D9): a
//! SENT_UNVERIFIED reply is marked delivered or sent again on request, a
//! DEAD one is retried; the listing shows each reply's last error; only the
//! admin / UI credential may decide (the gateway token may not).

use crate::common::{self, gateway::*};

use std::{path::Path, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;

const DOUBLE: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

/// The reply of the inbound message `pmid`, from the admin listing.
async fn reply_of(s: &common::Server, pmid: &str) -> Option<Value> {
    let (st, rows) = s.admin("GET", "/api/gateway/inbound", None).await;
    assert_eq!(st, StatusCode::OK, "{rows}");
    rows.as_array()?
        .iter()
        .find(|r| r["platformMessageId"] == pmid)
        .and_then(|r| r["replies"].get(0).cloned())
}

async fn wait_state(s: &common::Server, pmid: &str, state: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let reply = reply_of(s, pmid).await;
        if let Some(r) = reply.as_ref().filter(|r| r["state"] == state) {
            return r.clone();
        }
        assert!(Instant::now() < deadline, "never {state}: {reply:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn sends(record: &Path) -> usize {
    if record.exists() {
        common::json_lines(record).len()
    } else {
        0
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_person_retries_or_marks_a_gateway_reply() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start_with(dir.path(), |cfg| {
        cfg.outbox.cli_timeout = Duration::from_secs(2)
    })
    .await;
    let record = dir.path().join("sends.jsonl");
    let control = dir.path().join("double-mode");
    std::fs::write(&control, "error-id\n").unwrap();
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/gateways",
            Some(json!({"openclaw": {"cliPath": DOUBLE,
                "env": {"GATEWAY_DOUBLE_RECORD": record, "GATEWAY_DOUBLE_CONTROL": control},
                "accessPolicy": {"ownerIds": {"telegram": ["42"]}}}})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let token = secret(dir.path(), "gateway.token");
    let t = s.task("acknowledge me").await;
    let continue_as = |pmid: &str| {
        json!({"gateway": "openclaw", "platform": "telegram", "chatId": "-100",
               "platformMessageId": pmid, "senderId": "42", "taskId": t, "content": "go"})
    };
    // Two acknowledgements that may have been sent.
    for pmid in ["u1", "u2"] {
        let (_, out) = s
            .call("PUT", TASK, Some(&token), Some(continue_as(pmid)))
            .await;
        assert_eq!(out["mode"], "continued_task", "{out}");
    }
    let u1 = wait_state(&s, "u1", "SENT_UNVERIFIED").await;
    let u2 = wait_state(&s, "u2", "SENT_UNVERIFIED").await;
    assert!(
        u1["lastError"].is_string(),
        "the listing shows the error: {u1}"
    );
    assert_eq!(sends(&record), 2);
    let path = |id: &Value, action: &str| {
        format!("/api/gateway/replies/{}/{action}", id.as_str().unwrap())
    };

    // Only the admin / UI credential decides; bad ids are named.
    let (st, _) = s
        .call(
            "POST",
            &path(&u1["id"], "mark-delivered"),
            Some(&token),
            None,
        )
        .await;
    assert!(
        matches!(st, StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED),
        "{st}"
    );
    let (st, out) = s
        .admin("POST", "/api/gateway/replies/nope/retry", None)
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "replyId", "{out}");
    let (st, _) = s
        .admin(
            "POST",
            "/api/gateway/replies/cmissing000000000000000/retry",
            None,
        )
        .await;
    assert_eq!(st, StatusCode::NOT_FOUND);

    // Marked delivered: DELIVERED, nothing sent; a retry of it is refused.
    std::fs::write(&control, "ok\n").unwrap();
    let (st, out) = s
        .admin("POST", &path(&u1["id"], "mark-delivered"), None)
        .await;
    assert_eq!(
        (st, &out["state"]),
        (StatusCode::OK, &json!("DELIVERED")),
        "{out}"
    );
    let (st, out) = s.admin("POST", &path(&u1["id"], "retry"), None).await;
    assert_eq!(st, StatusCode::CONFLICT, "{out}");
    // Sent again on request: one more send, DELIVERED.
    let (st, out) = s.admin("POST", &path(&u2["id"], "retry"), None).await;
    assert_eq!(
        (st, &out["state"]),
        (StatusCode::OK, &json!("PENDING")),
        "{out}"
    );
    wait_state(&s, "u2", "DELIVERED").await;
    assert_eq!(sends(&record), 3, "u2 once more, u1 never");
    let (st, out) = s
        .admin("POST", &path(&u2["id"], "mark-delivered"), None)
        .await;
    assert_eq!(st, StatusCode::CONFLICT, "only SENT_UNVERIFIED: {out}");

    // A DEAD reply (given up) is retried on request.
    std::fs::write(&control, "fail\n").unwrap();
    let (_, out) = s
        .call("PUT", TASK, Some(&token), Some(continue_as("d1")))
        .await;
    assert_eq!(out["mode"], "continued_task", "{out}");
    let d1 = wait_state(&s, "d1", "FAILED").await;
    assert!(d1["lastError"].is_string(), "{d1}");
    let n = exec(
        dir.path(),
        "UPDATE gateway_replies SET state = 'DEAD', next_attempt_at = NULL WHERE id = ?",
        d1["id"].as_str().unwrap(),
    )
    .await;
    assert_eq!(n, 1);
    std::fs::write(&control, "ok\n").unwrap();
    let (st, out) = s.admin("POST", &path(&d1["id"], "retry"), None).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let done = wait_state(&s, "d1", "DELIVERED").await;
    assert!(done["platformMessageId"].is_string(), "{done}");
    s.shutdown().await;
}
