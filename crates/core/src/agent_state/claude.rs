//! Claude Code's screen (recorded from Claude Code 2.1.332,
//! `docs/agent-states.md`).
//!
//! Claude Code draws the conversation top-down, then, at the bottom, the
//! input box: a `❯` row between two rules of `─` across the screen. Its own
//! status lines are around that box:
//! - just above it (after the right-aligned effort row and a `⎿` detail
//!   row): the spinner row, a spinner glyph at column 0, e.g.
//!   `✻ 529 Overloaded · retrying in 2s · attempt 3/10`;
//! - in the box, when it gave up after an error, a placeholder such as
//!   `❯ Resend your message to try again` or `❯ Once fixed, resend your
//!   message` — the error itself is the last conversation item,
//!   `● API Error: …` (or `● Please run /login · API Error: 401 …`);
//! - below it, the footer: `⚠ Usage limit reached · limit resets 12:26pm`,
//!   `Continuing automatically at 12:26pm · Esc to cancel`.
//!
//! The agent's own text is a `●` item whose other rows are indented: it
//! never has a spinner glyph at column 0 next to the box, never writes in
//! the box or the footer, and is never the `⎿` answer under the person's
//! `❯` prompt row.

use super::{ErrorKind, Observation, ResetTime, Screen, Seen, kind_of, screen::is_rule};

/// Claude Code's spinner glyphs (column 0 of the spinner row).
const SPINNER: [char; 8] = ['·', '✢', '✳', '✶', '✻', '✽', '*', '∗'];

/// What Claude Code's own lines on `screen` say.
pub fn observe(screen: &Screen) -> Observation {
    recognise(screen).observation
}

/// What Claude Code's own lines on `screen` say, with the rows that say it.
pub fn recognise(screen: &Screen) -> Seen {
    let (observation, rows) = found(screen).unwrap_or((Observation::None, Vec::new()));
    Seen::from_rows(screen, observation, rows)
}

/// The observation and the indices of the rows it was read from.
fn found(screen: &Screen) -> Option<(Observation, Vec<usize>)> {
    let Some((top, input, bottom)) = input_box(screen) else {
        return dialog(screen);
    };
    if let Some(found) = footer(screen, bottom) {
        return Some(found);
    }
    if let Some(found) = spinner(screen, top) {
        return Some(found);
    }
    let placeholder = screen.row(input).to_lowercase();
    if placeholder.contains("resend your message") {
        let (observation, mut rows) = gave_up(screen, top);
        rows.push(input);
        return Some((observation, rows));
    }
    logged_out_answer(screen, top).map(|rows| (Observation::LoggedOut, rows))
}

/// The input box: (top rule, first input row, bottom rule) of the last
/// `❯` row enclosed by two rules.
pub(super) fn input_box(screen: &Screen) -> Option<(usize, usize, usize)> {
    let bottom = screen.last_row(is_rule)?;
    let top = screen.last_row_above(bottom, is_rule)?;
    let input = top + 1;
    (input < bottom && screen.row(input).starts_with('❯')).then_some((top, input, bottom))
}

/// The footer under the box: a usage limit waiting for its reset.
fn footer(screen: &Screen, bottom: usize) -> Option<(Observation, Vec<usize>)> {
    let below = bottom + 1..screen.len();
    let shown: Vec<usize> = below
        .clone()
        .filter(|&i| {
            let t = screen.row(i).trim_start();
            t.contains("Usage limit reached") || t.starts_with("Continuing automatically at")
        })
        .collect();
    let limit = screen.row(*shown.first()?);
    let time_text = below
        .map(|i| screen.row(i))
        .find_map(|r| r.split_once("Continuing automatically at").map(|(_, t)| t))
        .or_else(|| limit.split_once("resets").map(|(_, t)| t));
    let mut reset = time_text.and_then(ResetTime::parse);
    let mut rows = shown;
    // The zone is printed only in the conversation's `⎿ … resets 12:26pm
    // (UTC)`: take it when the time is the same.
    if let Some(r) = reset.as_mut()
        && r.zone.is_none()
    {
        let zone = (0..screen.len()).rev().find_map(|i| {
            let (_, t) = screen.row(i).split_once("resets ")?;
            let found = ResetTime::parse(t)?;
            (found.hour == r.hour && found.minute == r.minute)
                .then_some(found)
                .and_then(|f| f.zone.map(|z| (i, f.text, z)))
        });
        if let Some((i, text, zone)) = zone {
            r.text = text;
            r.zone = Some(zone);
            rows.insert(0, i);
        }
    }
    Some((Observation::UsageLimited { reset }, rows))
}

