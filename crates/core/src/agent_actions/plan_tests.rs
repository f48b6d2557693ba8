use chrono::{DateTime, Utc};

use super::*;
use crate::{
    agent_state::ErrorKind,
    model::{AgentConfig, Execution, Task},
    store::ActionState,
};

fn view(provider: Provider, unattended: bool, status: ExecutionStatus) -> TaskView {
    let now = Utc::now();
    TaskView {
        task: Task {
            id: "t".into(),
            title: "t".into(),
            description: None,
            project_id: None,
            parent_task_id: None,
            status: TaskStatus::InProgress,
            unattended,
            agent: AgentConfig {
                provider,
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
            session_id: Some("s".into()),
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

fn change(state: AgentState, at: DateTime<Utc>) -> StateChange {
    StateChange {
        task_id: "t".into(),
        execution_id: "e".into(),
        previous: None,
        state,
        lines: Vec::new(),
        reset_at: None,
        at,
    }
}

fn erroring(gave_up: bool) -> AgentState {
    AgentState::Erroring {
        kind: ErrorKind::Overloaded,
        attempt: None,
        of: None,
        gave_up,
    }
}

fn facts<'a>(
    change: &'a StateChange,
    view: &'a TaskView,
    policy: &'a RecoveryPolicy,
    open: &'a [AgentAction],
) -> Facts<'a> {
    Facts {
        change,
        view,
        policy,
        open,
        api_continues: 0,
        restarts: 0,
    }
}

fn action(kind: ActionKind, reason: ActionReason, text: Option<&str>) -> AgentAction {
    let now = Utc::now();
    AgentAction {
        id: "a".into(),
        task_id: "t".into(),
        execution_id: "e".into(),
        node_id: None,
        action: kind,
        reason,
        text: text.map(str::to_string),
        due_at: now,
        dedup_key: "k".into(),
        state: ActionState::Running,
        attempts: 1,
        next_attempt_at: None,
        lease_owner: None,
        lease_expires_at: None,
        last_error: None,
        result: None,
        delivery_id: None,
        started_execution_id: None,
        created_at: now,
        updated_at: now,
        done_at: None,
    }
}

#[test]
fn a_usage_limit_is_parked_until_the_printed_reset_or_the_settable_wait() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let v = view(Provider::Codex, true, ExecutionStatus::Running);
    let mut c = change(AgentState::UsageLimited { reset: None }, now);
    c.reset_at = Some(now + Duration::minutes(30));
    let d = decide(&facts(&c, &v, &p, &[]));
    let planned = d.planned.expect("a wake-up");
    assert_eq!(
        (planned.action, planned.reason),
        (ActionKind::Continue, ActionReason::UsageLimit)
    );
    assert_eq!(
        planned.due_at,
        now + Duration::minutes(31),
        "reset + margin"
    );
    assert_eq!(d.tell, Tell::WillResumeAt(planned.due_at));
    assert!(!planned.on_its_node, "typed through a delivery: any node");
    // Without a printed reset: the wait, default an hour.
    c.reset_at = None;
    let d = decide(&facts(&c, &v, &p, &[]));
    assert_eq!(d.planned.unwrap().due_at, now + Duration::hours(1));
    // The policy says no: told, nothing automatic.
    let off = RecoveryPolicy {
        usage_limit_resume: false,
        ..p
    };
    let d = decide(&facts(&c, &v, &off, &[]));
    assert_eq!(
        (d.planned, d.tell),
        (None, Tell::Alarm { escalated: false })
    );
}

#[test]
fn a_cli_that_waits_for_its_reset_is_left_alone_and_checked_after_it() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let v = view(Provider::Claude, true, ExecutionStatus::Running);
    let mut c = change(AgentState::UsageLimited { reset: None }, now);
    c.reset_at = Some(now + Duration::minutes(10));
    c.lines = vec![
        "⚠ Usage limit reached · limit resets 12:26pm".into(),
        "  Continuing automatically at 12:26pm · Esc to cancel".into(),
    ];
    let d = decide(&facts(&c, &v, &p, &[]));
    let planned = d.planned.unwrap();
    assert_eq!(planned.reason, ActionReason::UsageLimitSelfWait);
    assert_eq!(planned.due_at, now + Duration::minutes(12), "reset + 120 s");
    // Told that the CLI carries on by itself at its reset, and when Harness
    // checks: not that Harness resumes it.
    assert_eq!(
        d.tell,
        Tell::ContinuesByItself {
            cli: "Claude Code",
            reset: c.reset_at,
            check: planned.due_at,
        }
    );
    assert!(planned.on_its_node, "it reads the screen there");
    let watchdog =
        vec!["✻ 5-hour limit reached · retrying in 1m 6s (12:33pm) · attempt 1/300".into()];
    assert!(waits_by_itself(&watchdog));
    assert!(!waits_by_itself(&[
        "■ You’ve hit your usage limit. try again at 12:26 PM.".into()
    ]));
    // At its time: typed only if the screen still shows the limit.
    let a = action(ActionKind::Continue, ActionReason::UsageLimitSelfWait, None);
    assert_eq!(step(&a, &v), Step::TypeIfStillLimited);
}

