use chrono::Utc;

use super::*;
use crate::ladder::Lang;
use crate::{
    agent_state::{ErrorKind, ResetTime, record_of},
    model::{AgentConfig, Execution, Provider, Task, TaskStatus},
};

fn view(unattended: bool, parent: Option<&str>, status: ExecutionStatus) -> TaskView {
    let now = Utc::now();
    TaskView {
        task: Task {
            id: "t".into(),
            title: "Fix the build".into(),
            description: None,
            project_id: None,
            parent_task_id: parent.map(str::to_string),
            status: TaskStatus::InProgress,
            unattended,
            agent: AgentConfig {
                provider: Provider::Claude,
                command: None,
                cwd: None,
                env: Default::default(),
                restart_on_interrupt: false,
                recovery: None,
            },
            created_at: now,
            updated_at: now,
        },
        execution: Some(Execution {
            id: "e".into(),
            task_id: "t".into(),
            status,
            session_id: None,
            exit_code: None,
            created_at: now,
            ended_at: None,
            node_id: None,
            node_name: None,
            unreadable_holder: None,
        }),
        open_ask: false,
        agent_state: None,
    }
}

fn change(state: AgentState) -> StateChange {
    StateChange {
        task_id: "t".into(),
        execution_id: "e".into(),
        previous: Some(AgentState::Working),
        state,
        lines: vec!["Error: boom".into()],
        reset_at: None,
        at: Utc::now(),
    }
}

fn told(state: AgentState, v: &TaskView, plan_active: bool) -> Told {
    let c = change(state);
    after_change(
        &c,
        &record_of(&c),
        Context {
            view: v,
            plan_active,
        },
    )
}

fn gave_up(gave_up: bool) -> AgentState {
    AgentState::Erroring {
        kind: ErrorKind::Overloaded,
        attempt: None,
        of: None,
        gave_up,
    }
}

#[test]
fn an_unattended_task_is_told_its_alarms_once_per_state() {
    let v = view(true, None, ExecutionStatus::Running);
    for state in [
        AgentState::Exited { code: 3 },
        AgentState::Crashed { signal: 9 },
        AgentState::LoggedOut,
        AgentState::Stalled { silent_secs: 1200 },
        gave_up(true),
    ] {
        let t = told(state.clone(), &v, false);
        let push = t.push.unwrap_or_else(|| panic!("{state:?} is pushed"));
        assert_eq!(push.key, format!("agent-state:e:{}", state.name()));
        assert!(push.text.contains("Error: boom"), "{}", push.text);
        assert!(push.text.contains(REPLIES), "{}", push.text);
        assert!(push.text.contains(&crate::agent_state::reason(&state)));
    }
    for state in [
        AgentState::Working,
        AgentState::WaitingForPerson { dialog: None },
        gave_up(false),
        // The recovery tells a usage limit.
        AgentState::UsageLimited {
            reset: ResetTime::parse("9:57am"),
        },
    ] {
        assert_eq!(told(state.clone(), &v, false).push, None, "{state:?}");
    }
}

#[test]
fn attended_and_stopped_agents_are_not_pushed() {
    let attended = view(false, None, ExecutionStatus::Running);
    assert_eq!(
        told(AgentState::Crashed { signal: 9 }, &attended, false).push,
        None
    );
    // A person's Stop ends the process with a signal: not a crash to tell.
    let stopped = view(true, Some("p"), ExecutionStatus::Stopped);
    assert_eq!(
        told(AgentState::Crashed { signal: 15 }, &stopped, false),
        Told::default()
    );
    // A superseded execution's change says nothing either.
    let v = view(true, None, ExecutionStatus::Running);
    let mut c = change(AgentState::LoggedOut);
    c.execution_id = "older".into();
    let t = after_change(
        &c,
        &record_of(&c),
        Context {
            view: &v,
            plan_active: false,
        },
    );
    assert_eq!(t, Told::default());
}

#[test]
fn finished_is_one_note_not_an_alarm() {
    let v = view(true, None, ExecutionStatus::Running);
    let push = told(AgentState::Idle, &v, false).push.unwrap();
    assert_eq!(push.key, "agent-finished:t:e");
    assert!(push.text.starts_with("[Agent finished]"), "{}", push.text);
    assert!(!push.text.contains(REPLIES));
    // Exit 0 is the same note (the same key: one per execution).
    let exited = told(AgentState::Exited { code: 0 }, &v, false)
        .push
        .unwrap();
    assert_eq!(exited.key, push.key);
    // Tasks left in its plan: idle between them is not finished.
    assert_eq!(told(AgentState::Idle, &v, true).push, None);
}

