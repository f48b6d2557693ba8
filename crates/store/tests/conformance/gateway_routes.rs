//! The routing side of gateway inbound: a routed message is
//! recorded once, with its session, Workbench event and acknowledgement in
//! the same transaction; admission limits write nothing; sessions are found
//! by thread, by chat and sender, by sender and by a delivered reply.

use std::sync::Arc;

use chrono::Duration;
use harness_core::{
    ids,
    store::{
        Admission, AdmissionLimits, EventKind, InboundIntent, InboundMark, InboundState, NewEvent,
        NewInbound, NewProject, NewReply, NewSession, NewTask, Priority, ReplyKind, RequestSettle,
        RouteCountQuery, RouteRecord, RouteWrite, SessionLookup, SessionStatus, Store,
    },
};
use serde_json::json;

use super::{
    Backend,
    support::{command_agent, now_ms},
};

const LIMITS: AdmissionLimits = AdmissionLimits {
    project_queue: 100,
    workbench_events: 100,
    global_queue: 500,
};

async fn project_with_workbench(s: &dyn Store) -> (String, String) {
    let ws = s
        .ensure_workspace(&ids::new_id(), &format!("ws-{}", ids::new_id()), now_ms())
        .await
        .unwrap();
    let project = s
        .create_project(NewProject {
            id: ids::new_id(),
            workspace_id: ws,
            workspace_name: "ws".into(),
            name: format!("p-{}", ids::new_id()),
            path: "/tmp/p".into(),
            now: now_ms(),
        })
        .await
        .unwrap();
    let (wb, _) = s
        .create_project_workbench(NewTask {
            id: ids::new_id(),
            title: "Workbench".into(),
            description: None,
            project_id: Some(project.id.clone()),
            parent_task_id: None,
            agent: command_agent(),
            now: now_ms(),
        })
        .await
        .unwrap();
    (project.id, wb)
}

fn inbound(pmid: &str, chat: &str, sender: &str, thread: Option<&str>) -> NewInbound {
    NewInbound {
        id: ids::new_id(),
        dedup_key: format!("gateway-inbound:openclaw:telegram:{chat}:{pmid}"),
        gateway: "openclaw".into(),
        platform: "telegram".into(),
        chat_id: chat.into(),
        sender_id: Some(sender.into()),
        platform_message_id: pmid.into(),
        thread_id: thread.map(str::to_string),
        root_message_id: None,
        reply_to_message_id: None,
        intent: InboundIntent::ProjectWork,
        content: "build it".into(),
        now: now_ms(),
    }
}

fn admission(i: &NewInbound, project: &str, wb: &str, key: &str) -> Admission {
    Admission {
        session: NewSession {
            id: ids::new_id(),
            binding_key: key.into(),
            gateway: i.gateway.clone(),
            platform: i.platform.clone(),
            chat_id: i.chat_id.clone(),
            thread_id: i.thread_id.clone(),
            root_message_id: Some(i.platform_message_id.clone()),
            sender_id: i.sender_id.clone(),
            project_id: project.into(),
            workbench_task_id: wb.into(),
        },
        event: NewEvent {
            id: ids::new_id(),
            parent_task_id: wb.into(),
            source_task_id: wb.into(),
            execution_id: None,
            kind: EventKind::GatewayWorkRequest,
            priority: Priority::Normal,
            dedup_key: format!("gateway-work:{}", i.id),
            execution_review_key: None,
            fallback: false,
            payload: json!({"instruction": "do it"}),
            now: i.now,
        },
        ack: NewReply {
            id: ids::new_id(),
            inbound_id: i.id.clone(),
            kind: ReplyKind::QueuedAck,
            content: "queued".into(),
            dedup_key: format!("gateway-reply:QUEUED_ACK:{}", i.id),
            now: i.now,
        },
        limits: LIMITS,
    }
}

fn queued(i: NewInbound, a: Admission) -> RouteWrite {
    RouteWrite {
        inbound: i,
        state: InboundState::Queued,
        response: json!({"mode": "project_work"}).to_string(),
        close: Vec::new(),
        admission: Some(a),
    }
}

