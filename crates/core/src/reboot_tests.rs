use chrono::Utc;

use super::*;
use crate::model::{AgentConfig, ExecutionStatus, Task};
use crate::outbox::MAX_PUSH_CHARS;

fn execution(id: &str) -> Execution {
    Execution {
        id: id.into(),
        task_id: "t".into(),
        status: ExecutionStatus::Failed,
        session_id: None,
        exit_code: None,
        created_at: Utc::now(),
        ended_at: Some(Utc::now()),
        node_id: Some("n".into()),
        node_name: None,
        unreadable_holder: None,
    }
}

fn view(provider: Provider, unattended: bool, restart: bool) -> TaskView {
    let now = Utc::now();
    TaskView {
        task: Task {
            id: "t".into(),
            title: "Fix the build".into(),
            description: None,
            project_id: None,
            parent_task_id: None,
            status: TaskStatus::InProgress,
            unattended,
            agent: AgentConfig {
                provider,
                command: (provider == Provider::Command).then(|| vec!["make".into()]),
                cwd: None,
                env: Default::default(),
                restart_on_interrupt: restart,
                recovery: None,
            },
            created_at: now,
            updated_at: now,
        },
        execution: Some(execution("e1")),
        open_ask: false,
        agent_state: None,
    }
}

#[test]
fn unattended_agents_resume_by_provider_attended_ones_are_untouched() {
    let e1 = execution("e1");
    for provider in [Provider::Claude, Provider::Codex] {
        assert_eq!(
            decide(&view(provider, true, false), &e1, None),
            Decision::Resume(How::Session)
        );
        assert_eq!(
            decide(&view(provider, false, false), &e1, None),
            Decision::Untouched
        );
    }
    assert_eq!(
        decide(&view(Provider::Command, true, true), &e1, None),
        Decision::Resume(How::Restart)
    );
    assert_eq!(
        decide(&view(Provider::Command, true, false), &e1, None),
        Decision::Leave(Reason::CommandWithoutRestart)
    );
    assert_eq!(
        decide(&view(Provider::Command, false, true), &e1, None),
        Decision::Untouched,
        "an attended task is never restarted, whatever its flag"
    );
}

#[test]
fn only_the_latest_execution_of_an_open_task_and_never_after_a_stopped_resume() {
    let e1 = execution("e1");
    let mut newer = view(Provider::Claude, true, false);
    newer.execution = Some(execution("e2"));
    assert_eq!(
        decide(&newer, &e1, None),
        Decision::Leave(Reason::StartedAgain)
    );
    for status in [TaskStatus::Done, TaskStatus::Cancelled] {
        let mut closed = view(Provider::Claude, true, false);
        closed.task.status = status;
        assert_eq!(
            decide(&closed, &e1, None),
            Decision::Leave(Reason::TaskClosed)
        );
    }
    assert_eq!(
        decide(
            &view(Provider::Claude, true, false),
            &e1,
            Some(Reason::ResumedBefore)
        ),
        Decision::Leave(Reason::ResumedBefore)
    );
}

#[test]
fn an_execution_started_by_an_automatic_resume_is_known_by_the_one_before() {
    use RebootState::*;
    // Under way when its server stopped, or done: resumed or restarted.
    assert_eq!(
        resumed_before(Some(Claimed), None),
        Some(Reason::StoppedDuringResume)
    );
    assert_eq!(
        resumed_before(Some(Done), Some("resumed session s-1")),
        Some(Reason::ResumedBefore)
    );
    assert_eq!(
        resumed_before(Some(Done), Some("restarted")),
        Some(Reason::ResumedBefore)
    );
    // Not resumed (a person's start followed), a decision pending, none.
    assert_eq!(
        resumed_before(Some(Done), Some("not resumed: no provider session known")),
        None
    );
    assert_eq!(
        resumed_before(
            Some(Claimed),
            Some("not resumed: it was started again since")
        ),
        None
    );
    assert_eq!(resumed_before(Some(Pending), None), None);
    assert_eq!(resumed_before(None, None), None);
}

#[test]
fn a_provider_agent_resumes_only_with_its_session() {
    assert_eq!(
        start_with(How::Session, Some("s-1".into())),
        Ok(Some("s-1".into()))
    );
    assert_eq!(start_with(How::Session, None), Err(Reason::NoSession));
    assert_eq!(start_with(How::Restart, None), Ok(None));
}

fn entry(id: &str, provider: Provider, outcome: Outcome) -> Entry {
    Entry {
        task_id: id.into(),
        title: format!("Task {id}"),
        provider,
        outcome,
    }
}