#[test]
fn an_error_loop_gets_continue_after_a_doubling_backoff_up_to_the_cap_then_escalates() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let v = view(Provider::Claude, true, ExecutionStatus::Running);
    // Still retrying by itself: nothing yet.
    let c = change(erroring(false), now);
    assert_eq!(decide(&facts(&c, &v, &p, &[])), decision(Tell::Nothing));
    let c = change(erroring(true), now);
    for (done, wait) in [(0, 60), (1, 120), (2, 240)] {
        let f = Facts {
            api_continues: done,
            ..facts(&c, &v, &p, &[])
        };
        let d = decide(&f);
        let planned = d.planned.unwrap();
        assert_eq!(planned.reason, ActionReason::ApiErrors);
        assert_eq!(planned.due_at, now + Duration::seconds(wait), "{done}");
        assert_eq!(d.tell, Tell::Nothing);
    }
    let capped = Facts {
        api_continues: 3,
        ..facts(&c, &v, &p, &[])
    };
    let d = decide(&capped);
    assert_eq!((d.planned, d.tell), (None, Tell::Alarm { escalated: true }));
}

#[test]
fn a_crash_is_restarted_with_its_session_up_to_the_cap() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let v = view(Provider::Claude, true, ExecutionStatus::Failed);
    for state in [
        AgentState::Exited { code: 3 },
        AgentState::Crashed { signal: 9 },
    ] {
        let c = change(state, now);
        let d = decide(&facts(&c, &v, &p, &[]));
        let planned = d.planned.unwrap();
        assert_eq!(
            (planned.action, planned.due_at),
            (ActionKind::Restart, now + Duration::seconds(10))
        );
        let f = Facts {
            restarts: 2,
            ..facts(&c, &v, &p, &[])
        };
        assert_eq!(decide(&f).tell, Tell::Alarm { escalated: true });
    }
    // A clean exit is finished work, not a crash.
    let c = change(AgentState::Exited { code: 0 }, now);
    assert_eq!(decide(&facts(&c, &v, &p, &[])).planned, None);
    // A person's Stop is not a crash.
    let stopped = view(Provider::Claude, true, ExecutionStatus::Stopped);
    let c = change(AgentState::Crashed { signal: 15 }, now);
    assert_eq!(decide(&facts(&c, &stopped, &p, &[])).planned, None);
    // A command agent has no session: restarted only with restartOnInterrupt.
    let mut command = view(Provider::Command, true, ExecutionStatus::Failed);
    let c = change(AgentState::Exited { code: 1 }, now);
    assert_eq!(
        decide(&facts(&c, &command, &p, &[])).tell,
        Tell::Alarm { escalated: false }
    );
    command.task.agent.restart_on_interrupt = true;
    let planned = decide(&facts(&c, &command, &p, &[])).planned.unwrap();
    assert_eq!(planned.action, ActionKind::Restart);
    let a = action(ActionKind::Restart, ActionReason::Crash, None);
    assert_eq!(
        step(&a, &command),
        Step::Start {
            session: false,
            wake: false
        }
    );
    assert_eq!(
        step(&a, &v),
        Step::Start {
            session: true,
            wake: true
        }
    );
}

