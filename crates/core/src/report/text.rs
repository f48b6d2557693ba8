//! The report as one text (chat, the CLI): deterministic — times in UTC,
//! every task with its token (`[task <id>]`), every waiting item with its
//! number. Its parts at a chat platform's limit are [`super::split`]'s.

use chrono::{DateTime, Utc};

use super::model::{AskedState, Report, TaskSection, WaitingItem};
use crate::{ladder::Lang, model::ExecutionStatus, store::ItemKind};

/// The reply grammar, as the report tells it.
pub const REPLY_HINT: &str = "Reply to this message to answer: one item per line, or \
`1 B · 2 approve · 3 deny: not on Friday · 4 later` (options by number or label; free text \
after `:`).";

/// The same in Chinese (the reply's words stay the grammar's: `approve`,
/// `deny`, `later`, `resume`, `stop`).
pub const REPLY_HINT_ZH: &str = "回复这条消息即可回答：每行一项，或写成 \
`1 B · 2 approve · 3 deny: 周五不行 · 4 later`（选项写编号或标签；“:” 后写自由文本）。";

/// The report's phrases in one language; `{…}` are filled in.
struct Words {
    title: &'static str,
    nothing: &'static str,
    project: &'static str,
    no_project: &'static str,
    nothing_waits: &'static str,
    waits: &'static str,
    reply_hint: &'static str,
    finished: &'static str,
    failed: &'static str,
    stopped: &'static str,
    paused: &'static str,
    running: &'static str,
    ran: &'static str,
    ended: &'static str,
    exit: &'static str,
    commits: &'static str,
    progress: &'static str,
    approval: &'static str,
    asked: &'static str,
    decided: &'static str,
    still_waiting: &'static str,
    reminders: &'static str,
    kind_question: &'static str,
    kind_approval: &'static str,
    kind_agent: &'static str,
    options: &'static str,
    answer: &'static str,
    default_at: &'static str,
    min: &'static str,
    h: &'static str,
    h_min: &'static str,
}

const EN: Words = Words {
    title: "Harness report, {since} → {until}",
    nothing: "Nothing ran and nothing was asked in this window.",
    project: "Project {name}",
    no_project: "No project",
    nothing_waits: "Nothing waits for you.",
    waits: "What waits for you ({n}), most blocking first:",
    reply_hint: REPLY_HINT,
    finished: "finished",
    failed: "failed",
    stopped: "stopped",
    paused: "waiting for an answer",
    running: "running",
    ran: "  ran {d} from {at}: {how}",
    ended: " at {at}",
    exit: "exit {code}",
    commits: "  {n} on {branch}",
    progress: "  {at} progress: {text}",
    approval: "approval",
    asked: "asked",
    decided: " → {answer} by {by} after {d}",
    still_waiting: " → still waiting",
    reminders: ", {n}",
    kind_question: "question",
    kind_approval: "approval",
    kind_agent: "agent",
    options: "   options: {options}",
    answer: " · answer: {answer}",
    default_at: " · default at {at}",
    min: "{m} min",
    h: "{h} h",
    h_min: "{h} h {m} min",
};

const ZH: Words = Words {
    title: "Harness 报告，{since} → {until}",
    nothing: "这段时间没有运行，也没有提问。",
    project: "项目 {name}",
    no_project: "无项目",
    nothing_waits: "没有等你处理的事项。",
    waits: "现在等你处理（{n}），最阻塞的在前：",
    reply_hint: REPLY_HINT_ZH,
    finished: "已完成",
    failed: "失败",
    stopped: "已停止",
    paused: "等待回答",
    running: "运行中",
    ran: "  自 {at} 起运行 {d}：{how}",
    ended: "，于 {at}",
    exit: "退出码 {code}",
    commits: "  {branch} 上 {n}",
    progress: "  {at} 进度：{text}",
    approval: "审批",
    asked: "提问",
    decided: " → {answer}，由 {by} 在 {d} 后决定",
    still_waiting: " → 仍在等待",
    reminders: "，{n}",
    kind_question: "问题",
    kind_approval: "审批",
    kind_agent: "智能体",
    options: "   选项：{options}",
    answer: " · 回答：{answer}",
    default_at: " · {at} 采用默认值",
    min: "{m} 分钟",
    h: "{h} 小时",
    h_min: "{h} 小时 {m} 分钟",
};