pub async fn a_routed_message_is_recorded_once_with_its_session_event_and_ack(b: &Backend) {
    let s: Arc<dyn Store> = b.store.clone();
    let (project, wb) = project_with_workbench(s.as_ref()).await;
    let chat = format!("-{}", ids::new_id());
    let first = inbound("m1", &chat, "42", None);
    let key = format!("gateway-session:{}", ids::new_id());
    let a = admission(&first, &project, &wb, &key);
    let row = match s
        .record_route(queued(first.clone(), a.clone()))
        .await
        .unwrap()
    {
        RouteRecord::Recorded(row) => row,
        other => panic!("{other:?}"),
    };
    assert_eq!(row.state, InboundState::Queued);
    assert_eq!(row.attempts, 1);
    let session_id = row.session_id.clone().expect("bound to a session");
    // The same message again (another id, same dedup key): nothing written.
    let mut again = first.clone();
    again.id = ids::new_id();
    let a2 = admission(&again, &project, &wb, &key);
    match s.record_route(queued(again.clone(), a2)).await.unwrap() {
        RouteRecord::Duplicate(dup) => assert_eq!(dup.id, row.id),
        other => panic!("{other:?}"),
    }
    assert!(s.get_inbound(&again.id).await.unwrap().is_none());
    assert_eq!(
        s.inbound_by_key(&first.dedup_key)
            .await
            .unwrap()
            .map(|r| r.id),
        Some(row.id.clone())
    );
    let events = s.list_workbench_events(&wb, 10).await.unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].kind, EventKind::GatewayWorkRequest);
    let replies = s.replies_for_inbound(&row.id).await.unwrap();
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].kind, ReplyKind::QueuedAck);
    // The chat + sender session, found again; another message of the same
    // conversation binds the same session.
    let since = now_ms() - Duration::days(7);
    let found = s
        .find_sessions(SessionLookup::ChatSender {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: chat.clone(),
            sender_id: "42".into(),
            since,
        })
        .await
        .unwrap();
    assert_eq!(
        found.iter().map(|x| &x.id).collect::<Vec<_>>(),
        [&session_id]
    );
    assert_eq!(found[0].status, SessionStatus::Active);
    let second = inbound("m2", &chat, "42", None);
    let a = admission(&second, &project, &wb, &key);
    let RouteRecord::Recorded(row2) = s.record_route(queued(second, a)).await.unwrap() else {
        panic!("second message not recorded");
    };
    assert_eq!(row2.session_id.as_deref(), Some(session_id.as_str()));
    let recent = s
        .find_sessions(SessionLookup::RecentSender {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            sender_id: "42".into(),
            since,
        })
        .await
        .unwrap();
    assert!(recent.iter().any(|x| x.id == session_id));
    // Too old for a recent project.
    let none = s
        .find_sessions(SessionLookup::ChatSender {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: chat.clone(),
            sender_id: "42".into(),
            since: now_ms() + Duration::seconds(5),
        })
        .await
        .unwrap();
    assert!(none.is_empty());
    let counts = s
        .route_counts(RouteCountQuery {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: chat.clone(),
            sender_id: Some("42".into()),
            since,
        })
        .await
        .unwrap();
    assert_eq!((counts.sender, counts.chat, counts.chat_queued), (2, 2, 2));
    assert!(counts.global_queued >= 2);
    assert!(
        s.list_sessions(100)
            .await
            .unwrap()
            .iter()
            .any(|x| x.id == session_id)
    );
    let listed = s
        .list_inbound(Some(InboundState::Queued), 500)
        .await
        .unwrap();
    assert!(listed.iter().any(|r| r.id == row.id));
    assert!(s.list_inbound(None, 500).await.unwrap().len() >= 2);

    // CLOSE: a PROCESSED row that closes the session, in one transaction.
    let close = inbound("m3", &chat, "42", None);
    let write = RouteWrite {
        inbound: close,
        state: InboundState::Processed,
        response: json!({"mode": "discussion_closed"}).to_string(),
        close: vec![session_id.clone()],
        admission: None,
    };
    let RouteRecord::Recorded(closed) = s.record_route(write).await.unwrap() else {
        panic!("close not recorded");
    };
    assert!(closed.processed_at.is_some());
    assert!(
        s.find_sessions(SessionLookup::ChatSender {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: chat.clone(),
            sender_id: "42".into(),
            since,
        })
        .await
        .unwrap()
        .is_empty(),
        "closed sessions bind nothing"
    );
}

