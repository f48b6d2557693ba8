//! Structured questions through the core:
//! a reply naming an option records its label and index; a pushed question
//! stores its choices with its message and outbound row (one transaction);
//! a derived child's native question is an ask and a parent inbox event in
//! one transaction, and the child's turn end does not repeat it.

use std::sync::Arc;

use chrono::Utc;
use harness_core::{
    Harness, inbox::EventKind, model::MessageState, options::ChoicesInput, outbox::PushInput,
    settings::NotifyTarget, store::Store,
};
use serde_json::json;

use super::{
    Backend,
    support::{ask_due_at, harness_on},
};

async fn harness(b: &Backend) -> (Arc<dyn Store>, Harness) {
    let store = b.store.clone();
    let h = harness_on(store.clone(), "node-a");
    (store, h)
}

async fn task(h: &Harness, parent: Option<&str>) -> String {
    super::support::core_task(h, "choices", parent).await
}

fn input(v: serde_json::Value) -> ChoicesInput {
    serde_json::from_value(v).unwrap()
}

pub async fn a_reply_naming_an_option_records_its_label_and_index(b: &Backend) {
    let (store, h) = harness(b).await;
    let t = task(&h, None).await;
    h.tasks().begin_execution(&t).await.unwrap();
    let db = input(json!({"options": ["Postgres", "SQLite", "MySQL"]}));
    let asked = h.asks().ask_with(&t, Some("Which DB?"), &db).await.unwrap();
    let out = h
        .asks()
        .reply(&harness_core::auth::Person::admin(), &t, Some("2."), false)
        .await
        .unwrap();
    assert_eq!(
        (out.request_id.as_str(), out.deduped),
        (asked.request_id.as_str(), false)
    );
    let m = h
        .store()
        .get_message(&asked.request_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(m.state, MessageState::Answered);
    assert_eq!(m.reply_text.as_deref(), Some("SQLite"));
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&m.id))
        .await
        .unwrap()[&m.id];
    assert_eq!(c.answered_options, Some(vec![1]));
    assert_eq!(c.answered_by, None, "a person answered");
    // The agent is given the label.
    let d = h
        .store()
        .delivery_for_message(&m.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.text, "SQLite");
    // A repeat by label or number is the same answer; another option is not.
    assert!(
        h.asks()
            .reply(
                &harness_core::auth::Person::admin(),
                &t,
                Some(" sqlite "),
                false
            )
            .await
            .unwrap()
            .deduped
    );
    assert!(
        h.asks()
            .reply(&harness_core::auth::Person::admin(), &t, Some("2"), false)
            .await
            .unwrap()
            .deduped
    );
    assert!(
        h.asks()
            .reply(&harness_core::auth::Person::admin(), &t, Some("1"), false)
            .await
            .is_err()
    );

    // Free text on a question with options: recorded as typed, no option.
    let asked = h.asks().ask_with(&t, Some("Which DB?"), &db).await.unwrap();
    h.asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("CockroachDB"),
            false,
        )
        .await
        .unwrap();
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&asked.request_id))
        .await
        .unwrap()[&asked.request_id];
    assert_eq!(c.answered_options, None);

    // multiSelect: "3, 1" → both labels, both indexes.
    let multi = input(json!({"options": ["A", "B", "C"], "multiSelect": true}));
    let asked = h.asks().ask_with(&t, Some("Which?"), &multi).await.unwrap();
    h.asks()
        .reply(
            &harness_core::auth::Person::admin(),
            &t,
            Some("3, 1"),
            false,
        )
        .await
        .unwrap();
    let m = h
        .store()
        .get_message(&asked.request_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(m.reply_text.as_deref(), Some("C, A"));
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&m.id))
        .await
        .unwrap()[&m.id];
    assert_eq!(c.answered_options, Some(vec![2, 0]));

    // The default after the deadline records the default's index.
    let with_default =
        input(json!({"options": ["Retry", "Skip"], "default": "skip", "deadline": 60}));
    let asked = h
        .asks()
        .ask_with(&t, Some("Retry?"), &with_default)
        .await
        .unwrap();
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&asked.request_id))
        .await
        .unwrap()[&asked.request_id];
    assert_eq!(c.default.as_deref(), Some("Skip"), "the label as written");
    // The same question due a second ago, through the port (no waiting
    // for the API's one-minute minimum deadline).
    let asked_id = ask_due_at(
        store.as_ref(),
        &t,
        "Retry?",
        &["Retry", "Skip"],
        Some("Skip"),
        Utc::now() - chrono::Duration::seconds(1),
    )
    .await;
    assert_eq!(h.asks().apply_due_defaults().await.unwrap(), 1);
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&asked_id))
        .await
        .unwrap()[&asked_id];
    assert!(c.answered_by_default());
    assert_eq!(c.answered_options, Some(vec![1]));
}

