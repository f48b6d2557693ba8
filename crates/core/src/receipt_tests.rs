use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;
use crate::deliveries::DeliveryKind;
use crate::{
    answer_screen::after_answer,
    evidence::{self, RawScreen},
};

fn t(min: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 6, 1, 0, 0).unwrap() + Duration::minutes(min)
}

fn message(state: MessageState) -> Message {
    Message {
        id: "m1".into(),
        task_id: "t1".into(),
        execution_id: Some("x1".into()),
        kind: MessageKind::Ask,
        state,
        content: "Should I keep the legacy invoice format?".into(),
        reply_text: (state == MessageState::Answered).then(|| "keep it".into()),
        replied_at: (state == MessageState::Answered).then(|| t(10)),
        created_at: t(0),
    }
}

fn push(state: OutboundState) -> Outbound {
    Outbound {
        id: "o1".into(),
        dedup_key: "k".into(),
        task_id: Some("t1".into()),
        execution_id: None,
        message_id: Some("m1".into()),
        gateway: "openclaw".into(),
        downstream: Some("telegram".into()),
        dest: Some("telegram:42".into()),
        requested_to: None,
        profile: None,
        scope: "unattended".into(),
        expect_reply: true,
        message: "body".into(),
        presentation: None,
        state,
        attempts: 1,
        next_attempt_at: None,
        lease_owner: None,
        lease_expires_at: None,
        platform: Some("telegram".into()),
        platform_chat_id: Some("42".into()),
        platform_message_id: (state == OutboundState::Delivered).then(|| "777".into()),
        last_error: None,
        delivered_at: (state == OutboundState::Delivered).then(|| t(1)),
        created_at: t(0),
        updated_at: t(1),
        started_attempt: None,
    }
}

fn delivery(state: DeliveryState) -> Delivery {
    Delivery {
        id: "d1".into(),
        task_id: "t1".into(),
        kind: DeliveryKind::Reply,
        message_id: Some("m1".into()),
        node_id: None,
        text: "keep it".into(),
        question: None,
        submit: true,
        dedup_key: None,
        state,
        attempts: 1,
        next_attempt_at: None,
        lease_owner: None,
        lease_expires_at: None,
        last_error: None,
        created_at: t(10),
        updated_at: t(10),
        done_at: (state == DeliveryState::Delivered).then(|| t(10)),
        resume: false,
    }
}

fn facts(state: MessageState) -> ReceiptFacts {
    ReceiptFacts {
        message: message(state),
        screen: Some("$ migrate\nShould I keep it?".into()),
        pushes: Vec::new(),
        reminders: Vec::new(),
        escalations: Vec::new(),
        by_default: false,
        answered_in_chat: None,
        delivery: None,
        agent: None,
        after: None,
        capture_after: Duration::seconds(3),
    }
}

fn kinds(r: &QuestionReceipt) -> Vec<(StepKind, StepStatus)> {
    r.steps.iter().map(|s| (s.step, s.status)).collect()
}

#[test]
fn a_push_never_delivered_stalls_at_pushed() {
    let mut f = facts(MessageState::PendingDelivery);
    f.pushes = vec![push(OutboundState::Failed)];
    let r = build(f, t(40));
    assert_eq!(r.stalled_at, Some(StepKind::Pushed));
    let pushed = &r.steps[1];
    assert_eq!(pushed.status, StepStatus::Stalled);
    assert_eq!(
        pushed.note,
        "pushed 40 min ago, never delivered by the gateway"
    );
    // Within the first minutes it is only on its way.
    let mut f = facts(MessageState::PendingDelivery);
    f.pushes = vec![push(OutboundState::Pending)];
    let r = build(f, t(2));
    assert_eq!(r.steps[1].status, StepStatus::Waiting);
    assert_eq!(r.stalled_at, None);
}

