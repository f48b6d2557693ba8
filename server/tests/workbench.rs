//! Parent-child derivation and the parent's durable inbox, with
//! the test double agent as parent and children in real PTYs: siblings'
//! turn ends become one batch typed once into the parent at its own turn
//! end (HIGH first); duplicate Stop callbacks and the exit-fallback race make
//! one event; a claim left by a dead process is recovered after a restart
//! and delivered once; a child blocked on a decision gets the parent's
//! answer typed — also after its terminal is gone (resumed first).

use crate::common;

use common::workbench::*;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_siblings_become_one_batch_typed_once_at_the_parents_turn_end() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let log = dir.path().join("parent-inputs.log");
    let parent = double_task_log(&s, "parent", "say parent ready", None, &log).await;
    start(&s, &parent).await;
    wait_for(&s, &parent, "the parent", |t| t.contains("parent ready")).await;
    // The parent is busy (no turn end yet) while its three children end.
    let review = double_task(
        &s,
        "review child",
        "stop_hook All done, see commit abc",
        Some(&parent),
    )
    .await;
    let decide = double_task(
        &s,
        "asking child",
        "ask_human Which database, A or B?\nstop_hook Blocked on the DB choice",
        Some(&parent),
    )
    .await;
    let failing = double_task(&s, "failing child", "say crashing\nexit 3", Some(&parent)).await;
    for c in [&review, &decide, &failing] {
        start(&s, c).await;
    }
    let pending = wait_inbox(&s, &parent, "three pending events", |i| {
        count(i, "events", "PENDING") == 3
    })
    .await;
    assert!(
        pending["batches"].as_array().unwrap().is_empty(),
        "nothing drained while the parent is busy"
    );
    let kinds: Vec<&str> = pending["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    for k in [
        "CHILD_REVIEW_REQUIRED",
        "CHILD_DECISION_REQUIRED",
        "CHILD_EXECUTION_FAILED",
    ] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
    // The parent's own turn end opens the latch: one batch, typed once.
    type_line(&s, &parent, "!stop_hook").await;
    let done = wait_inbox(&s, &parent, "the batch delivered", |i| {
        count(i, "events", "DELIVERED") == 3
    })
    .await;
    let batches = done["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 1, "{done:#}");
    assert_eq!(batches[0]["state"], "DISPATCHED");
    let prompt = batches[0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("3 durable sub-task events"), "{prompt}");
    assert!(prompt.contains("ack_workbench_batch"));
    assert!(prompt.contains("never bounce the same question back down"));
    let review_at = prompt.find("[REVIEW REQUIRED]").unwrap();
    assert!(
        prompt.find("[DECISION REQUIRED]").unwrap() < review_at,
        "HIGH first: {prompt}"
    );
    assert!(
        prompt.find("[EXECUTION FAILED]").unwrap() < review_at,
        "HIGH first: {prompt}"
    );
    assert!(prompt.contains("Which database, A or B?"));
    let batch_id = batches[0]["id"].as_str().unwrap().to_string();
    // The batch is the delivery (same id) and a SYSTEM TaskMessage.
    let (_, delivery) = s
        .admin("GET", &format!("/api/deliveries/{batch_id}"), None)
        .await;
    assert_eq!(delivery["state"], "DELIVERED", "{delivery}");
    let footer = format!("[Tower durable batch: {batch_id}]");
    wait_input(&log, "the batch typed", &footer).await;
    type_line(&s, &parent, "marker-after-batch").await;
    let got = wait_input(&log, "the marker", "marker-after-batch").await;
    assert_eq!(
        got.iter().filter(|l| l.contains(&footer)).count(),
        1,
        "typed once: {got:#?}"
    );
    // The parent's agent acknowledges and resolves with the lease token of the footer.
    let token = prompt
        .lines()
        .find(|l| l.contains("ack_workbench_batch"))
        .and_then(|l| l.split("leaseToken: \"").nth(1))
        .and_then(|t| t.split('"').next())
        .unwrap()
        .to_string();
    let call = |tool: &str, token: &str| {
        format!(
            "!mcp {tool} {}",
            json!({"batchId": batch_id, "leaseToken": token})
        )
    };
    type_line(&s, &parent, &call("ack_workbench_batch", &token)).await;
    type_line(
        &s,
        &parent,
        &call("heartbeat_workbench_batch", "cstale000000000000000000000"),
    )
    .await;
    let text = wait_for(&s, &parent, "the stale token refused", |t| {
        t.contains("MCP FAILED")
    })
    .await;
    assert!(text.contains("lease token is stale"), "{text}");
    assert!(text.contains("\"state\":\"ACKED\""), "{text}");
    type_line(&s, &parent, &call("resolve_workbench_batch", &token)).await;
    let resolved = wait_inbox(&s, &parent, "resolved", |i| {
        count(i, "events", "CONSUMED") == 3
    })
    .await;
    assert_eq!(resolved["batches"][0]["state"], "RESOLVED");
    type_line(&s, &parent, &call("ack_workbench_batch", &token)).await;
    wait_for(&s, &parent, "a no-op ack", |t| {
        t.contains("\"noOp\":true,\"state\":\"RESOLVED\"")
    })
    .await;
    // Another turn end of the parent with nothing pending drains nothing.
    type_line(&s, &parent, "!stop_hook").await;
    type_line(&s, &parent, "marker-after-stop").await;
    wait_for(&s, &parent, "second stop", |t| {
        t.contains("GOT INPUT: marker-after-stop")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await; // room for a wrong second batch
    let after = inbox(&s, &parent).await;
    assert_eq!(after["batches"].as_array().unwrap().len(), 1);
    assert_eq!(after["children"].as_array().unwrap().len(), 3);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn duplicate_stop_callbacks_and_the_exit_fallback_make_one_event() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let parent = s.task("parent").await;
    let child = double_task(
        &s,
        "child",
        "print_env TOWER_HAS_PARENT\nsay child idle",
        Some(&parent),
    )
    .await;
    start(&s, &child).await;
    wait_for(&s, &child, "the child", |t| t.contains("child idle")).await;
    assert!(screen(&s, &child).await.contains("ENV TOWER_HAS_PARENT=1"));
    let exec = execution_of(&s, &child).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let body =
        json!({"taskId": child, "executionId": exec, "eventId": "turn-1", "lastReply": "done"});
    // Two identical callbacks racing.
    let (a, b) = tokio::join!(
        s.admin("POST", "/api/internal/hooks/stop", Some(body.clone())),
        s.admin("POST", "/api/internal/hooks/stop", Some(body.clone())),
    );
    assert_eq!(a.0, StatusCode::OK, "{}", a.1);
    assert_eq!(b.0, StatusCode::OK, "{}", b.1);
    assert_eq!(a.1["eventId"], b.1["eventId"]);
    assert_ne!(
        a.1["deduped"], b.1["deduped"],
        "one created, one deduped: {} {}",
        a.1, b.1
    );
    // A callback naming another execution does not touch this one.
    let (_, foreign) = s
        .admin("POST", "/api/internal/hooks/stop",
            Some(json!({"taskId": child, "executionId": "cforeign0000000000000000000", "eventId": "turn-1"})))
        .await;
    assert_eq!(foreign["ownsTurn"], false, "{foreign}");
    // The child exits cleanly: the completion fallback finds the stop review.
    type_line(&s, &child, "/exit").await;
    for _ in 0..100 {
        if execution_of(&s, &child).await["status"] == "COMPLETED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(execution_of(&s, &child).await["status"], "COMPLETED");
    let (_, late) = s
        .admin("POST", "/api/internal/hooks/stop",
            Some(json!({"taskId": child, "executionId": exec, "eventId": "turn-2", "lastReply": "late"})))
        .await;
    assert_eq!(late["ownsTurn"], false, "{late}");
    tokio::time::sleep(Duration::from_millis(300)).await; // let a wrong second event show up
    let i = inbox(&s, &parent).await;
    let events = i["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{i:#}");
    assert_eq!(events[0]["kind"], "CHILD_REVIEW_REQUIRED");
    assert_eq!(
        events[0]["executionReviewKey"],
        format!("execution-review:{child}:{exec}")
    );
    assert!(events[0]["dedupKey"].as_str().unwrap().ends_with(":turn-1"));
    // A failing child: one HIGH failure event; without a stop review a
    // clean exit gets the NORMAL fallback review.
    let failing = double_task(&s, "failing", "exit 2", Some(&parent)).await;
    start(&s, &failing).await;
    let quiet = double_task(&s, "quiet", "exit 0", Some(&parent)).await;
    start(&s, &quiet).await;
    let i = wait_inbox(&s, &parent, "three events", |i| {
        i["events"].as_array().unwrap().len() == 3
    })
    .await;
    let by = |t: &str| {
        i["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["sourceTaskId"] == t)
            .cloned()
            .unwrap()
    };
    assert_eq!(by(&failing)["kind"], "CHILD_EXECUTION_FAILED");
    assert_eq!(by(&failing)["priority"], "HIGH");
    assert_eq!(by(&quiet)["kind"], "CHILD_REVIEW_REQUIRED");
    assert_eq!(by(&quiet)["priority"], "NORMAL");
    assert!(
        by(&quiet)["dedupKey"]
            .as_str()
            .unwrap()
            .starts_with("child-exit:CHILD_REVIEW_REQUIRED:")
    );
    // A parentless task's exit adds nothing anywhere.
    let (_, pi) = s
        .admin("GET", &format!("/api/tasks/{child}/inbox"), None)
        .await;
    assert!(pi["events"].as_array().unwrap().is_empty());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_claim_left_by_a_dead_process_is_delivered_once_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let log = dir.path().join("parent-inputs.log");
    let parent = double_task_log(&s, "parent", "say parent ready", None, &log).await;
    let child = s.task("child").await;
    let (status, derived) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "child2", "parentTaskId": parent,
            "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{derived}");
    assert!(
        derived["description"].as_str().unwrap().contains("## 来源"),
        "{derived}"
    );
    let child2 = derived["id"].as_str().unwrap().to_string();
    let _ = child;
    // Two events in the (not running) parent's inbox via the exit producer.
    let h = s.running.harness.clone();
    for (i, c) in [&child2].iter().enumerate() {
        let (exec, _) = h.tasks().begin_execution(c).await.unwrap();
        h.tasks()
            .finish_execution(
                c,
                &exec.id,
                harness_core::model::ExecutionStatus::Failed,
                Some(1),
                "exited",
            )
            .await
            .unwrap();
        h.deliveries()
            .record_child_exit(
                c,
                &exec.id,
                harness_core::model::ExecutionStatus::Failed,
                Some(i as i64 + 1),
            )
            .await
            .unwrap();
    }
    // A process of this node claims them and dies before the batch is stored.
    let node = h.config().node_id.clone();
    let now = chrono::Utc::now();
    let claimed = h
        .store()
        .claim_workbench_events(
            &parent,
            &format!("{node}:dead-boot"),
            "dead-claim",
            50,
            now,
            now + chrono::Duration::seconds(60),
        )
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(count(&inbox(&s, &parent).await, "events", "PROCESSING"), 1);
    s.shutdown().await;
    // Restart: the dead boot's claim is released at once, and the parent's
    // first turn end drains it — one batch, delivered once.
    let s = common::start(&dir.path().join("data")).await;
    wait_inbox(&s, &parent, "the claim released", |i| {
        count(i, "events", "PENDING") == 1
    })
    .await;
    start(&s, &parent).await;
    wait_for(&s, &parent, "the parent", |t| t.contains("parent ready")).await;
    type_line(&s, &parent, "!stop_hook").await;
    let done = wait_inbox(&s, &parent, "delivered", |i| {
        count(i, "events", "DELIVERED") == 1
    })
    .await;
    assert_eq!(done["batches"].as_array().unwrap().len(), 1, "{done:#}");
    let footer = format!(
        "[Tower durable batch: {}]",
        done["batches"][0]["id"].as_str().unwrap()
    );
    wait_input(&log, "the batch typed", &footer).await;
    type_line(&s, &parent, "marker-after-batch").await;
    let got = wait_input(&log, "the marker", "marker-after-batch").await;
    assert_eq!(
        got.iter().filter(|l| l.contains(&footer)).count(),
        1,
        "typed once: {got:#?}"
    );
    // The parent's next turn end is the receipt: the batch is resolved.
    type_line(&s, &parent, "!stop_hook").await;
    let i = wait_inbox(&s, &parent, "resolved by the turn end", |i| {
        count(i, "events", "CONSUMED") == 1
    })
    .await;
    assert_eq!(i["batches"][0]["state"], "RESOLVED");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_blocked_child_gets_its_parents_decision_typed_even_after_its_terminal_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let log = dir.path().join("parent-inputs.log");
    let child_log = dir.path().join("child-inputs.log");
    let parent = double_task_log(&s, "parent", "stop_hook", None, &log).await;
    start(&s, &parent).await;
    wait_for(&s, &parent, "the parent idle", |t| t.contains("STOP OK")).await;
    let child = double_task_log(
        &s,
        "child",
        "session_start\nstop_hook Blocked: use library A or B?",
        Some(&parent),
        &child_log,
    )
    .await;
    start(&s, &child).await;
    // The parent is idle at its turn end: the child's question reaches it at once.
    wait_input(&log, "the review batch", "Blocked: use library A or B?").await;
    let i = inbox(&s, &parent).await;
    assert!(
        i["batches"][0]["prompt"]
            .as_str()
            .unwrap()
            .contains("Blocked: use library A or B?")
    );
    // The parent decides and types its answer into the child's terminal.
    let call = |key: &str| {
        format!(
            "!mcp send_task_terminal_input {}",
            json!({"taskId": child, "text": "use library B", "idempotencyKey": key})
        )
    };
    type_line(&s, &parent, &call("decision-1")).await;
    wait_for(&s, &child, "the decision", |t| {
        t.contains("GOT INPUT: use library B")
    })
    .await;
    // The child's terminal goes away; the next decision resumes it first.
    type_line(&s, &child, "/exit").await;
    for _ in 0..100 {
        if execution_of(&s, &child).await["status"] == "COMPLETED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    type_line(&s, &parent, &call("decision-2")).await;
    wait_for(&s, &parent, "the tool result", |t| {
        t.matches("MCP OK").count() >= 2
    })
    .await;
    wait_for(&s, &child, "the resumed child typed", |t| {
        t.contains("RESUMED") && t.contains("GOT INPUT: use library B")
    })
    .await;
    let got = inputs(&child_log);
    assert_eq!(
        got.iter().filter(|l| *l == "use library B").count(),
        2,
        "once per decision: {got:#?}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_project_gets_one_resident_workbench_on_demand_started_with_its_directive() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let path = dir.path().join("proj");
    std::fs::create_dir_all(&path).unwrap();
    let (status, project) = s
        .admin(
            "POST",
            "/api/projects",
            Some(json!({"name": "demo", "path": path})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let pid = project["id"].as_str().unwrap().to_string();
    let (status, _) = s
        .admin("GET", &format!("/api/projects/{pid}/workbench"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let body = json!({"agent": {"provider": "claude", "command": [common::double().display().to_string()]}});
    let url = format!("/api/projects/{pid}/workbench");
    let (a, b) = tokio::join!(
        s.admin("POST", &url, Some(body.clone())),
        s.admin("POST", &url, Some(body.clone())),
    );
    let mut statuses = [a.0, b.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::CREATED],
        "{} {}",
        a.1,
        b.1
    );
    assert_eq!(a.1["id"], b.1["id"], "one Workbench per project");
    assert!(a.1["parentTaskId"].is_null());
    let wb = a.1["id"].as_str().unwrap().to_string();
    let (status, got) = s.admin("GET", &url, None).await;
    assert_eq!(
        (status, got["id"].as_str()),
        (StatusCode::OK, Some(wb.as_str()))
    );
    let (status, _) = s
        .admin(
            "POST",
            "/api/projects/cnope00000000000000000000/workbench",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    start(&s, &wb).await;
    wait_for(&s, &wb, "the Workbench directive", |t| {
        t.contains("SYSTEM PROMPT: You are this project's resident Workbench")
    })
    .await;
    s.shutdown().await;
}

#[tokio::test]
async fn the_notification_center_filters_messages_from_children() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(&dir.path().join("data")).await;
    let parent = s.task("parent").await;
    let (status, child) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "child", "parentTaskId": parent,
            "agent": {"provider": "command", "command": ["true"]}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{child}");
    let child = child["id"].as_str().unwrap().to_string();
    for (task, q) in [(&parent, "from the parent"), (&child, "from the child")] {
        let (status, body) = s
            .admin(
                "POST",
                "/api/internal/harness/ask",
                Some(json!({"taskId": task, "question": q})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (_, all) = s.admin("GET", "/api/harness/messages?view=all", None).await;
    assert_eq!(all["rows"].as_array().unwrap().len(), 2, "{all}");
    let (_, kids) = s
        .admin("GET", "/api/harness/messages?view=all&from=children", None)
        .await;
    let rows = kids["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{kids}");
    assert_eq!(rows[0]["content"], "from the child");
    let (status, bad) = s
        .admin("GET", "/api/harness/messages?from=aliens", None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    assert_eq!(bad["field"], "from");
    s.shutdown().await;
}