#[test]
fn an_exit_while_parked_at_a_usage_limit_waits_for_the_reset() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let v = view(Provider::Codex, true, ExecutionStatus::Failed);
    let parked = [action(ActionKind::Continue, ActionReason::UsageLimit, None)];
    let c = change(AgentState::Exited { code: 1 }, now);
    assert_eq!(decide(&facts(&c, &v, &p, &parked)), decision(Tell::Nothing));
    // At the reset the exited agent is resumed with its session.
    assert_eq!(
        step(&parked[0], &v),
        Step::Start {
            session: true,
            wake: true
        }
    );
}

#[test]
fn logged_out_is_never_retried_and_stalled_is_told_with_an_optional_nudge() {
    let now = Utc::now();
    let v = view(Provider::Claude, true, ExecutionStatus::Running);
    let p = RecoveryPolicy::default();
    let c = change(AgentState::LoggedOut, now);
    let d = decide(&facts(&c, &v, &p, &[]));
    assert_eq!(
        (d.planned, d.tell),
        (None, Tell::Alarm { escalated: false })
    );
    assert!(d.cancel.is_some(), "a wake-up planned before is moot");
    let c = change(AgentState::Stalled { silent_secs: 1200 }, now);
    assert_eq!(
        decide(&facts(&c, &v, &p, &[])).planned,
        None,
        "off by default"
    );
    let nudging = RecoveryPolicy {
        stalled_nudge: "Are you stuck? Carry on.".into(),
        ..p
    };
    let d = decide(&facts(&c, &v, &nudging, &[]));
    assert_eq!(d.tell, Tell::Alarm { escalated: false }, "told either way");
    let planned = d.planned.unwrap();
    assert_eq!(planned.text.as_deref(), Some("Are you stuck? Carry on."));
    let a = action(
        ActionKind::Nudge,
        ActionReason::Stalled,
        planned.text.as_deref(),
    );
    assert_eq!(step(&a, &v), Step::Type("Are you stuck? Carry on.".into()));
}

#[test]
fn a_dialog_is_answered_with_the_option_that_keeps_the_task_as_configured() {
    let now = Utc::now();
    let v = view(Provider::Codex, true, ExecutionStatus::Running);
    let p = RecoveryPolicy::default();
    let switch = AgentState::WaitingForPerson {
        dialog: Some((
            "Approaching rate limits — Switch to gpt-6-luna for lower credit usage?".into(),
            vec![
                "Switch to gpt-6-luna".into(),
                "Keep current model".into(),
                "Keep current model (never show again)".into(),
            ],
        )),
    };
    let d = decide(&facts(&change(switch.clone(), now), &v, &p, &[]));
    let planned = d.planned.unwrap();
    assert_eq!(
        (planned.action, planned.text.as_deref(), d.tell),
        (ActionKind::AnswerDialog, Some("2"), Tell::Nothing)
    );
    assert!(planned.on_its_node, "a key pressed in its terminal");
    // No option keeps it as configured: told like a question.
    let question = AgentState::WaitingForPerson {
        dialog: Some(("Pick a colour".into(), vec!["Red".into(), "Blue".into()])),
    };
    let d = decide(&facts(&change(question, now), &v, &p, &[]));
    assert_eq!((d.planned, d.tell), (None, Tell::Question));
    let off = RecoveryPolicy {
        answer_dialogs: false,
        ..p
    };
    assert_eq!(
        decide(&facts(&change(switch, now), &v, &off, &[])).tell,
        Tell::Question
    );
}