/// The spinner row just above the box (at most five rows up: the effort
/// row, a `⎿` detail row, blanks) when it tells of retries or a limit.
fn spinner(screen: &Screen, top: usize) -> Option<(Observation, Vec<usize>)> {
    let from = top.saturating_sub(5);
    let at = (from..top).rev().find(|&i| {
        let mut chars = screen.row(i).chars();
        chars.next().is_some_and(|c| SPINNER.contains(&c)) && chars.next() == Some(' ')
    })?;
    let row = screen.row(at);
    let body = row.chars().skip(2).collect::<String>();
    let parts: Vec<&str> = body.split(" · ").map(str::trim).collect();
    let retrying = parts.iter().find(|p| p.starts_with("retrying in"));
    let attempt = parts.iter().find_map(|p| p.strip_prefix("attempt "));
    if retrying.is_none() && attempt.is_none() {
        return None;
    }
    let message = parts.first().copied().unwrap_or("");
    let lower = message.to_lowercase();
    let observation = if lower.contains("limit reached") && !lower.starts_with("429") {
        // `5-hour limit reached · retrying in 5s (9:56am) · attempt 1/10`
        Observation::UsageLimited {
            reset: retrying.and_then(|r| ResetTime::parse(r)),
        }
    } else if status_first(message) == Some(401) {
        Observation::LoggedOut
    } else {
        let (attempt, of) = match attempt.and_then(|a| a.split_once('/')) {
            Some((a, b)) => (a.trim().parse().ok(), b.trim().parse().ok()),
            None => (None, None),
        };
        Observation::Erroring {
            kind: kind_of(message),
            attempt,
            of,
        }
    };
    Some((observation, vec![at]))
}

/// `"401 invalid x-api-key"` → 401.
fn status_first(message: &str) -> Option<u16> {
    message.split_whitespace().next()?.parse().ok()
}

/// The box's placeholder says to resend: the error is the last
/// conversation item above the box (`● API Error: …`, its wrapped rows).
fn gave_up(screen: &Screen, top: usize) -> (Observation, Vec<usize>) {
    let (text, rows) = last_item(screen, top).unwrap_or_default();
    let lower = text.to_lowercase();
    if lower.contains("/login") || lower.contains("api error: 401") {
        return (Observation::LoggedOut, rows);
    }
    let detail = text
        .split_once("API Error:")
        .map(|(_, d)| d.trim())
        .unwrap_or(&text);
    let kind = if detail.to_lowercase().contains("connection") {
        ErrorKind::Network
    } else {
        kind_of(detail)
    };
    (Observation::GaveUp { kind }, rows)
}

/// The text of the last conversation item above row `top` (its head row
/// at column 0 and the indented rows under it), skipping the right-aligned
/// effort row, with the indices of its rows.
fn last_item(screen: &Screen, top: usize) -> Option<(String, Vec<usize>)> {
    let mut i = top;
    let last = loop {
        let row = screen.nonblank_above(i)?;
        if screen.row(row).starts_with("        ") {
            i = row;
            continue;
        }
        break row;
    };
    let mut first = last;
    while first > 0 && screen.row(first).starts_with(' ') {
        first -= 1;
    }
    let text = (first..=last)
        .map(|r| screen.row(r).trim())
        .collect::<Vec<_>>()
        .join(" ");
    Some((text, (first..=last).collect()))
}

/// `❯ <prompt>` answered by `  ⎿  Not logged in · Please run /login`: the
/// last item is the person's prompt and its `⎿` answer is the login
/// notice.
fn logged_out_answer(screen: &Screen, top: usize) -> Option<Vec<usize>> {
    let (text, rows) = last_item(screen, top)?;
    (text.starts_with('❯')
        && text
            .split_once('⎿')
            .is_some_and(|(_, answer)| answer.contains("Please run /login")))
    .then_some(rows)
}

/// Claude Code's own dialog in place of the input box: numbered options
/// (`❯ 1. Red` selected, `  2. Blue`) under a question, above a hint row
/// with `Enter` and `Esc`.
pub(super) fn dialog(screen: &Screen) -> Option<(Observation, Vec<usize>)> {
    let foot = screen.last_row(|r| !r.trim().is_empty())?;
    let from = foot.saturating_sub(20);
    let selected = (from..=foot).find(|&i| option(screen.row(i), true).is_some())?;
    let hint = (selected..=foot).find(|&i| {
        let r = screen.row(i).to_lowercase();
        r.contains("esc") && r.contains("enter")
    })?;
    let mut first = selected;
    while first > from && option(screen.row(first - 1), false).is_some() {
        first -= 1;
    }
    let mut options = Vec::new();
    let mut rows = Vec::new();
    let mut i = first;
    while i <= foot {
        let row = screen.row(i);
        match option(row, false) {
            Some(label) => {
                options.push(label);
                rows.push(i);
            }
            // A description row under an option, or a divider rule.
            None if row.starts_with("     ") || is_rule(row) => {}
            None => break,
        }
        i += 1;
    }
    if options.len() < 2 {
        return None;
    }
    let title_row = screen.nonblank_above(first)?;
    let title = screen.row(title_row).trim().to_string();
    rows.insert(0, title_row);
    rows.push(hint);
    Some((Observation::NativeDialog { title, options }, rows))
}

/// `❯ 1. Red` (selected) or `  2. Blue` → the label.
fn option(row: &str, selected: bool) -> Option<String> {
    let rest = match row.strip_prefix("❯ ") {
        Some(rest) => rest,
        None if !selected => row.strip_prefix("  ")?,
        None => return None,
    };
    let (number, label) = rest.trim_start().split_once(". ")?;
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let label = label.split("  ").next().unwrap_or(label).trim();
    (!label.is_empty()).then(|| label.to_string())
}
