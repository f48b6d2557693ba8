//! The report's follow-up phrases, one table per language: why a waiting
//! item ranks where it does ([`super::rank::Blocks`]), how a run ended,
//! what a batch reply did with each item ([`super::reply::Said`],
//! [`super::batch::Refusal`], [`super::batch::Malformed`]) and the answer
//! back to it. Every surface says them through here — the chat report,
//! the answer to a chat reply, `GET /api/report?lang=`, the `/report`
//! page — in English or Chinese ([`Lang`]); the reply's own keywords
//! (`approve`, `deny`, `later`, `resume`, `restart`, `stop`) stay as typed.

use super::{
    batch::{Expected, Malformed, Refusal},
    rank::Blocks,
    reply::{BatchOutcome, Said},
};
use crate::ladder::Lang;

/// The phrases of one language; `{…}` are filled in.
pub(crate) struct Phrases {
    pub(crate) blocks_agent: &'static str,
    pub(crate) blocks_agents: &'static str,
    pub(crate) and_plan_task: &'static str,
    pub(crate) and_plan_tasks: &'static str,
    pub(crate) agent_min: &'static str,
    pub(crate) agent_h: &'static str,
    pub(crate) agent_h_min: &'static str,
    pub(crate) waited: &'static str,
    pub(crate) default_soon: &'static str,
    pub(crate) end_exited: &'static str,
    pub(crate) end_stopped: &'static str,
    pub(crate) end_interrupted: &'static str,
    pub(crate) end_spawn_failed: &'static str,
    pub(crate) end_superseded: &'static str,
    pub(crate) state_answered: &'static str,
    pub(crate) state_approved: &'static str,
    pub(crate) state_denied: &'static str,
    pub(crate) state_cancelled: &'static str,
    pub(crate) state_expired: &'static str,
    pub(crate) state_ignored: &'static str,
    pub(crate) answered: &'static str,
    pub(crate) again: &'static str,
    pub(crate) approved: &'static str,
    pub(crate) denied: &'static str,
    pub(crate) left_waiting: &'static str,
    pub(crate) resumed: &'static str,
    pub(crate) restarted: &'static str,
    pub(crate) stopped: &'static str,
    pub(crate) already_answered: &'static str,
    pub(crate) already_decided: &'static str,
    pub(crate) no_longer_waiting: &'static str,
    pub(crate) gone: &'static str,
    pub(crate) agent_acted: &'static str,
    pub(crate) on_its_page: &'static str,
    pub(crate) does_not_fit: &'static str,
    pub(crate) unknown_number: &'static str,
    pub(crate) ambiguous: &'static str,
    pub(crate) no_answer: &'static str,
    pub(crate) not_understood: &'static str,
    pub(crate) failed: &'static str,
    pub(crate) expected_option: &'static str,
    pub(crate) expected_decision: &'static str,
    pub(crate) expected_agent: &'static str,
    pub(crate) malformed_empty: &'static str,
    pub(crate) malformed_not_numbered: &'static str,
    pub(crate) nothing_answered: &'static str,
    pub(crate) taken: &'static str,
    pub(crate) not_taken: &'static str,
    pub(crate) item: &'static str,
}

