//! A state's reason in words, one table of phrases per language (a notify
//! target's `language`). The English words are the ones stored with a
//! record (`AgentStateRecord::reason`); the Chinese ones are written for a
//! zh target's push, after the state's name ("智能体已登出：…"), so they go
//! on from there. The CLI's own words (a dialog's title and options, an
//! error's text, the reset time as printed) are quoted as read.

use super::{AgentState, ErrorKind, record::signal_name};
use crate::ladder::Lang;

/// The phrases of one language; `{…}` are filled in.
struct Phrases {
    working: &'static str,
    waiting: &'static str,
    waiting_dialog: &'static str,
    idle: &'static str,
    limited: &'static str,
    limited_unknown: &'static str,
    attempt_of: &'static str,
    attempt: &'static str,
    gave_up: &'static str,
    logged_out: &'static str,
    stalled: &'static str,
    exited_ok: &'static str,
    exited: &'static str,
    lost: &'static str,
    killed_named: &'static str,
    killed: &'static str,
    overloaded: &'static str,
    rate_limited: &'static str,
    server: &'static str,
    network: &'static str,
    api_error: &'static str,
    api_error_words: &'static str,
    secs: &'static str,
    mins: &'static str,
    hours: &'static str,
    hours_mins: &'static str,
}

const EN: Phrases = Phrases {
    working: "working",
    waiting: "waiting for a person: an open question or approval, or the CLI's own prompt",
    waiting_dialog: "waiting for a person: the CLI's own dialog \"{title}\" ({options})",
    idle: "idle at its prompt: its turn ended",
    limited: "usage limit reached; resets {reset}",
    limited_unknown: "usage limit reached (no reset time shown)",
    attempt_of: ", attempt {a} of {o}",
    attempt: ", attempt {a}",
    gave_up: "; the CLI stopped retrying and waits at its prompt",
    logged_out: "logged out: the CLI is not logged in or its credentials were refused",
    stalled: "stalled: no output, hook or tool activity for {d}",
    exited_ok: "exited normally (code 0)",
    exited: "exited with code {code}",
    lost: "ended without an exit status (its process was lost)",
    killed_named: "killed by signal {signal} ({name})",
    killed: "killed by signal {signal}",
    overloaded: "API overloaded (529)",
    rate_limited: "API rate limit (429)",
    server: "API server error ({status})",
    network: "network error (the connection to the API failed)",
    api_error: "API error",
    api_error_words: "API error: {words}",
    secs: "{n} s",
    mins: "{n} min",
    hours: "{n} h",
    hours_mins: "{h} h {m} min",
};

const ZH: Phrases = Phrases {
    working: "正在工作",
    waiting: "一个未回答的问题或审批，或 CLI 自己的提示",
    waiting_dialog: "CLI 自己的对话框“{title}”（{options}）",
    idle: "它的这一轮已结束，在提示符处等待",
    limited: "重置时间 {reset}",
    limited_unknown: "未显示重置时间",
    attempt_of: "，第 {a} 次尝试（共 {o} 次）",
    attempt: "，第 {a} 次尝试",
    gave_up: "；CLI 已停止重试，在提示符处等待",
    logged_out: "CLI 未登录，或它的凭据被拒绝",
    stalled: "已有 {d} 没有输出、钩子或工具活动",
    exited_ok: "正常结束（退出码 0）",
    exited: "退出码 {code}",
    lost: "结束时没有退出状态（它的进程丢失了）",
    killed_named: "被信号 {signal}（{name}）终止",
    killed: "被信号 {signal} 终止",
    overloaded: "API 过载（529）",
    rate_limited: "API 速率限制（429）",
    server: "API 服务器错误（{status}）",
    network: "网络错误（连接 API 失败）",
    api_error: "API 错误",
    api_error_words: "API 错误：{words}",
    secs: "{n} 秒",
    mins: "{n} 分钟",
    hours: "{n} 小时",
    hours_mins: "{h} 小时 {m} 分钟",
};

fn phrases(lang: Lang) -> &'static Phrases {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

/// The state in words, in English (as a record stores it).
pub fn reason(state: &AgentState) -> String {
    reason_in(Lang::En, state)
}

/// The state in words, in `lang`.
pub fn reason_in(lang: Lang, state: &AgentState) -> String {
    let p = phrases(lang);
    match state {
        AgentState::Working => p.working.into(),
        AgentState::WaitingForPerson { dialog: None } => p.waiting.into(),
        AgentState::WaitingForPerson {
            dialog: Some((title, options)),
        } => p
            .waiting_dialog
            .replace("{title}", title)
            .replace("{options}", &options.join(" / ")),
        AgentState::Idle => p.idle.into(),
        AgentState::UsageLimited { reset } => {
            reset_words(lang, reset.as_ref().map(|r| r.text.as_str()))
        }
        AgentState::Erroring {
            kind,
            attempt,
            of,
            gave_up,
        } => {
            let mut words = kind_words(p, kind);
            match (attempt, of) {
                (Some(a), Some(o)) => words.push_str(
                    &p.attempt_of
                        .replace("{a}", &a.to_string())
                        .replace("{o}", &o.to_string()),
                ),
                (Some(a), None) => words.push_str(&p.attempt.replace("{a}", &a.to_string())),
                _ => {}
            }
            if *gave_up {
                words.push_str(p.gave_up);
            }
            words
        }
        AgentState::LoggedOut => p.logged_out.into(),
        AgentState::Stalled { silent_secs } => {
            p.stalled.replace("{d}", &duration_words(p, *silent_secs))
        }
        AgentState::Exited { code: 0 } => p.exited_ok.into(),
        AgentState::Exited { code } => p.exited.replace("{code}", &code.to_string()),
        AgentState::Crashed { signal: 0 } => p.lost.into(),
        AgentState::Crashed { signal } => match signal_name(*signal) {
            Some(name) => p
                .killed_named
                .replace("{signal}", &signal.to_string())
                .replace("{name}", name),
            None => p.killed.replace("{signal}", &signal.to_string()),
        },
    }
}

