//! Codex's screen (recorded from Codex 0.171.0, `docs/agent-states.md`).
//!
//! Codex draws its conversation top-down and, at the bottom, a pane: the
//! live status (`• Reconnecting... 1/5 (5s • esc to interrupt)` with
//! `  └ <error>` under it) a few rows above the composer (`› …`), then two
//! footer rows — or, instead of the composer, a dialog of its own
//! (`Approaching rate limits`, numbered options, `enter select · esc back`).
//! An error the CLI gave up on is a history cell of its own at column 0,
//! `■ <error>`, the last one above the pane. The agent's text is a cell
//! that starts with `• ` and whose other rows are indented, so it never
//! puts a `■` at column 0; only the last cell and the pane are read.

use super::{ErrorKind, Observation, ResetTime, Screen, Seen, kind_of};

/// What Codex's own lines on `screen` say.
pub fn observe(screen: &Screen) -> Observation {
    recognise(screen).observation
}

/// What Codex's own lines on `screen` say, with the rows that say it.
pub fn recognise(screen: &Screen) -> Seen {
    let (observation, rows) = found(screen).unwrap_or((Observation::None, Vec::new()));
    Seen::from_rows(screen, observation, rows)
}

/// The observation and the indices of the rows it was read from.
fn found(screen: &Screen) -> Option<(Observation, Vec<usize>)> {
    let dialog = dialog(screen);
    let pane_top = match &dialog {
        Some((top, _, _)) => *top,
        None => composer(screen)?,
    };
    // The live status: the last block above the pane, when it is one.
    let mut above = pane_top;
    if let Some(status) = live_status(screen, pane_top) {
        match status {
            Live::Retrying(found, rows) => return Some((found, rows)),
            Live::At(row) => above = row,
        }
    }
    if let Some(found) = last_cell_error(screen, above) {
        return Some(found);
    }
    dialog.map(|(_, found, rows)| (found, rows))
}

/// The composer: the last row at column 0 that starts with `› `, with only
/// footer rows (none at column 0) below it.
pub(super) fn composer(screen: &Screen) -> Option<usize> {
    let row = screen.last_row(|r| r.starts_with("› ") || r == "›")?;
    let below_ok = (row + 1..screen.len()).all(|i| {
        let r = screen.row(i);
        r.is_empty() || r.starts_with(' ')
    });
    below_ok.then_some(row)
}

enum Live {
    /// The status says the CLI is reconnecting (on these rows).
    Retrying(Observation, Vec<usize>),
    /// A live status of another kind starts at this row.
    At(usize),
}

/// The live status in the rows just above the pane (after at most three
/// blank rows): `•`/`◦` at column 0 and `esc to interrupt` on its row.
fn live_status(screen: &Screen, pane_top: usize) -> Option<Live> {
    let last = screen.nonblank_above(pane_top)?;
    if pane_top - last > 4 {
        return None;
    }
    // The block: up from `last` to its first row.
    let mut first = last;
    while first > 0 && !screen.row(first - 1).trim().is_empty() && last - first < 4 {
        first -= 1;
    }
    let head = screen.row(first);
    let body = head
        .strip_prefix("• ")
        .or_else(|| head.strip_prefix("◦ "))?;
    if !head.contains("esc to interrupt") {
        return None;
    }
    let Some(rest) = body.strip_prefix("Reconnecting... ") else {
        return Some(Live::At(first));
    };
    let (attempt, of) = count(rest);
    let detail: String = (first + 1..=last)
        .map(|i| screen.row(i).trim())
        .map(|r| r.strip_prefix('└').unwrap_or(r).trim())
        .collect::<Vec<_>>()
        .join(" ");
    let kind = error_kind(&detail);
    Some(Live::Retrying(
        Observation::Erroring { kind, attempt, of },
        (first..=last).collect(),
    ))
}

/// `3/5 …` → (3, 5).
fn count(text: &str) -> (Option<u32>, Option<u32>) {
    let word = text.split_whitespace().next().unwrap_or("");
    match word.split_once('/') {
        Some((a, b)) => (a.parse().ok(), b.parse().ok()),
        None => (None, None),
    }
}