const EN: Phrases = Phrases {
    blocks_agent: "blocks {n} agent",
    blocks_agents: "blocks {n} agents",
    and_plan_task: " and {n} plan task",
    and_plan_tasks: " and {n} plan tasks",
    agent_min: "{m} agent-min",
    agent_h: "{h} agent-h",
    agent_h_min: "{h} agent-h {m} min",
    waited: "{t} waited",
    default_soon: "its default applies soon",
    end_exited: "exited",
    end_stopped: "stopped",
    end_interrupted: "interrupted",
    end_spawn_failed: "spawn failed",
    end_superseded: "superseded",
    state_answered: "answered",
    state_approved: "approved",
    state_denied: "denied",
    state_cancelled: "cancelled",
    state_expired: "expired",
    state_ignored: "ignored",
    answered: "answered “{text}”",
    again: " (already, with this answer)",
    approved: "approved",
    denied: "denied",
    left_waiting: "left waiting",
    resumed: "resumed",
    restarted: "restarted",
    stopped: "stopped",
    already_answered: "already answered (“{answer}”)",
    already_decided: "already answered ({state} by {by})",
    no_longer_waiting: "no longer waiting ({state})",
    gone: "no longer exists",
    agent_acted: "already acted upon (the agent was started again, stopped or its task closed)",
    on_its_page: "resume or stop it on its page: {link}",
    does_not_fit: "that answer does not fit this item",
    unknown_number: "there is no item {n} in this report",
    ambiguous: "item {n} is answered more than once in this reply",
    no_answer: "no answer after {n}",
    not_understood: "{n}: “{text}” is not {expected}",
    failed: "{error}",
    expected_option: "one of its options (by number or label); write a free answer after “:”",
    expected_decision: "approve, or deny with a reason (deny: why)",
    expected_agent: "resume, restart or stop",
    malformed_empty: "the reply is empty",
    malformed_not_numbered: "“{text}” does not start with an item's number: answer as \
        `1 B · 2 approve · 3 deny: reason`, or one item per line",
    nothing_answered: "Nothing was answered: {why}.",
    taken: "Taken ({n}):",
    not_taken: "Not taken ({n}):",
    item: "{n}: {detail}",
};

const ZH: Phrases = Phrases {
    blocks_agent: "阻塞 {n} 个智能体",
    blocks_agents: "阻塞 {n} 个智能体",
    and_plan_task: "和 {n} 个计划任务",
    and_plan_tasks: "和 {n} 个计划任务",
    agent_min: "{m} 智能体·分钟",
    agent_h: "{h} 智能体·小时",
    agent_h_min: "{h} 智能体·小时 {m} 分钟",
    waited: "已等待 {t}",
    default_soon: "默认答案即将生效",
    end_exited: "已退出",
    end_stopped: "被停止",
    end_interrupted: "被中断",
    end_spawn_failed: "启动失败",
    end_superseded: "被新的运行取代",
    state_answered: "已回答",
    state_approved: "已批准",
    state_denied: "已拒绝",
    state_cancelled: "已取消",
    state_expired: "已过期",
    state_ignored: "已忽略",
    answered: "已回答“{text}”",
    again: "（此前已用同一答案回答）",
    approved: "已批准",
    denied: "已拒绝",
    left_waiting: "继续等待",
    resumed: "已恢复",
    restarted: "已重新启动",
    stopped: "已停止",
    already_answered: "已被回答过（“{answer}”）",
    already_decided: "已被处理过（{by}：{state}）",
    no_longer_waiting: "已不再等待（{state}）",
    gone: "已不存在",
    agent_acted: "已被处理过（智能体已重新启动、已停止，或任务已关闭）",
    on_its_page: "请在它的页面上恢复或停止：{link}",
    does_not_fit: "这个答案不适用于此项",
    unknown_number: "本报告中没有第 {n} 项",
    ambiguous: "此回复中第 {n} 项被回答了不止一次",
    no_answer: "第 {n} 项后面没有答案",
    not_understood: "第 {n} 项：“{text}”不是{expected}",
    failed: "未能应用：{error}",
    expected_option: "它的选项之一（按编号或标签）；自由回答请写在“:”之后",
    expected_decision: "approve，或 deny 并写明理由（deny: 理由）",
    expected_agent: "resume、restart 或 stop",
    malformed_empty: "回复是空的",
    malformed_not_numbered: "“{text}”没有以项目编号开头：请按 \
        `1 B · 2 approve · 3 deny: reason` 的格式回答，或每行一项",
    nothing_answered: "没有回答任何一项：{why}。",
    taken: "已采纳（{n}）：",
    not_taken: "未采纳（{n}）：",
    item: "{n}：{detail}",
};

pub(crate) fn phrases(lang: Lang) -> &'static Phrases {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

fn n(template: &str, n: impl ToString) -> String {
    template.replace("{n}", &n.to_string())
}

