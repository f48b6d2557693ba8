//! The morning report over a real SQLite store and a real git repository:
//! a seeded night (a finished task with commits and an answered question,
//! whose answer was never typed — its receipt says where it stalled —
//! a failed unattended task, one resumed after a restart and now asking,
//! an approval that blocks two live children, a question whose default
//! applies soon) reads as one deterministic text, ranked by what an answer
//! unblocks; a reply to the report sent to chat, through
//! `route_gateway_message`, answers each numbered item once — across a
//! retry of the same message and a second message — with valid and invalid
//! items each reported.

use std::{path::Path, process::Command, sync::Arc};

use chrono::{DateTime, Duration, TimeZone, Utc};
use harness_core::{
    Harness, HarnessConfig,
    auth::Identity,
    gateway::route_input::RouteInput,
    ids,
    model::{AgentConfig, ExecutionStatus, MessageState, Provider},
    outbox::OutboundState,
    report::NoWork,
    store::{
        ApprovalState, AskOption, Choices, NewApproval, NewAsk, NewExecution, NewProject, NewTask,
        ReportChannel, Settle, Store, Urgency,
    },
};
use harness_server::report_work::LocalWork;
use harness_store::{SqliteOptions, SqliteStore};
use serde_json::{Value, json};

pub(crate) fn t(h: u32, m: u32) -> DateTime<Utc> {
    // The night of 4 → 5 December 2026 (UTC).
    let day = if h >= 12 { 4 } else { 5 };
    Utc.with_ymd_and_hms(2026, 12, day, h, m, 0).unwrap()
}

fn agent(cwd: Option<&Path>) -> AgentConfig {
    AgentConfig {
        provider: Provider::Command,
        command: Some(vec!["true".into()]),
        cwd: cwd.map(|p| p.display().to_string()),
        env: Default::default(),
        restart_on_interrupt: false,
        recovery: None,
    }
}

async fn task(
    s: &dyn Store,
    id: &str,
    title: &str,
    project: Option<&str>,
    parent: Option<&str>,
    cwd: Option<&Path>,
    unattended: bool,
) -> String {
    s.create_task(NewTask {
        id: id.into(),
        title: title.into(),
        description: None,
        project_id: project.map(str::to_string),
        parent_task_id: parent.map(str::to_string),
        agent: agent(cwd),
        now: t(19, 0),
    })
    .await
    .unwrap();
    if unattended {
        s.set_unattended(id, true, t(19, 0)).await.unwrap();
    }
    id.to_string()
}

async fn run(s: &dyn Store, id: &str, task: &str, at: DateTime<Utc>) -> String {
    s.create_execution(NewExecution {
        id: id.into(),
        task_id: task.into(),
        token_hash: ids::token_hash(&ids::new_id()),
        status: ExecutionStatus::Running,
        node_id: Some("node-a".into()),
        now: at,
    })
    .await
    .unwrap();
    id.to_string()
}

fn ask(id: &str, task: &str, text: &str, at: DateTime<Utc>) -> NewAsk {
    NewAsk {
        id: id.into(),
        task_id: task.into(),
        question: text.into(),
        now: at,
        idempotency_key: None,
        evidence: None,
    }
}

fn choices(labels: &[&str], default: Option<(&str, DateTime<Utc>)>) -> Choices {
    Choices {
        options: labels
            .iter()
            .map(|l| AskOption {
                label: (*l).into(),
                description: None,
            })
            .collect(),
        multi_select: false,
        default: default.map(|d| d.0.to_string()),
        deadline_at: default.map(|d| d.1),
        urgency: Urgency::Normal,
        answered_by: None,
        answered_options: None,
    }
}