/// The last history cell above row `above`, when it is an error cell
/// (`■` at column 0, its wrapped rows up to the next blank row).
fn last_cell_error(screen: &Screen, above: usize) -> Option<(Observation, Vec<usize>)> {
    let last = screen.nonblank_above(above)?;
    let mut first = last;
    while first > 0 && !screen.row(first - 1).trim().is_empty() {
        first -= 1;
    }
    let head = screen.row(first);
    let message = head.strip_prefix("■ ")?;
    let text = std::iter::once(message)
        .chain((first + 1..=last).map(|i| screen.row(i)))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let lower = text.to_lowercase();
    if lower.contains("interrupted") {
        // The person pressed Esc: not an API failure.
        return None;
    }
    let observation = if lower.contains("usage limit") {
        let reset = lower
            .rfind("try again at")
            .and_then(|at| ResetTime::parse(&text[at..]));
        Observation::UsageLimited { reset }
    } else if lower.contains("401") || lower.contains("unauthorized") || lower.contains("log in") {
        Observation::LoggedOut
    } else {
        Observation::GaveUp {
            kind: error_kind(&text),
        }
    };
    Some((observation, (first..=last).collect()))
}

/// Codex's wording of a failure as a kind ("high demand" is how it words
/// a 5xx).
fn error_kind(text: &str) -> ErrorKind {
    let lower = text.to_lowercase();
    if lower.contains("high demand") {
        return ErrorKind::Overloaded;
    }
    if lower.contains("stream disconnected") || lower.contains("transport error") {
        return ErrorKind::Network;
    }
    kind_of(text)
}

/// Codex's own dialog: numbered options, one selected (`› N. `) at column
/// 0, the others indented, and a last row with `enter` and `esc`; its title is the
/// block above the options. Returns the title's first row, the dialog and
/// its rows.
pub(super) fn dialog(screen: &Screen) -> Option<(usize, Observation, Vec<usize>)> {
    let foot = screen.last_row(|r| !r.trim().is_empty())?;
    let footer = screen.row(foot).to_lowercase();
    if !footer.starts_with(' ') || !footer.contains("esc") || !footer.contains("enter") {
        return None;
    }
    let from = foot.saturating_sub(14);
    let selected = (from..foot).find(|&i| option(screen.row(i), true).is_some())?;
    // Up over the options above the selected one and their descriptions'
    // wrapped rows (a narrow terminal), then down to the first option.
    let mut first = selected;
    while first > from && {
        let above = screen.row(first - 1);
        option(above, false).is_some() || wrapped(above)
    } {
        first -= 1;
    }
    while option(screen.row(first), false).is_none() {
        first += 1;
    }
    let mut options = Vec::new();
    let mut i = first;
    while i < foot {
        let row = screen.row(i);
        match option(row, false) {
            Some(label) => options.push(label),
            None if wrapped(row) => {}
            None => break,
        }
        i += 1;
    }
    if options.len() < 2 {
        return None;
    }
    let title_last = screen.nonblank_above(first)?;
    let mut title_first = title_last;
    while title_first > 0
        && !screen.row(title_first - 1).trim().is_empty()
        && title_last - title_first < 3
    {
        title_first -= 1;
    }
    let title = (title_first..=title_last)
        .map(|i| screen.row(i).trim())
        .collect::<Vec<_>>()
        .join(" — ");
    let rows = (title_first..=title_last)
        .chain(first..i)
        .chain(std::iter::once(foot))
        .collect();
    Some((
        title_first,
        Observation::NativeDialog { title, options },
        rows,
    ))
}

/// A row that carries on an option's description (wrapped in a narrow
/// terminal): indented past an option's number, under its description.
fn wrapped(row: &str) -> bool {
    let indent = row.len() - row.trim_start_matches(' ').len();
    indent >= 6 && !row.trim().is_empty()
}

/// The label of an option row `› 1. Label   description` (`selected`: only
/// the row with the `›`), without its number and description.
fn option(row: &str, selected: bool) -> Option<String> {
    let rest = match row.strip_prefix("› ") {
        Some(rest) => rest,
        None if !selected => row.strip_prefix("  ")?,
        None => return None,
    };
    let (number, label) = rest.split_once(". ")?;
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let label = label.split("  ").next().unwrap_or(label).trim();
    (!label.is_empty()).then(|| label.to_string())
}