fn words(lang: Lang) -> &'static Words {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

fn at(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn hm(t: DateTime<Utc>) -> String {
    t.format("%H:%M").to_string()
}

/// "45 min", "2 h", "2 h 5 min".
pub fn duration(minutes: i64) -> String {
    duration_in(Lang::En, minutes)
}

/// [`duration`] in `lang`.
pub fn duration_in(lang: Lang, minutes: i64) -> String {
    let w = words(lang);
    let (h, m) = ((minutes / 60).to_string(), (minutes % 60).to_string());
    match (minutes / 60, minutes % 60) {
        (0, _) => w.min.replace("{m}", &m),
        (_, 0) => w.h.replace("{h}", &h),
        _ => w.h_min.replace("{h}", &h).replace("{m}", &m),
    }
}

/// "1 commit", "3 commits"; in Chinese "3 个提交", "提醒 3 次".
fn plural(lang: Lang, n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    match (lang, one) {
        (Lang::En, _) => format!("{n} {}", if n == 1 { one } else { many }),
        (Lang::Zh, "reminder") => format!("提醒 {n} 次"),
        (Lang::Zh, _) => format!("{n} 个提交"),
    }
}

/// The whole report, in English (the CLI, `GET /api/report`).
pub fn render(r: &Report) -> String {
    render_in(r, Lang::En)
}

/// The whole report in `lang` (a notify target's language): the same
/// lines, numbers, task tokens and reply grammar in either.
pub fn render_in(r: &Report, lang: Lang) -> String {
    let w = words(lang);
    let mut out = vec![
        w.title
            .replace("{since}", &at(r.since))
            .replace("{until}", &at(r.until)),
    ];
    if r.tasks.is_empty() {
        out.push(String::new());
        out.push(w.nothing.into());
    }
    let mut project: Option<Option<&str>> = None;
    for t in &r.tasks {
        let this = t.project_name.as_deref();
        if project != Some(this) {
            out.push(String::new());
            out.push(match this {
                Some(name) => w.project.replace("{name}", name),
                None => w.no_project.into(),
            });
            project = Some(this);
        }
        task(&mut out, t, lang);
    }
    out.push(String::new());
    if r.waiting.is_empty() {
        out.push(w.nothing_waits.into());
    } else {
        out.push(w.waits.replace("{n}", &r.waiting_count.to_string()));
        for i in &r.waiting {
            item(&mut out, i, lang);
        }
        out.push(String::new());
        out.push(w.reply_hint.into());
    }
    out.join("\n")
}

/// `r` with every phrase it carries in `lang` (`GET /api/report?lang=`,
/// a chat target's language): its text, each waiting item's `why`, what
/// a restart did with each agent and each answered question's receipt line.
pub fn in_lang(mut r: Report, lang: Lang) -> Report {
    for i in &mut r.waiting {
        i.why = i.blocks.words_in(lang);
    }
    for t in &mut r.tasks {
        // Only where the notes are at hand (a report read back from the
        // store has its words, not its notes: they are kept as they are).
        if !t.resumed_notes.is_empty() {
            t.resumed = t
                .resumed_notes
                .iter()
                .filter_map(|n| crate::reboot::note_words_in(lang, Some(n)))
                .collect();
        }
        for a in &mut t.asked {
            if let Some(receipt) = &mut a.receipt {
                receipt.text = receipt.words(lang);
            }
        }
    }
    r.text = render_in(&r, lang);
    r
}

fn task(out: &mut Vec<String>, t: &TaskSection, lang: Lang) {
    let w = words(lang);
    // The task token reads the same in every language (`[task <id>]`).
    out.push(format!("- {} [task {}]", t.title, t.task_id));
    for run in &t.runs {
        let how = match run.status {
            ExecutionStatus::Completed => w.finished,
            ExecutionStatus::Failed => w.failed,
            ExecutionStatus::Stopped => w.stopped,
            ExecutionStatus::Paused => w.paused,
            ExecutionStatus::Running => w.running,
        };
        let mut line = w
            .ran
            .replace("{d}", &duration_in(lang, run.minutes))
            .replace("{at}", &hm(run.started_at))
            .replace("{how}", how);
        if let Some(end) = run.ended_at {
            let mut detail = Vec::new();
            if let Some(code) = run.exit_code {
                detail.push(w.exit.replace("{code}", &code.to_string()));
            }
            if let Some(reason) = &run.end_reason {
                detail.push(super::words::end_reason(lang, reason));
            }
            line.push_str(&w.ended.replace("{at}", &hm(end)));
            if !detail.is_empty() {
                line.push_str(&match lang {
                    Lang::En => format!(" ({})", detail.join(", ")),
                    Lang::Zh => format!("（{}）", detail.join("，")),
                });
            }
        }
        out.push(line);
    }
    for r in &t.resumed {
        out.push(format!("  {r}"));
    }
    if let Some(c) = &t.commits {
        let mut line = w
            .commits
            .replace("{n}", &plural(lang, c.count, "commit", "commits"))
            .replace("{branch}", &c.branch);
        if !c.shortstat.is_empty() {
            line.push_str(&format!(": {}", c.shortstat));
        }
        out.push(line);
    }
    for p in &t.progress {
        out.push(
            w.progress
                .replace("{at}", &hm(p.at))
                .replace("{text}", &one_line(&p.text)),
        );
    }
    for a in &t.asked {
        let what = match a.kind {
            ItemKind::Approval => w.approval,
            _ => w.asked,
        };
        let mut line = format!("  {} {what}: {}", hm(a.asked_at), one_line(&a.text));
        match (&a.by, a.after_minutes) {
            (Some(by), Some(after)) => {
                let state = state(lang, a.state);
                let answer = match (&a.answer, a.kind) {
                    (Some(text), ItemKind::Question) => format!("“{}”", one_line(text)),
                    (Some(reason), _) => format!("{state} ({})", one_line(reason)),
                    (None, _) => state,
                };
                line.push_str(
                    &w.decided
                        .replace("{answer}", &answer)
                        .replace("{by}", &super::words::by_words(lang, by))
                        .replace("{d}", &duration_in(lang, after)),
                );
            }
            _ if a.state.waiting() => line.push_str(w.still_waiting),
            _ => line.push_str(&format!(" → {}", state(lang, a.state))),
        }
        if a.reminders > 0 {
            let n = plural(lang, a.reminders, "reminder", "reminders");
            line.push_str(&w.reminders.replace("{n}", &n));
        }
        out.push(line);
        if let Some(r) = &a.receipt {
            out.push(format!("    {}", r.words(lang)));
        }
    }
}

/// A decision's state (ANSWERED, APPROVED, …) as the report says it.
fn state(lang: Lang, state: AskedState) -> String {
    use AskedState as S;
    let zh = match state {
        S::Open | S::Pending => "仍在等待",
        S::Answered => "已回答",
        S::Approved => "已批准",
        S::Denied => "已拒绝",
        S::Cancelled => "已取消",
        S::Expired => "已过期",
        S::Ignored => "已忽略",
        S::Closed | S::PendingDelivery => return state.as_str().to_string(),
    };
    match lang {
        Lang::En => state.as_str().to_string(),
        Lang::Zh => zh.to_string(),
    }
}

fn item(out: &mut Vec<String>, i: &WaitingItem, lang: Lang) {
    let w = words(lang);
    let kind = match i.kind {
        ItemKind::Question => w.kind_question,
        ItemKind::Approval => w.kind_approval,
        ItemKind::Agent => w.kind_agent,
    };
    out.push(format!(
        "{}. [{kind}] {} [task {}]: {}",
        i.number,
        i.task_title,
        i.task_id,
        one_line(&i.text)
    ));
    if !i.options.is_empty() {
        let options: Vec<String> = i
            .options
            .iter()
            .enumerate()
            .map(|(n, o)| format!("{} {o}", n + 1))
            .collect();
        out.push(w.options.replace("{options}", &options.join(" · ")));
    }
    let answer = match i.kind {
        ItemKind::Question => None,
        ItemKind::Approval => Some(match lang {
            Lang::En => "approve · deny: reason",
            Lang::Zh => "approve · deny: 理由",
        }),
        ItemKind::Agent => Some("resume · stop"),
    };
    let mut line = format!("   {}", i.blocks.words_in(lang));
    if let Some(answer) = answer {
        line.push_str(&w.answer.replace("{answer}", answer));
    }
    if let Some(d) = i.default_at {
        line.push_str(&w.default_at.replace("{at}", &hm(d)));
    }
    out.push(line);
}

/// A text on one line, at most 200 characters.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 200 {
        flat
    } else {
        let mut cut: String = flat.chars().take(199).collect();
        cut.push('…');
        cut
    }
}