#[test]
fn a_derived_task_tells_its_parent() {
    let v = view(false, Some("p"), ExecutionStatus::Running);
    for state in [
        AgentState::LoggedOut,
        AgentState::Stalled { silent_secs: 1200 },
        AgentState::UsageLimited { reset: None },
        gave_up(true),
    ] {
        let parent = told(state.clone(), &v, false).parent.unwrap();
        assert_eq!(parent.parent_task_id, "p");
        assert_eq!(
            parent.dedup_key,
            format!("agent-state:{}:t:e", state.name())
        );
        assert_eq!(parent.payload["agentState"], state.name().as_str());
        assert_eq!(parent.payload["lines"][0], "Error: boom");
    }
    // Exits reach the parent through its exit event; working says nothing.
    for state in [AgentState::Exited { code: 1 }, AgentState::Working] {
        assert_eq!(told(state, &v, false).parent, None);
    }
}

#[test]
fn who_needs_a_person() {
    let needs = |state: AgentState| needs_you(&record_of(&change(state)));
    assert!(needs(AgentState::Exited { code: 3 }));
    assert!(!needs(AgentState::Exited { code: 0 }));
    assert!(needs(AgentState::Crashed { signal: 9 }));
    assert!(needs(AgentState::LoggedOut));
    assert!(needs(AgentState::Stalled { silent_secs: 60 }));
    assert!(needs(AgentState::UsageLimited { reset: None }));
    assert!(needs(gave_up(true)));
    assert!(!needs(gave_up(false)));
    assert!(!needs(AgentState::Idle));
    assert!(!needs(AgentState::WaitingForPerson { dialog: None }));
}

#[test]
fn the_replies_are_single_words() {
    assert_eq!(reply_action("restart"), Some(ReplyAction::Resume));
    assert_eq!(reply_action(" Resume. "), Some(ReplyAction::Resume));
    assert_eq!(reply_action("STOP!"), Some(ReplyAction::Stop));
    assert_eq!(
        reply_action("stop [[tower:task=cabcdefghijklmnopqrstuvwx]]"),
        Some(ReplyAction::Stop)
    );
    assert_eq!(reply_action("please stop the build"), None);
    assert_eq!(reply_action("restart it tomorrow"), None);
}

#[test]
fn the_recovery_decides_what_the_person_is_told() {
    let v = view(true, None, ExecutionStatus::Running);
    let with = |state: AgentState, tell: Tell, unattended: bool| {
        let c = change(state.clone());
        let r = record_of(&c);
        let own = after_change(
            &c,
            &r,
            Context {
                view: &v,
                plan_active: false,
            },
        )
        .push;
        with_recovery(own, tell, &c, &r, unattended)
    };
    // A crash the recovery restarts: no alarm now.
    assert_eq!(
        with(AgentState::Exited { code: 3 }, Tell::Nothing, true),
        None
    );
    // Its own rule holds where the recovery has no part (the failure is told).
    let failed = with(AgentState::Exited { code: 3 }, Tell::NotMine, true).expect("told");
    assert_eq!(failed.key, push_key("e", AgentStateName::Exited));
    // A usage limit is not an alarm of its own: told once, with when it resumes.
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-06T09:57:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|_| Utc::now());
    let limited = AgentState::UsageLimited { reset: None };
    assert_eq!(
        with(limited.clone(), Tell::NotMine, true),
        None,
        "its own rule says nothing"
    );
    let resume = with(limited.clone(), Tell::WillResumeAt(at), true).expect("told");
    assert_eq!(resume.key, push_key("e", AgentStateName::UsageLimited));
    assert!(
        resume.text.contains("resume it at 09:57"),
        "{}",
        resume.text
    );
    assert!(resume.text.contains(REPLIES));
    // Claude Code waits for its reset by itself: it carries on at its reset,
    // Harness only checks after it (the words say so, not "will resume").
    let check = at + chrono::Duration::minutes(2);
    let by_itself = Tell::ContinuesByItself {
        cli: "Claude Code",
        reset: Some(at),
        check,
    };
    let waits = with(limited.clone(), by_itself, true).expect("told");
    assert_eq!(waits.key, push_key("e", AgentStateName::UsageLimited));
    assert!(
        waits.text.contains(
            "Claude Code will continue by itself at 09:57 UTC; Harness checks at 09:59 UTC \
             on Dec 6 (2026-12-06T09:59:00Z) and resumes it if it has not."
        ),
        "{}",
        waits.text
    );
    assert!(
        !waits.text.contains("Harness will resume"),
        "{}",
        waits.text
    );
    assert!(waits.text.contains(REPLIES));
    // No printed reset: when its limit resets, and the check's time.
    let unknown = with(
        limited.clone(),
        Tell::ContinuesByItself {
            cli: "Claude Code",
            reset: None,
            check,
        },
        true,
    )
    .expect("told");
    assert!(
        unknown
            .text
            .contains("will continue by itself when its limit resets; Harness checks at 09:59"),
        "{}",
        unknown.text
    );
    // With automatic resume off: an alarm.
    let alarm = with(limited, Tell::Alarm { escalated: false }, true).expect("told");
    assert!(
        alarm.text.starts_with("[Agent usage limited]"),
        "{}",
        alarm.text
    );
    // The per-hour cap reached: the alarm says so.
    let capped = with(
        AgentState::Crashed { signal: 9 },
        Tell::Alarm { escalated: true },
        true,
    )
    .expect("told");
    assert!(
        capped.text.contains("does not try again"),
        "{}",
        capped.text
    );
    // A dialog nothing answers: told like a question.
    let dialog = AgentState::WaitingForPerson {
        dialog: Some((
            "Switch model?".into(),
            vec!["Switch".into(), "Cancel".into()],
        )),
    };
    let q = with(dialog, Tell::Question, true).expect("told");
    assert!(q.text.contains("dialog"), "{}", q.text);
    // Never an attended task, whatever the recovery says.
    assert_eq!(
        with(
            AgentState::LoggedOut,
            Tell::Alarm { escalated: false },
            false
        ),
        None
    );
}