pub async fn pending_shows_the_open_asks_options_default_and_deadline(b: &Backend) {
    let (_store, h) = harness(b).await;
    let t = task(&h, None).await;
    h.asks().ask(&t, Some("plain?")).await.unwrap();
    let p = h.asks().pending(&t).await.unwrap();
    assert!(p.pending && p.choices.is_none());
    let v = serde_json::to_value(&p).unwrap();
    assert!(v.get("options").is_none(), "{v}");
    h.asks()
        .ask_with(
            &t,
            Some("Retry?"),
            &input(json!({"options": ["Retry", "Skip"], "default": "Skip", "deadline": 600})),
        )
        .await
        .unwrap();
    let v = serde_json::to_value(h.asks().pending(&t).await.unwrap()).unwrap();
    assert_eq!(v["options"], json!([{"label": "Retry"}, {"label": "Skip"}]));
    assert_eq!(v["default"], "Skip");
    assert!(v["deadlineAt"].is_string(), "{v}");
    assert_eq!(v["question"], "Retry?");
}

fn target() -> NotifyTarget {
    NotifyTarget {
        id: None,
        label: "phone".into(),
        gateway: "hermes".into(),
        downstream: Some("feishu".into()),
        dest: None,
        profile: None,
        scope: "unattended".into(),
        active: true,
        include_screen: false,
        report_at: None,
        report_time_zone: None,
        report_since: None,
        language: None,
    }
}