#[test]
fn one_report_lists_what_was_resumed_and_what_was_not_with_why() {
    assert_eq!(report_text(&[]), None);
    let text = report_text(&[
        entry(
            "c1",
            Provider::Claude,
            Outcome::Resumed {
                session_id: "sess-1".into(),
            },
        ),
        entry("c2", Provider::Command, Outcome::Restarted),
        entry(
            "c3",
            Provider::Command,
            Outcome::NotResumed(Reason::CommandWithoutRestart),
        ),
        entry(
            "c4",
            Provider::Codex,
            Outcome::NotResumed(Reason::StartFailed("no such directory".into())),
        ),
        entry(
            "c5",
            Provider::Codex,
            Outcome::NotResumed(Reason::NoSession),
        ),
    ])
    .unwrap();
    assert!(text.contains("Resumed (2):"), "{text}");
    assert!(text.contains("- Task c1 [c1]: its Claude Code session sess-1"));
    assert!(text.contains("- Task c2 [c2]: restarted from its start"));
    assert!(text.contains("Not resumed (3)"));
    assert!(text.contains("- Task c3 [c3]: command agent without restartOnInterrupt"));
    assert!(text.contains("- Task c4 [c4]: start failed: no such directory"));
    assert!(text.contains("- Task c5 [c5]: no provider session known"));
    let only_left = report_text(&[entry(
        "c6",
        Provider::Claude,
        Outcome::NotResumed(Reason::Decided(
            "not resumed: no provider session known".into(),
        )),
    )])
    .unwrap();
    assert!(!only_left.contains("Resumed ("));
    assert!(only_left.contains("- Task c6 [c6]: no provider session known"));
}

#[test]
fn a_long_report_is_cut_at_a_line_within_the_push_limit() {
    let many: Vec<Entry> = (0..500)
        .map(|i| entry(&format!("c{i}"), Provider::Command, Outcome::Restarted))
        .collect();
    let text = report_text(&many).unwrap();
    assert!(text.chars().count() <= MAX_PUSH_CHARS);
    assert!(text.ends_with("\n…"));
}

#[test]
fn a_boots_node_is_its_owner_before_the_last_colon() {
    assert_eq!(node_of("node-a:boot1"), "node-a");
    assert_eq!(node_of("plain"), "plain");
}

#[test]
fn the_report_and_the_notes_are_written_in_the_targets_language() {
    use crate::ladder::Lang;
    let entries = [
        entry(
            "c1",
            Provider::Claude,
            Outcome::Resumed {
                session_id: "sess-1".into(),
            },
        ),
        entry(
            "c3",
            Provider::Command,
            Outcome::NotResumed(Reason::CommandWithoutRestart),
        ),
        entry(
            "c4",
            Provider::Codex,
            Outcome::NotResumed(Reason::StartFailed("no such directory".into())),
        ),
    ];
    let zh = report_text_in(Lang::Zh, &entries).unwrap();
    assert!(zh.starts_with("Harness 重启后发现"), "{zh}");
    assert!(
        zh.contains("已恢复（1）：\n- Task c1 [c1]: 它的 Claude Code 会话 sess-1"),
        "{zh}"
    );
    assert!(zh.contains("未恢复（2）"), "{zh}");
    assert!(
        zh.contains("- Task c3 [c3]: command 智能体没有设置 restartOnInterrupt"),
        "{zh}"
    );
    assert!(
        zh.contains("- Task c4 [c4]: 启动失败：no such directory"),
        "{zh}"
    );
    assert_eq!(report_text_in(Lang::En, &entries), report_text(&entries));
    // The notes as stored (English) are read back in the language asked for.
    for o in [
        Outcome::Resumed {
            session_id: "s".into(),
        },
        Outcome::Restarted,
        Outcome::NotResumed(Reason::NoSession),
        Outcome::NotResumed(Reason::ResumedBefore),
        Outcome::NotResumed(Reason::StartFailed("boom".into())),
    ] {
        let note = o.note();
        let en = note_words(Some(&note)).unwrap();
        let zh = note_words_in(Lang::Zh, Some(&note)).unwrap();
        assert!(zh.starts_with("重启后"), "{note} → {zh}");
        let english: Vec<&str> = zh
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() > 1 && !["restartOnInterrupt", "boom"].contains(w))
            .collect();
        assert!(english.is_empty(), "{note} → {zh} (en: {en})");
    }
    assert_eq!(note_words_in(Lang::Zh, Some(ATTENDED)), None);
    assert_eq!(
        note_words_in(Lang::Zh, Some("not resumed: something new")).as_deref(),
        Some("重启后未恢复：something new"),
        "a text no reason writes is kept"
    );
}
