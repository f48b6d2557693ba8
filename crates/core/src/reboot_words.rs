//! The words of the resumes after a restart, per language (the notify
//! target's `language`): the one push per start listing what was resumed
//! and what was not, and the note an execution keeps (the morning report's
//! "resumed or restarted automatically"). The notes are stored in English
//! ([`Reason::text`]); a note is read back into its reason to be said in
//! another language.

use crate::{
    ladder::Lang,
    model::Provider,
    outbox::MAX_PUSH_CHARS,
    reboot::{ATTENDED, Entry, NOT_RESUMED, Outcome, RESTARTED, RESUMED, Reason},
};

/// The push's fixed words in one language.
struct Phrases {
    header: &'static str,
    resumed: &'static str,
    left: &'static str,
    session: &'static str,
    restarted: &'static str,
}

const EN: Phrases = Phrases {
    header: "Harness restarted and found the agents of unattended tasks stopped (the machine \
             restarted?).",
    resumed: "Resumed ({n}):",
    left: "Not resumed ({n}) — open the task to resume it:",
    session: "its {cli} session {session}",
    restarted: "restarted from its start (restartOnInterrupt)",
};

const ZH: Phrases = Phrases {
    header: "Harness 重启后发现无人值守任务的智能体已停止（机器重启过？）。",
    resumed: "已恢复（{n}）：",
    left: "未恢复（{n}）——打开任务来恢复它：",
    session: "它的 {cli} 会话 {session}",
    restarted: "已从头重新启动（restartOnInterrupt）",
};

fn phrases(lang: Lang) -> &'static Phrases {
    match lang {
        Lang::En => &EN,
        Lang::Zh => &ZH,
    }
}

impl Reason {
    /// [`Reason::text`] in `lang`.
    pub fn text_in(&self, lang: Lang) -> String {
        if lang == Lang::En {
            return self.text();
        }
        match self {
            Self::StartedAgain => "它此后又被启动过".into(),
            Self::TaskClosed => "任务已完成或已取消".into(),
            Self::CommandWithoutRestart => "command 智能体没有设置 restartOnInterrupt".into(),
            Self::NoSession => "不知道它的提供方会话".into(),
            Self::StoppedDuringResume => "服务器在恢复它时停止了；不会再恢复".into(),
            Self::ResumedBefore => "它本身就是在上一次重启后被自动恢复的；不会连续恢复两次".into(),
            Self::AlreadyRunning => "它的智能体已经重新运行（一条回复重启了它）".into(),
            Self::StartFailed(err) => format!("启动失败：{err}"),
            Self::Decided(note) => why_in(lang, note.strip_prefix(NOT_RESUMED).unwrap_or(note)),
        }
    }
}

/// A reason as a note stores it (its English text) in `lang`; a text no
/// reason writes is kept as it is.
fn why_in(lang: Lang, why: &str) -> String {
    if lang == Lang::En {
        return why.to_string();
    }
    let fixed = [
        Reason::StartedAgain,
        Reason::TaskClosed,
        Reason::CommandWithoutRestart,
        Reason::NoSession,
        Reason::StoppedDuringResume,
        Reason::ResumedBefore,
        Reason::AlreadyRunning,
    ];
    if let Some(r) = fixed.iter().find(|r| r.text() == why) {
        return r.text_in(lang);
    }
    match why.strip_prefix("start failed: ") {
        Some(err) => Reason::StartFailed(err.to_string()).text_in(lang),
        None => why.to_string(),
    }
}

/// A person's words for the note a restart left on an execution (the
/// morning report's "resumed or restarted automatically"), in English;
/// `None` for an attended task's (never reported) and for a decision still
/// under way.
pub fn note_words(note: Option<&str>) -> Option<String> {
    note_words_in(Lang::En, note)
}

/// [`note_words`] in `lang`.
pub fn note_words_in(lang: Lang, note: Option<&str>) -> Option<String> {
    let note = note?;
    if note == ATTENDED {
        return None;
    }
    if let Some(session) = note.strip_prefix(RESUMED) {
        return Some(match lang {
            Lang::En => format!("resumed automatically after a restart (its session {session})"),
            Lang::Zh => format!("重启后已自动恢复（它的会话 {session}）"),
        });
    }
    if note == RESTARTED {
        return Some(match lang {
            Lang::En => "restarted automatically after a restart (restartOnInterrupt)".into(),
            Lang::Zh => "重启后已自动重新启动（restartOnInterrupt）".into(),
        });
    }
    let why = why_in(lang, note.strip_prefix(NOT_RESUMED).unwrap_or(note));
    Some(match lang {
        Lang::En => format!("not resumed after a restart: {why}"),
        Lang::Zh => format!("重启后未恢复：{why}"),
    })
}

/// The report's text in English (`None`: nothing to report).
pub fn report_text(entries: &[Entry]) -> Option<String> {
    report_text_in(Lang::En, entries)
}

/// The report's text in `lang` (`None`: nothing to report), at most
/// `MAX_PUSH_CHARS`.
pub fn report_text_in(lang: Lang, entries: &[Entry]) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let p = phrases(lang);
    let line = |e: &Entry| {
        let how = match &e.outcome {
            Outcome::Resumed { session_id } => {
                let cli = match e.provider {
                    Provider::Codex => "Codex",
                    _ => "Claude Code",
                };
                p.session
                    .replace("{cli}", cli)
                    .replace("{session}", session_id)
            }
            Outcome::Restarted => p.restarted.into(),
            Outcome::NotResumed(reason) => reason.text_in(lang),
        };
        format!("- {} [{}]: {how}", e.title, e.task_id)
    };
    let (left, resumed): (Vec<&Entry>, Vec<&Entry>) = entries
        .iter()
        .partition(|e| matches!(e.outcome, Outcome::NotResumed(_)));
    let mut text = String::from(p.header);
    for (list, words) in [(&resumed, p.resumed), (&left, p.left)] {
        if list.is_empty() {
            continue;
        }
        text.push_str("\n\n");
        text.push_str(&words.replace("{n}", &list.len().to_string()));
        for e in list {
            text.push('\n');
            text.push_str(&line(e));
        }
    }
    Some(truncate(text))
}

fn truncate(text: String) -> String {
    if text.chars().count() <= MAX_PUSH_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_PUSH_CHARS - 2).collect();
    if let Some(at) = cut.rfind('\n') {
        cut.truncate(at);
    }
    cut.push_str("\n…");
    cut
}