/// The most characters one chat message of `platform` carries (the
/// outbox's own limit where the platform's is larger or unknown).
pub fn platform_limit(platform: Option<&str>) -> usize {
    let known = match platform.map(|p| p.trim().to_ascii_lowercase()).as_deref() {
        Some("discord") => 2000,
        Some("sms") => 1600,
        Some("line") => 5000,
        Some("telegram") => 4096,
        _ => crate::outbox::MAX_PUSH_CHARS,
    };
    known.min(crate::outbox::MAX_PUSH_CHARS)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::{
        receipt::{
            StepKind, StepStatus,
            line::{ReceiptLine, Stall},
        },
        report::{
            model::{Asked, Commits, Run},
            rank::Blocks,
        },
    };

    #[test]
    fn a_report_read_back_keeps_its_resumed_words_and_a_fresh_one_is_translated() {
        let note = "resumed session sess-1".to_string();
        let mut fresh = report();
        fresh.tasks[0].resumed = vec!["resumed automatically after a restart".into()];
        fresh.tasks[0].resumed_notes = vec![note];
        let zh = in_lang(fresh, Lang::Zh);
        assert_eq!(zh.tasks[0].resumed, ["重启后已自动恢复（它的会话 sess-1）"]);
        // Stored and read back: no notes (they are not serialized).
        let mut back = report();
        back.tasks[0].resumed = vec!["resumed automatically after a restart".into()];
        let zh = in_lang(back, Lang::Zh);
        assert_eq!(
            zh.tasks[0].resumed,
            ["resumed automatically after a restart"]
        );
    }

    fn report() -> Report {
        let at = |h, m| Utc.with_ymd_and_hms(2026, 12, 5, h, m, 0).unwrap();
        let task_id = "ctabcdefghijklmnopqrst".to_string();
        Report {
            id: "cr1".into(),
            scope: "all".into(),
            since: at(0, 0),
            until: at(7, 0),
            tasks: vec![TaskSection {
                task_id: task_id.clone(),
                title: "Fix CI".into(),
                project_id: None,
                project_name: Some("api".into()),
                link: "/tasks/x".into(),
                runs: vec![Run {
                    execution_id: "ce1".into(),
                    status: ExecutionStatus::Failed,
                    started_at: at(1, 0),
                    ended_at: Some(at(2, 5)),
                    exit_code: Some(2),
                    end_reason: Some("spawn_failed".into()),
                    minutes: 65,
                }],
                progress: vec![],
                asked: vec![
                    Asked {
                        id: "ca1".into(),
                        kind: ItemKind::Approval,
                        text: "git push".into(),
                        asked_at: at(3, 0),
                        state: AskedState::Denied,
                        answer: Some("not now".into()),
                        by: Some("web".into()),
                        after_minutes: Some(45),
                        reminders: 2,
                        receipt: None,
                    },
                    Asked {
                        id: "ca3".into(),
                        kind: ItemKind::Question,
                        text: "Keep the legacy format?".into(),
                        asked_at: at(4, 0),
                        state: AskedState::Answered,
                        answer: Some("keep it".into()),
                        by: Some("chat".into()),
                        after_minutes: Some(12),
                        reminders: 0,
                        receipt: Some(ReceiptLine {
                            by: Some("person".into()),
                            surface: Some("chat".into()),
                            after_minutes: Some(12),
                            typed: Some(StepStatus::Done),
                            delivery_id: Some("cd1".into()),
                            resumed: Some(StepStatus::Stalled),
                            stalled: Some(Stall {
                                step: StepKind::Resumed,
                                status: StepStatus::Stalled,
                                minutes: Some(40),
                                error: None,
                            }),
                            text: "receipt: (as built)".into(),
                        }),
                    },
                ],
                resumed: vec![],
                resumed_notes: vec![],
                commits: Some(Commits {
                    branch: "main".into(),
                    count: 3,
                    shortstat: "2 files changed".into(),
                }),
            }],
            waiting: vec![WaitingItem {
                number: 1,
                kind: ItemKind::Question,
                ref_id: "ca2".into(),
                task_id: task_id.clone(),
                task_title: "Fix CI".into(),
                link: "/tasks/x".into(),
                text: "Which DB?".into(),
                options: vec!["SQLite".into(), "Postgres".into()],
                waiting_since: at(4, 0),
                default_at: Some(at(7, 20)),
                blocks: Blocks {
                    agents: 2,
                    plan_tasks: 1,
                    agent_minutes: 90,
                    default_soon: true,
                },
                why: "blocks 2 agents and 1 plan task · 1 agent-h 30 min waited · its default \
                      applies soon"
                    .into(),
            }],
            waiting_count: 1,
            text: String::new(),
        }
    }

    #[test]
    fn the_report_in_english_is_the_default() {
        let r = report();
        let text = render(&r);
        assert_eq!(text, render_in(&r, Lang::En));
        for line in [
            "Harness report, 2026-12-05 00:00 UTC → 2026-12-05 07:00 UTC",
            "Project api",
            "- Fix CI [task ctabcdefghijklmnopqrst]",
            "  ran 1 h 5 min from 01:00: failed at 02:05 (exit 2, spawn failed)",
            "  3 commits on main: 2 files changed",
            "  03:00 approval: git push → DENIED (not now) by web after 45 min, 2 reminders",
            "What waits for you (1), most blocking first:",
            "1. [question] Fix CI [task ctabcdefghijklmnopqrst]: Which DB?",
            "   options: 1 SQLite · 2 Postgres",
            "   blocks 2 agents and 1 plan task · 1 agent-h 30 min waited · its default applies \
             soon · default at 07:20",
            "  04:00 asked: Keep the legacy format? → “keep it” by chat after 12 min",
            "    receipt: answered in the chat after 12 min · typed once · stalled: typed 40 min \
             ago, the agent has not been seen going on since",
            REPLY_HINT,
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
        }
    }

    #[test]
    fn the_report_in_chinese_has_the_same_items_tokens_and_grammar() {
        let text = render_in(&report(), Lang::Zh);
        for line in [
            "Harness 报告，2026-12-05 00:00 UTC → 2026-12-05 07:00 UTC",
            "项目 api",
            "- Fix CI [task ctabcdefghijklmnopqrst]",
            "  自 01:00 起运行 1 小时 5 分钟：失败，于 02:05（退出码 2，启动失败）",
            "  main 上 3 个提交: 2 files changed",
            "  03:00 审批: git push → 已拒绝 (not now)，由 网页 在 45 分钟 后决定，提醒 2 次",
            "现在等你处理（1），最阻塞的在前：",
            "1. [问题] Fix CI [task ctabcdefghijklmnopqrst]: Which DB?",
            "   选项：1 SQLite · 2 Postgres",
            "   阻塞 2 个智能体和 1 个计划任务 · 已等待 1 智能体·小时 30 分钟 · 默认答案即将生效 · \
             07:20 采用默认值",
            "    回执：在聊天中回答，用时 12 分钟 · 已输入终端一次 · 卡住：输入已过 40 分钟，此后未见\
             智能体继续",
            REPLY_HINT_ZH,
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
        }
        // None of the English phrases is left.
        for english in [
            "report,",
            "Project",
            "ran ",
            "commits",
            "What waits",
            "options:",
            "blocks",
            "receipt",
            "typed",
        ] {
            assert!(!text.contains(english), "{english:?} in\n{text}");
        }
        let empty = Report {
            tasks: vec![],
            waiting: vec![],
            waiting_count: 0,
            ..report()
        };
        // Every phrase the report carries, in the language asked for.
        let zh = in_lang(report(), Lang::Zh);
        assert_eq!(zh.text, render_in(&report(), Lang::Zh));
        assert!(
            zh.waiting[0].why.starts_with("阻塞 2 个智能体"),
            "{}",
            zh.waiting[0].why
        );
        let receipt = zh.tasks[0].asked[1]
            .receipt
            .as_ref()
            .map(|r| r.text.as_str());
        assert!(
            receipt.is_some_and(|r| r.starts_with("回执：")),
            "{receipt:?}"
        );
        let en = in_lang(zh, Lang::En);
        assert_eq!(en.waiting[0].why, report().waiting[0].why);
        assert!(
            en.tasks[0].asked[1]
                .receipt
                .as_ref()
                .is_some_and(|r| r.text.starts_with("receipt: answered in the chat"))
        );
        let text = render_in(&empty, Lang::Zh);
        assert!(text.contains("这段时间没有运行，也没有提问。"), "{text}");
        assert!(text.ends_with("没有等你处理的事项。"), "{text}");
    }
}
