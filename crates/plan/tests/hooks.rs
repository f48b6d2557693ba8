//! The 58 hook behaviours of docs/plan-loop.md A14, driving the real binary
//! (`harness-plan-cli hook <event>`) with a clean environment and `{"cwd": tmp}`.

mod common;

use common::Project;
use serde_json::{Value, json};

const EVENTS: [&str; 4] = ["stop", "session-start", "subagent-stop", "teammate-idle"];

fn payload(p: &Project) -> Value {
    json!({"cwd": p.path()})
}

fn with(p: &Project, extra: Value) -> Value {
    let mut v = payload(p);
    for (k, x) in extra.as_object().expect("obj") {
        v[k] = x.clone();
    }
    v
}

fn active(tasks: Value) -> Project {
    let p = Project::plain();
    p.write_state(tasks, json!({}));
    p.activate();
    p
}

fn active_cfg(tasks: Value, extra: Value) -> Project {
    let p = Project::plain();
    p.write_state(tasks, extra);
    p.activate();
    p
}

fn is_block(r: &common::Run) -> bool {
    r.code == 0 && !r.stdout.trim().is_empty() && r.json()["decision"] == "block"
}

fn is_allow(r: &common::Run) -> bool {
    r.code == 0 && r.stdout.trim().is_empty()
}

fn reason(r: &common::Run) -> String {
    r.json()["reason"].as_str().unwrap_or_default().to_string()
}