fn git(dir: &Path, args: &[&str], at: &str) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_DATE", at)
        .env("GIT_COMMITTER_DATE", at)
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.com")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The repository the parser task works in: one commit before the night,
/// two during its run.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"], "2026-12-04T10:00:00Z");
    std::fs::write(dir.join("README"), "parser\n").unwrap();
    git(dir, &["add", "."], "2026-12-04T10:00:00Z");
    git(dir, &["commit", "-qm", "start"], "2026-12-04T10:00:00Z");
    std::fs::write(dir.join("lexer.rs"), "fn lex() {}\nfn next() {}\n").unwrap();
    git(dir, &["add", "."], "2026-12-04T20:30:00Z");
    git(dir, &["commit", "-qm", "lexer"], "2026-12-04T20:30:00Z");
    std::fs::write(dir.join("parser.rs"), "fn parse() {}\n").unwrap();
    std::fs::write(dir.join("README"), "the parser\n").unwrap();
    git(dir, &["add", "."], "2026-12-04T21:30:00Z");
    git(dir, &["commit", "-qm", "parser"], "2026-12-04T21:30:00Z");
}

pub(crate) struct Night {
    _dir: tempfile::TempDir,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) h: Harness,
}

pub(crate) async fn night() -> Night {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("h.db").display());
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(SqliteOptions::new(&url)).await.unwrap());
    let mut config = HarnessConfig::new(ids::token_hash("admin"));
    config.node_id = "node-a".into();
    let h = Harness::new(store.clone(), config);
    let s = store.as_ref();
    let ws = s
        .ensure_workspace("cwdefault000000000000", "default", t(19, 0))
        .await
        .unwrap();
    let code = dir.path().join("alpha");
    repo(&code);
    s.create_project(NewProject {
        id: "cpalpha00000000000000".into(),
        workspace_id: ws,
        workspace_name: "default".into(),
        name: "alpha".into(),
        path: code.display().to_string(),
        now: t(19, 0),
    })
    .await
    .unwrap();
    let alpha = Some("cpalpha00000000000000");

    // Finished, with commits, a progress line and a question answered from chat.
    let parser = task(
        s,
        "ctparser0000000000000",
        "Write the parser",
        alpha,
        None,
        Some(&code),
        false,
    )
    .await;
    let e = run(s, "ceparser0000000000000", &parser, t(20, 0)).await;
    s.record_ask(ask(
        "caskdb000000000000000",
        &parser,
        "Which DB?",
        t(20, 30),
    ))
    .await
    .unwrap();
    s.answer_open_ask(&parser, "SQLite", &ids::new_id(), None, t(20, 42), true)
        .await
        .unwrap()
        .unwrap();
    s.record_notify(ask(
        "cnotify10000000000000",
        &parser,
        "lexer done, tests pass",
        t(21, 0),
    ))
    .await
    .unwrap();
    s.finish_execution(&e, ExecutionStatus::Completed, Some(0), "exited", t(22, 10))
        .await
        .unwrap();

    // Failed, unattended, not started again: an agent that needs a person.
    let flaky = task(
        s,
        "ctflaky00000000000000",
        "Fix the flaky build",
        alpha,
        None,
        None,
        true,
    )
    .await;
    let e = run(s, "ceflaky00000000000000", &flaky, t(23, 0)).await;
    s.finish_execution(&e, ExecutionStatus::Failed, Some(2), "exited", t(23, 30))
        .await
        .unwrap();

    // Interrupted by a restart, resumed automatically, now asking.
    let migrate = task(
        s,
        "ctmigrate000000000000",
        "Nightly migration",
        None,
        None,
        None,
        true,
    )
    .await;
    let e = run(s, "cemigrate000000000000", &migrate, t(1, 0)).await;
    s.interrupt_live_executions("node-a", &[], t(3, 0))
        .await
        .unwrap();
    assert!(
        s.claim_reboot(&e, None, "node-a:boot-2", None)
            .await
            .unwrap()
    );
    s.finish_reboot(
        "node-a:boot-2",
        &[(e.clone(), "resumed session sess-7".into())],
        &[],
    )
    .await
    .unwrap();
    run(s, "cemigrate200000000000", &migrate, t(3, 1)).await;
    s.record_ask_with_choices(
        ask(
            "caskmig00000000000000",
            &migrate,
            "Apply migration 12 now?",
            t(4, 0),
        ),
        choices(&["Now", "Tonight"], None),
    )
    .await
    .unwrap();

    // An approval that blocks its task's two live children.
    let deploy = task(
        s,
        "ctdeploy0000000000000",
        "Deploy",
        alpha,
        None,
        None,
        false,
    )
    .await;
    for (child, title) in [
        ("ctchild10000000000000", "Build images"),
        ("ctchild20000000000000", "Run smoke tests"),
    ] {
        task(s, child, title, alpha, Some(&deploy), None, false).await;
        run(s, &format!("ce{}", &child[2..]), child, t(4, 30)).await;
    }
    s.record_ask(ask(
        "caskpush0000000000000",
        &deploy,
        "Approve git push?",
        t(5, 0),
    ))
    .await
    .unwrap();
    s.insert_approval(NewApproval {
        id: "capush000000000000000".into(),
        task_id: deploy.clone(),
        execution_id: None,
        request_id: "caskpush0000000000000".into(),
        tool: "Bash".into(),
        input: r#"{"command":"git push origin main"}"#.into(),
        input_hash: "h1".into(),
        cwd: None,
        rule: r#"{"source":"builtin","index":0}"#.into(),
        now: t(5, 0),
        push_not_before: None,
        push: None,
    })
    .await
    .unwrap();

    // A question whose default applies in ten minutes.
    let docs = task(s, "ctdocs000000000000000", "Docs", None, None, None, false).await;
    s.record_ask_with_choices(
        ask("caskdocs0000000000000", &docs, "Publish the docs?", t(6, 0)),
        choices(&["Yes", "No"], Some(("Yes", t(7, 10)))),
    )
    .await
    .unwrap();
    Night {
        _dir: dir,
        store,
        h,
    }
}

