//! The evidence of a question (docs/evidence.md): the screen stored with its ask,
//! in the ask's transaction — a plain ask, one with choices, a derived
//! task's native question (with its parent's event) and an approval's.

use harness_core::{
    ids,
    inbox::{EventKind, NewEvent, Priority},
    store::{AskOption, Choices, NewApproval, NewAsk, NewTask, StoreError, Urgency},
};
use serde_json::json;

use super::{Backend, support::*};

const SCREEN: &str = "$ cargo test\ntest result: FAILED. 1 failed\n\u{276f} Should I keep it?";

pub async fn the_screen_is_stored_with_its_ask(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "evidence").await;
    let plain = s
        .record_ask(NewAsk {
            evidence: Some(SCREEN.into()),
            ..ask(&t, "keep it?", now())
        })
        .await
        .unwrap();
    assert_eq!(
        s.ask_evidence(&plain.message.id).await.unwrap().as_deref(),
        Some(SCREEN)
    );
    // Another store on the same database reads it too.
    let other = b.another().await;
    assert_eq!(
        other
            .ask_evidence(&plain.message.id)
            .await
            .unwrap()
            .as_deref(),
        Some(SCREEN)
    );
    // An ask without a terminal has none; an unknown id neither.
    let bare = s.record_ask(ask(&t, "bare?", now())).await.unwrap();
    assert_eq!(s.ask_evidence(&bare.message.id).await.unwrap(), None);
    assert_eq!(s.ask_evidence(&ids::new_id()).await.unwrap(), None);
    // A structured question keeps its screen as well, next to its choices.
    let choices = Choices {
        options: vec![AskOption {
            label: "Yes".into(),
            description: None,
        }],
        multi_select: false,
        default: None,
        deadline_at: None,
        urgency: Urgency::High,
        answered_by: None,
        answered_options: None,
    };
    let structured = s
        .record_ask_with_choices(
            NewAsk {
                evidence: Some("with choices".into()),
                ..ask(&t, "structured?", now())
            },
            choices,
        )
        .await
        .unwrap();
    assert_eq!(
        s.ask_evidence(&structured.message.id)
            .await
            .unwrap()
            .as_deref(),
        Some("with choices")
    );
    let found = s
        .choices_for(std::slice::from_ref(&structured.message.id))
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "the choices are stored too");
    // Superseding the ask keeps its evidence (it stays readable).
    assert_eq!(
        s.ask_evidence(&plain.message.id).await.unwrap().as_deref(),
        Some(SCREEN)
    );
}

pub async fn a_rolled_back_ask_leaves_no_screen(b: &Backend) {
    let s = b.store.as_ref();
    // The task does not exist: the whole ask fails, its screen with it.
    let missing = NewAsk {
        evidence: Some(SCREEN.into()),
        ..ask(&ids::new_id(), "q", now())
    };
    let id = missing.id.clone();
    let err = s.record_ask(missing).await.unwrap_err();
    assert!(matches!(err, StoreError::MissingReference(_)), "{err:?}");
    assert_eq!(s.ask_evidence(&id).await.unwrap(), None);
    // A second ask with the key of the first breaks the unique index: its
    // screen is not stored either.
    let t = new_task(s, "keys").await;
    s.record_ask(NewAsk {
        idempotency_key: Some("k".into()),
        evidence: Some("first".into()),
        ..ask(&t, "first?", now())
    })
    .await
    .unwrap();
    let second = NewAsk {
        idempotency_key: Some("k".into()),
        evidence: Some("second".into()),
        ..ask(&t, "second?", now())
    };
    let second_id = second.id.clone();
    let err = s.record_ask(second).await.unwrap_err();
    assert!(matches!(err, StoreError::Duplicate(_)), "{err:?}");
    assert_eq!(s.ask_evidence(&second_id).await.unwrap(), None);
}

fn approve_deny() -> Choices {
    Choices {
        options: ["Approve", "Deny"]
            .into_iter()
            .map(|l| AskOption {
                label: l.into(),
                description: None,
            })
            .collect(),
        multi_select: false,
        default: None,
        deadline_at: None,
        urgency: Urgency::High,
        answered_by: None,
        answered_options: None,
    }
}

