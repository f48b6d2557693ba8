//! The messaging state machine through the core.

use std::{collections::HashSet, sync::Arc};

use chrono::{Duration, Utc};
use harness_core::{
    CoreError, Harness, HarnessConfig,
    auth::Identity,
    ids,
    messaging::ResumeMode,
    model::{ExecutionStatus, MessageKind, MessageQuery, MessageState, MessageView},
    store::{NewAsk, Store},
    tasks::CreateTask,
};

use super::{Backend, support::ADMIN};

struct Db {
    store: Arc<dyn Store>,
    harness: Harness,
}

/// The core over `store`, without the per-task rate limits.
fn unlimited(store: Arc<dyn Store>) -> Harness {
    let mut config = HarnessConfig::new(ids::token_hash(ADMIN));
    // Some stories ask and notify hundreds of times on one task: past the
    // per-task rate limit, which is not what they test (`rate_limit`).
    let unbounded = harness_core::rate_limit::Rate {
        burst: u32::MAX,
        every: std::time::Duration::from_secs(1),
    };
    config.rate_limits = harness_core::rate_limit::RateLimits {
        ask: unbounded,
        notify: unbounded,
        push: unbounded,
    };
    Harness::new(store, config)
}

/// The core over another store on the backend's database.
async fn db(b: &Backend) -> Db {
    let store = b.another().await;
    let harness = unlimited(store.clone());
    Db { store, harness }
}

async fn task(h: &Harness, title: &str) -> String {
    h.tasks()
        .create_task(CreateTask {
            title: Some(title.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .task
        .id
}

async fn exec_status(h: &Harness, task_id: &str) -> Option<ExecutionStatus> {
    h.tasks()
        .get_task(task_id)
        .await
        .unwrap()
        .execution
        .map(|e| e.status)
}

pub async fn ask_cancels_the_previous_open_ask_and_parks_running_executions(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let (exec, _) = h.tasks().begin_execution(&t).await.unwrap();
    let first = h.asks().ask(&t, Some("first?")).await.unwrap();
    assert_eq!(first.paused, vec![exec.id.clone()]);
    assert!(first.no_channel_configured);
    assert_eq!(exec_status(h, &t).await, Some(ExecutionStatus::Paused));
    let second = h.asks().ask(&t, Some("second?")).await.unwrap();
    assert_eq!(second.cancelled, vec![first.request_id.clone()]);
    assert!(second.paused.is_empty(), "already parked");
    let old = db.store_message(&first.request_id).await;
    assert_eq!(old.state, MessageState::Cancelled);
    let new = db.store_message(&second.request_id).await;
    assert_eq!(
        (new.kind, new.state),
        (MessageKind::Ask, MessageState::Open)
    );
    assert_eq!(
        new.execution_id, None,
        "no RUNNING execution at the second ask"
    );
    assert_eq!(old.execution_id.as_deref(), Some(exec.id.as_str()));
    let pending = h.asks().pending(&t).await.unwrap();
    assert_eq!(
        pending.request_id.as_deref(),
        Some(second.request_id.as_str())
    );
    assert_eq!(pending.question.as_deref(), Some("second?"));
    assert!(h.tasks().get_task(&t).await.unwrap().open_ask);
}

impl Db {
    async fn store_message(&self, id: &str) -> harness_core::model::Message {
        self.store.get_message(id).await.unwrap().unwrap()
    }
}

pub async fn notify_lines_are_closed_and_never_pending(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let m = h.asks().notify(&t, Some("50% done")).await.unwrap();
    assert_eq!(
        (m.kind, m.state),
        (MessageKind::Notify, MessageState::Closed)
    );
    assert!(!h.asks().pending(&t).await.unwrap().pending);
    assert_eq!(h.asks().pending_count().await.unwrap(), 0);
}

pub async fn reply_answers_resumes_dedupes_and_refuses_without_open_ask(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    // No ask yet: the reference's 409.
    let err = h
        .asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("hello"),
            true,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::Conflict(ref m) if m == "No open ask for this task"));
    h.tasks().begin_execution(&t).await.unwrap();
    let ask = h.asks().ask(&t, Some("which db?")).await.unwrap();
    let out = h
        .asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("sqlite"),
            false,
        )
        .await
        .unwrap();
    assert_eq!(out.request_id, ask.request_id);
    assert_eq!(out.mode, ResumeMode::Continued);
    assert!(!out.deduped);
    assert_eq!(exec_status(h, &t).await, Some(ExecutionStatus::Running));
    let m = db.store_message(&ask.request_id).await;
    assert_eq!(m.state, MessageState::Answered);
    assert_eq!(m.reply_text.as_deref(), Some("sqlite"));
    assert!(m.replied_at.is_some());
    // The same reply again is a duplicate of the winner.
    let again = h
        .asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("sqlite"),
            false,
        )
        .await
        .unwrap();
    assert!(again.deduped);
    assert_eq!(again.request_id, ask.request_id);
    // A different reply has nothing to answer.
    assert!(matches!(
        h.asks()
            .reply(
                &harness_core::auth::Person::admin(),
                &t,
                Some("postgres"),
                true
            )
            .await
            .unwrap_err(),
        CoreError::Conflict(_)
    ));
    // Unknown task.
    assert!(matches!(
        h.asks()
            .reply(
                &harness_core::auth::Person::admin(),
                &ids::new_id(),
                Some("x"),
                true
            )
            .await
            .unwrap_err(),
        CoreError::NotFound(_)
    ));
}