#[test]
fn never_anything_automatic_for_an_attended_task_or_another_execution() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let attended = view(Provider::Claude, false, ExecutionStatus::Failed);
    for state in [
        AgentState::Crashed { signal: 9 },
        AgentState::UsageLimited { reset: None },
        erroring(true),
    ] {
        let d = decide(&facts(&change(state, now), &attended, &p, &[]));
        assert_eq!(
            (d.planned, d.tell),
            (None, Tell::Alarm { escalated: false })
        );
    }
    let mut old = change(AgentState::Crashed { signal: 9 }, now);
    old.execution_id = "older".into();
    let v = view(Provider::Claude, true, ExecutionStatus::Failed);
    assert_eq!(decide(&facts(&old, &v, &p, &[])), decision(Tell::NotMine));
    // And at the action's time: attended since → skipped.
    let a = action(ActionKind::Restart, ActionReason::Crash, None);
    assert!(matches!(step(&a, &attended), Step::Skip(_)));
}

#[test]
fn a_working_agent_cancels_what_was_planned_for_its_earlier_state() {
    let now = Utc::now();
    let p = RecoveryPolicy::default();
    let v = view(Provider::Claude, true, ExecutionStatus::Running);
    for state in [
        AgentState::Working,
        AgentState::Idle,
        AgentState::WaitingForPerson { dialog: None },
    ] {
        let d = decide(&facts(&change(state, now), &v, &p, &[]));
        assert_eq!(d.tell, Tell::NotMine);
        assert!(d.cancel.is_some());
    }
}

#[test]
fn at_its_time_an_action_does_what_still_applies() {
    let live = view(Provider::Claude, true, ExecutionStatus::Running);
    let exited = view(Provider::Claude, true, ExecutionStatus::Failed);
    let wake = action(ActionKind::Continue, ActionReason::UsageLimit, None);
    assert_eq!(step(&wake, &live), Step::Type("continue".into()));
    assert_eq!(
        step(&wake, &exited),
        Step::Start {
            session: true,
            wake: true
        }
    );
    let after_errors = action(ActionKind::Continue, ActionReason::ApiErrors, None);
    assert!(matches!(step(&after_errors, &exited), Step::Skip(_)));
    let dialog = action(ActionKind::AnswerDialog, ActionReason::Dialog, Some("2"));
    assert_eq!(step(&dialog, &live), Step::Key("2".into()));
    let restart = action(ActionKind::Restart, ActionReason::Crash, None);
    assert!(matches!(step(&restart, &live), Step::Later(_)));
    let mut started_again = exited.clone();
    if let Some(e) = started_again.execution.as_mut() {
        e.id = "newer".into();
    }
    assert!(matches!(step(&restart, &started_again), Step::Skip(_)));
    let mut closed = exited;
    closed.task.status = TaskStatus::Done;
    assert!(matches!(step(&restart, &closed), Step::Skip(_)));
}

#[test]
fn codexs_dialog_drawn_with_its_usage_limit_is_answered_before_the_wake_up() {
    use crate::agent_state::{self, Cli, Observation, Screen};
    // Recorded from Codex 0.171: the usage-limit cell and the rate-limit
    // dialog on one screen. The usage limit is the state; the dialog holds
    // the keys, so the wake-up picks its option that keeps the model first.
    let text = include_str!("../../tests/fixtures/agent_screens/codex/usage_limit.txt");
    let screen = Screen::from_text(text);
    assert!(matches!(
        agent_state::observe(Cli::Codex, &screen),
        Observation::UsageLimited { reset: Some(_) }
    ));
    let (title, options) = agent_state::dialog(Cli::Codex, &screen).expect("the dialog");
    assert!(title.starts_with("Approaching rate limits"), "{title}");
    assert_eq!(keeping_option(&options).as_deref(), Some("2"));
}