const EXPECTED: &str = "\
Harness report, 2026-12-04 19:00 UTC → 2026-12-05 07:00 UTC

Project alpha
- Build images [task ctchild10000000000000]
  ran 2 h 30 min from 04:30: running
- Deploy [task ctdeploy0000000000000]
  05:00 approval: Bash: git push origin main → still waiting
- Fix the flaky build [task ctflaky00000000000000]
  ran 30 min from 23:00: failed at 23:30 (exit 2, exited)
- Run smoke tests [task ctchild20000000000000]
  ran 2 h 30 min from 04:30: running
- Write the parser [task ctparser0000000000000]
  ran 2 h 10 min from 20:00: finished at 22:10 (exit 0, exited)
  2 commits on main: 3 files changed, 4 insertions(+), 1 deletion(-)
  21:00 progress: lexer done, tests pass
  20:30 asked: Which DB? → “SQLite” by chat after 12 min
    receipt: answered in the chat after 12 min · stalled: answered 10 h 18 min ago, never typed into the terminal

No project
- Docs [task ctdocs000000000000000]
  06:00 asked: Publish the docs? → still waiting
- Nightly migration [task ctmigrate000000000000]
  ran 2 h from 01:00: failed at 03:00 (interrupted)
  ran 3 h 59 min from 03:01: waiting for an answer
  resumed automatically after a restart (its session sess-7)
  04:00 asked: Apply migration 12 now? → still waiting

What waits for you (4), most blocking first:
1. [approval] Deploy [task ctdeploy0000000000000]: Bash: git push origin main
   blocks 3 agents · 6 agent-h waited · answer: approve · deny: reason
2. [agent] Fix the flaky build [task ctflaky00000000000000]: the agent failed (exit code 2) and was not started again
   blocks 1 agent · 7 agent-h 30 min waited · answer: resume · stop
3. [question] Nightly migration [task ctmigrate000000000000]: Apply migration 12 now?
   options: 1 Now · 2 Tonight
   blocks 1 agent · 3 agent-h waited
4. [question] Docs [task ctdocs000000000000000]: Publish the docs?
   options: 1 Yes · 2 No
   blocks 1 agent · 1 agent-h waited · its default applies soon · default at 07:10

Reply to this message to answer: one item per line, or `1 B · 2 approve · 3 deny: not on Friday · 4 later` (options by number or label; free text after `:`).";