/// Every push text in both languages: the English one as before, the
/// Chinese one with no English phrase left but the reason (quoted as
/// recorded), the reply keywords and the names.
#[test]
fn each_push_text_in_both_languages() {
    let v = view(true, None, ExecutionStatus::Running);
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-06T09:57:00Z")
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|_| Utc::now());
    let check = at + chrono::Duration::minutes(2);
    let push = |lang: Lang, state: AgentState, tell: Tell| {
        let c = change(state);
        let r = record_of(&c);
        let ctx = Context {
            view: &v,
            plan_active: false,
        };
        let own = after_change_in(lang, &c, &r, ctx).push;
        with_recovery_in(lang, own, tell, &c, &r, true).map(|w| (w.text, r.reason))
    };
    let limited = || AgentState::UsageLimited { reset: None };
    let cases = |lang| {
        vec![
            push(lang, AgentState::Exited { code: 3 }, Tell::NotMine),
            push(
                lang,
                AgentState::LoggedOut,
                Tell::Alarm { escalated: false },
            ),
            push(lang, limited(), Tell::WillResumeAt(at)),
            push(
                lang,
                limited(),
                Tell::ContinuesByItself {
                    cli: "Claude Code",
                    reset: Some(at),
                    check,
                },
            ),
            push(
                lang,
                limited(),
                Tell::ContinuesByItself {
                    cli: "Claude Code",
                    reset: None,
                    check,
                },
            ),
            push(
                lang,
                AgentState::Crashed { signal: 9 },
                Tell::Alarm { escalated: true },
            ),
            push(lang, limited(), Tell::Question),
            push(lang, AgentState::Exited { code: 0 }, Tell::NotMine),
        ]
    };
    let en: Vec<_> = cases(Lang::En).into_iter().flatten().collect();
    let zh: Vec<_> = cases(Lang::Zh).into_iter().flatten().collect();
    assert_eq!((en.len(), zh.len()), (8, 8));
    // English: the default functions' words.
    assert!(
        en[0]
            .0
            .starts_with("[Agent exited] This task's agent is exited with code 3.")
    );
    assert!(en[0].0.contains("Last lines on its screen:\n> Error: boom"));
    assert!(en[0].0.ends_with(REPLIES));
    assert!(
        en[2]
            .0
            .contains("Harness will resume it at 09:57 on Dec 6 UTC (2026-12-06T09:57:00Z).")
    );
    assert!(
        en[7]
            .0
            .starts_with("[Agent finished] This task's agent finished its work")
    );
    // Chinese.
    assert!(
        zh[0]
            .0
            .starts_with("[智能体已退出] 这个任务的智能体已退出：退出码 3。"),
        "{}",
        zh[0].0
    );
    assert!(
        zh[0].0.contains("屏幕上的最后几行：\n> Error: boom"),
        "{}",
        zh[0].0
    );
    assert!(zh[0].0.ends_with(replies(Lang::Zh)), "{}", zh[0].0);
    assert!(
        zh[2]
            .0
            .contains("Harness 将于 UTC 12月6日 09:57（2026-12-06T09:57:00Z）恢复它。"),
        "{}",
        zh[2].0
    );
    assert!(
        zh[3]
            .0
            .contains("Claude Code 会于 UTC 09:57 自行继续；Harness 将于 UTC 12月6日 09:59"),
        "{}",
        zh[3].0
    );
    assert!(
        zh[4].0.contains("会在用量限制重置后自行继续"),
        "{}",
        zh[4].0
    );
    assert!(zh[5].0.contains("不会再自行尝试"), "{}", zh[5].0);
    assert!(zh[6].0.contains("对话框"), "{}", zh[6].0);
    assert!(zh[7].0.starts_with("[智能体已完成]"), "{}", zh[7].0);
    let keep = [
        "Harness", "Claude", "Code", "UTC", "Error", "boom", "restart", "resume", "stop", "am",
        "pm", "CLI", "SIGKILL",
    ];
    // The reason too is written in Chinese (the CLI's own words quoted).
    for (text, _) in &zh {
        let english: Vec<&str> = text
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() > 1 && !keep.contains(w))
            .collect();
        assert!(english.is_empty(), "English {english:?} left in “{text}”");
    }
}