#[test]
fn the_whole_life_of_an_answered_question() {
    let mut f = facts(MessageState::Answered);
    f.pushes = vec![push(OutboundState::Delivered)];
    f.reminders = vec![Reminder {
        message_id: "m1".into(),
        seq: 1,
        outbound_id: "o2".into(),
        waited_ms: 3_600_000,
        created_at: t(5),
        sent: true,
    }];
    f.answered_in_chat = Some(t(10));
    f.delivery = Some(delivery(DeliveryState::Delivered));
    f.after = Some(AnswerScreen {
        message_id: "m1".into(),
        delivery_id: "d1".into(),
        screen: "keeping the legacy format".into(),
        captured_at: Utc
            .timestamp_millis_opt(t(10).timestamp_millis() + 3000)
            .unwrap(),
    });
    let r = build(f, t(11));
    assert_eq!(
        kinds(&r),
        vec![
            (StepKind::Asked, StepStatus::Done),
            (StepKind::Pushed, StepStatus::Done),
            (StepKind::Reminded, StepStatus::Done),
            (StepKind::Answered, StepStatus::Done),
            (StepKind::Typed, StepStatus::Done),
            (StepKind::Resumed, StepStatus::Done),
            (StepKind::ScreenAfter, StepStatus::Done),
        ]
    );
    assert_eq!(r.stalled_at, None);
    let pushed = &r.steps[1];
    assert_eq!(pushed.platform_message_id.as_deref(), Some("777"));
    assert_eq!(pushed.chat_id.as_deref(), Some("42"));
    let answered = &r.steps[3];
    assert_eq!(answered.surface.as_deref(), Some("chat"));
    assert_eq!(answered.by.as_deref(), Some("person"));
    assert_eq!(r.steps[4].delivery_id.as_deref(), Some("d1"));
    assert_eq!(
        r.steps[6].screen.as_deref(),
        Some("keeping the legacy format")
    );
}

#[test]
fn a_typed_answer_is_unverified_or_stalls_where_it_stopped() {
    let mut f = facts(MessageState::Answered);
    f.delivery = Some(delivery(DeliveryState::Unverified));
    let r = build(f, t(11));
    assert_eq!(
        r.steps.last().map(|s| s.status),
        Some(StepStatus::Unverified)
    );
    assert!(r.steps.last().unwrap().note.starts_with("UNVERIFIED"));

    let mut f = facts(MessageState::Answered);
    f.delivery = Some(delivery(DeliveryState::WaitingBoundary));
    let r = build(f, t(30));
    assert_eq!(r.stalled_at, Some(StepKind::Typed));
    assert!(
        r.steps
            .last()
            .unwrap()
            .note
            .starts_with("answered 20 min ago, never typed"),
        "{:?}",
        r.steps.last()
    );

    // Typed, and nothing seen of the agent since.
    let mut f = facts(MessageState::Answered);
    f.delivery = Some(delivery(DeliveryState::Delivered));
    let r = build(f, t(30));
    assert_eq!(r.stalled_at, Some(StepKind::Resumed));
    // A web answer by default, no agent: nothing typed.
    let mut f = facts(MessageState::Answered);
    f.by_default = true;
    let r = build(f, t(30));
    assert_eq!(r.steps[1].surface.as_deref(), Some("deadline"));
    assert_eq!(r.steps[2].status, StepStatus::Skipped);
}

#[test]
fn a_recorded_agent_state_says_whether_it_went_on() {
    let mut f = facts(MessageState::Answered);
    f.delivery = Some(delivery(DeliveryState::Delivered));
    f.agent = Some(AgentStateRecord {
        execution_id: "x1".into(),
        task_id: "t1".into(),
        state: AgentStateName::Crashed,
        reason: "the agent crashed (signal 11)".into(),
        lines: Vec::new(),
        since: t(11),
        error_kind: None,
        attempt: None,
        attempt_of: None,
        gave_up: false,
        reset_text: None,
        reset_at: None,
        exit_code: None,
        signal: Some(11),
        silent_secs: None,
        dialog_title: None,
        dialog_options: Vec::new(),
        updated_at: t(11),
    });
    let r = build(f, t(12));
    assert_eq!(r.stalled_at, Some(StepKind::Resumed));
    assert_eq!(r.steps[3].agent_state, Some(AgentStateName::Crashed));
}