/// Why a waiting item is where it is: "blocks 3 agents and 2 plan tasks ·
/// 4 agent-h waited · its default applies soon".
pub fn why(lang: Lang, b: &Blocks) -> String {
    let p = phrases(lang);
    let one = |count: u32, single, many| n(if count == 1 { single } else { many }, count);
    let mut blocks = one(b.agents, p.blocks_agent, p.blocks_agents);
    if b.plan_tasks > 0 {
        blocks.push_str(&one(b.plan_tasks, p.and_plan_task, p.and_plan_tasks));
    }
    let (h, m) = (
        (b.agent_minutes / 60).to_string(),
        (b.agent_minutes % 60).to_string(),
    );
    let time = match (b.agent_minutes / 60, b.agent_minutes % 60) {
        (0, _) => p.agent_min.replace("{m}", &m),
        (_, 0) => p.agent_h.replace("{h}", &h),
        _ => p.agent_h_min.replace("{h}", &h).replace("{m}", &m),
    };
    let mut parts = vec![blocks, p.waited.replace("{t}", &time)];
    if b.default_soon {
        parts.push(p.default_soon.to_string());
    }
    parts.join(" · ")
}

/// Why a run ended (`exited`, `stopped`, `interrupted`, `spawn_failed`,
/// `superseded`; another as it is recorded, `_` as a space).
pub fn end_reason(lang: Lang, reason: &str) -> String {
    let p = phrases(lang);
    match reason {
        "exited" => p.end_exited,
        "stopped" => p.end_stopped,
        "interrupted" => p.end_interrupted,
        "spawn_failed" => p.end_spawn_failed,
        "superseded" => p.end_superseded,
        other => return other.replace('_', " "),
    }
    .to_string()
}

/// A decided item's state as [`Said`] carries it (`answered`, `approved`,
/// `denied`, `cancelled`, `expired`, `ignored`; another as it is).
pub fn decided_state(lang: Lang, state: &str) -> String {
    let p = phrases(lang);
    match state {
        "answered" => p.state_answered,
        "approved" => p.state_approved,
        "denied" => p.state_denied,
        "cancelled" => p.state_cancelled,
        "expired" => p.state_expired,
        "ignored" => p.state_ignored,
        other => return other.to_string(),
    }
    .to_string()
}

/// Who or where a decision came from as the report says it: a question's
/// surface (`web`, `chat`, `default`) and the web's signed-in person
/// (`browser`) in `lang`; another person's name as it is.
pub fn by_words(lang: Lang, by: &str) -> String {
    match (lang, by) {
        (Lang::Zh, "web") => "网页".into(),
        (Lang::Zh, "chat") => "聊天".into(),
        (Lang::Zh, "default") => "默认值".into(),
        // The signed-in web user (`auth::Identity::Browser`).
        (Lang::Zh, "browser") => "浏览器".into(),
        _ => by.to_string(),
    }
}

/// What a batch reply did with one item.
pub fn said(lang: Lang, s: &Said) -> String {
    let p = phrases(lang);
    let again = |a: bool| if a { p.again } else { "" };
    match s {
        Said::Answered { text, again: a } => p.answered.replace("{text}", text) + again(*a),
        Said::Approved { again: a } => format!("{}{}", p.approved, again(*a)),
        Said::Denied { again: a } => format!("{}{}", p.denied, again(*a)),
        Said::LeftWaiting => p.left_waiting.into(),
        Said::Resumed => p.resumed.into(),
        Said::Restarted => p.restarted.into(),
        Said::Stopped => p.stopped.into(),
        Said::AlreadyAnswered { answer } => p.already_answered.replace("{answer}", answer),
        Said::AlreadyDecided { state, by } => p
            .already_decided
            .replace("{state}", &decided_state(lang, state))
            .replace("{by}", &by_words(lang, by)),
        Said::NoLongerWaiting { state } => p
            .no_longer_waiting
            .replace("{state}", &decided_state(lang, state)),
        Said::Gone => p.gone.into(),
        Said::AgentActedUpon => p.agent_acted.into(),
        Said::OnItsPage { link } => p.on_its_page.replace("{link}", link),
        Said::DoesNotFit => p.does_not_fit.into(),
        Said::Refused(r) => refusal(lang, r),
        Said::Failed(error) => p.failed.replace("{error}", error),
    }
}