pub async fn admission_limits_refuse_without_writing_and_threads_bind_their_session(b: &Backend) {
    let s: Arc<dyn Store> = b.store.clone();
    let (project, wb) = project_with_workbench(s.as_ref()).await;
    let chat = format!("-{}", ids::new_id());
    let first = inbound("t1", &chat, "42", Some("thread-9"));
    let mut a = admission(&first, &project, &wb, &format!("k-{}", ids::new_id()));
    a.limits.workbench_events = 0;
    match s.record_route(queued(first.clone(), a)).await.unwrap() {
        RouteRecord::Refused(counts) => assert_eq!(counts.workbench_events, 0),
        other => panic!("{other:?}"),
    }
    assert!(s.inbound_by_key(&first.dedup_key).await.unwrap().is_none());
    assert!(s.list_workbench_events(&wb, 10).await.unwrap().is_empty());
    let a = admission(&first, &project, &wb, &format!("k-{}", ids::new_id()));
    let RouteRecord::Recorded(row) = s.record_route(queued(first, a)).await.unwrap() else {
        panic!("not recorded");
    };
    let thread = s
        .find_sessions(SessionLookup::Anchored {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: chat.clone(),
            anchors: vec!["nope".into(), "thread-9".into()],
        })
        .await
        .unwrap();
    assert_eq!(thread.len(), 1);
    assert_eq!(Some(thread[0].id.clone()), row.session_id);
    assert_eq!(thread[0].project_id, project);
    // A reply to a delivered gateway reply finds its session (in its chat).
    let pm = format!("pm-{}", ids::new_id());
    deliver_ack(s.as_ref(), &row.id, &pm).await;
    let by_reply = s.find_sessions(reply_to(&chat, &pm)).await.unwrap();
    assert_eq!(by_reply.first().map(|x| x.id.clone()), row.session_id);
}

/// Deliver the acknowledgement of inbound row `inbound_id` with platform
/// message id `pm`.
async fn deliver_ack(s: &dyn Store, inbound_id: &str, pm: &str) {
    let reply = s.replies_for_inbound(inbound_id).await.unwrap().remove(0);
    let owner = format!("node-a:boot-{}", ids::new_id());
    let leased = s
        .settle_and_claim_replies(harness_core::store::ReplyTurn {
            owner: owner.clone(),
            settles: Vec::new(),
            released: Vec::new(),
            limit: 1000,
            now: now_ms(),
            lease_until: now_ms() + Duration::seconds(60),
        })
        .await
        .unwrap();
    assert!(leased.iter().any(|r| r.id == reply.id));
    s.settle_and_claim_replies(harness_core::store::ReplyTurn {
        owner,
        settles: vec![harness_core::store::ReplySettle {
            id: reply.id.clone(),
            state: harness_core::store::ReplyState::Delivered,
            next_attempt_at: None,
            last_error: None,
            platform_message_id: Some(pm.into()),
        }],
        released: Vec::new(),
        limit: 0,
        now: now_ms(),
        lease_until: now_ms(),
    })
    .await
    .unwrap();
}

fn reply_to(chat: &str, pm: &str) -> SessionLookup {
    SessionLookup::ReplyTo {
        gateway: "openclaw".into(),
        platform: "telegram".into(),
        chat_id: chat.into(),
        platform_message_id: pm.into(),
    }
}