#[test]
fn an_open_question_waits_and_a_superseded_one_failed() {
    let r = build(facts(MessageState::Open), t(3));
    assert_eq!(r.steps.last().map(|s| s.status), Some(StepStatus::Waiting));
    let r = build(facts(MessageState::Cancelled), t(3));
    assert_eq!(r.stalled_at, Some(StepKind::Answered));
}

fn raw(text: &str) -> RawScreen {
    RawScreen {
        text: text.into(),
        secrets: vec!["env-secret-value".into()],
    }
}

#[test]
fn after_the_answer_keeps_the_lines_below_its_echo_redacted() {
    let screen = "ASK Should I keep it?\n> keep it\nkeeping the legacy format\n\
                  using env-secret-value and sk-ant-api03-abcdefghijklmnop0123\n\n  \n";
    let got = after_answer(&raw(screen), &[], "keep it").unwrap();
    assert_eq!(
        got,
        "keeping the legacy format\nusing [REDACTED] and sk-ant-[REDACTED]"
    );
    // The echo is not on the screen: the whole screen.
    let got = after_answer(&raw("line one\nline two"), &[], "something else").unwrap();
    assert_eq!(got, "line one\nline two");
    // Nothing below the echo yet.
    assert_eq!(after_answer(&raw("> keep it\n\n"), &[], "keep it"), None);
    // Bounded: the first lines, at most MAX_BYTES.
    let long: String = (0..100)
        .map(|n| format!("{n:03}{}", "x".repeat(300)))
        .collect::<Vec<_>>()
        .join("\n");
    let got = after_answer(&raw(&long), &[], "zz").unwrap();
    assert!(got.len() <= evidence::MAX_BYTES);
    assert!(got.starts_with("000"));
    assert!(got.lines().count() <= evidence::DEFAULT_LINES);
}

/// The receipt line of the morning report, in both languages.
mod line {
    use super::*;
    use crate::{ladder::Lang, receipt::line::ReceiptLine};

    fn line(f: ReceiptFacts, now: DateTime<Utc>, lang: Lang) -> ReceiptLine {
        ReceiptLine::of(&build(f, now), now, lang)
    }

    #[test]
    fn answered_in_chat_typed_once_and_the_agent_went_on() {
        let mut f = facts(MessageState::Answered);
        f.pushes = vec![push(OutboundState::Delivered)];
        f.answered_in_chat = Some(t(10));
        f.delivery = Some(delivery(DeliveryState::Delivered));
        f.after = Some(AnswerScreen {
            message_id: "m1".into(),
            delivery_id: "d1".into(),
            screen: "keeping the legacy format".into(),
            captured_at: t(10) + Duration::seconds(3),
        });
        let en = line(f.clone(), t(11), Lang::En);
        assert_eq!(
            (en.by.as_deref(), en.surface.as_deref(), en.after_minutes),
            (Some("person"), Some("chat"), Some(10))
        );
        assert_eq!(
            (en.typed, en.resumed, en.delivery_id.as_deref()),
            (Some(StepStatus::Done), Some(StepStatus::Done), Some("d1"))
        );
        assert_eq!(en.stalled, None);
        assert_eq!(
            en.text,
            "receipt: answered in the chat after 10 min · typed once · the agent went on"
        );
        let zh = line(f, t(11), Lang::Zh);
        assert_eq!(
            zh.text,
            "回执：在聊天中回答，用时 10 分钟 · 已输入终端一次 · 智能体已继续工作"
        );
        // The same data, said again in the other language.
        assert_eq!(zh.words(Lang::En), en.text);
    }