pub async fn a_pushed_question_stores_its_choices_with_its_message(b: &Backend) {
    let (store, h) = harness(b).await;
    h.settings()
        .set_notify_targets(vec![target()])
        .await
        .unwrap();
    let t = task(&h, None).await;
    let push = |choices: serde_json::Value| PushInput {
        task_id: Some(t.clone()),
        message: Some("Retry or skip?".into()),
        scope: Some("unattended".into()),
        choices: input(choices),
        ..Default::default()
    };
    // Refused: nothing written.
    let err = h
        .outbox()
        .push_to_human(push(
            json!({"options": ["A", "B"], "default": "C", "deadline": 60}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("default"));
    let rows = store.list_outbound(Some(&t), 10).await.unwrap();
    assert!(rows.is_empty(), "{rows:?}");

    let out = h
        .outbox()
        .push_to_human(push(json!({
            "options": [{"label": "Retry", "description": "once more"}, "Skip"],
            "default": "Skip", "deadline": 600
        })))
        .await
        .unwrap();
    assert!(out.expect_reply, "options make a question");
    let id = out.message_id.clone().unwrap();
    let m = h.store().get_message(&id).await.unwrap().unwrap();
    assert_eq!(m.state, MessageState::PendingDelivery);
    assert!(
        m.content
            .contains("Retry or skip?\n\n1. Retry — once more\n2. Skip (default)\n"),
        "{}",
        m.content
    );
    assert!(
        m.content.contains("\"Skip\" will be taken."),
        "{}",
        m.content
    );
    let c = &h
        .asks()
        .choices_for(std::slice::from_ref(&id))
        .await
        .unwrap()[&id];
    assert_eq!(c.default.as_deref(), Some("Skip"));
    assert!(c.deadline_at.is_some());
    let row = h.outbox().outbound(&out.outbound_id).await.unwrap();
    assert_eq!(row.message, m.content, "the chat text is the message");
    // A plain push stays as it was: no choices row, text unchanged.
    let plain = h
        .outbox()
        .push_to_human(PushInput {
            task_id: Some(t.clone()),
            message: Some("FYI: build green".into()),
            scope: Some("unattended".into()),
            expect_reply: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    let pid = plain.message_id.unwrap();
    assert!(
        h.asks()
            .choices_for(std::slice::from_ref(&pid))
            .await
            .unwrap()
            .is_empty()
    );
    let choices_rows = store.choices_for(std::slice::from_ref(&pid)).await.unwrap();
    assert!(choices_rows.is_empty(), "{choices_rows:?}");
}

pub async fn a_derived_childs_native_question_is_an_ask_and_one_parent_event(b: &Backend) {
    let (store, h) = harness(b).await;
    let parent = task(&h, None).await;
    let child = task(&h, Some(&parent)).await;
    let (exec, _) = h.tasks().begin_execution(&child).await.unwrap();
    let menu = input(json!({"options": [{"label": "A", "description": "first"}, {"label": "B"}]}));
    let out = h
        .asks()
        .ask_native(
            &child,
            "AskUserQuestion",
            Some("[Choice] Which option?"),
            &menu,
        )
        .await
        .unwrap();
    assert_eq!(out.paused, vec![exec.id.clone()], "the child is parked");
    let inbox = h.deliveries().inbox(&parent).await.unwrap();
    assert_eq!(inbox.events.len(), 1);
    let e = &inbox.events[0];
    assert_eq!(e.kind, EventKind::ChildDecisionRequired);
    assert_eq!(e.execution_id.as_deref(), Some(exec.id.as_str()));
    assert_eq!(
        e.dedup_key,
        harness_core::native_question::parent_event_key(&child, &out.request_id)
    );
    assert_eq!(e.payload["question"], "[Choice] Which option?");
    assert_eq!(e.payload["options"][0]["description"], "first");
    assert_eq!(e.payload["requestId"], json!(out.request_id));
    // The child's turn end right after: already reported, nothing added.
    let end = h
        .deliveries()
        .record_turn_end(&child, &exec.id, None, Some("turn-1"), Some("asked"))
        .await
        .unwrap();
    assert!(end.deduped, "{end:?}");
    assert_eq!(end.event_id.as_deref(), Some(e.id.as_str()));
    assert_eq!(h.deliveries().inbox(&parent).await.unwrap().events.len(), 1);

    // A task without a parent: an ask, no inbox event anywhere.
    let root = task(&h, None).await;
    h.asks()
        .ask_native(
            &root,
            "request_user_input",
            Some("Name?"),
            &ChoicesInput::default(),
        )
        .await
        .unwrap();
    // No inbox holds an event of it: not its own (it has no parent to be
    // the inbox of), and no pending inbox but the child's parent's.
    assert!(
        store
            .list_workbench_events(&root, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let pending = store.workbench_parents_pending(100).await.unwrap();
    assert!(
        pending.contains(&parent) && !pending.contains(&root),
        "{pending:?}"
    );
    assert!(h.asks().pending(&root).await.unwrap().pending);
    // A refused question writes neither the ask nor the event.
    let nine: Vec<_> = (0..9).map(|i| json!({"label": format!("o{i}")})).collect();
    assert!(
        h.asks()
            .ask_native(
                &child,
                "AskUserQuestion",
                Some("Too many?"),
                &input(json!({"options": nine}))
            )
            .await
            .is_err()
    );
    assert_eq!(h.deliveries().inbox(&parent).await.unwrap().events.len(), 1);
}