fn context(r: &common::Run) -> String {
    let v = r.json();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn pending_p0() -> Value {
    json!([{"id":"t1","title":"First task","status":"pending","priority":"P0","depends_on":[]}])
}

// ---------- activation guard (8) ----------

#[test]
fn guard_inactive_stop_allows() {
    let p = Project::plain();
    p.write_state(pending_p0(), json!({}));
    assert!(is_allow(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn guard_inactive_session_start_silent() {
    let p = Project::plain();
    p.write_state(pending_p0(), json!({}));
    assert!(is_allow(&p.hook("session-start", &payload(&p), &[])));
}

#[test]
fn guard_inactive_subagent_stop_allows() {
    let p = Project::plain();
    p.write_state(
        json!([{"id":"t1","title":"x","status":"in_progress"}]),
        json!({}),
    );
    assert!(is_allow(&p.hook("subagent-stop", &payload(&p), &[])));
}

#[test]
fn guard_inactive_teammate_idle_silent() {
    let p = Project::plain();
    p.write_state(pending_p0(), json!({}));
    let r = p.hook("teammate-idle", &payload(&p), &[]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.trim().is_empty());
}

#[test]
fn guard_active_stop_blocks() {
    let p = active(pending_p0());
    assert!(is_block(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn guard_active_session_start_injects_context() {
    let p = active(pending_p0());
    let r = p.hook("session-start", &payload(&p), &[]);
    assert!(context(&r).starts_with("HARNESS: "));
}

#[test]
fn guard_active_teammate_idle_exit2() {
    let p = active(pending_p0());
    let r = p.hook("teammate-idle", &payload(&p), &[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("HARNESS"));
}

#[test]
fn guard_active_subagent_stop_blocks_in_progress() {
    let p = active(json!([{"id":"t1","title":"Busy","status":"in_progress"}]));
    assert!(is_block(&p.hook("subagent-stop", &payload(&p), &[])));
}

// ---------- no root (4) ----------

#[test]
fn no_root_all_hooks_silent() {
    let p = Project::plain();
    for ev in EVENTS {
        let r = p.hook(ev, &payload(&p), &[]);
        assert_eq!(r.code, 0, "{ev}");
        assert!(r.stdout.trim().is_empty(), "{ev}");
    }
}

#[test]
fn no_root_even_with_marker() {
    let p = Project::plain();
    p.activate();
    for ev in EVENTS {
        assert!(is_allow(&p.hook(ev, &payload(&p), &[])), "{ev}");
    }
}

#[test]
fn no_root_teammate_idle_no_stderr() {
    let p = Project::plain();
    let r = p.hook("teammate-idle", &payload(&p), &[]);
    assert_eq!((r.code, r.stderr.trim()), (0, ""));
}

#[test]
fn no_root_nonexistent_cwd() {
    let p = Project::plain();
    let r = p.hook("stop", &json!({"cwd": "/nonexistent/harness/dir"}), &[]);
    assert!(is_allow(&r));
}

// ---------- stop logic (13) ----------

#[test]
fn stop_all_completed_allows_and_flips_markers() {
    let p = active(json!([{"id":"t1","title":"a","status":"completed"}]));
    assert!(is_allow(&p.hook("stop", &payload(&p), &[])));
    assert!(!p.file(".harness-active").exists());
    assert!(p.file(".harness-reflect").exists());
}

#[test]
fn stop_pending_blocked_by_dead_dependency_allows() {
    let p = active(json!([
        {"id":"t1","title":"dead","status":"failed","attempts":3,"max_attempts":3},
        {"id":"t2","title":"waits","status":"pending","depends_on":["t1"]}
    ]));
    assert!(is_allow(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn stop_retryable_blocks_with_title() {
    let p = active(
        json!([{"id":"t1","title":"Retry me","status":"failed","attempts":1,"max_attempts":3}]),
    );
    let r = p.hook("stop", &payload(&p), &[]);
    assert!(is_block(&r));
    assert!(reason(&r).contains("Retry me"));
}

#[test]
fn stop_failed_at_max_allows() {
    let p =
        active(json!([{"id":"t1","title":"x","status":"failed","attempts":3,"max_attempts":3}]));
    assert!(is_allow(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn stop_in_progress_blocks() {
    let p = active(json!([{"id":"t1","title":"x","status":"in_progress"}]));
    assert!(is_block(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn stop_max_sessions_reached_allows() {
    let p = active_cfg(
        pending_p0(),
        json!({"session_count":5,"session_config":{"max_sessions":5}}),
    );
    assert!(is_allow(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn stop_max_tasks_per_session_reached_allows() {
    let p = active_cfg(
        json!([{"id":"task-1","title":"done","status":"completed"},
               {"id":"task-2","title":"next","status":"pending"}]),
        json!({"session_count":2,"session_config":{"max_tasks_per_session":1}}),
    );
    std::fs::write(
        p.file("harness-progress.txt"),
        "[2026-01-01T00:00:00Z] [SESSION-2] Completed [task-1] (commit abc)\n",
    )
    .expect("log");
    assert!(is_allow(&p.hook("stop", &payload(&p), &[])));
}

#[test]
fn stop_concurrent_other_workers_claim_allows() {
    let p = active_cfg(
        json!([{"id":"t1","title":"x","status":"in_progress","claimed_by":"worker-a"}]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.hook("stop", &payload(&p), &[("HARNESS_WORKER_ID", "worker-b")]);
    assert!(is_allow(&r));
    // another worker still holds a task: the marker stays (A15.15 fix)
    assert!(p.file(".harness-active").exists());
}

#[test]
fn stop_names_highest_priority_next() {
    let p = active(json!([
        {"id":"t1","title":"Low prio","status":"pending","priority":"P2"},
        {"id":"t2","title":"Urgent thing","status":"pending","priority":"P0"}
    ]));
    let r = reason(&p.hook("stop", &payload(&p), &[]));
    assert!(r.contains("next=t2: Urgent thing"), "{r}");
}

#[test]
fn stop_safety_valve_allows_after_many_blocks() {
    let p = active(pending_p0());
    std::fs::write(p.file(".harness-stop-counter"), "9,0").expect("counter");
    let r = p.hook("stop", &with(&p, json!({"stop_hook_active": true})), &[]);
    assert!(is_allow(&r));
    assert!(r.stderr.contains("WARN"));
}

#[test]
fn stop_few_blocks_still_blocks() {
    let p = active(pending_p0());
    std::fs::write(p.file(".harness-stop-counter"), "2,0").expect("counter");
    let r = p.hook("stop", &with(&p, json!({"stop_hook_active": true})), &[]);
    assert!(is_block(&r));
}

#[test]
fn stop_progress_resets_block_counter() {
    let p = active(json!([
        {"id":"t1","title":"a","status":"completed"},
        {"id":"t2","title":"b","status":"pending"}
    ]));
    std::fs::write(p.file(".harness-stop-counter"), "7,0").expect("counter");
    assert!(is_block(&p.hook("stop", &payload(&p), &[])));
    let c = std::fs::read_to_string(p.file(".harness-stop-counter")).expect("counter");
    assert_eq!(c.trim(), "1,1");
}

#[test]
fn stop_corrupt_json_with_stop_hook_active_allows_with_warn() {
    let p = Project::plain();
    std::fs::write(p.file("harness-tasks.json"), "{not json").expect("w");
    p.activate();
    let r = p.hook("stop", &with(&p, json!({"stop_hook_active": true})), &[]);
    assert!(is_allow(&r));
    assert!(r.stderr.contains("WARN"));
}

// ---------- session start (5) ----------

#[test]
fn session_start_counts() {
    let p = active(json!([
        {"id":"t1","title":"a","status":"completed"},
        {"id":"t2","title":"b","status":"pending"},
        {"id":"t3","title":"c","status":"failed"}
    ]));
    let c = context(&p.hook("session-start", &payload(&p), &[]));
    for s in ["completed=1", "pending=1", "failed=1", "total=3"] {
        assert!(c.contains(s), "{s} in {c}");
    }
}

#[test]
fn session_start_next_task() {
    let p = active(json!([
        {"id":"t1","title":"a","status":"completed"},
        {"id":"t2","title":"Second thing","status":"pending"}
    ]));
    let c = context(&p.hook("session-start", &payload(&p), &[]));
    assert!(c.contains("next=t2: Second thing"), "{c}");
}

#[test]
fn session_start_empty_list() {
    let p = active(json!([]));
    let c = context(&p.hook("session-start", &payload(&p), &[]));
    assert!(c.contains("total=0"), "{c}");
}

#[test]
fn session_start_corrupt_json_reports_error() {
    let p = Project::plain();
    std::fs::write(p.file("harness-tasks.json"), "{oops").expect("w");
    p.activate();
    let c = context(&p.hook("session-start", &payload(&p), &[]));
    assert!(c.contains("error"), "{c}");
    assert!(c.contains("line 1"), "JSON position in {c}");
}

#[test]
fn session_start_non_numeric_attempts() {
    let p = active(
        json!([{"id":"t1","title":"a","status":"failed","attempts":"many","max_attempts":"x"}]),
    );
    let c = context(&p.hook("session-start", &payload(&p), &[]));
    assert!(c.contains("total=1"), "{c}");
}

#[test]
fn session_start_last_log_prefers_stats_and_truncates() {
    let p = active(pending_p0());
    let long = "x".repeat(400);
    std::fs::write(
        p.file("harness-progress.txt"),
        format!("[2026-01-01T00:00:00Z] [SESSION-1] STATS tasks_total=1 {long}\n[2026-01-01T00:00:01Z] [SESSION-1] WARN later\n"),
    )
    .expect("log");
    let c = context(&p.hook("session-start", &payload(&p), &[]));
    let last = c.split("last_log=").nth(1).expect("last_log");
    assert!(last.contains(" STATS "));
    assert_eq!(last.chars().count(), 220);
    assert!(last.ends_with("..."));
}

// ---------- teammate idle (6) ----------

#[test]
fn teammate_owns_in_progress_exit2() {
    let p = active(json!([{"id":"t1","title":"x","status":"in_progress","claimed_by":"alice"}]));
    let r = p.hook(
        "teammate-idle",
        &with(&p, json!({"teammate_name":"alice"})),
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("t1"));
}

#[test]
fn teammate_other_claim_nothing_pending_exit0() {
    let p = active(json!([{"id":"t1","title":"x","status":"in_progress","claimed_by":"bob"}]));
    let r = p.hook(
        "teammate-idle",
        &with(&p, json!({"teammate_name":"alice"})),
        &[],
    );
    assert_eq!(r.code, 0);
}

#[test]
fn teammate_pending_exit2() {
    let p = active(json!([{"id":"t7","title":"x","status":"pending"}]));
    let r = p.hook("teammate-idle", &payload(&p), &[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("t7"));
}

#[test]
fn teammate_all_done_exit0_silent() {
    let p = active(json!([{"id":"t1","title":"x","status":"completed"}]));
    let r = p.hook("teammate-idle", &payload(&p), &[]);
    assert_eq!((r.code, r.stderr.trim()), (0, ""));
}

#[test]
fn teammate_retryable_exit2() {
    let p =
        active(json!([{"id":"t1","title":"x","status":"failed","attempts":1,"max_attempts":3}]));
    assert_eq!(p.hook("teammate-idle", &payload(&p), &[]).code, 2);
}

#[test]
fn teammate_worker_env_matches_claim() {
    let p = active(json!([{"id":"t1","title":"x","status":"in_progress","claimed_by":"w9"}]));
    let r = p.hook(
        "teammate-idle",
        &payload(&p),
        &[("HARNESS_WORKER_ID", "w9")],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("t1"));
}

// ---------- subagent stop (8) ----------

#[test]
fn subagent_in_progress_blocks_with_title() {
    let p = active(json!([{"id":"t1","title":"Deep work","status":"in_progress"}]));
    let r = p.hook("subagent-stop", &payload(&p), &[]);
    assert!(is_block(&r));
    assert!(reason(&r).contains("Deep work"));
}

#[test]
fn subagent_only_gated_pending_allows() {
    let p = active(json!([
        {"id":"t1","title":"a","status":"pending","depends_on":["t2"]},
        {"id":"t2","title":"b","status":"pending","depends_on":["t3"]},
        {"id":"t3","title":"c","status":"pending"}
    ]));
    assert!(is_allow(&p.hook("subagent-stop", &payload(&p), &[])));
}

#[test]
fn subagent_all_done_allows() {
    let p = active(json!([{"id":"t1","title":"a","status":"completed"}]));
    assert!(is_allow(&p.hook("subagent-stop", &payload(&p), &[])));
}

#[test]
fn subagent_stop_hook_active_allows() {
    let p = active(json!([{"id":"t1","title":"a","status":"in_progress"}]));
    let r = p.hook(
        "subagent-stop",
        &with(&p, json!({"stop_hook_active": true})),
        &[],
    );
    assert!(is_allow(&r));
}

#[test]
fn subagent_dead_dependency_allows() {
    let p = active(json!([
        {"id":"t1","title":"dead","status":"failed","attempts":3,"max_attempts":3},
        {"id":"t2","title":"b","status":"pending","depends_on":["t1"]}
    ]));
    assert!(is_allow(&p.hook("subagent-stop", &payload(&p), &[])));
}

#[test]
fn subagent_concurrent_own_claim_blocks() {
    let p = active_cfg(
        json!([{"id":"t1","title":"Mine","status":"in_progress","claimed_by":"w1"}]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.hook(
        "subagent-stop",
        &payload(&p),
        &[("HARNESS_WORKER_ID", "w1")],
    );
    assert!(is_block(&r));
    assert!(reason(&r).contains("Mine"));
}

#[test]
fn subagent_concurrent_other_claim_allows() {
    let p = active_cfg(
        json!([{"id":"t1","title":"Theirs","status":"in_progress","claimed_by":"w2"}]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.hook(
        "subagent-stop",
        &payload(&p),
        &[("HARNESS_WORKER_ID", "w1")],
    );
    assert!(is_allow(&r));
}

#[test]
fn subagent_concurrent_no_identity_blocks() {
    let p = active_cfg(
        json!([{"id":"t1","title":"x","status":"in_progress","claimed_by":"w2"}]),
        json!({"session_config":{"concurrency_mode":"concurrent"}}),
    );
    let r = p.hook("subagent-stop", &payload(&p), &[]);
    assert!(is_block(&r));
    assert!(reason(&r).contains("worker identity"));
}

// ---------- edge cases (4) ----------

#[test]
fn edge_empty_stdin_never_crashes() {
    let p = active(pending_p0());
    for ev in EVENTS {
        let r = p.hook_raw(ev, "");
        assert!(r.code == 0 || r.code == 2, "{ev}: {}", r.code);
        assert!(!r.stderr.contains("panicked"), "{ev}");
    }
}

#[test]
fn edge_invalid_stdin_never_crashes() {
    let p = active(pending_p0());
    for ev in EVENTS {
        let r = p.hook_raw(ev, "{not json");
        assert!(r.code == 0 || r.code == 2, "{ev}: {}", r.code);
        assert!(!r.stderr.contains("panicked"), "{ev}");
    }
}

#[test]
fn edge_state_root_env_overrides_missing_cwd() {
    let p = active(pending_p0());
    let root = p.path().to_string_lossy().into_owned();
    let r = p.hook(
        "stop",
        &json!({"cwd": "/definitely/not/here"}),
        &[("HARNESS_STATE_ROOT", root.as_str())],
    );
    assert!(is_block(&r));
}

#[test]
fn edge_tasks_not_a_list_blocks() {
    let p = Project::plain();
    std::fs::write(
        p.file("harness-tasks.json"),
        r#"{"version":2,"tasks":"not a list"}"#,
    )
    .expect("w");
    p.activate();
    let r = p.hook("stop", &payload(&p), &[]);
    assert!(is_block(&r));
    assert!(reason(&r).contains("corrupt"));
}

// ---------- self-reflect (10) ----------

fn session_payload(p: &Project, sid: &str) -> Value {
    with(p, json!({"session_id": sid}))
}

fn unique_sid(tag: &str) -> String {
    format!(
        "test-{tag}-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    )
    .replace([' ', ':', '{', '}', ','], "")
}

fn cleanup_counter(sid: &str) {
    let safe: String = sid
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let _ = std::fs::remove_file(std::env::temp_dir().join(format!("claude-reflect-{safe}")));
}

#[test]
fn reflect_no_root_noop() {
    let p = Project::plain();
    assert!(is_allow(&p.hook(
        "self-reflect",
        &session_payload(&p, &unique_sid("a")),
        &[]
    )));
}

#[test]
fn reflect_active_without_marker_noop() {
    let p = active(pending_p0());
    assert!(is_allow(&p.hook(
        "self-reflect",
        &session_payload(&p, &unique_sid("b")),
        &[]
    )));
}

#[test]
fn reflect_old_file_without_marker_noop() {
    let p = Project::plain();
    p.write_state(
        json!([{"id":"t1","title":"a","status":"completed"}]),
        json!({}),
    );
    assert!(is_allow(&p.hook(
        "self-reflect",
        &session_payload(&p, &unique_sid("c")),
        &[]
    )));
}

#[test]
fn reflect_marker_blocks() {
    let p = active(json!([]));
    std::fs::write(p.file(".harness-reflect"), "").expect("m");
    let sid = unique_sid("d");
    let r = p.hook("self-reflect", &session_payload(&p, &sid), &[]);
    assert!(is_block(&r));
    assert!(reason(&r).contains("Self-Reflect"));
    cleanup_counter(&sid);
}

#[test]
fn reflect_counter_increments() {
    let p = active(json!([]));
    std::fs::write(p.file(".harness-reflect"), "").expect("m");
    let sid = unique_sid("e");
    let r1 = p.hook("self-reflect", &session_payload(&p, &sid), &[]);
    let r2 = p.hook("self-reflect", &session_payload(&p, &sid), &[]);
    assert!(reason(&r1).contains("1/5"));
    assert!(reason(&r2).contains("2/5"));
    cleanup_counter(&sid);
}

#[test]
fn reflect_counter_at_max_allows_and_removes_marker() {
    let p = active(json!([]));
    std::fs::write(p.file(".harness-reflect"), "").expect("m");
    let sid = unique_sid("f");
    std::fs::write(
        std::env::temp_dir().join(format!("claude-reflect-{sid}")),
        "5",
    )
    .expect("c");
    let r = p.hook("self-reflect", &session_payload(&p, &sid), &[]);
    assert!(is_allow(&r));
    assert!(!p.file(".harness-reflect").exists());
    cleanup_counter(&sid);
}

#[test]
fn reflect_disabled_by_zero_max() {
    let p = active(json!([]));
    std::fs::write(p.file(".harness-reflect"), "").expect("m");
    let r = p.hook(
        "self-reflect",
        &session_payload(&p, &unique_sid("g")),
        &[("REFLECT_MAX_ITERATIONS", "0")],
    );
    assert!(is_allow(&r));
}

#[test]
fn reflect_without_session_id_noop() {
    let p = active(json!([]));
    std::fs::write(p.file(".harness-reflect"), "").expect("m");
    assert!(is_allow(&p.hook("self-reflect", &payload(&p), &[])));
}

#[test]
fn reflect_empty_stdin_exit0() {
    let p = active(json!([]));
    let r = p.hook_raw("self-reflect", "");
    assert_eq!(r.code, 0);
    assert!(!r.stderr.contains("panicked"));
}

#[test]
fn reflect_respects_state_root_env_and_reads_transcript() {
    let p = active(json!([]));
    std::fs::write(p.file(".harness-reflect"), "").expect("m");
    let transcript = p.file("t.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Build the widget\"}}\n",
    )
    .expect("t");
    let sid = unique_sid("h");
    let root = p.path().to_string_lossy().into_owned();
    let r = p.hook(
        "self-reflect",
        &json!({"cwd": "/nowhere", "session_id": sid, "transcript_path": transcript}),
        &[("HARNESS_STATE_ROOT", root.as_str())],
    );
    assert!(is_block(&r));
    assert!(reason(&r).contains("Build the widget"));
    cleanup_counter(&sid);
}
