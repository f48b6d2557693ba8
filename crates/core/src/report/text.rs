//! The report as one text (chat, the CLI): deterministic — times in UTC,
//! every task with its token (`[task <id>]`), every waiting item with its
//! number. Its parts at a chat platform's limit are [`super::split`]'s.

use chrono::{DateTime, Utc};

use super::model::{Report, TaskSection, WaitingItem};
use crate::store::ItemKind;

/// The reply grammar, as the report tells it.
pub const REPLY_HINT: &str = "Reply to this message to answer: one item per line, or \
`1 B · 2 approve · 3 deny: not on Friday · 4 later` (options by number or label; free text \
after `:`).";

fn at(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn hm(t: DateTime<Utc>) -> String {
    t.format("%H:%M").to_string()
}

/// "45 min", "2 h", "2 h 5 min".
pub fn duration(minutes: i64) -> String {
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The whole report.
pub fn render(r: &Report) -> String {
    let mut out = vec![format!("Harness report, {} → {}", at(r.since), at(r.until))];
    if r.tasks.is_empty() {
        out.push(String::new());
        out.push("Nothing ran and nothing was asked in this window.".into());
    }
    let mut project: Option<Option<&str>> = None;
    for t in &r.tasks {
        let this = t.project_name.as_deref();
        if project != Some(this) {
            out.push(String::new());
            out.push(match this {
                Some(name) => format!("Project {name}"),
                None => "No project".into(),
            });
            project = Some(this);
        }
        task(&mut out, t);
    }
    out.push(String::new());
    if r.waiting.is_empty() {
        out.push("Nothing waits for you.".into());
    } else {
        out.push(format!(
            "What waits for you ({}), most blocking first:",
            r.waiting_count
        ));
        for w in &r.waiting {
            item(&mut out, w);
        }
        out.push(String::new());
        out.push(REPLY_HINT.into());
    }
    out.join("\n")
}

fn task(out: &mut Vec<String>, t: &TaskSection) {
    out.push(format!("- {} [task {}]", t.title, t.task_id));
    for run in &t.runs {
        let how = match run.status.as_str() {
            "COMPLETED" => "finished".to_string(),
            "FAILED" => "failed".to_string(),
            "STOPPED" => "stopped".to_string(),
            "PAUSED" => "waiting for an answer".to_string(),
            _ => "running".to_string(),
        };
        let mut line = format!(
            "  ran {} from {}: {how}",
            duration(run.minutes),
            hm(run.started_at)
        );
        if let Some(end) = run.ended_at {
            let mut detail = Vec::new();
            if let Some(code) = run.exit_code {
                detail.push(format!("exit {code}"));
            }
            if let Some(reason) = &run.end_reason {
                detail.push(reason.replace('_', " "));
            }
            line.push_str(&format!(" at {}", hm(end)));
            if !detail.is_empty() {
                line.push_str(&format!(" ({})", detail.join(", ")));
            }
        }
        out.push(line);
    }
    for r in &t.resumed {
        out.push(format!("  {r}"));
    }
    if let Some(c) = &t.commits {
        let mut line = format!("  {} on {}", plural(c.count, "commit", "commits"), c.branch);
        if !c.shortstat.is_empty() {
            line.push_str(&format!(": {}", c.shortstat));
        }
        out.push(line);
    }
    for p in &t.progress {
        out.push(format!("  {} progress: {}", hm(p.at), one_line(&p.text)));
    }
    for a in &t.asked {
        let what = match a.kind {
            ItemKind::Approval => "approval",
            _ => "asked",
        };
        let mut line = format!("  {} {what}: {}", hm(a.asked_at), one_line(&a.text));
        match (&a.by, a.after_minutes) {
            (Some(by), Some(after)) => {
                let answer = match (&a.answer, a.kind) {
                    (Some(text), ItemKind::Question) => format!("“{}”", one_line(text)),
                    (Some(reason), _) => format!("{} ({})", a.state, one_line(reason)),
                    (None, _) => a.state.clone(),
                };
                line.push_str(&format!(" → {answer} by {by} after {}", duration(after)));
            }
            _ if a.state == "OPEN" || a.state == "PENDING" => line.push_str(" → still waiting"),
            _ => line.push_str(&format!(" → {}", a.state)),
        }
        if a.reminders > 0 {
            line.push_str(&format!(
                ", {}",
                plural(a.reminders, "reminder", "reminders")
            ));
        }
        out.push(line);
    }
}

fn item(out: &mut Vec<String>, w: &WaitingItem) {
    let kind = match w.kind {
        ItemKind::Question => "question",
        ItemKind::Approval => "approval",
        ItemKind::Agent => "agent",
    };
    out.push(format!(
        "{}. [{kind}] {} [task {}]: {}",
        w.number,
        w.task_title,
        w.task_id,
        one_line(&w.text)
    ));
    if !w.options.is_empty() {
        let options: Vec<String> = w
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| format!("{} {o}", i + 1))
            .collect();
        out.push(format!("   options: {}", options.join(" · ")));
    }
    let answer = match w.kind {
        ItemKind::Question => None,
        ItemKind::Approval => Some("approve · deny: reason"),
        ItemKind::Agent => Some("resume · stop"),
    };
    let mut line = format!("   {}", w.why);
    if let Some(answer) = answer {
        line.push_str(&format!(" · answer: {answer}"));
    }
    if let Some(d) = w.default_at {
        line.push_str(&format!(" · default at {}", hm(d)));
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