#[tokio::test]
async fn a_seeded_night_reads_as_one_ranked_deterministic_report() {
    let n = night().await;
    let report =
        n.h.reports()
            .report_at(
                &Identity::Admin,
                Some(t(19, 0)),
                ReportChannel::Api,
                &LocalWork,
                t(7, 0),
            )
            .await
            .unwrap();
    assert_eq!(report.text, EXPECTED, "\n{}", report.text);
    assert_eq!(report.waiting_count, 4);
    // The same facts, read again, give the same report.
    let again =
        n.h.reports()
            .report_at(
                &Identity::Admin,
                Some(t(19, 0)),
                ReportChannel::Api,
                &LocalWork,
                t(7, 0),
            )
            .await
            .unwrap();
    assert_eq!(again.text, report.text);
    assert_ne!(again.id, report.id, "each report is kept on its own");
    let kept = n.store.get_report(&report.id).await.unwrap().unwrap();
    let numbered: Vec<(u32, &str)> = kept
        .items
        .iter()
        .map(|i| (i.number, i.ref_id.as_str()))
        .collect();
    assert_eq!(
        numbered,
        [
            (1, "capush000000000000000"),
            (2, "ceflaky00000000000000"),
            (3, "caskmig00000000000000"),
            (4, "caskdocs0000000000000")
        ]
    );
    // The one count, everywhere: the report's and the waiting count agree
    // (the default of item 4 counts: it still waits).
    let waiting = n.h.reports().waiting(&Identity::Admin).await.unwrap();
    assert_eq!(
        (
            waiting.total,
            waiting.questions,
            waiting.approvals,
            waiting.agents
        ),
        (4, 2, 1, 1)
    );
    // A Workbench-like agent reads its own task and its children only.
    let agent = Identity::Agent {
        task_id: "ctdeploy0000000000000".into(),
        execution_id: "x".into(),
    };
    let mine =
        n.h.reports()
            .report_at(&agent, Some(t(19, 0)), ReportChannel::Mcp, &NoWork, t(7, 0))
            .await
            .unwrap();
    let tasks: Vec<&str> = mine.tasks.iter().map(|s| s.task_id.as_str()).collect();
    assert_eq!(
        tasks,
        [
            "ctchild10000000000000",
            "ctdeploy0000000000000",
            "ctchild20000000000000"
        ]
    );
    assert_eq!(mine.waiting_count, 1);
}

/// The report sent to chat, its parts delivered as platform messages
/// `pm-0`, `pm-1` … in chat 4242.
async fn sent_to_chat(n: &Night) -> String {
    sent_to_chat_in(n, None).await.report.id
}

/// [`sent_to_chat`] to a target of `language`, with what was sent.
pub(crate) async fn sent_to_chat_in(
    n: &Night,
    language: Option<&str>,
) -> harness_core::report::Sent {
    let config: harness_core::outbox::gateway::GatewayConfig = serde_json::from_value(json!({
        "hermes": {"accessPolicy": {"ownerIds": {"telegram": ["42"]}}}
    }))
    .unwrap();
    n.h.outbox().set_gateway_config(config).await.unwrap();
    let targets = serde_json::from_value(json!([{"label": "phone", "gateway": "hermes",
        "downstream": "telegram", "dest": "4242", "scope": "unattended", "language": language}]))
    .unwrap();
    n.h.settings().set_notify_targets(targets).await.unwrap();
    let sent =
        n.h.reports()
            .send_report(&Identity::Admin, Some(t(19, 0)), &NoWork)
            .await
            .unwrap();
    assert!(!sent.parts.is_empty());
    let owner = "node-a:test";
    let now = Utc::now();
    let claimed = n
        .store
        .claim_outbound(owner, now, now + Duration::minutes(1), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), sent.parts.len());
    for (i, row) in claimed.iter().enumerate() {
        n.store
            .settle_outbound(
                &row.id,
                owner,
                None,
                Settle::Sent {
                    state: OutboundState::Delivered,
                    platform: Some("telegram".into()),
                    chat_id: Some("4242".into()),
                    platform_message_id: Some(format!("pm-{i}")),
                    note: None,
                },
                now,
            )
            .await
            .unwrap()
            .unwrap();
    }
    sent
}

pub(crate) fn reply(pmid: &str, to: &str, text: &str) -> RouteInput {
    RouteInput {
        gateway: Some("hermes".into()),
        platform: Some("telegram".into()),
        chat_id: Some("4242".into()),
        platform_message_id: Some(pmid.into()),
        sender_id: Some("42".into()),
        reply_to_message_id: Some(to.into()),
        intent: Some("PROJECT_WORK".into()),
        content: Some(text.into()),
        ..Default::default()
    }
}