pub async fn reply_without_execution_reports_not_running(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    h.asks().ask(&t, Some("q")).await.unwrap();
    let out = h
        .asks()
        .reply(&harness_core::auth::Person::admin(), &t, Some("a"), true)
        .await
        .unwrap();
    assert_eq!(out.mode, ResumeMode::NotRunning);
    assert!(!out.injected);
}

/// 50 replies race for real: a multi-threaded runtime, released together by
/// a barrier, spread over four independent store handles on the same file
/// (four writer connections, as several processes would have), so the
/// conditional update, not one connection's queue, picks the winner.
pub async fn fifty_concurrent_replies_exactly_one_wins(b: &Backend) {
    let db = db(b).await;
    let h = db.harness.clone();
    let t = task(&h, "race").await;
    h.tasks().begin_execution(&t).await.unwrap();
    let ask = h.asks().ask(&t, Some("pick one")).await.unwrap();
    let mut handles = vec![h.clone()];
    for _ in 0..3 {
        handles.push(Harness::new(
            b.another().await,
            HarnessConfig::new(ids::token_hash(ADMIN)),
        ));
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let mut joins = Vec::new();
    for i in 0..50 {
        let h = handles[i % handles.len()].clone();
        let t = t.clone();
        let barrier = barrier.clone();
        // Half send the same text, half distinct texts.
        let text = if i % 2 == 0 {
            "same".to_string()
        } else {
            format!("text {i}")
        };
        joins.push(tokio::spawn(async move {
            barrier.wait().await;
            (
                text.clone(),
                h.asks()
                    .reply(&harness_core::auth::Person::admin(), &t, Some(&text), false)
                    .await,
            )
        }));
    }
    let mut winners = Vec::new();
    let mut resumes = 0;
    let mut deduped = 0;
    let mut conflicts = 0;
    for j in joins {
        let (text, result) = j.await.unwrap();
        match result {
            Ok(out) if !out.deduped => {
                resumes += out.resumed.len();
                winners.push(text);
            }
            Ok(_) => deduped += 1,
            Err(CoreError::Conflict(_)) => conflicts += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one winner");
    assert_eq!(resumes, 1, "exactly one resume");
    let m = db.store_message(&ask.request_id).await;
    assert_eq!(m.state, MessageState::Answered);
    assert_eq!(m.reply_text.as_deref(), Some(winners[0].as_str()));
    // Losers: duplicates of the winning text are deduped, the rest conflict.
    if winners[0] == "same" {
        assert_eq!((deduped, conflicts), (24, 25));
    } else {
        assert_eq!((deduped, conflicts), (0, 49));
    }
    assert_eq!(exec_status(&h, &t).await, Some(ExecutionStatus::Running));
}

pub async fn ignore_only_open_asks_and_dismiss_only_non_asks(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let ask = h.asks().ask(&t, Some("q")).await.unwrap();
    let note = h.asks().notify(&t, Some("fyi")).await.unwrap();
    assert!(matches!(
        h.asks().dismiss(&ask.request_id).await.unwrap_err(),
        CoreError::Conflict(_)
    ));
    assert!(matches!(
        h.asks().ignore(&note.id).await.unwrap_err(),
        CoreError::Conflict(_)
    ));
    assert_eq!(
        h.asks().ignore(&ask.request_id).await.unwrap().state,
        MessageState::Ignored
    );
    assert!(matches!(
        h.asks().ignore(&ask.request_id).await.unwrap_err(),
        CoreError::Conflict(_)
    ));
    h.asks().dismiss(&note.id).await.unwrap();
    assert!(matches!(
        h.asks().dismiss(&note.id).await.unwrap_err(),
        CoreError::NotFound(_)
    ));
    assert!(matches!(
        h.asks().ignore(&ids::new_id()).await.unwrap_err(),
        CoreError::NotFound(_)
    ));
    assert!(h.asks().ignore("not-an-id").await.is_err());
}

pub async fn sweep_expires_only_stale_open_asks(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t1 = task(h, "old").await;
    let t2 = task(h, "new").await;
    let old = db
        .store
        .record_ask(NewAsk {
            id: ids::new_id(),
            task_id: t1.clone(),
            question: "stale".into(),
            now: Utc::now() - Duration::days(15),
            idempotency_key: None,
            evidence: None,
        })
        .await
        .unwrap();
    let fresh = h.asks().ask(&t2, Some("fresh")).await.unwrap();
    assert_eq!(h.asks().sweep_expired().await.unwrap(), 1);
    assert_eq!(
        db.store_message(&old.message.id).await.state,
        MessageState::Expired
    );
    assert_eq!(
        db.store_message(&fresh.request_id).await.state,
        MessageState::Open
    );
    assert_eq!(h.asks().sweep_expired().await.unwrap(), 0, "idempotent");
}

pub async fn keyset_pages_cover_every_row_once_in_order(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "Paging task").await;
    for i in 0..250 {
        h.asks()
            .notify(&t, Some(&format!("line {i}")))
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = h
            .asks()
            .list_messages(MessageQuery {
                view: MessageView::All,
                cursor: cursor
                    .as_deref()
                    .and_then(harness_core::model::Cursor::decode),
                limit: 100,
                ..Default::default()
            })
            .await
            .unwrap();
        seen.extend(page.rows.into_iter().map(|r| r.message));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(seen.len(), 250);
    let unique: HashSet<_> = seen.iter().map(|m| m.id.clone()).collect();
    assert_eq!(unique.len(), 250);
    assert!(
        seen.windows(2)
            .all(|w| (w[0].created_at, &w[0].id) > (w[1].created_at, &w[1].id))
    );
    assert_eq!(seen[0].content, "line 249");
    // Search and views.
    let found = h
        .asks()
        .list_messages(MessageQuery {
            view: MessageView::All,
            search: Some("line 12".into()),
            limit: 500,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(found.rows.len(), 11, "line 12 and line 120..129");
    let by_title = h
        .asks()
        .list_messages(MessageQuery {
            view: MessageView::All,
            search: Some("paging".into()),
            limit: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(by_title.rows.len(), 5);
    let wildcard = h
        .asks()
        .list_messages(MessageQuery {
            view: MessageView::All,
            search: Some("%".into()),
            limit: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(wildcard.rows.is_empty(), "LIKE wildcards are escaped");
    let pending = h
        .asks()
        .list_messages(MessageQuery {
            view: MessageView::Pending,
            limit: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(pending.rows.is_empty());
}

pub async fn an_open_ask_survives_reopening_the_database(b: &Backend) {
    let db = db(b).await;
    let t = task(&db.harness, "durable").await;
    db.harness.tasks().begin_execution(&t).await.unwrap();
    let ask = db
        .harness
        .asks()
        .ask(&t, Some("still there?"))
        .await
        .unwrap();
    // Closed: nothing of it is held in memory any more.
    drop(db);
    let reopened = self::db(b).await;
    let pending = reopened.harness.asks().pending(&t).await.unwrap();
    assert_eq!(pending.request_id.as_deref(), Some(ask.request_id.as_str()));
    let out = reopened
        .harness
        .asks()
        .reply(&harness_core::auth::Person::admin(), &t, Some("yes"), false)
        .await
        .unwrap();
    assert_eq!(out.mode, ResumeMode::Continued);
}

pub async fn bad_inputs_are_rejected_with_the_field_and_nothing_written(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let long = "x".repeat(4001);
    assert_eq!(
        h.asks().ask(&t, Some(&long)).await.unwrap_err().field(),
        Some("question")
    );
    assert_eq!(
        h.asks().ask(&t, Some("  ")).await.unwrap_err().field(),
        Some("question")
    );
    assert_eq!(
        h.asks().ask("nope", Some("q")).await.unwrap_err().field(),
        Some("taskId")
    );
    assert!(matches!(
        h.asks().ask(&ids::new_id(), Some("q")).await.unwrap_err(),
        CoreError::NotFound(_)
    ));
    assert_eq!(
        h.asks()
            .reply(
                &harness_core::auth::Person::admin(),
                &t,
                Some(&"y".repeat(8001)),
                true
            )
            .await
            .unwrap_err()
            .field(),
        Some("text")
    );
    let page = h
        .asks()
        .list_messages(MessageQuery {
            view: MessageView::All,
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(page.rows.is_empty(), "no half-written rows");
}

pub async fn tokens_bind_agents_to_their_task(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let (exec, token) = h.tasks().begin_execution(&t).await.unwrap();
    assert_eq!(
        h.access().authenticate(ADMIN).await.unwrap(),
        Identity::Admin
    );
    let agent = h.access().authenticate(&token).await.unwrap();
    assert_eq!(
        agent,
        Identity::Agent {
            task_id: t.clone(),
            execution_id: exec.id
        }
    );
    assert!(matches!(
        h.access().authenticate("wrong").await.unwrap_err(),
        CoreError::Unauthorized(_)
    ));
    assert!(matches!(
        h.access().authenticate("").await.unwrap_err(),
        CoreError::Unauthorized(_)
    ));
    let other = task(h, "other").await;
    assert!(matches!(
        agent.bind_task(Some(&other)).unwrap_err(),
        CoreError::Forbidden(_)
    ));
}

pub async fn derived_children_carry_the_source_marker(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let parent = task(h, "Parent task").await;
    let child = h
        .tasks()
        .create_task(CreateTask {
            title: Some("child".into()),
            description: Some("do the thing".into()),
            parent_task_id: Some(parent.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(child.task.parent_task_id.as_deref(), Some(parent.as_str()));
    let d = child.task.description.unwrap();
    assert!(
        d.contains("## 来源") && d.contains("父任务派生") && d.contains(&parent),
        "{d}"
    );
    let err = h
        .tasks()
        .create_task(CreateTask {
            title: Some("orphan".into()),
            parent_task_id: Some(ids::new_id()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("parentTaskId"));
    let err = h
        .tasks()
        .create_task(CreateTask {
            title: Some("no project".into()),
            project_id: Some(ids::new_id()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("projectId"));
}

/// An ask is one batch (`BEGIN; …; COMMIT`) on the writer connection: a
/// statement failing half-way (the task does not exist) rolls everything back
/// and leaves the connection usable, repeatedly.
pub async fn a_failed_ask_batch_rolls_back_and_the_writer_keeps_working(b: &Backend) {
    let db = db(b).await;
    let h = &db.harness;
    let t = task(h, "t").await;
    let (exec, _) = h.tasks().begin_execution(&t).await.unwrap();
    let first = h.asks().ask(&t, Some("first?")).await.unwrap();
    for _ in 0..3 {
        let missing = ids::new_id();
        let err = h.asks().ask(&missing, Some("nobody?")).await.unwrap_err();
        assert!(matches!(err, CoreError::NotFound(_)), "{err:?}");
        // Nothing of the failed batch is visible, and the writer is not left
        // inside an open transaction.
        assert_eq!(
            db.store_message(&first.request_id).await.state,
            MessageState::Open
        );
        h.asks().notify(&t, Some("still writable")).await.unwrap();
    }
    let rows = db
        .store
        .list_messages(&MessageQuery {
            view: MessageView::All,
            task_id: Some(t.clone()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        rows.len(),
        4,
        "one ask and three notifies, no half-written rows"
    );
    let second = h.asks().ask(&t, Some("second?")).await.unwrap();
    assert_eq!(second.cancelled, vec![first.request_id.clone()]);
    assert_eq!(
        db.store_message(&second.request_id).await.execution_id,
        None,
        "parked by the first ask"
    );
    assert_eq!(
        db.store_message(&first.request_id)
            .await
            .execution_id
            .as_deref(),
        Some(exec.id.as_str())
    );
}
