//! A state's reason in Chinese, for a notify target whose language is zh:
//! the same facts as [`super::reason`] (which stays the stored, English
//! words), with the CLI's own words (a dialog's title and options, an
//! error's text, the reset time as printed) quoted as read. The push names
//! the state before it ("智能体已登出：…"), so the words go on from there.

use super::{AgentState, ErrorKind, record::signal_name};

/// [`super::reason`] in Chinese.
pub fn reason_zh(state: &AgentState) -> String {
    match state {
        AgentState::Working => "正在工作".into(),
        AgentState::WaitingForPerson { dialog: None } => {
            "一个未回答的问题或审批，或 CLI 自己的提示".into()
        }
        AgentState::WaitingForPerson {
            dialog: Some((title, options)),
        } => format!("CLI 自己的对话框“{title}”（{}）", options.join(" / ")),
        AgentState::Idle => "它的这一轮已结束，在提示符处等待".into(),
        AgentState::UsageLimited { reset: Some(r) } => {
            format!("重置时间 {}", r.text)
        }
        AgentState::UsageLimited { reset: None } => "未显示重置时间".into(),
        AgentState::Erroring {
            kind,
            attempt,
            of,
            gave_up,
        } => {
            let mut words = kind_zh(kind);
            match (attempt, of) {
                (Some(a), Some(o)) => words.push_str(&format!("，第 {a} 次尝试（共 {o} 次）")),
                (Some(a), None) => words.push_str(&format!("，第 {a} 次尝试")),
                _ => {}
            }
            if *gave_up {
                words.push_str("；CLI 已停止重试，在提示符处等待");
            }
            words
        }
        AgentState::LoggedOut => "CLI 未登录，或它的凭据被拒绝".into(),
        AgentState::Stalled { silent_secs } => format!(
            "已有 {} 没有输出、钩子或工具活动",
            duration_zh(*silent_secs)
        ),
        AgentState::Exited { code: 0 } => "正常结束（退出码 0）".into(),
        AgentState::Exited { code } => format!("退出码 {code}"),
        AgentState::Crashed { signal: 0 } => "结束时没有退出状态（它的进程丢失了）".into(),
        AgentState::Crashed { signal } => match signal_name(*signal) {
            Some(name) => format!("被信号 {signal}（{name}）终止"),
            None => format!("被信号 {signal} 终止"),
        },
    }
}

fn kind_zh(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::Overloaded => "API 过载（529）".into(),
        ErrorKind::RateLimited => "API 速率限制（429）".into(),
        ErrorKind::Server(status) => format!("API 服务器错误（{status}）"),
        ErrorKind::Network => "网络错误（连接 API 失败）".into(),
        ErrorKind::Other(words) if words.trim().is_empty() => "API 错误".into(),
        ErrorKind::Other(words) => format!("API 错误：{}", words.trim()),
    }
}

/// A duration in Chinese: "45 秒", "20 分钟", "2 小时 5 分钟".
fn duration_zh(secs: u64) -> String {
    match secs {
        0..=119 => format!("{secs} 秒"),
        120..=7199 => format!("{} 分钟", secs / 60),
        _ if secs % 3600 / 60 == 0 => format!("{} 小时", secs / 3600),
        _ => format!("{} 小时 {} 分钟", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_state::ResetTime;

    #[test]
    fn every_state_has_chinese_words_with_the_clis_own_words_quoted() {
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
            assert_eq!(reason_zh(&state), words, "{state:?}");
        }
        // No English left in the words Harness itself writes.
        for state in [
            AgentState::Idle,
            AgentState::LoggedOut,
            AgentState::UsageLimited { reset: None },
            AgentState::Crashed { signal: 0 },
            AgentState::Exited { code: 0 },
            AgentState::WaitingForPerson { dialog: None },
        ] {
            let words = reason_zh(&state);
            assert!(!words.chars().any(|c| c.is_ascii_lowercase()), "{words}");
        }
    }
}