/// A usage limit's reset as the CLI printed it (`None`: not shown), in
/// `lang` — also for a printed time that no longer parses (redacted).
pub fn reset_words(lang: Lang, printed: Option<&str>) -> String {
    let p = phrases(lang);
    match printed {
        Some(text) => p.limited.replace("{reset}", text),
        None => p.limited_unknown.into(),
    }
}

/// An error kind in words.
fn kind_words(p: &Phrases, kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::Overloaded => p.overloaded.into(),
        ErrorKind::RateLimited => p.rate_limited.into(),
        ErrorKind::Server(status) => p.server.replace("{status}", &status.to_string()),
        ErrorKind::Network => p.network.into(),
        ErrorKind::Other(words) if words.trim().is_empty() => p.api_error.into(),
        ErrorKind::Other(words) => p.api_error_words.replace("{words}", words.trim()),
    }
}

/// A duration in words: "45 s", "20 min", "2 h 5 min" (and in Chinese).
fn duration_words(p: &Phrases, secs: u64) -> String {
    let n = |v: u64| v.to_string();
    match secs {
        0..=119 => p.secs.replace("{n}", &n(secs)),
        120..=7199 => p.mins.replace("{n}", &n(secs / 60)),
        _ if secs % 3600 / 60 == 0 => p.hours.replace("{n}", &n(secs / 3600)),
        _ => p
            .hours_mins
            .replace("{h}", &n(secs / 3600))
            .replace("{m}", &n(secs % 3600 / 60)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_state::ResetTime;

    #[test]
    fn the_reason_in_english() {
        let limited = AgentState::UsageLimited {
            reset: ResetTime::parse("9:57am (UTC)"),
        };
        assert_eq!(reason(&limited), "usage limit reached; resets 9:57am (UTC)");
        let erroring = AgentState::Erroring {
            kind: ErrorKind::Overloaded,
            attempt: Some(3),
            of: Some(10),
            gave_up: false,
        };
        assert_eq!(reason(&erroring), "API overloaded (529), attempt 3 of 10");
        let gave_up = AgentState::Erroring {
            kind: ErrorKind::Server(500),
            attempt: None,
            of: None,
            gave_up: true,
        };
        assert_eq!(
            reason(&gave_up),
            "API server error (500); the CLI stopped retrying and waits at its prompt"
        );
        assert_eq!(
            reason(&AgentState::Stalled { silent_secs: 1200 }),
            "stalled: no output, hook or tool activity for 20 min"
        );
        assert_eq!(
            reason(&AgentState::Exited { code: 3 }),
            "exited with code 3"
        );
        assert_eq!(
            reason(&AgentState::Crashed { signal: 9 }),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(
            reset_words(Lang::Zh, Some("[REDACTED]")),
            "重置时间 [REDACTED]",
            "a printed reset that no longer parses is quoted as it is"
        );
        assert_eq!(duration_words(&EN, 7500), "2 h 5 min");
        assert_eq!(duration_words(&EN, 7200), "2 h");
    }

    #[test]
    fn every_state_has_chinese_words_with_the_clis_own_words_quoted() {
        let zh = |s: &AgentState| reason_in(Lang::Zh, s);
        let cases = [
            (AgentState::Working, "正在工作".to_string()),
            (
                AgentState::UsageLimited {
                    reset: ResetTime::parse("9:57am (UTC)"),
                },
                "重置时间 9:57am (UTC)".into(),
            ),
            (
                AgentState::Erroring {
                    kind: ErrorKind::Overloaded,
                    attempt: Some(3),
                    of: Some(10),
                    gave_up: false,
                },
                "API 过载（529），第 3 次尝试（共 10 次）".into(),
            ),
            (
                AgentState::Erroring {
                    kind: ErrorKind::Other("Request rejected".into()),
                    attempt: None,
                    of: None,
                    gave_up: true,
                },
                "API 错误：Request rejected；CLI 已停止重试，在提示符处等待".into(),
            ),
            (
                AgentState::Stalled { silent_secs: 7500 },
                "已有 2 小时 5 分钟 没有输出、钩子或工具活动".into(),
            ),
            (AgentState::Exited { code: 3 }, "退出码 3".into()),
            (
                AgentState::Crashed { signal: 9 },
                "被信号 9（SIGKILL）终止".into(),
            ),
            (
                AgentState::WaitingForPerson {
                    dialog: Some(("Switch model?".into(), vec!["Keep".into(), "Switch".into()])),
                },
                "CLI 自己的对话框“Switch model?”（Keep / Switch）".into(),
            ),
        ];
        for (state, words) in cases {
            assert_eq!(zh(&state), words, "{state:?}");
        }
        // No English left in the words Harness itself writes.
        for state in [
            AgentState::Idle,
            AgentState::LoggedOut,
            AgentState::UsageLimited { reset: None },
            AgentState::Crashed { signal: 0 },
            AgentState::Exited { code: 0 },
            AgentState::WaitingForPerson { dialog: None },
            AgentState::Stalled { silent_secs: 45 },
        ] {
            let words = zh(&state);
            assert!(!words.chars().any(|c| c.is_ascii_lowercase()), "{words}");
        }
    }
}
