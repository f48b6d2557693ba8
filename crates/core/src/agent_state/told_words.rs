//! The words of the agent-state pushes, one table per language (the
//! notify target's `language`): the alarm, the "finished" note, the
//! recovery's additions and the replies. The reply keywords (`restart`,
//! `resume`, `stop`) stay the same in every language; the state's reason
//! is written in the target's language (`reason_words`), the CLI's own words in
//! it quoted as read.

use crate::{ladder::Lang, model::AgentStateName};

pub(super) struct Phrases {
    pub(super) alarm: &'static str,
    pub(super) finished: &'static str,
    pub(super) last_lines: &'static str,
    pub(super) replies: &'static str,
    pub(super) will_resume: &'static str,
    pub(super) by_itself: &'static str,
    pub(super) at_time: &'static str,
    pub(super) when_reset: &'static str,
    pub(super) cap_reached: &'static str,
    pub(super) own_dialog: &'static str,
}

pub(super) const EN: Phrases = Phrases {
    alarm: "[Agent {state}] This task's agent is {reason}.",
    finished: "[Agent finished] This task's agent finished its work ({reason}).",
    last_lines: "Last lines on its screen:",
    replies: "Reply \"restart\" (or \"resume\") to start its agent again with its session, or \
              \"stop\" to stop it.",
    will_resume: "Harness will resume it at {hm} on {day} UTC ({rfc}).",
    by_itself: "{cli} will continue by itself {when}; Harness checks at {hm} UTC on {day} ({rfc}) \
                and resumes it if it has not.",
    at_time: "at {hm} UTC",
    when_reset: "when its limit resets",
    cap_reached: "Harness already recovered it as often as its recovery policy allows in an \
                  hour, so it does not try again by itself.",
    own_dialog: "It shows a dialog of its own that Harness does not answer by itself: answer it \
                 on the task's terminal.",
};

pub(super) const ZH: Phrases = Phrases {
    alarm: "[智能体{state}] 这个任务的智能体{state}：{reason}。",
    finished: "[智能体已完成] 这个任务的智能体已完成工作（{reason}）。",
    last_lines: "屏幕上的最后几行：",
    replies: "回复 \"restart\"（或 \"resume\"）用它的会话重新启动智能体，或回复 \"stop\" 停止它。",
    will_resume: "Harness 将于 UTC {day} {hm}（{rfc}）恢复它。",
    by_itself: "{cli} 会{when}自行继续；Harness 将于 UTC {day} {hm}（{rfc}）检查，\
                若它仍未继续则恢复它。",
    at_time: "于 UTC {hm} ",
    when_reset: "在用量限制重置后",
    cap_reached: "Harness 在一小时内已按恢复策略允许的最多次数恢复过它，因此不会再自行尝试。",
    own_dialog: "它显示了一个 Harness 不会自行回答的对话框：请在任务的终端上回答。",
};

pub(super) fn phrases(lang: Lang) -> &'static Phrases {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

/// A recorded state's name in `lang` (`logged_out` → "logged out").
pub(super) fn state_name(lang: Lang, state: AgentStateName) -> String {
    use AgentStateName as N;
    let zh = match state {
        N::Working => "工作中",
        N::WaitingForPerson => "在等人处理",
        N::Idle => "空闲",
        N::UsageLimited => "用量受限",
        N::Erroring => "出错",
        N::LoggedOut => "已登出",
        N::Stalled => "停滞",
        N::Exited => "已退出",
        N::Crashed => "崩溃",
    };
    match lang {
        Lang::En => state.as_str().replace('_', " "),
        Lang::Zh => zh.to_string(),
    }
}

/// A day as a push says it: "Dec 5" / "12月5日".
pub(super) fn day(lang: Lang, at: chrono::DateTime<chrono::Utc>) -> String {
    match lang {
        Lang::En => at.format("%b %-d").to_string(),
        Lang::Zh => at.format("%-m月%-d日").to_string(),
    }
}