    #[test]
    fn unverified_and_by_default() {
        let mut f = facts(MessageState::Answered);
        f.delivery = Some(delivery(DeliveryState::Unverified));
        let r = line(f, t(11), Lang::En);
        assert_eq!(r.typed, Some(StepStatus::Unverified));
        assert_eq!(
            r.text,
            "receipt: answered on the web after 10 min · typed UNVERIFIED"
        );
        assert_eq!(
            r.words(Lang::Zh),
            "回执：在网页上回答，用时 10 分钟 · 输入未确认（UNVERIFIED）"
        );
        let mut f = facts(MessageState::Answered);
        f.by_default = true;
        let r = line(f, t(30), Lang::En);
        assert_eq!(
            r.text,
            "receipt: answered by its default at the deadline after 10 min · nothing typed \
             (no agent ran)"
        );
        assert_eq!(
            r.words(Lang::Zh),
            "回执：到期时采用了默认答案，用时 10 分钟 · 未输入（没有运行的智能体）"
        );
    }

    #[test]
    fn a_stalled_step_says_where_it_stalled() {
        // Answered, never typed: stalled at typing, 20 min after the answer.
        let mut f = facts(MessageState::Answered);
        f.delivery = Some(delivery(DeliveryState::WaitingBoundary));
        let r = line(f, t(30), Lang::En);
        let stall = r.stalled.clone().unwrap();
        assert_eq!(
            (stall.step, stall.status, stall.minutes),
            (StepKind::Typed, StepStatus::Stalled, Some(20))
        );
        assert_eq!(
            r.text,
            "receipt: answered on the web after 10 min · stalled: answered 20 min ago, never \
             typed into the terminal"
        );
        assert_eq!(
            r.words(Lang::Zh),
            "回执：在网页上回答，用时 10 分钟 · 卡住：回答已过 20 分钟，一直未输入终端"
        );
        // Typed, and the agent not seen going on since.
        let mut f = facts(MessageState::Answered);
        f.delivery = Some(delivery(DeliveryState::Delivered));
        let r = line(f, t(30), Lang::En);
        assert_eq!(r.stalled.as_ref().map(|s| s.step), Some(StepKind::Resumed));
        assert_eq!(
            r.text,
            "receipt: answered on the web after 10 min · typed once · stalled: typed 20 min \
             ago, the agent has not been seen going on since"
        );
        assert_eq!(
            r.words(Lang::Zh),
            "回执：在网页上回答，用时 10 分钟 · 已输入终端一次 · 卡住：输入已过 20 分钟，此后未见\
             智能体继续"
        );
        // A push that never reached the chat, answered on the web meanwhile.
        let mut f = facts(MessageState::Answered);
        f.pushes = vec![push(OutboundState::Dead)];
        f.delivery = Some(delivery(DeliveryState::Delivered));
        let r = line(f, t(12), Lang::En);
        assert_eq!(r.stalled.as_ref().map(|s| s.step), Some(StepKind::Pushed));
        assert!(
            r.text.ends_with("never delivered by the gateway"),
            "{}",
            r.text
        );
        assert!(
            r.words(Lang::Zh).contains("网关一直未送达"),
            "{}",
            r.words(Lang::Zh)
        );
        // A failed delivery: not typed, with its error.
        let mut f = facts(MessageState::Answered);
        let mut d = delivery(DeliveryState::Failed);
        d.last_error = Some("terminal gone".into());
        f.delivery = Some(d);
        let r = line(f, t(12), Lang::Zh);
        assert!(
            r.text.ends_with("卡住：未能输入终端（terminal gone）"),
            "{}",
            r.text
        );
        assert_eq!(
            r.words(Lang::En),
            "receipt: answered on the web after 10 min · stalled: not typed into the terminal \
             (terminal gone)"
        );
    }
}