fn approval_of(task_id: &str, request_id: &str) -> NewApproval {
    NewApproval {
        id: ids::new_id(),
        task_id: task_id.into(),
        execution_id: None,
        request_id: request_id.into(),
        tool: "Bash".into(),
        input: r#"{"command":"git push --force"}"#.into(),
        input_hash: ids::new_id(),
        cwd: Some("/repo".into()),
        rule: r#"{"source":"builtin","index":0}"#.into(),
        now: now_ms(),
        push_not_before: None,
        push: None,
    }
}

pub async fn an_approval_and_a_parents_question_keep_their_screen(b: &Backend) {
    let s = b.store.as_ref();
    let parent = new_task(s, "parent").await;
    let child = ids::new_id();
    s.create_task(NewTask {
        id: child.clone(),
        title: "child".into(),
        description: None,
        project_id: None,
        parent_task_id: Some(parent.clone()),
        agent: command_agent(),
        now: now(),
    })
    .await
    .unwrap();
    let event = |dedup: &str| NewEvent {
        id: ids::new_id(),
        parent_task_id: parent.clone(),
        source_task_id: child.clone(),
        execution_id: None,
        kind: EventKind::ChildDecisionRequired,
        priority: Priority::High,
        dedup_key: dedup.into(),
        execution_review_key: None,
        fallback: false,
        payload: json!({"childTaskId": child, "question": "Which?"}),
        now: now(),
    };
    // A derived task's native question: its screen with it and its event.
    let (asked, added) = s
        .record_ask_for_parent(
            NewAsk {
                evidence: Some(SCREEN.into()),
                ..ask(&child, "Which?", now())
            },
            Some(approve_deny()),
            event("native-1"),
        )
        .await
        .unwrap();
    assert!(added);
    assert_eq!(
        s.ask_evidence(&asked.message.id).await.unwrap().as_deref(),
        Some(SCREEN)
    );
    // Without a screen: none.
    let (bare, _) = s
        .record_ask_for_parent(ask(&child, "Bare?", now()), None, event("native-2"))
        .await
        .unwrap();
    assert_eq!(s.ask_evidence(&bare.message.id).await.unwrap(), None);

    // An approval's ask (with and without the parent's event).
    for (n, with_event) in [(1, false), (2, true)] {
        let screen = format!("$ git push --force\nscreen {n}");
        let a = NewAsk {
            evidence: Some(screen.clone()),
            ..ask(&child, "Approve this Bash call?", now_ms())
        };
        let id = a.id.clone();
        let approval = approval_of(&child, &id);
        let asked = s
            .record_approval_ask(
                a,
                approve_deny(),
                with_event.then(|| event(&format!("approval-{n}"))),
                approval,
            )
            .await
            .unwrap();
        assert_eq!(asked.approval.request_id, id);
        assert_eq!(
            s.ask_evidence(&id).await.unwrap().as_deref(),
            Some(screen.as_str())
        );
    }
    // A rolled-back approval (its request id is not its ask's) leaves no
    // screen.
    let a = NewAsk {
        evidence: Some(SCREEN.into()),
        ..ask(&child, "x", now_ms())
    };
    let id = a.id.clone();
    assert!(
        s.record_approval_ask(a, approve_deny(), None, approval_of(&child, "other"))
            .await
            .is_err()
    );
    assert_eq!(s.ask_evidence(&id).await.unwrap(), None);
    // Its id taken by another approval: the ask and its screen roll back.
    let a = NewAsk {
        evidence: Some(SCREEN.into()),
        ..ask(&child, "y", now_ms())
    };
    let id = a.id.clone();
    let mut taken = approval_of(&child, &id);
    let first = s
        .insert_approval(approval_of(&child, &bare.message.id))
        .await
        .unwrap();
    taken.id = first.id;
    assert!(
        s.record_approval_ask(a, approve_deny(), None, taken)
            .await
            .is_err()
    );
    assert!(s.get_message(&id).await.unwrap().is_none());
    assert_eq!(s.ask_evidence(&id).await.unwrap(), None);
}