fn outcomes(v: &Value) -> Vec<(u64, bool, String)> {
    v["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|i| {
            (
                i["number"].as_u64().unwrap(),
                i["taken"].as_bool().unwrap(),
                i["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn one_reply_answers_many_items_once_through_the_gateway() {
    let n = night().await;
    let report_id = sent_to_chat(&n).await;
    let kept = n.store.get_report(&report_id).await.unwrap().unwrap();
    assert_eq!(kept.channel, ReportChannel::Chat);

    // Malformed: nothing changes, one clear message.
    let out =
        n.h.gateway()
            .route_gateway_message(&reply("in-0", "pm-0", "1 approve and thanks!\nok"))
            .await
            .unwrap();
    assert_eq!(out["mode"], "report_reply_malformed", "{out}");
    assert!(
        out["acknowledgement"]
            .as_str()
            .unwrap()
            .starts_with("Nothing was answered: “ok” does not start with an item's number"),
        "{out}"
    );
    assert_eq!(
        n.store
            .get_approval("capush000000000000000")
            .await
            .unwrap()
            .unwrap()
            .state,
        ApprovalState::Pending
    );

    // Valid and invalid items in one reply.
    let last = "pm-0";
    let text = "1 approve · 3 Tonight · 4 maybe · 2 resume · 9 B";
    let out =
        n.h.gateway()
            .route_gateway_message(&reply("in-1", last, text))
            .await
            .unwrap();
    assert_eq!(out["mode"], "report_answered", "{out}");
    assert_eq!(
        outcomes(&out),
        [
            (1, true, "approved".to_string()),
            (3, true, "answered “Tonight”".to_string()),
            (
                4,
                false,
                "4: “maybe” is not one of its options (by number or label); write a free answer \
                 after “:”"
                    .to_string()
            ),
            (
                2,
                false,
                "resume or stop it on its page: /tasks/ctflaky00000000000000".to_string()
            ),
            (9, false, "there is no item 9 in this report".to_string()),
        ]
    );
    let ack = out["acknowledgement"].as_str().unwrap();
    assert!(
        ack.starts_with("Taken (2):\n1: approved\n3: answered “Tonight”"),
        "{ack}"
    );
    assert!(ack.contains("Not taken (3):"), "{ack}");
    let approval = n
        .store
        .get_approval("capush000000000000000")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approval.state, ApprovalState::Approved);
    assert_eq!(approval.decided_via.as_deref(), Some("report"));
    let q = n
        .store
        .get_message("caskmig00000000000000")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (q.state, q.reply_text.as_deref()),
        (MessageState::Answered, Some("Tonight"))
    );
    assert_eq!(
        n.store
            .get_message("caskdocs0000000000000")
            .await
            .unwrap()
            .unwrap()
            .state,
        MessageState::Open
    );

    // The gateway's retry of the same message: answered once, nothing new.
    let retry =
        n.h.gateway()
            .route_gateway_message(&reply("in-1", last, text))
            .await
            .unwrap();
    assert_eq!(retry["deduped"], true, "{retry}");
    assert_eq!(retry["noOp"], true, "{retry}");

    // A second message: what was answered is refused, never applied to a
    // newer question of the task; the rest is taken.
    n.store
        .record_ask(ask(
            "caskmig20000000000000",
            "ctmigrate000000000000",
            "And migration 13?",
            Utc::now(),
        ))
        .await
        .unwrap();
    let out =
        n.h.gateway()
            .route_gateway_message(&reply(
                "in-2",
                "pm-0",
                "3 Now\n1 deny: not now\n4: after lunch",
            ))
            .await
            .unwrap();
    assert_eq!(
        outcomes(&out),
        [
            (3, false, "already answered (“Tonight”)".to_string()),
            (
                1,
                false,
                "already answered (approved by gateway-owner)".to_string()
            ),
            (4, true, "answered “after lunch”".to_string()),
        ]
    );
    assert_eq!(
        n.store
            .get_message("caskmig20000000000000")
            .await
            .unwrap()
            .unwrap()
            .state,
        MessageState::Open,
        "the newer question is not answered by the old item"
    );
    let docs = n
        .store
        .get_message("caskdocs0000000000000")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(docs.reply_text.as_deref(), Some("after lunch"));
    // A free answer to a question with options names no option.
    let c = n
        .store
        .choices_for(&["caskdocs0000000000000".to_string()])
        .await
        .unwrap();
    assert_eq!(c[0].1.answered_options, None);

    // The same reply applied again after a crash before its record (a new
    // inbound, same words) reports what it already took as taken.
    let again =
        n.h.gateway()
            .route_gateway_message(&reply("in-3", "pm-0", "4: after lunch"))
            .await
            .unwrap();
    assert_eq!(
        outcomes(&again),
        [(
            4,
            true,
            "answered “after lunch” (already, with this answer)".to_string()
        )]
    );
}

#[tokio::test]
async fn an_active_task_list_counts_the_plan_tasks_an_answer_unblocks() {
    let n = night().await;
    let alpha = n._dir.path().join("alpha");
    let plan = serde_json::json!({"version": 2, "tasks": [
        {"id": "task-1", "status": "in_progress"},
        {"id": "task-2", "status": "pending", "depends_on": ["task-1"]},
        {"id": "task-3", "status": "pending", "depends_on": ["task-2"]},
        {"id": "task-4", "status": "completed"}
    ]});
    std::fs::write(alpha.join("harness-tasks.json"), plan.to_string()).unwrap();
    async fn report(n: &Night) -> harness_core::CoreResult<harness_core::report::Report> {
        n.h.reports()
            .report_at(
                &Identity::Admin,
                Some(t(19, 0)),
                ReportChannel::Api,
                &LocalWork,
                t(7, 0),
            )
            .await
    }
    // The file alone: the loop is not running there, nothing waits on it.
    let idle = report(&n).await.unwrap();
    assert_eq!(idle.text, EXPECTED, "\n{}", idle.text);
    std::fs::write(alpha.join(".harness-active"), "").unwrap();
    let active = report(&n).await.unwrap();
    assert!(
        active
            .text
            .contains("   blocks 3 agents and 2 plan tasks · 6 agent-h waited"),
        "\n{}",
        active.text
    );
    // The failed agent of the same project holds them too; the questions
    // without a project do not.
    assert!(
        active
            .text
            .contains("   blocks 1 agent and 2 plan tasks · 7 agent-h 30 min waited"),
        "\n{}",
        active.text
    );
    assert_eq!(
        active.text.matches("plan task").count(),
        2,
        "\n{}",
        active.text
    );
}

/// Viewing a report is a read: the page, the API, the CLI and MCP keep
/// the report they show (a reply names its numbered items) but only a
/// report delivered to chat moves "since the last report" — a view never
/// consumes the chat's window (docs/morning-report.md,
/// "Viewing is a read").
#[tokio::test]
async fn a_report_viewed_does_not_move_the_chats_window() {
    let n = night().await;
    sent_to_chat(&n).await;
    let delivered = n
        .store
        .last_report_until(ReportChannel::Chat, "all")
        .await
        .unwrap()
        .expect("the delivered report's end");
    for channel in [
        ReportChannel::Web,
        ReportChannel::Api,
        ReportChannel::Cli,
        ReportChannel::Mcp,
    ] {
        let viewed =
            n.h.reports()
                .report(&Identity::Browser, None, channel, &NoWork)
                .await
                .unwrap();
        assert_eq!(
            viewed.since, delivered,
            "{channel:?}: a view covers the time since the last delivered report"
        );
        assert!(n.store.get_report(&viewed.id).await.unwrap().is_some());
    }
    assert_eq!(
        n.store
            .last_report_until(ReportChannel::Chat, "all")
            .await
            .unwrap(),
        Some(delivered)
    );
    // The next report to chat starts where the delivered one ended, not
    // where a view did.
    let next =
        n.h.reports()
            .send_report(&Identity::Admin, None, &NoWork)
            .await
            .unwrap();
    assert_eq!(next.report.since, delivered);
    assert!(
        n.store
            .last_report_until(ReportChannel::Chat, "all")
            .await
            .unwrap()
            > Some(delivered)
    );
}