/// Telegram message ids are unique only within a chat: a reply in chat B
/// to message id N never binds the session of chat A whose delivered reply
/// also had id N.
pub async fn a_reply_binds_the_session_of_its_own_chat_only(b: &Backend) {
    let s: Arc<dyn Store> = b.store.clone();
    let (project_a, wb_a) = project_with_workbench(s.as_ref()).await;
    let (project_b, wb_b) = project_with_workbench(s.as_ref()).await;
    let pm = format!("pm-{}", ids::new_id());
    let mut sessions = Vec::new();
    for (project, wb) in [(&project_a, &wb_a), (&project_b, &wb_b)] {
        let chat = format!("-{}", ids::new_id());
        let i = inbound("7", &chat, "42", None);
        let a = admission(&i, project, wb, &format!("k-{}", ids::new_id()));
        let RouteRecord::Recorded(row) = s.record_route(queued(i, a)).await.unwrap() else {
            panic!("not recorded");
        };
        deliver_ack(s.as_ref(), &row.id, &pm).await;
        sessions.push((chat, row.session_id.clone().unwrap()));
    }
    // The second chat's delivery is the newest; chat A still finds its own.
    for (chat, session) in &sessions {
        let found = s.find_sessions(reply_to(chat, &pm)).await.unwrap();
        assert_eq!(
            found.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
            [session.as_str()],
            "chat {chat}"
        );
    }
    let elsewhere = format!("-{}", ids::new_id());
    assert!(
        s.find_sessions(reply_to(&elsewhere, &pm))
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn a_created_task_is_linked_once_and_a_callback_settles_with_one_reply(b: &Backend) {
    let s: Arc<dyn Store> = b.store.clone();
    let (project, wb) = project_with_workbench(s.as_ref()).await;
    let chat = format!("-{}", ids::new_id());
    let i = inbound("w1", &chat, "42", None);
    let a = admission(&i, &project, &wb, &format!("k-{}", ids::new_id()));
    let RouteRecord::Recorded(row) = s.record_route(queued(i, a)).await.unwrap() else {
        panic!("not recorded");
    };
    let session = s
        .get_session(row.session_id.as_deref().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.workbench_task_id.as_deref(), Some(wb.as_str()));
    assert!(s.get_session("nope").await.unwrap().is_none());
    assert!(s.linked_task(&row.id).await.unwrap().is_none());
    let task = |title: &str| NewTask {
        id: ids::new_id(),
        title: title.into(),
        description: None,
        project_id: Some(project.clone()),
        parent_task_id: Some(wb.clone()),
        agent: command_agent(),
        now: now_ms(),
    };
    let (first, created) = s.create_linked_task(task("a"), &row.id).await.unwrap();
    assert!(created);
    let (again, created) = s.create_linked_task(task("b"), &row.id).await.unwrap();
    assert_eq!((again.as_str(), created), (first.as_str(), false));
    assert_eq!(s.linked_task(&row.id).await.unwrap(), Some(first.clone()));
    assert_eq!(s.child_task_ids(&wb).await.unwrap(), vec![first.clone()]);

    let settle = |kind: ReplyKind, state: InboundState, link: bool| RequestSettle {
        inbound_id: row.id.clone(),
        link: link.then(|| (first.clone(), wb.clone())),
        state,
        response: None,
        consume_event: Some(format!("gateway-work:{}", row.id)),
        reply: NewReply {
            id: ids::new_id(),
            inbound_id: row.id.clone(),
            kind,
            content: format!("{kind:?}"),
            dedup_key: format!("gateway-reply:{}:{}", kind.as_str(), row.id),
            now: now_ms(),
        },
        now: now_ms(),
    };
    let (reply, created) = s
        .settle_request(settle(
            ReplyKind::TaskCreated,
            InboundState::Processing,
            true,
        ))
        .await
        .unwrap()
        .unwrap();
    assert!(created);
    let (same, created) = s
        .settle_request(settle(
            ReplyKind::TaskCreated,
            InboundState::Processing,
            true,
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((same.id.as_str(), created), (reply.id.as_str(), false));
    let now = s.get_inbound(&row.id).await.unwrap().unwrap();
    assert_eq!(now.state, InboundState::Processing);
    assert_eq!(now.created_task_id.as_deref(), Some(first.as_str()));
    let events = s.list_workbench_events(&wb, 10).await.unwrap();
    assert_eq!(events[0].state, harness_core::store::EventState::Consumed);
    s.settle_request(settle(
        ReplyKind::FinalResult,
        InboundState::Processed,
        false,
    ))
    .await
    .unwrap()
    .unwrap();
    let done = s.get_inbound(&row.id).await.unwrap().unwrap();
    assert!(done.processed_at.is_some());
    assert_eq!(s.replies_for_inbound(&row.id).await.unwrap().len(), 3);
    let mut missing = settle(ReplyKind::FinalResult, InboundState::Processed, false);
    missing.inbound_id = ids::new_id();
    assert!(s.settle_request(missing).await.unwrap().is_none());

    // A reply to the delivered confirmation names the created task.
    assert!(
        s.tasks_of_reply("openclaw", "telegram", &format!("pm-{}", reply.id))
            .await
            .unwrap()
            .is_empty()
    );
    let owner = "node-a:boot-1";
    let turn = |settles, limit| harness_core::store::ReplyTurn {
        owner: owner.into(),
        settles,
        released: Vec::new(),
        limit,
        now: now_ms(),
        lease_until: now_ms() + Duration::seconds(60),
    };
    let leased = s
        .settle_and_claim_replies(turn(Vec::new(), 10))
        .await
        .unwrap();
    let settles = leased
        .iter()
        .map(|r| harness_core::store::ReplySettle {
            id: r.id.clone(),
            state: harness_core::store::ReplyState::Delivered,
            next_attempt_at: None,
            last_error: None,
            platform_message_id: Some(format!("pm-{}", r.id)),
        })
        .collect();
    s.settle_and_claim_replies(turn(settles, 0)).await.unwrap();
    let found = s
        .tasks_of_reply("openclaw", "telegram", &format!("pm-{}", reply.id))
        .await
        .unwrap();
    assert_eq!(found, vec![(chat.clone(), first.clone(), Some(wb.clone()))]);
}

pub async fn a_recovery_mark_applies_only_to_the_state_it_saw(b: &Backend) {
    let s: Arc<dyn Store> = b.store.clone();
    let (project, wb) = project_with_workbench(s.as_ref()).await;
    let chat = format!("-{}", ids::new_id());
    let i = inbound("r1", &chat, "42", None);
    let a = admission(
        &i,
        &project,
        &wb,
        &format!("gateway-session:{}", ids::new_id()),
    );
    let RouteRecord::Recorded(row) = s.record_route(queued(i.clone(), a)).await.unwrap() else {
        panic!("not recorded");
    };
    let later = row.updated_at + Duration::seconds(30);
    // A note keeps the state, the response and the claim clock.
    let mark = |seen, state, response: Option<&str>, error: &str| InboundMark {
        id: row.id.clone(),
        seen_state: seen,
        state,
        response: response.map(str::to_string),
        last_error: Some(error.into()),
        now: later,
    };
    assert!(
        s.mark_inbound(mark(
            InboundState::Queued,
            InboundState::Queued,
            None,
            "no cwd"
        ))
        .await
        .unwrap()
    );
    let noted = s.get_inbound(&row.id).await.unwrap().unwrap();
    assert_eq!(noted.state, InboundState::Queued);
    assert_eq!(noted.last_error.as_deref(), Some("no cwd"));
    assert_eq!(noted.response, row.response);
    assert_eq!(noted.updated_at, row.updated_at);
    assert_eq!(noted.processed_at, None);
    // Seen in another state: nothing is written.
    assert!(
        !s.mark_inbound(mark(
            InboundState::Processing,
            InboundState::Failed,
            Some("{}"),
            "x"
        ))
        .await
        .unwrap()
    );
    assert_eq!(s.get_inbound(&row.id).await.unwrap().unwrap(), noted);
    // A step: state, response, error and clock; PROCESSED sets processed_at.
    assert!(
        s.mark_inbound(mark(
            InboundState::Queued,
            InboundState::Processed,
            Some(r#"{"mode":"recovered"}"#),
            "done"
        ))
        .await
        .unwrap()
    );
    let done = s.get_inbound(&row.id).await.unwrap().unwrap();
    assert_eq!(done.state, InboundState::Processed);
    assert_eq!(done.response.as_deref(), Some(r#"{"mode":"recovered"}"#));
    assert_eq!(done.last_error.as_deref(), Some("done"));
    assert_eq!(done.updated_at, later);
    assert_eq!(done.processed_at, Some(later));
    // An unknown row: false.
    let mut gone = mark(InboundState::Queued, InboundState::Failed, None, "x");
    gone.id = ids::new_id();
    assert!(!s.mark_inbound(gone).await.unwrap());
}
