//! The receipt of a question (docs/evidence.md): the screen after its answer
//! (`answer_screens`, migration 0043), the screen of a pushed ask added
//! after its rows, and whether the answer came through a gateway.

use harness_core::{ids, store::AnswerScreen};

use super::{Backend, support::*};

pub async fn the_screen_after_an_answer_is_stored_once(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "receipt").await;
    let asked = s.record_ask(ask(&t, "keep it?", now())).await.unwrap();
    let id = asked.message.id.clone();
    assert_eq!(s.answer_screen(&id).await.unwrap(), None);
    let first = AnswerScreen {
        message_id: id.clone(),
        delivery_id: ids::new_id(),
        screen: "keeping the legacy format".into(),
        captured_at: now_ms(),
    };
    assert!(s.record_answer_screen(first.clone()).await.unwrap());
    // The first capture wins; another store reads it.
    let again = AnswerScreen {
        screen: "later".into(),
        ..first.clone()
    };
    assert!(!s.record_answer_screen(again).await.unwrap());
    let other = b.another().await;
    assert_eq!(other.answer_screen(&id).await.unwrap(), Some(first));
    // A message that is gone stores nothing, and is no error.
    let gone = AnswerScreen {
        message_id: ids::new_id(),
        delivery_id: ids::new_id(),
        screen: "x".into(),
        captured_at: now(),
    };
    assert!(!s.record_answer_screen(gone.clone()).await.unwrap());
    assert_eq!(s.answer_screen(&gone.message_id).await.unwrap(), None);
}

pub async fn a_pushed_asks_screen_is_added_once_and_chat_answers_are_known(b: &Backend) {
    let s = b.store.as_ref();
    let t = new_task(s, "pushed").await;
    let asked = s.record_ask(ask(&t, "pushed?", now())).await.unwrap();
    let id = asked.message.id.clone();
    assert!(s.add_ask_evidence(&id, "$ deploy", now()).await.unwrap());
    assert!(!s.add_ask_evidence(&id, "other", now()).await.unwrap());
    assert_eq!(
        s.ask_evidence(&id).await.unwrap().as_deref(),
        Some("$ deploy")
    );
    assert!(
        !s.add_ask_evidence(&ids::new_id(), "x", now())
            .await
            .unwrap()
    );
    // Answered on the web: not in the chat.
    let answered = s
        .answer_open_ask(&t, "yes", &ids::new_id(), None, now(), false)
        .await
        .unwrap()
        .expect("answered");
    assert_eq!(
        s.answered_in_chat(&answered.message.id).await.unwrap(),
        None
    );
    // Answered in the chat: when.
    let chat = s.record_ask(ask(&t, "chat?", now())).await.unwrap();
    let at = now_ms();
    s.answer_open_ask(&t, "from chat", &ids::new_id(), None, at, true)
        .await
        .unwrap()
        .expect("answered");
    assert_eq!(
        s.answered_in_chat(&chat.message.id).await.unwrap(),
        Some(at)
    );
}