/// Why one part of a reply was not read.
pub fn refusal(lang: Lang, r: &Refusal) -> String {
    let p = phrases(lang);
    match r {
        Refusal::UnknownNumber(number) => n(p.unknown_number, number),
        Refusal::Ambiguous(number) => n(p.ambiguous, number),
        Refusal::NoAnswer(number) => n(p.no_answer, number),
        Refusal::NotUnderstood {
            number,
            text,
            expected: e,
        } => n(p.not_understood, number)
            .replace("{text}", text)
            .replace("{expected}", expected(lang, *e)),
    }
}

/// What a part's answer should have been.
pub fn expected(lang: Lang, e: Expected) -> &'static str {
    let p = phrases(lang);
    match e {
        Expected::Option => p.expected_option,
        Expected::Decision => p.expected_decision,
        Expected::AgentAction => p.expected_agent,
    }
}

/// Why a whole reply was not read.
pub fn malformed(lang: Lang, m: &Malformed) -> String {
    let p = phrases(lang);
    match m {
        Malformed::Empty => p.malformed_empty.into(),
        Malformed::NotNumbered(text) => p.malformed_not_numbered.replace("{text}", text),
    }
}

/// The answer back to a reply: which items were taken, which not and why
/// (or why nothing was read).
pub fn answer_back(lang: Lang, o: &BatchOutcome) -> String {
    let p = phrases(lang);
    if let Some(m) = &o.malformed_why {
        return p.nothing_answered.replace("{why}", &malformed(lang, m));
    }
    let line = |i: &super::reply::ItemOutcome| {
        n(p.item, i.number).replace("{detail}", &said(lang, &i.said))
    };
    let taken: Vec<String> = o.items.iter().filter(|i| i.taken).map(line).collect();
    let refused: Vec<String> = o.items.iter().filter(|i| !i.taken).map(line).collect();
    let mut out = Vec::new();
    if !taken.is_empty() {
        out.push(format!("{}\n{}", n(p.taken, taken.len()), taken.join("\n")));
    }
    if !refused.is_empty() {
        out.push(format!(
            "{}\n{}",
            n(p.not_taken, refused.len()),
            refused.join("\n")
        ));
    }
    out.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::reply::ItemOutcome;

    use crate::report::samples::{END_REASONS, blocks as all_blocks, said as all_said};

    /// The words of `text` that are English: ASCII words but the ones a
    /// person typed, a name, a number or the reply's own keywords.
    fn english(text: &str) -> Vec<String> {
        let keep = [
            "B",
            "x",
            "web",
            "/tasks/ct1",
            "ok",
            "boom",
            "approve",
            "deny",
            "resume",
            "restart",
            "stop",
            "reason",
        ];
        text.replace("`1 B · 2 approve · 3 deny: reason`", "")
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '/')
            .filter(|w| {
                !w.is_empty() && !keep.contains(w) && !w.chars().all(|c| c.is_ascii_digit())
            })
            .map(str::to_string)
            .collect()
    }

    fn outcome() -> BatchOutcome {
        let item = |number, taken, said: Said| ItemOutcome {
            number,
            taken,
            detail: said.to_string(),
            task_id: None,
            said,
        };
        BatchOutcome {
            report_id: "cr1".into(),
            malformed: None,
            malformed_why: None,
            items: vec![
                item(
                    1,
                    true,
                    Said::Answered {
                        text: "B".into(),
                        again: false,
                    },
                ),
                item(2, true, Said::Approved { again: false }),
                item(9, false, Said::Refused(Refusal::UnknownNumber(9))),
            ],
            text: String::new(),
        }
    }

    #[test]
    fn in_english_each_phrase() {
        let b = Blocks {
            agents: 3,
            plan_tasks: 2,
            agent_minutes: 240,
            default_soon: true,
        };
        assert_eq!(
            why(Lang::En, &b),
            "blocks 3 agents and 2 plan tasks · 4 agent-h waited · its default applies soon"
        );
        assert_eq!(end_reason(Lang::En, "spawn_failed"), "spawn failed");
        assert_eq!(end_reason(Lang::En, "odd_reason"), "odd reason");
        assert_eq!(
            said(
                Lang::En,
                &Said::AlreadyDecided {
                    state: "denied".into(),
                    by: "web".into()
                }
            ),
            "already answered (denied by web)"
        );
        assert_eq!(
            said(Lang::En, &Said::Refused(Refusal::Ambiguous(2))),
            "item 2 is answered more than once in this reply"
        );
        assert_eq!(malformed(Lang::En, &Malformed::Empty), "the reply is empty");
        // `Display` is the English table.
        for s in all_said() {
            assert_eq!(s.to_string(), said(Lang::En, &s));
        }
        assert_eq!(
            answer_back(Lang::En, &outcome()),
            "Taken (2):\n1: answered “B”\n2: approved\n\nNot taken (1):\n9: there is no item 9 \
             in this report"
        );
    }

    #[test]
    fn in_chinese_each_phrase_and_no_english_left() {
        let b = Blocks {
            agents: 3,
            plan_tasks: 2,
            agent_minutes: 240,
            default_soon: true,
        };
        assert_eq!(
            why(Lang::Zh, &b),
            "阻塞 3 个智能体和 2 个计划任务 · 已等待 4 智能体·小时 · 默认答案即将生效"
        );
        assert_eq!(end_reason(Lang::Zh, "spawn_failed"), "启动失败");
        assert_eq!(
            said(
                Lang::Zh,
                &Said::AlreadyDecided {
                    state: "denied".into(),
                    by: "web".into()
                }
            ),
            "已被处理过（网页：已拒绝）"
        );
        assert_eq!(by_words(Lang::Zh, "browser"), "浏览器");
        assert_eq!(by_words(Lang::Zh, "ou_123"), "ou_123", "a name as it is");
        assert_eq!(by_words(Lang::En, "web"), "web");
        assert_eq!(
            answer_back(Lang::Zh, &outcome()),
            "已采纳（2）：\n1：已回答“B”\n2：已批准\n\n未采纳（1）：\n9：本报告中没有第 9 项"
        );
        let mut texts: Vec<String> = all_said().iter().map(|s| said(Lang::Zh, s)).collect();
        texts.extend(all_blocks().iter().map(|b| why(Lang::Zh, b)));
        texts.extend(END_REASONS.iter().map(|r| end_reason(Lang::Zh, r)));
        texts.push(malformed(Lang::Zh, &Malformed::Empty));
        texts.push(malformed(Lang::Zh, &Malformed::NotNumbered("ok".into())));
        let mut bad = outcome();
        bad.malformed_why = Some(Malformed::Empty);
        texts.push(answer_back(Lang::Zh, &bad));
        for t in texts {
            assert_eq!(english(&t), Vec::<String>::new(), "English left in “{t}”");
        }
    }

    #[test]
    fn an_outcome_said_in_a_language_says_every_field_in_it() {
        let mut o = outcome();
        o.malformed_why = None;
        let zh = o.clone().say(Lang::Zh);
        assert_eq!(zh.items[0].detail, "已回答“B”");
        assert_eq!(zh.text, answer_back(Lang::Zh, &o));
        let mut m = outcome();
        m.items.clear();
        m.malformed_why = Some(Malformed::NotNumbered("hello".into()));
        let m = m.say(Lang::Zh);
        assert_eq!(
            m.malformed.as_deref(),
            Some(
                "“hello”没有以项目编号开头：请按 `1 B · 2 approve · 3 deny: reason` 的格式回答，\
                 或每行一项"
            )
        );
        assert!(
            m.text.starts_with("没有回答任何一项：“hello”"),
            "{}",
            m.text
        );
    }
}
